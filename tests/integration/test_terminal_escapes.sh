#!/usr/bin/env bash
# Issue 29 row 10: text from a file or a peer never drives the terminal. A
# transfers.csv from anywhere carries escape sequences in its label, host and error
# cells (\e]0;pwned\a sets the window title, \e[2J clears the screen, \xc2\x9b is the
# C1 CSI): `nasperf report`, `report --json` and `compare` print them as visible
# escapes (\x1b), never the raw bytes; a cell that does not read, quoted in the error
# exit's one line, is escaped too.
source "$(dirname "$0")/lib.sh"

header="run_id,label,iteration,stream,role,host,peer,transport,bytes,started_at,duration_s,mb_per_s,status,error"
esc=$'\033'
title="${esc}]0;pwned"$'\a'
clear="${esc}[2J"
csi=$'\xc2\x9b'"31m"
row() {  # label iteration rate status error (run id: the label's first three letters)
  printf 'run-%.3s,%s,%s,0,receiver,nas%s,10.0.0.2,native,1000000000,2026-12-02T10:00:00.000Z,2.0,%s,%s,%s\n' \
    "$1" "$1" "$2" "$title" "$3" "$4" "$5"
}
mkdir -p "$T/hostile"
{
  echo "$header"
  for i in 1 2 3; do row "hdd${title}" $i 400.$i ok ""; done
  for i in 1 2 3; do row "nvme${csi}" $i 500.$i ok ""; done
  row "hdd${title}" 4 "" failed "disk gone${clear}${esc}[31m"
} >"$T/hostile/transfers.csv"

# no_raw LOG: the output holds no ESC byte and no C1 control.
no_raw() {
  ! grep -q "$esc" "$T/$1" || fail "$1: a raw ESC reached the terminal: $(grep -n "$esc" "$T/$1" | head -1 | cat -v)"
  ! grep -q $'\xc2\x9b' "$T/$1" || fail "$1: a raw C1 CSI reached the terminal"
}

"$NASPERF" report "$T/hostile" >"$T/report.log" 2>&1 || fail "report exited non-zero: $(cat "$T/report.log")"
no_raw report.log
grep -qF 'hdd\x1b]0;pwned\x07' "$T/report.log" || fail "the label is not shown escaped: $(cat "$T/report.log")"
grep -qF 'nvme\xc2\x9b31m' "$T/report.log" || fail "the C1 control is not shown escaped"
grep -qF 'disk gone\x1b[2J\x1b[31m' "$T/report.log" || fail "the error is not shown escaped"

"$NASPERF" report "$T/hostile" --json >"$T/json.log" 2>&1 || fail "report --json exited non-zero"
no_raw json.log
if command -v python3 >/dev/null; then python3 -m json.tool "$T/json.log" >/dev/null || fail "report --json is not JSON"; fi

"$NASPERF" compare "$T/hostile" --by label >"$T/compare.log" 2>&1 || fail "compare exited non-zero: $(cat "$T/compare.log")"
no_raw compare.log

# The error exit: a cell that does not read is quoted in the one line.
{ echo "$header"; row "hdd" "${clear}" 400 ok ""; } >"$T/hostile/transfers.csv"
rc=0
"$NASPERF" report "$T/hostile" >"$T/bad.log" 2>&1 || rc=$?
[ $rc = 1 ] || fail "an unreadable iteration cell: exit $rc, want 1: $(cat "$T/bad.log")"
[ "$(wc -l <"$T/bad.log")" = 1 ] || fail "not one line: $(cat "$T/bad.log")"
no_raw bad.log
grep -qF "$T/hostile/transfers.csv" "$T/bad.log" || fail "the error does not name the file: $(cat "$T/bad.log")"
echo "ok: report, report --json, compare and the error exit show escape sequences from a CSV escaped, never raw"
