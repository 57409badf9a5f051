#!/usr/bin/env python3
"""Connection floods against a nasperf port, from SOURCE (a 127.x address):
  connection_flood.py MODE PORT COUNT SECONDS SOURCE READY_FILE
opens COUNT TCP connections, writes the number connected to READY_FILE, then for at
most SECONDS:
  trickle  sends one byte on each every second (a slow-header flood on a data port);
  idle     sends nothing and waits for the server to close them (a control port).
Prints "connected N closed M" at the end (M: connections the server closed on us).
Bounded in count and time; loopback only."""
import resource
import select
import socket
import sys
import time

mode, port, count, seconds, source, ready_file = (sys.argv[1], int(sys.argv[2]), int(sys.argv[3]),
                                                  float(sys.argv[4]), sys.argv[5], sys.argv[6])
assert mode in ("trickle", "idle"), "MODE is trickle or idle"
assert source.startswith("127."), "loopback only"
assert count <= 4096, "bounded"
_, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, count + 64), hard))


def open_connections():
    sockets = []
    for _ in range(count):
        s = socket.socket()
        s.settimeout(2)
        s.bind((source, 0))
        try:
            s.connect(("127.0.0.1", port))
            sockets.append(s)
        except OSError:
            s.close()
    return sockets


def trickle(sockets, end):
    closed = 0
    while sockets and time.monotonic() < end:
        for s in list(sockets):
            try:
                s.send(b"N")
            except OSError:
                sockets.remove(s)
                s.close()
                closed += 1
        time.sleep(1)
    return closed


def wait_for_close(sockets, end):
    closed = 0
    poller = select.poll()
    by_fd = {s.fileno(): s for s in sockets}
    for fd in by_fd:
        poller.register(fd, select.POLLIN | select.POLLHUP | select.POLLERR)
    while by_fd and time.monotonic() < end:
        for fd, _ in poller.poll(200):
            s = by_fd.get(fd)
            if s is None:
                continue
            try:
                data = s.recv(65536)
            except OSError:
                data = b""
            if data:  # a greeting from the server (a TLS alert, an HTTP/2 frame): wait for the close
                continue
            poller.unregister(fd)
            del by_fd[fd]
            s.close()
            closed += 1
    return closed


open_sockets = open_connections()
connected = len(open_sockets)
with open(ready_file, "w") as f:
    f.write(str(connected))
deadline = time.monotonic() + seconds
closed = trickle(open_sockets, deadline) if mode == "trickle" else wait_for_close(open_sockets, deadline)
print(f"connected {connected} closed {closed}")
