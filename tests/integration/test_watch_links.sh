#!/usr/bin/env bash
# nasperf watch DIR as root against a user who can write DIR (issue 42 row 2): a
# subdirectory swapped for a link to a directory outside DIR, and a directory flipped
# with a link to a device by renameat2(RENAME_EXCHANGE), must never make the watcher
# row, list or open what the link points to; every file is reached beneath its
# directory's descriptor. On the old code (names resolved as path strings) the first
# gave a row of the outside file's bytes and the second opened the device.
source "$(dirname "$0")/lib.sh"
need_root "device nodes (mknod)"

W=$T/w          # the watched directory: the user's
OUTSIDE=$T/root # root's own files, outside W
mkdir -p "$W/d" "$W/sub" "$OUTSIDE" "$T/dev"

# watch NAME: a watcher on W, its rows in $T/NAME, its lines in $T/NAME.log.
watch() {
  "$NASPERF" watch "$W" --out "$T/$1" --interval 200ms --idle 1s --min-size 1MiB >"$T/$1.log" 2>&1 &
  WATCH_PID=$!
  PIDS+=("$WATCH_PID")
  # shellcheck disable=SC2317  # called by wait_for
  watching() { grep -q "^watching " "$T/$1.log" 2>/dev/null; }
  wait_for "nasperf watch on $W" 20 watching "$1"
}
# stop_watch NAME: after a control copy into W (2 MiB over ~0.2 s: long enough to time)
# is rowed, Ctrl-C (the copies still open are rowed too).
stop_watch() {
  python3 -c 'import os, sys, time
with open(sys.argv[1], "wb") as f:
    for _ in range(8):
        f.write(os.urandom(256 << 10)); f.flush(); time.sleep(0.025)' "$W/ok-$1.bin"
  # shellcheck disable=SC2317  # called by wait_for
  rowed() { grep -q "^copy [0-9]*  ok-$1.bin " "$T/$1.log"; }
  wait_for "the row of the control copy ok-$1.bin" 20 rowed "$1"
  kill -INT "$WATCH_PID"
  wait "$WATCH_PID" || fail "watch exited $?: $(cat "$T/$1.log")"
}

# (a) d renamed out of W and a link d -> OUTSIDE put in its place: the watch on d still
# sees the user's writes there; it must stat the file beneath the directory it watches
# (the user's 1 byte), not OUTSIDE/big.bin (root's file, being written meanwhile).
watch swap
mv "$W/d" "$T/away"
ln -s "$OUTSIDE" "$W/d"
python3 - "$OUTSIDE/big.bin" "$T/away/big.bin" <<'PY'
import os, sys, time
root = open(sys.argv[1], "wb", buffering=0)
root.write(os.urandom(256 << 10))
user = open(sys.argv[2], "wb", buffering=0)  # the user's file of the same name, in the watched d
user.write(b"x")
for _ in range(15):  # root's copy goes on for a while, paced; the user's file stays open
    time.sleep(0.03)
    root.write(os.urandom(256 << 10))
root.close()
user.close()
PY
stop_watch swap
python3 - "$T/swap/transfers.csv" <<'PY' || fail "rows from outside the watched directory"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
names = [r["observed_file"] for r in rows]
print("swap: rows", [(r["observed_file"], r["bytes"]) for r in rows])
if names != ["ok-swap.bin"]:
    sys.exit(f"expected only the control copy's row, got {names}")
PY

# (b) sub flipped with a link to $T/dev, whose entries are all a device node (the same
# major:minor as /dev/null), while the user creates files in sub: every IN_OPEN on the
# device is an open by the watcher (nothing else opens it). Bounded: 3 s or 200000 flips.
mknod "$T/dev/node" c 1 3
for i in $(seq 400); do ln "$T/dev/node" "$T/dev/f$i"; done
ln -s "$T/dev" "$W/lnk"
watch flip
# Counts the device's opens until $T/flip.done appears: the watcher catches up with the
# events after the loop, so its opens are counted until it has exited.
python3 - "$W" "$T/dev/node" "$T/flip.done" <<'PY' >"$T/flip.out" 2>&1 &
import ctypes, os, struct, sys, threading, time
w, node, done = sys.argv[1], sys.argv[2], sys.argv[3]
libc = ctypes.CDLL(None, use_errno=True)
IN_OPEN, AT_FDCWD, RENAME_EXCHANGE = 0x20, -100, 2
ino = libc.inotify_init1(0)
if ino < 0 or libc.inotify_add_watch(ino, node.encode(), IN_OPEN) < 0:
    sys.exit("inotify: " + os.strerror(ctypes.get_errno()))
real = os.open(w + "/sub", os.O_PATH | os.O_DIRECTORY)  # the user's directory, wherever it is
stop, flips = threading.Event(), [0]

def flip():
    a, b = (w + "/sub").encode(), (w + "/lnk").encode()
    while not stop.is_set() and flips[0] < 200000:
        if libc.renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE) != 0:
            print("renameat2: " + os.strerror(ctypes.get_errno()))
            return
        flips[0] += 1

t = threading.Thread(target=flip)
t.start()
end = time.monotonic() + 3
for i in range(1, 401):  # a new name each: one the watcher has not seen before
    if time.monotonic() > end:
        break
    os.close(os.open(f"f{i}", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=real))
    time.sleep(0.005)  # pacing, not synchronization: spread over the loop
stop.set()
t.join()
print(f"flipped {flips[0]} times", flush=True)
opens, deadline = 0, time.monotonic() + 60
os.set_blocking(ino, False)
while time.monotonic() < deadline:
    try:
        buf = os.read(ino, 65536)
        opens += sum(1 for at in range(0, len(buf), 16) if struct.unpack_from("iIII", buf, at)[1] & IN_OPEN)
        continue
    except BlockingIOError:
        pass
    if os.path.exists(done):
        break
    time.sleep(0.02)
print(f"device opened {opens} times")
PY
FLIP_PID=$!
PIDS+=("$FLIP_PID")
# shellcheck disable=SC2317  # called by wait_for
flipped() { grep -q "^flipped " "$T/flip.out"; }
wait_for "the flip loop" 20 flipped
stop_watch flip
touch "$T/flip.done"
wait "$FLIP_PID" || fail "the flip loop: $(cat "$T/flip.out")"
cat "$T/flip.out"
grep -q "^device opened 0 times" "$T/flip.out" || fail "the watcher opened the device: $(cat "$T/flip.out")"
echo "PASS: no row from outside the watched directory; the device never opened"
