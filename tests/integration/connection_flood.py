#!/usr/bin/env python3
"""Connection floods against a nasperf port, from SOURCE (a 127.x address):
  connection_flood.py MODE PORT COUNT SECONDS SOURCE READY_FILE [SERVER_PID]
opens COUNT TCP connections, writes the number connected to READY_FILE, then for at
most SECONDS:
  trickle  sends one byte on each every second (a slow-header flood on a data port);
  idle     sends nothing and waits for the server to close them (a control port);
  hold     a slow-header flood from many addresses that holds its ground: SOURCE is a
           comma-separated list (127.x, or fd00::x on the loopback of a test's own
           network namespace), COUNT connections from each, opened in turn; each one
           trickles a byte a second, and one the server closes is opened again from
           the same address at a next tick (10 a second, up to 50 ms of reopening
           each), until SECONDS or SIGTERM.
           Every tick it counts the flood connections the server (SERVER_PID) holds:
           sockets in its descriptor table that /proc/net/tcp* shows established
           from a flood address to PORT.
Prints "connected N closed M" at the end (M: connections the server closed on us);
hold adds "reopened R held_max H" (H: most flood connections the server held at once
after READY_FILE was written). Bounded in count and time; loopback only."""
import ipaddress
import os
import resource
import select
import signal
import socket
import sys
import time

mode, port, count, seconds, source, ready_file = (sys.argv[1], int(sys.argv[2]), int(sys.argv[3]),
                                                  float(sys.argv[4]), sys.argv[5], sys.argv[6])
server_pid = int(sys.argv[7]) if len(sys.argv) > 7 else None
assert mode in ("trickle", "idle", "hold"), "MODE is trickle, idle or hold"
assert mode != "hold" or server_pid, "hold needs SERVER_PID"
sources = source.split(",") if mode == "hold" else [source]
assert all(s.startswith("127.") or s.startswith("fd00::") for s in sources), "loopback only"
assert count * len(sources) <= 4096, "bounded"
_, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, count * len(sources) + 64), hard))


def connect_from(address, timeout=2.0):
    """A connection from `address` to the server on loopback, or None."""
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    s = socket.socket(family)
    s.settimeout(timeout)
    try:
        s.bind((address, 0))
        s.connect(("::1" if family == socket.AF_INET6 else "127.0.0.1", port))
        return s
    except OSError:
        s.close()
        return None


def open_connections():
    sockets = []
    for _ in range(count):
        s = connect_from(source)
        if s is not None:
            sockets.append(s)
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


def socket_inodes(pid):
    """The inodes of the sockets in process `pid`'s descriptor table, read first and
    fast: a descriptor the server closes while /proc/net/tcp is read is not counted
    twice (its successor usually takes the same number, and is not in the set)."""
    inodes = set()
    fd_dir = f"/proc/{pid}/fd"
    for name in os.listdir(fd_dir):
        try:
            target = os.readlink(f"{fd_dir}/{name}")
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    return inodes


def held_by_server(flood_addresses):
    """Flood connections the server holds: in its descriptor table, established, on
    its port, from a flood address (one still in the accept queue has no descriptor;
    one the server shut down is no longer established)."""
    owned = socket_inodes(server_pid)
    held = 0
    for table, family in (("/proc/net/tcp", socket.AF_INET), ("/proc/net/tcp6", socket.AF_INET6)):
        try:
            with open(table) as f:
                lines = f.readlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            local, remote, state, inode = fields[1], fields[2], fields[3], fields[9]
            if state != "01" or inode not in owned or int(local.split(":")[1], 16) != port:
                continue
            raw = bytes.fromhex(remote.split(":")[0])
            raw = b"".join(raw[i:i + 4][::-1] for i in range(0, len(raw), 4))  # host-order words
            if socket.inet_ntop(family, raw) in flood_addresses:
                held += 1
    return held


def hold():
    """The hold mode: returns (connected, closed, reopened, held_max)."""
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    slots = [sources[i % len(sources)] for i in range(count * len(sources))]  # in turn
    conns = [connect_from(a) for a in slots]
    connected = sum(c is not None for c in conns)
    with open(ready_file, "w") as f:
        f.write(str(connected))
    flood_addresses = {str(ipaddress.ip_address(a)) for a in sources}
    closed = reopened = held_max = first = 0
    deadline = time.monotonic() + seconds
    next_tick = next_byte = time.monotonic()
    while not stop and time.monotonic() < deadline:
        poller = select.poll()
        by_fd = {c.fileno(): i for i, c in enumerate(conns) if c is not None}
        for fd in by_fd:
            poller.register(fd, select.POLLIN | select.POLLHUP | select.POLLERR)
        for fd, _ in poller.poll(max(0, int((next_tick - time.monotonic()) * 1000))):
            i = by_fd[fd]
            try:
                data = conns[i].recv(4096)
            except OSError:
                data = b""
            if not data:  # the server closed it
                conns[i].close()
                conns[i] = None
                closed += 1
        now = time.monotonic()
        if now < next_tick:
            continue
        next_tick = now + 0.1
        held_max = max(held_max, held_by_server(flood_addresses))
        if now >= next_byte:
            next_byte = now + 1
            for c in conns:
                try:
                    if c is not None:
                        c.send(b"N")
                except OSError:
                    pass  # seen closed at the next poll
        # Reopen for at most 50 ms a tick, each connect given 50 ms (a full accept
        # queue drops SYNs), starting where the last tick stopped: every slot gets
        # its turn and the ticks, with their counts, keep coming.
        reopen_end = time.monotonic() + 0.05
        for step in range(len(conns)):
            i = (first + step) % len(conns)
            if time.monotonic() >= reopen_end:
                first = i
                break
            if conns[i] is None:
                conns[i] = connect_from(slots[i], 0.05)
                reopened += conns[i] is not None
    for c in conns:
        if c is not None:
            c.close()
    return connected, closed, reopened, held_max


if mode == "hold":
    connected, closed, reopened, held_max = hold()
    print(f"connected {connected} closed {closed} reopened {reopened} held_max {held_max}")
    sys.exit(0)
open_sockets = open_connections()
connected = len(open_sockets)
with open(ready_file, "w") as f:
    f.write(str(connected))
deadline = time.monotonic() + seconds
closed = trickle(open_sockets, deadline) if mode == "trickle" else wait_for_close(open_sockets, deadline)
print(f"connected {connected} closed {closed}")
