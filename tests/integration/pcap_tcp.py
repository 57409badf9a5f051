"""The TCP segments of a pcap file, for the wire ground truths (nfs_wire.py, smb_wire.py).

Reads the classic pcap format (either byte order, micro- or nanosecond stamps) of one
Ethernet interface or Linux's cooked "any" (v1 or v2), IPv4 only.
"""
import struct
import sys

_SKIP = {1: 14, 113: 16, 276: 20}  # link-layer header: Ethernet, Linux cooked v1, v2


def _ethertype(link, packet):
    return {1: packet[12:14], 113: packet[14:16], 276: packet[0:2]}[link]


def segments(path, port):
    """(time, client port, toward the server, sequence number, payload, whole) of each
    IPv4 TCP packet to or from the server's `port`; `whole` is False when the capture
    kept only the packet's first bytes (its snap length)."""
    data = open(path, "rb").read()
    magic = data[:4]
    endian = "<" if magic in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1") else ">"
    nanos = magic in (b"\x4d\x3c\xb2\xa1", b"\xa1\xb2\x3c\x4d")
    link = struct.unpack(endian + "I", data[20:24])[0]
    if link not in _SKIP:
        sys.exit("%s: link type %d is not Ethernet or Linux cooked" % (path, link))
    at = 24
    while at + 16 <= len(data):
        sec, frac, caught, length = struct.unpack(endian + "IIII", data[at:at + 16])
        packet = data[at + 16:at + 16 + caught]
        at += 16 + caught
        ip = packet[_SKIP[link]:]
        if _ethertype(link, packet) != b"\x08\x00" or len(ip) < 20 or ip[9] != 6:
            continue
        tcp = ip[(ip[0] & 0x0F) * 4:struct.unpack(">H", ip[2:4])[0]]  # no Ethernet padding
        if len(tcp) < 20:
            continue
        sport, dport, seq = struct.unpack(">HHI", tcp[:8])
        if port not in (sport, dport):
            continue
        when = sec + frac / (1e9 if nanos else 1e6)
        toward = dport == port
        yield when, sport if toward else dport, toward, seq, tcp[(tcp[12] >> 4) * 4:], caught == length
