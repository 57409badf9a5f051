#!/usr/bin/env python3
"""A fake NFSv3 server that lies on purpose, for test_nfs_hostile_server.sh.

ONC RPC (RFC 5531) over TCP with record marking, and just enough of three programs
for libnfs to mount, look up, read, create, write, commit and remove:
  PORTMAP v2 (100000): NULL, GETPORT (MOUNT and NFS are both on --port), DUMP (empty);
  MOUNT v3 (100005):   NULL, MNT, DUMP, UMNT, UMNTALL, EXPORT;
  NFS v3 (100003):     NULL, GETATTR, SETATTR, LOOKUP, ACCESS, READ, WRITE, CREATE,
                       REMOVE, FSSTAT, FSINFO, PATHCONF, COMMIT.
One export, "/export", holding one regular file "big.bin" of --size bytes whose byte i
is i % 251; files the client creates live in memory (each at most --max-file bytes).

--mode chooses the lie:
  honest               everything correct (the baseline)
  read-overlong        READ answers more bytes than were asked (count and data agree)
  read-count-mismatch  READ's count says what was asked, its data is half as long
  read-short           READ answers half of what was asked, eof false, before the end
  huge-size            big.bin's attributes say it holds 2^62 bytes
  tiny-wsize           FSINFO offers rtmax = wtmax = 512
  silent               every call is answered except READ, which never is
  write-count-zero     WRITE says it wrote 0 bytes
  write-count-over     WRITE says it wrote 4 KiB more than was sent
  write-count-short    WRITE says it wrote half of what was sent
  commit-verf          WRITEs are UNSTABLE, and COMMIT answers another write verifier
                       (what a server that restarted in between says)
  read-eof-mid         READ from the middle of big.bin on: no data, eof set
  fh-oversized         LOOKUP and CREATE hand out 128-byte file handles (NFSv3: 64 at most)
  bad-ftype            files' attributes say type 99 (not an ftype3)
  huge-record          a READ's reply record says it is 2^31 - 16 bytes long
  read-count-under     READ's data is what was asked, its count says half of it
  mnt-fh-oversized     MOUNT's MNT hands out a 128-byte root file handle (NFSv3: 64 at most)
  mnt-status           MOUNT's MNT answers MNT3ERR_ACCES (13)
  mnt-auth-empty       MOUNT's MNT offers no auth flavour at all
  mnt-auth-absurd      MOUNT's MNT says it offers 2^30 + 1 auth flavours, and sends 4096 (libnfs 4.0
                       allocated count * 4 bytes in 32 bits: 4, and wrote 16 KiB into them)
  pmap-port-zero       the portmapper's GETPORT says MOUNT is on port 0 (not registered)
  pmap-port-self       the portmapper's GETPORT says MOUNT is on the portmapper's own port
                       (where, as a real rpcbind does, only PORTMAP is answered)
  pmap-garbage         the portmapper's GETPORT reply is 3 bytes of garbage after its header

Stdlib only. Logs one line per call to stderr. SIGTERM or SIGINT ends it; so does
--lifetime (a bound, should the test that started it be killed before its cleanup).
Every socket read is bounded (sizes, a per-connection idle timeout), and a closed
connection ends its thread.

  hostile_nfs_server.py --mode honest --port 2049        # serve (port 111 too)
  hostile_nfs_server.py --size 8388608 --write-content F  # write big.bin's bytes to F
"""

import argparse
import select
import signal
import socket
import struct
import sys
import threading
import time

MODES = ("honest", "read-overlong", "read-count-mismatch", "read-short", "huge-size", "tiny-wsize", "silent",
         "write-count-zero", "write-count-over", "write-count-short", "commit-verf", "read-eof-mid", "fh-oversized",
         "bad-ftype", "huge-record", "read-count-under", "mnt-fh-oversized", "mnt-status", "mnt-auth-empty",
         "mnt-auth-absurd", "pmap-port-zero", "pmap-port-self", "pmap-garbage")

PMAP_PROG, MOUNT_PROG, NFS_PROG = 100000, 100005, 100003
PMAP_PORT = 111
EXPORT = "/export"
BIG = "big.bin"
HONEST_XFER = 1 << 20  # rtmax and wtmax of an honest server (libnfs's own limit)
TINY_XFER = 512
MAX_RECORD = (4 << 20) + 65536  # a WRITE of up to 4 MiB with its header
MAX_FRAGMENTS = 1024
IDLE_TIMEOUT_S = 120
MAX_CONNECTIONS = 64

# NFS3 status codes
NFS3_OK, NFS3ERR_PERM, NFS3ERR_NOENT, NFS3ERR_IO, NFS3ERR_ACCES = 0, 1, 2, 5, 13
NFS3ERR_EXIST, NFS3ERR_NOTDIR, NFS3ERR_ISDIR, NFS3ERR_INVAL, NFS3ERR_FBIG = 17, 20, 21, 22, 27
NFS3ERR_NAMETOOLONG, NFS3ERR_STALE, NFS3ERR_BADHANDLE = 63, 70, 10001
NF3REG, NF3DIR = 1, 2
UNCHECKED, GUARDED, EXCLUSIVE = 0, 1, 2
UNSTABLE, FILE_SYNC = 0, 2
WRITE_VERF = b"nasperf!"
RESTARTED_VERF = b"restart!"
ABSURD_SENT = 4096  # mnt-auth-absurd: the flavours sent after a count of 2^30 + 1
FH_LIMIT = 128  # handles taken in calls: fh-oversized hands out 128-byte ones

# RPC accept_stat
SUCCESS, PROG_UNAVAIL, PROG_MISMATCH, PROC_UNAVAIL, GARBAGE_ARGS = 0, 1, 2, 3, 4

STOP = threading.Event()


def log(msg):
    sys.stderr.write("hostile_nfs_server: %s\n" % msg)
    sys.stderr.flush()


def content(size):
    """big.bin's bytes: byte i is i % 251."""
    pattern = bytes(range(251))
    return (pattern * (size // 251 + 1))[:size]


# ---- XDR

class XdrError(Exception):
    pass


class Unpacker:
    def __init__(self, data, pos=0):
        self.data = data
        self.pos = pos

    def _take(self, n):
        if n < 0 or self.pos + n > len(self.data):
            raise XdrError("short message")
        out = self.data[self.pos:self.pos + n]
        self.pos += n
        return out

    def uint(self):
        return struct.unpack(">I", self._take(4))[0]

    def hyper(self):
        return struct.unpack(">Q", self._take(8))[0]

    def boolean(self):
        return self.uint() != 0

    def opaque(self, limit):
        n = self.uint()
        if n > limit:
            raise XdrError("opaque of %d bytes (limit %d)" % (n, limit))
        out = self._take(n)
        self._take((4 - n % 4) % 4)
        return bytes(out)

    def fixed(self, n):
        return bytes(self._take(n))

    def string(self, limit):
        return self.opaque(limit).decode("utf-8", "replace")


def u32(v):
    return struct.pack(">I", v & 0xFFFFFFFF)


def u64(v):
    return struct.pack(">Q", v & 0xFFFFFFFFFFFFFFFF)


def opaque(b):
    return u32(len(b)) + bytes(b) + b"\0" * ((4 - len(b) % 4) % 4)


# ---- the file system

class File:
    def __init__(self, fileid, name, data, is_dir=False):
        self.fileid = fileid
        self.name = name
        self.data = data  # bytes (big.bin) or bytearray (files written)
        self.is_dir = is_dir


class Fs:
    def __init__(self, args):
        self.mode = args.mode
        self.max_file = args.max_file
        self.tiny_xfer = args.tiny_xfer
        self.lock = threading.Lock()
        self.root = File(1, "", b"", is_dir=True)
        self.files = {BIG: File(2, BIG, content(args.size))}
        self.next_id = 3
        self.started = int(time.time())

    def fh(self, f):
        fh = b"HOSTILE3" + u64(f.fileid)
        if self.mode == "fh-oversized" and not f.is_dir:
            fh += b"\0" * (FH_LIMIT - len(fh))
        return fh

    def by_fh(self, fh):
        if len(fh) not in (16, FH_LIMIT) or fh[:8] != b"HOSTILE3":
            raise NfsError(NFS3ERR_BADHANDLE)
        fileid = struct.unpack(">Q", fh[8:16])[0]
        if fileid == 1:
            return self.root
        for f in self.files.values():
            if f.fileid == fileid:
                return f
        raise NfsError(NFS3ERR_STALE)

    def size_of(self, f):
        if f.is_dir:
            return 4096
        if self.mode == "huge-size" and f.name == BIG:
            return 1 << 62
        return len(f.data)

    def fattr(self, f):
        size = self.size_of(f)
        t = u32(self.started) + u32(0)
        return b"".join([
            u32(NF3DIR if f.is_dir else 99 if self.mode == "bad-ftype" else NF3REG), u32(0o777 if f.is_dir else 0o644),
            u32(2 if f.is_dir else 1), u32(0), u32(0),
            u64(size), u64(size), u32(0), u32(0),  # size, used, rdev
            u64(1), u64(f.fileid), t, t, t])  # fsid, fileid, atime, mtime, ctime

    def post_op_attr(self, f):
        return u32(1) + self.fattr(f)


class NfsError(Exception):
    def __init__(self, status):
        super().__init__("NFS3 status %d" % status)
        self.status = status


NO_ATTR = u32(0)
NO_WCC = u32(0) + u32(0)
# What follows the status of a failed reply, per NFS procedure.
ERROR_TAIL = {1: b"", 2: NO_WCC, 3: NO_ATTR, 4: NO_ATTR, 6: NO_ATTR, 7: NO_WCC, 8: NO_WCC,
              12: NO_WCC, 18: NO_ATTR, 19: NO_ATTR, 20: NO_ATTR, 21: NO_WCC}
NFS_NAMES = {0: "NULL", 1: "GETATTR", 2: "SETATTR", 3: "LOOKUP", 4: "ACCESS", 6: "READ", 7: "WRITE",
             8: "CREATE", 12: "REMOVE", 18: "FSSTAT", 19: "FSINFO", 20: "PATHCONF", 21: "COMMIT"}


def read_sattr3(u):
    """sattr3: returns the size to set, or None."""
    size = None
    for _ in range(3):  # mode, uid, gid
        if u.boolean():
            u.uint()
    if u.boolean():
        size = u.hyper()
    for _ in range(2):  # atime, mtime
        if u.uint() == 2:  # SET_TO_CLIENT_TIME
            u.uint()
            u.uint()
    return size


class NoReply(Exception):
    """The call is dropped: no answer, ever (silent mode)."""


class Nfs:
    def __init__(self, fs):
        self.fs = fs

    def dirop(self, u):
        d = self.fs.by_fh(u.opaque(FH_LIMIT))
        name = u.string(1024)
        if not d.is_dir:
            raise NfsError(NFS3ERR_NOTDIR)
        if len(name) > 255:
            raise NfsError(NFS3ERR_NAMETOOLONG)
        return d, name

    def call(self, proc, u):
        fs = self.fs
        with fs.lock:
            if proc == 1:  # GETATTR
                return fs.fattr(fs.by_fh(u.opaque(FH_LIMIT)))
            if proc == 2:  # SETATTR
                f = fs.by_fh(u.opaque(FH_LIMIT))
                size = read_sattr3(u)
                if u.boolean():  # guard
                    u.uint()
                    u.uint()
                if size is not None and not f.is_dir:
                    if f.name == BIG:
                        raise NfsError(NFS3ERR_ACCES)
                    if size > fs.max_file:
                        raise NfsError(NFS3ERR_FBIG)
                    del f.data[size:]
                    f.data.extend(b"\0" * (size - len(f.data)))
                return NO_WCC
            if proc == 3:  # LOOKUP
                d, name = self.dirop(u)
                if name in (".", ".."):
                    f = d
                elif name in fs.files:
                    f = fs.files[name]
                else:
                    raise NfsError(NFS3ERR_NOENT)
                return opaque(fs.fh(f)) + fs.post_op_attr(f) + fs.post_op_attr(d)
            if proc == 4:  # ACCESS
                f = fs.by_fh(u.opaque(FH_LIMIT))
                return fs.post_op_attr(f) + u32(u.uint())
            if proc == 6:  # READ
                return self.read(u)
            if proc == 7:  # WRITE
                f = fs.by_fh(u.opaque(FH_LIMIT))
                offset, count, _stable = u.hyper(), u.uint(), u.uint()
                data = u.opaque(MAX_RECORD)
                if f.is_dir:
                    raise NfsError(NFS3ERR_ISDIR)
                if f.name == BIG:
                    raise NfsError(NFS3ERR_ACCES)
                if count != len(data):
                    raise NfsError(NFS3ERR_INVAL)
                if offset + count > fs.max_file:
                    raise NfsError(NFS3ERR_FBIG)
                if offset > len(f.data):
                    f.data.extend(b"\0" * (offset - len(f.data)))
                f.data[offset:offset + count] = data
                said = {"write-count-zero": 0, "write-count-over": count + 4096,
                        "write-count-short": count // 2}.get(fs.mode, count)
                committed = UNSTABLE if fs.mode == "commit-verf" else FILE_SYNC
                return NO_WCC + u32(said) + u32(committed) + WRITE_VERF
            if proc == 8:  # CREATE
                d, name = self.dirop(u)
                how = u.uint()
                if how in (UNCHECKED, GUARDED):
                    read_sattr3(u)
                elif how == EXCLUSIVE:
                    u.fixed(8)
                else:
                    raise XdrError("createmode %d" % how)
                if name in (".", "..") or "/" in name or not name:
                    raise NfsError(NFS3ERR_INVAL)
                if name in fs.files:
                    if how != UNCHECKED:
                        raise NfsError(NFS3ERR_EXIST)
                    f = fs.files[name]
                else:
                    f = File(fs.next_id, name, bytearray())
                    fs.next_id += 1
                    fs.files[name] = f
                return u32(1) + opaque(fs.fh(f)) + fs.post_op_attr(f) + NO_WCC
            if proc == 12:  # REMOVE
                _d, name = self.dirop(u)
                if name not in fs.files:
                    raise NfsError(NFS3ERR_NOENT)
                if name == BIG:
                    raise NfsError(NFS3ERR_ACCES)
                del fs.files[name]
                return NO_WCC
            if proc == 18:  # FSSTAT
                f = fs.by_fh(u.opaque(FH_LIMIT))
                return (fs.post_op_attr(f) + u64(1 << 40) + u64(1 << 39) + u64(1 << 39)
                        + u64(1 << 20) + u64(1 << 19) + u64(1 << 19) + u32(0))
            if proc == 19:  # FSINFO
                f = fs.by_fh(u.opaque(FH_LIMIT))
                xfer = fs.tiny_xfer if fs.mode == "tiny-wsize" else HONEST_XFER
                return (fs.post_op_attr(f) + u32(xfer) + u32(xfer) + u32(4096) + u32(xfer) + u32(xfer)
                        + u32(4096) + u32(4096) + u64((1 << 63) - 1) + u32(0) + u32(1) + u32(0x1b))
            if proc == 20:  # PATHCONF
                f = fs.by_fh(u.opaque(FH_LIMIT))
                return fs.post_op_attr(f) + u32(32000) + u32(255) + u32(1) + u32(1) + u32(0) + u32(1)
            if proc == 21:  # COMMIT
                fs.by_fh(u.opaque(FH_LIMIT))
                u.hyper()
                u.uint()
                return NO_WCC + (RESTARTED_VERF if fs.mode == "commit-verf" else WRITE_VERF)
        raise KeyError(proc)

    def read(self, u):
        fs = self.fs
        f = fs.by_fh(u.opaque(FH_LIMIT))
        offset, count = u.hyper(), u.uint()
        if f.is_dir:
            raise NfsError(NFS3ERR_ISDIR)
        if fs.mode == "silent":
            raise NoReply()
        count = min(count, 4 << 20)
        data = bytes(f.data[offset:offset + count])
        eof = offset + len(data) >= len(f.data)
        said = len(data)
        if fs.mode == "read-overlong":
            # More than asked: the next bytes of the file, zeros past its end. Little
            # more: a reply past rtmax + 4 KiB would meet libnfs's own PDU limit first.
            extra = 1024
            data = bytes(f.data[offset:offset + count + extra])
            data += b"\0" * (count + extra - len(data))
            said = len(data)
        elif fs.mode == "read-count-mismatch":
            data = data[:len(data) // 2]  # count still says the whole
        elif fs.mode == "read-count-under":
            said = len(data) // 2  # the data is still the whole
        elif fs.mode == "read-short":
            data = data[:len(data) // 2]
            said = len(data)
            eof = False
        elif fs.mode == "read-eof-mid" and offset >= len(f.data) // 2:
            data, said, eof = b"", 0, True
        return fs.post_op_attr(f) + u32(said) + u32(1 if eof else 0) + opaque(data)


# ---- RPC

def accepted(xid, stat, body=b""):
    return u32(xid) + u32(1) + u32(0) + u32(0) + u32(0) + u32(stat) + body


def mismatch(xid, version):
    return accepted(xid, PROG_MISMATCH, u32(version) + u32(version))


class Server:
    def __init__(self, args):
        self.args = args
        self.fs = Fs(args)
        self.nfs = Nfs(self.fs)
        self.connections = threading.BoundedSemaphore(MAX_CONNECTIONS)

    def dispatch(self, record, peer, on_pmap_port=False):
        u = Unpacker(record)
        xid, mtype = u.uint(), u.uint()
        if mtype != 0:
            raise XdrError("not a CALL")
        rpcvers, prog, vers, proc = u.uint(), u.uint(), u.uint(), u.uint()
        if rpcvers != 2:  # MSG_DENIED, RPC_MISMATCH
            return u32(xid) + u32(1) + u32(1) + u32(0) + u32(2) + u32(2)
        for _ in range(2):  # credential and verifier: not checked
            u.uint()
            u.opaque(400)
        if prog == PMAP_PROG:
            return self.portmap(xid, vers, proc, u, peer)
        if on_pmap_port and self.args.mode == "pmap-port-self":
            log("%s program %d on the portmapper's port: PROG_UNAVAIL" % (peer, prog))
            return accepted(xid, PROG_UNAVAIL)
        if prog == MOUNT_PROG:
            return self.mount(xid, vers, proc, u, peer)
        if prog == NFS_PROG:
            if vers != 3:
                return mismatch(xid, 3)
            if proc == 0:
                return accepted(xid, SUCCESS)
            if proc not in ERROR_TAIL:
                log("%s NFS3 proc %d: PROC_UNAVAIL" % (peer, proc))
                return accepted(xid, PROC_UNAVAIL)
            try:
                body = u32(NFS3_OK) + self.nfs.call(proc, u)
                log("%s NFS3 %s: ok%s" % (peer, NFS_NAMES[proc], "" if self.args.mode == "honest" else
                                             " (mode %s)" % self.args.mode))
            except NfsError as e:
                log("%s NFS3 %s: status %d" % (peer, NFS_NAMES[proc], e.status))
                body = u32(e.status) + ERROR_TAIL[proc]
            except NoReply:
                log("%s NFS3 %s: never answered (%s)" % (peer, NFS_NAMES[proc], self.args.mode))
                return None
            return accepted(xid, SUCCESS, body)
        log("%s program %d: PROG_UNAVAIL" % (peer, prog))
        return accepted(xid, PROG_UNAVAIL)

    def portmap(self, xid, vers, proc, u, peer):
        if vers != 2:
            log("%s PORTMAP v%d: PROG_MISMATCH" % (peer, vers))
            return mismatch(xid, 2)
        if proc == 0:
            return accepted(xid, SUCCESS)
        if proc == 3:  # GETPORT
            prog, pvers, prot, _ = u.uint(), u.uint(), u.uint(), u.uint()
            port = self.args.port if prog in (MOUNT_PROG, NFS_PROG) and prot == 6 else 0
            mode = self.args.mode
            if mode == "pmap-garbage":
                log("%s PORTMAP GETPORT: 3 bytes of garbage (%s)" % (peer, mode))
                return accepted(xid, SUCCESS, b"\xde\xad\xbe")
            if prog == MOUNT_PROG and mode in ("pmap-port-zero", "pmap-port-self"):
                port = 0 if mode == "pmap-port-zero" else self.args.pmap_port
            log("%s PORTMAP GETPORT prog %d v%d prot %d: %d" % (peer, prog, pvers, prot, port))
            return accepted(xid, SUCCESS, u32(port))
        if proc == 4:  # DUMP: an empty list
            return accepted(xid, SUCCESS, u32(0))
        return accepted(xid, PROC_UNAVAIL)

    def mount(self, xid, vers, proc, u, peer):
        if vers != 3:
            log("%s MOUNT v%d: PROG_MISMATCH" % (peer, vers))
            return mismatch(xid, 3)
        if proc in (0, 3, 4):  # NULL, UMNT, UMNTALL
            if proc == 3:
                u.string(1024)
            return accepted(xid, SUCCESS)
        if proc == 1:  # MNT
            path = u.string(1024)
            if path.rstrip("/") != EXPORT:
                log("%s MOUNT MNT %r: no such export" % (peer, path))
                return accepted(xid, SUCCESS, u32(2))  # MNT3ERR_NOENT
            mode = self.args.mode
            if mode == "mnt-status":
                log("%s MOUNT MNT %r: MNT3ERR_ACCES (%s)" % (peer, path, mode))
                return accepted(xid, SUCCESS, u32(13))
            log("%s MOUNT MNT %r: ok%s" % (peer, path, "" if mode == "honest" else " (mode %s)" % mode))
            root = self.fs.fh(self.fs.root)
            if mode == "mnt-fh-oversized":
                root += b"\0" * (FH_LIMIT - len(root))
            # fhandle3, then the flavours: AUTH_SYS only
            flavours = {"mnt-auth-empty": u32(0), "mnt-auth-absurd": u32((1 << 30) + 1) + u32(1) * ABSURD_SENT}
            return accepted(xid, SUCCESS, u32(0) + opaque(root) + flavours.get(mode, u32(1) + u32(1)))
        if proc == 2:  # DUMP: nobody
            return accepted(xid, SUCCESS, u32(0))
        if proc == 5:  # EXPORT: /export, no groups
            return accepted(xid, SUCCESS, u32(1) + opaque(EXPORT.encode()) + u32(0) + u32(0))
        return accepted(xid, PROC_UNAVAIL)

    def serve(self, conn, peer):
        try:
            conn.settimeout(IDLE_TIMEOUT_S)
            on_pmap_port = conn.getsockname()[1] == self.args.pmap_port
            while not STOP.is_set():
                record = read_record(conn)
                if record is None:
                    break
                try:
                    reply = self.dispatch(record, peer, on_pmap_port)
                except XdrError as e:
                    log("%s garbage: %s" % (peer, e))
                    if len(record) < 4:
                        break
                    reply = accepted(struct.unpack(">I", record[:4])[0], GARBAGE_ARGS)
                if reply is None:
                    continue
                marker = 0x80000000 | len(reply)
                if self.args.mode == "huge-record" and NFS_NAMES.get(proc_of(record)) == "READ":
                    marker = 0x80000000 | 0x7FFFFFF0  # 2^31 - 16 bytes said; far fewer follow
                    log("%s NFS3 READ: a record marker of 2^31 - 16 bytes" % peer)
                conn.sendall(u32(marker) + reply)
        except (OSError, XdrError) as e:
            log("%s closed: %s" % (peer, e))
        finally:
            conn.close()
            self.connections.release()


def proc_of(record):
    """The procedure of an NFS call, or None."""
    if len(record) < 24:
        return None
    _, _, _, prog, _, proc = struct.unpack(">6I", record[:24])
    return proc if prog == NFS_PROG else None


def recv_exact(conn, n):
    chunks, got = [], 0
    while got < n:
        chunk = conn.recv(min(n - got, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def read_record(conn):
    """One RPC record (its fragments joined), or None at the end of the connection."""
    parts, total = [], 0
    for _ in range(MAX_FRAGMENTS):
        header = recv_exact(conn, 4)
        if header is None:
            return None
        word = struct.unpack(">I", header)[0]
        size = word & 0x7FFFFFFF
        total += size
        if total > MAX_RECORD:
            raise XdrError("a record over %d bytes" % MAX_RECORD)
        part = recv_exact(conn, size) if size else b""
        if part is None:
            return None
        parts.append(part)
        if word & 0x80000000:
            return b"".join(parts)
    raise XdrError("more than %d fragments" % MAX_FRAGMENTS)


def listener(address, port):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((address, port))
    s.listen(16)
    s.setblocking(False)
    return s


def main():
    p = argparse.ArgumentParser(description="A hostile fake NFSv3 server (tests only).")
    p.add_argument("--mode", choices=MODES, default="honest")
    p.add_argument("--listen", default="127.0.0.1", help="address of both ports")
    p.add_argument("--port", type=int, default=2049, help="MOUNT and NFS (the portmapper is on 111)")
    p.add_argument("--pmap-port", type=int, default=PMAP_PORT)
    p.add_argument("--size", type=int, default=8 << 20, help="big.bin's size in bytes")
    p.add_argument("--max-file", type=int, default=64 << 20, help="largest file a client may write")
    p.add_argument("--tiny-xfer", type=int, default=TINY_XFER, help="tiny-wsize: the rtmax and wtmax offered")
    p.add_argument("--lifetime", type=float, default=600, help="seconds before it exits on its own")
    p.add_argument("--write-content", metavar="FILE", help="write big.bin's bytes to FILE and exit")
    args = p.parse_args()
    if not 0 < args.size <= 1 << 30:
        p.error("--size: 1 byte to 1 GiB")
    if args.write_content:
        with open(args.write_content, "wb") as out:
            out.write(content(args.size))
        return 0

    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: STOP.set())
    server = Server(args)
    sockets = [listener(args.listen, args.pmap_port), listener(args.listen, args.port)]
    log("mode %s: portmapper on %s:%d, MOUNT and NFS on %s:%d, %s/%s of %d bytes"
        % (args.mode, args.listen, args.pmap_port, args.listen, args.port, EXPORT, BIG, args.size))
    deadline = time.monotonic() + args.lifetime
    while not STOP.is_set() and time.monotonic() < deadline:
        try:
            ready, _, _ = select.select(sockets, [], [], 0.2)
        except InterruptedError:
            continue
        for s in ready:
            try:
                conn, addr = s.accept()
            except OSError as e:
                log("accept: %s" % e)
                continue
            if not server.connections.acquire(blocking=False):
                log("%s:%d refused: %d connections already" % (addr[0], addr[1], MAX_CONNECTIONS))
                conn.close()
                continue
            conn.setblocking(True)
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            threading.Thread(target=server.serve, args=(conn, "%s:%d" % addr), daemon=True).start()
    for s in sockets:
        s.close()
    log("stopped" if STOP.is_set() else "lifetime over")
    return 0


if __name__ == "__main__":
    sys.exit(main())
