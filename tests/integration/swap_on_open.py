#!/usr/bin/env python3
"""Test tool: the moment FILE is first opened, swap its name for a symlink to TARGET.

    swap_on_open.py FILE TARGET READY_FILE TIMEOUT_S

Writes READY_FILE once the inotify watch is set, then waits (at most TIMEOUT_S) for
the first open of FILE and renames a prepared symlink over it: a checker that opens
the name again after its check gets TARGET. Exit 0 when it swapped, 1 on timeout."""
import ctypes
import os
import select
import sys

IN_OPEN = 0x20


def main():
    path, target, ready, timeout = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
    libc = ctypes.CDLL(None, use_errno=True)
    fd = libc.inotify_init1(os.O_CLOEXEC)
    if fd < 0 or libc.inotify_add_watch(fd, path.encode(), IN_OPEN) < 0:
        sys.exit("swap_on_open: inotify: " + os.strerror(ctypes.get_errno()))
    link = path + ".swap"
    os.symlink(target, link)
    with open(ready, "w") as f:
        f.write("watching\n")
    readable, _, _ = select.select([fd], [], [], timeout)
    if not readable:
        sys.exit("swap_on_open: no open of %s in %.0f s" % (path, timeout))
    os.rename(link, path)


if __name__ == "__main__":
    main()
