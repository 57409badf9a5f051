#!/usr/bin/env python3
"""An idle-connection flood for a control port: opens COUNT TCP connections from
SOURCE that never send a byte, writes the number connected to READY_FILE, then waits
at most SECONDS for the server to close them; prints "connected N closed M". Bounded
in count and time; loopback only."""
import resource
import select
import socket
import sys
import time

port, count, seconds, source, ready_file = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), sys.argv[4], sys.argv[5]
assert source.startswith("127."), "loopback only"
assert count <= 4096, "bounded"
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, count + 64), hard))
open_sockets = []
for _ in range(count):
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
end = time.monotonic() + seconds
poller = select.poll()
by_fd = {s.fileno(): s for s in open_sockets}
for fd in by_fd:
    poller.register(fd, select.POLLIN | select.POLLHUP | select.POLLERR)
while by_fd and time.monotonic() < end:
    for fd, _ in poller.poll(200):
        s = by_fd.pop(fd, None)
        if s is None:
            continue
        try:
            data = s.recv(65536)
        except OSError:
            data = b""
        if data:  # a server greeting (a TLS alert, an HTTP/2 frame): keep waiting for the close
            by_fd[fd] = s
            continue
        poller.unregister(fd)
        s.close()
        closed += 1
print(f"connected {connected} closed {closed}")
