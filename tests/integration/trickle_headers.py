#!/usr/bin/env python3
"""A slow-header flood for the receiver's data port: opens COUNT connections from
SOURCE and sends one byte on each every second, for at most SECONDS. Writes the
number connected to READY_FILE once all are open; prints "connected N closed M"
at the end (M: connections the receiver closed on us). Bounded in count and time;
loopback only."""
import socket
import sys
import time

port, count, seconds, source, ready_file = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), sys.argv[4], sys.argv[5]
assert source.startswith("127."), "loopback only"
end = time.monotonic() + seconds
open_sockets = []
for _ in range(min(count, 1024)):
    s = socket.socket()
    s.settimeout(2)
    s.bind((source, 0))
    try:
        s.connect(("127.0.0.1", port))
        open_sockets.append(s)
    except OSError:
        s.close()
connected = len(open_sockets)
with open(ready_file, "w") as f:
    f.write(str(connected))
closed = 0
while open_sockets and time.monotonic() < end:
    for s in list(open_sockets):
        try:
            s.send(b"N")
        except OSError:
            open_sockets.remove(s)
            s.close()
            closed += 1
    time.sleep(1)
print(f"connected {connected} closed {closed}")
