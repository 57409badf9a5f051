#!/usr/bin/env python3
"""Test tool: the moment FILE is first opened, swap a name for a symlink to TARGET.

    swap_on_open.py FILE TARGET READY_FILE TIMEOUT_S [DIR]

Writes READY_FILE once its watch is set, then waits (at most TIMEOUT_S) for the
first open of FILE. Without DIR it renames a prepared symlink over FILE (inotify: the
swap follows the open): a checker that opens the name again after its check gets
TARGET. With DIR, a directory on FILE's path, the open is held (fanotify's
permission event, root only) while DIR is moved aside to DIR.checked and a symlink
to TARGET takes its place; only then does the open go on, on the file it had
reached. A checker that opens FILE's name again later reads TARGET's file of that
name, however fast it is. Exit 0 when it swapped, 1 on timeout."""
import ctypes
import os
import select
import struct
import sys

IN_OPEN = 0x20
FAN_CLOEXEC, FAN_CLASS_CONTENT = 0x1, 0x4
FAN_MARK_ADD, FAN_OPEN_PERM, FAN_ALLOW = 0x1, 0x10000, 0x1
AT_FDCWD = -100
EVENT = struct.Struct("=IBBHQii")  # struct fanotify_event_metadata


def swap_leaf(libc, path, target, ready, timeout):
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


def swap_dir(libc, path, target, ready, timeout, directory):
    libc.fanotify_mark.argtypes = [ctypes.c_int, ctypes.c_uint, ctypes.c_uint64, ctypes.c_int, ctypes.c_char_p]
    fd = libc.fanotify_init(FAN_CLOEXEC | FAN_CLASS_CONTENT, os.O_RDONLY)
    if fd < 0 or libc.fanotify_mark(fd, FAN_MARK_ADD, FAN_OPEN_PERM, AT_FDCWD, path.encode()) < 0:
        sys.exit("swap_on_open: fanotify: " + os.strerror(ctypes.get_errno()))
    with open(ready, "w") as f:
        f.write("watching\n")
    readable, _, _ = select.select([fd], [], [], timeout)
    if not readable:
        sys.exit("swap_on_open: no open of %s in %.0f s" % (path, timeout))
    event = os.read(fd, 4096)
    _, _, _, _, mask, event_fd, pid = EVENT.unpack_from(event)
    try:
        os.rename(directory, directory + ".checked")
        os.symlink(target, directory)
        print("swapped %s for a link to %s while pid %d opened %s" % (directory, target, pid, path))
    finally:
        os.write(fd, struct.pack("=iI", event_fd, FAN_ALLOW))
        os.close(event_fd)


def main():
    path, target, ready, timeout = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
    libc = ctypes.CDLL(None, use_errno=True)
    if len(sys.argv) > 5:
        swap_dir(libc, path, target, ready, timeout, sys.argv[5])
    else:
        swap_leaf(libc, path, target, ready, timeout)


if __name__ == "__main__":
    main()
