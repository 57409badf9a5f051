#!/usr/bin/env bash
# nasperf watch DIR against a user who can write DIR (issue 42 row 7): a rename storm
# must not make a line per event (the old code: one per rename of a directory), and a
# file named with ESC, LF, CR and bytes that are not UTF-8 must reach the observed_file
# cell escaped ("\x1b"), the CSV still parsing to the same rows, one line each.
source "$(dirname "$0")/lib.sh"

W=$T/w
mkdir -p "$W/a"
"$NASPERF" watch "$W" --out "$T/out" --interval 200ms --idle 1s --min-size 1MiB >"$T/watch.log" 2>&1 &
WATCH_PID=$!
PIDS+=("$WATCH_PID")
# shellcheck disable=SC2317  # called by wait_for
watching() { grep -q "^watching " "$T/watch.log" 2>/dev/null; }
wait_for "nasperf watch on $W" 20 watching

# 20000 renames of a directory: each MOVED_TO asks the watcher to watch a name that is
# already gone again.
python3 - "$W" <<'PY'
import os, sys
a, b = sys.argv[1] + "/a", sys.argv[1] + "/b"
for _ in range(10000):
    os.rename(a, b)
    os.rename(b, a)
PY

# copy NAME: 2 MiB into W/NAME over ~0.2 s (long enough to be timed), NAME as bytes.
copy() {
  python3 -c 'import os, sys, time
name = os.fsencode(sys.argv[1]).decode("unicode_escape").encode("latin-1")
with open(os.path.join(os.fsencode(sys.argv[2]), name), "wb") as f:
    for _ in range(8):
        f.write(os.urandom(256 << 10)); f.flush(); time.sleep(0.025)' "$1" "$W"
}
copy 'evil\x1b[31m\nrow,\r\xff\xfe.bin'
copy 'ok.bin'
# shellcheck disable=SC2317  # called by wait_for
rowed() { [ "$(grep -c '^copy [0-9]' "$T/watch.log")" -ge 2 ]; }
wait_for "the rows of both copies" 20 rowed
kill -INT "$WATCH_PID"
wait "$WATCH_PID" || fail "watch exited $?: $(tail -5 "$T/watch.log")"

python3 - "$T/out/transfers.csv" <<'PY' || fail "the observed_file cell"
import csv, io, sys
data = open(sys.argv[1], "rb").read()
text = data.decode("utf-8")  # raises on bytes that are not UTF-8
records = data.count(b"\n")
if any(c in data for c in (b"\x1b", b"\r", b"\xff")):
    sys.exit("a raw ESC, CR or 0xff byte in transfers.csv")
rows = list(csv.DictReader(io.StringIO(text, newline="")))
names = sorted(r["observed_file"] for r in rows)
print("observed_file:", names)
want = "evil\\x1b[31m\\x0arow,\\x0d\\xff\\xfe.bin"
if names != sorted([want, "ok.bin"]):
    sys.exit(f"expected {want!r} and 'ok.bin', got {names}")
if records != len(rows) + 1:
    sys.exit(f"{records} lines for {len(rows)} rows and the header: a cell spans lines")
PY
lines=$(wc -l <"$T/watch.log")
echo "watch said $lines lines for 20000 renames and 2 copies"
[ "$lines" -le 60 ] || fail "$lines lines: a line per event ($(sort "$T/watch.log" | uniq -c | sort -rn | head -2))"

echo "PASS: the storm's lines bounded, the name escaped in one CSV line"
