#!/usr/bin/env python3
"""NFSv3 files as a packet capture saw them: the ground truth for a files/s figure.

Usage: nfs_wire.py PCAP

Reads a pcap (pcap_tcp.py) holding NFS over TCP to port 2049, with at least each
packet's first 128 bytes. Every TCP segment toward 2049 that
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

import pcap_tcp

NFS_PORT = 2049
NFS_PROGRAM, NFS_VERSION = 100003, 3
PROCS = {0: "null", 1: "getattr", 2: "setattr", 3: "lookup", 4: "access", 6: "read", 7: "write", 8: "create",
         9: "mkdir", 12: "remove", 13: "rmdir", 18: "fsstat", 19: "fsinfo", 20: "pathconf", 21: "commit"}


def calls_by_connection(path):
    """{client port: [(proc, request time, reply time)]}, in the order answered."""
    asked, conns = {}, {}
    for when, port, to_server, _, payload, _ in pcap_tcp.segments(path, NFS_PORT):
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
