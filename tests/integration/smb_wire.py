#!/usr/bin/env python3
"""SMB2/3 files as a packet capture saw them: the ground truth for a files/s figure.

Usage: smb_wire.py PCAP

Reads a whole-packet pcap (pcap_tcp.py) holding SMB over TCP port 445,
unsigned or signed but not encrypted. Each connection's two byte streams are put back
in order by sequence number, cut into NetBIOS frames and those into SMB2 messages
(compounds followed by their NextCommand); a message is timed by the packet that
brought its frame's last byte. A request and its final response share a message id
(an interim STATUS_PENDING answer is skipped). A file is a CREATE that opened one
(a request for a new file: disposition create or overwrite-if) through the CLOSE of
the handle it answered with. Prints one line of KEY=VALUE words:
  files         files seen whole
  per_file_ms   the median time from a CREATE's request to its CLOSE's response
  wire_fps      files over the span from the first CREATE's request to the last
                CLOSE's response
"""
import statistics
import struct
import sys

import pcap_tcp

SMB_PORT = 445
STATUS_PENDING = 0x00000103
CREATE_NEW_FILE = (2, 5)  # FILE_CREATE, FILE_OVERWRITE_IF


def streams(path):
    """{(client port, toward the server): [(seq, time, payload)]} of the segments with payload."""
    out = {}
    for when, port, toward, seq, payload, whole in pcap_tcp.segments(path, SMB_PORT):
        if not whole:
            sys.exit("smb_wire.py: packets cut short: capture whole ones (-s 0)")
        if payload:
            out.setdefault((port, toward), []).append((seq, when, payload))
    return out


def messages(segments):
    """(time, command, message id, is response, status, body) of each SMB2 message in order."""
    first = segments[0][0]
    segments.sort(key=lambda s: (s[0] - first) % (1 << 32))  # wraps with the sequence space
    data, ends, next_seq = bytearray(), [], None
    for seq, when, payload in segments:
        if next_seq is not None:
            skip = (next_seq - seq) % (1 << 32)
            if skip >= len(payload):
                continue  # a retransmission of what we have
            payload = payload[skip:]
        data += payload
        ends.append((len(data), when))
        next_seq = (seq + len(payload) + (0 if next_seq is None else skip)) % (1 << 32)
    at, e = 0, 0
    while at + 4 <= len(data):
        length = struct.unpack(">I", data[at:at + 4])[0] & 0xFFFFFF
        frame = data[at + 4:at + 4 + length]
        at += 4 + length
        while e < len(ends) - 1 and ends[e][0] < at:
            e += 1
        when = ends[e][1]
        off = 0
        while off + 64 <= len(frame) and frame[off:off + 4] == b"\xfeSMB":
            status, command = struct.unpack("<IH", frame[off + 8:off + 14])
            flags, next_cmd, mid = struct.unpack("<IIQ", frame[off + 16:off + 32])
            yield when, command, mid, bool(flags & 1), status, bytes(frame[off + 64:off + 64 + 96])
            if next_cmd == 0:
                break
            off += next_cmd


def main():
    conns = streams(sys.argv[1])
    files = []
    for (port, to_server), segs in conns.items():
        if not to_server or (port, False) not in conns:
            continue
        asked = {}
        for when, command, mid, _, _, body in messages(segs):
            if command == 5 and len(body) >= 40:
                disposition = struct.unpack("<I", body[36:40])[0]
                asked[mid] = (when, "create" if disposition in CREATE_NEW_FILE else "open")
            elif command == 6 and len(body) >= 24:
                asked[mid] = (when, "close", body[8:24])  # its FileId
            else:
                asked[mid] = (when, "other")
        handles = {}
        for when, command, mid, response, status, body in messages(conns[(port, False)]):
            if not response or status == STATUS_PENDING or mid not in asked:
                continue
            call = asked.pop(mid)
            if call[1] == "create" and status == 0 and len(body) >= 80:
                handles[body[64:80]] = {"start": call[0]}  # the FileId it opened
            elif call[1] == "close" and call[2] in handles:
                f = handles.pop(call[2])
                f["end"] = when
                files.append(f)
    if not files:
        print("files=0")
        return
    span = max(f["end"] for f in files) - min(f["start"] for f in files)
    print("files=%d per_file_ms=%.3f wire_fps=%.1f" % (
        len(files), statistics.median(f["end"] - f["start"] for f in files) * 1e3, len(files) / span if span > 0 else 0))


if __name__ == "__main__":
    main()
