#!/usr/bin/env python3
"""NFSv3 files as a packet capture saw them: the ground truth for a files/s figure.

Usage: nfs_wire.py PCAP

Reads a pcap of one interface (Ethernet or Linux cooked) holding NFS over TCP to port
2049, with at least each packet's first 128 bytes. Every TCP segment toward 2049 that
opens with an ONC RPC call to NFS version 3 is a call (its procedure by number: what
tcpdump names by port would misname a client on a port of its own list, as nfs-cp's
reserved ports are), and the segment from 2049 opening with its xid on that
connection is its reply. A file is one CREATE through the COMMIT after it on its
connection, every call answered. Prints one line of KEY=VALUE words:
  files         files seen whole
  procs         the calls of the first such file, in order
  per_file_ms   the median time from a CREATE's request to its COMMIT's reply
  wire_fps      files over the span from the first CREATE's request to the last
                COMMIT's reply (the rate a run of them all had on the wire)
  rtt_ms        each call's median time from request to reply, PROC:MS,...
"""
import statistics
import struct
import sys

NFS_PORT = 2049
NFS_PROGRAM, NFS_VERSION = 100003, 3
PROCS = {0: "null", 1: "getattr", 2: "setattr", 3: "lookup", 4: "access", 6: "read", 7: "write", 8: "create",
         9: "mkdir", 12: "remove", 13: "rmdir", 18: "fsstat", 19: "fsinfo", 20: "pathconf", 21: "commit"}


def segments(path):
    """(time, client port, True if toward the server, TCP payload) of each IPv4 TCP packet."""
    data = open(path, "rb").read()
    magic = data[:4]
    endian = "<" if magic in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1") else ">"
    nanos = magic in (b"\x4d\x3c\xb2\xa1", b"\xa1\xb2\x3c\x4d")
    link = struct.unpack(endian + "I", data[20:24])[0]
    skip = {1: 14, 113: 16, 276: 20}.get(link)
    if skip is None:
        sys.exit("nfs_wire.py: link type %d is not Ethernet or Linux cooked" % link)
    at = 24
    while at + 16 <= len(data):
        sec, frac, caught, _ = struct.unpack(endian + "IIII", data[at:at + 16])
        packet = data[at + 16:at + 16 + caught]
        at += 16 + caught
        ethertype = {1: packet[12:14], 113: packet[14:16], 276: packet[0:2]}[link]
        ip = packet[skip:]
        if ethertype != b"\x08\x00" or len(ip) < 20 or ip[9] != 6:
            continue
        tcp = ip[(ip[0] & 0x0F) * 4:]
        if len(tcp) < 20:
            continue
        sport, dport = struct.unpack(">HH", tcp[:4])
        payload = tcp[(tcp[12] >> 4) * 4:]
        when = sec + frac / (1e9 if nanos else 1e6)
        if dport == NFS_PORT:
            yield when, sport, True, payload
        elif sport == NFS_PORT:
            yield when, dport, False, payload


def calls_by_connection(path):
    """{client port: [(proc, request time, reply time)]}, in the order answered."""
    asked, conns = {}, {}
    for when, port, to_server, payload in segments(path):
        if len(payload) < 12:
            continue
        # Record mark (4 bytes), xid, message type (0 call, 1 reply).
        xid, kind = struct.unpack(">II", payload[4:12])
        if to_server and kind == 0 and len(payload) >= 32:
            program, version, proc = struct.unpack(">III", payload[16:28])
            if program == NFS_PROGRAM and version == NFS_VERSION:
                asked[(port, xid)] = (when, PROCS.get(proc, "proc%d" % proc))
        elif not to_server and kind == 1 and (port, xid) in asked:
            start, proc = asked.pop((port, xid))
            conns.setdefault(port, []).append((proc, start, when))
    return conns


def main():
    files, rtt = [], {}
    for calls in calls_by_connection(sys.argv[1]).values():
        current = None
        for proc, start, end in calls:
            rtt.setdefault(proc, []).append(end - start)
            if proc == "create":
                current = {"start": start, "procs": []}
            if current is None:
                continue
            current["procs"].append(proc)
            if proc == "commit":
                current["end"] = end
                files.append(current)
                current = None
    if not files:
        print("files=0")
        return
    span = max(f["end"] for f in files) - min(f["start"] for f in files)
    print("files=%d procs=%s per_file_ms=%.3f wire_fps=%.1f rtt_ms=%s" % (
        len(files), ",".join(files[0]["procs"]), statistics.median(f["end"] - f["start"] for f in files) * 1e3,
        len(files) / span if span > 0 else 0,
        ",".join("%s:%.3f" % (p, statistics.median(v) * 1e3) for p, v in sorted(rtt.items()))))


if __name__ == "__main__":
    main()
