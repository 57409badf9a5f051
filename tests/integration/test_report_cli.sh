#!/usr/bin/env bash
# `nasperf report` and `nasperf compare` on CSVs written by hand: a real 30%
# difference on 5 vs 5 runs is called "faster by", a second sample of the same
# configuration "no significant difference"; warm-ups and failures stay out;
# several files merge; appended columns are fine; a malformed file is named with its
# line; a wrong flag is one line and exit 2.
source "$(dirname "$0")/lib.sh"

header="run_id,label,iteration,stream,role,host,peer,transport,bytes,started_at,duration_s,mb_per_s,first_byte_s,write_s,sync_s,net_wait_pct,disk_wait_pct,bottleneck,write_mode,sync_policy,mtu,path_mtu,mss,link_mbps,line_rate_pct,checksum,verified,status,error,transfer_id,warmup,source_wait_pct,added_later"
row() {  # label iteration rate [status] [warmup] [error] [write_mode]
  printf 'run-%s,%s,%s,0,receiver,nas,10.0.0.2,native,1000000000,2026-12-02T10:%02d:00.000Z,2.0,%s,0.001,1.0,0.5,5.0,40.0,disk,%s,end,9000,,8948,10000,50.0,,false,%s,%s,%s,%s,,extra\n' \
    "$1" "$1" "$2" "$(( ($2 + 10) % 60 ))" "$3" "${7:-direct}" "${4:-ok}" "${6:-}" "$2" "${5:-false}"
}
mkdir -p "$T/day1" "$T/day2"
{
  echo "$header"
  row hdd-parity 0 9999 ok true
  i=1; for r in 400.2 412.5 395.8 405.1 398.9; do row hdd-parity $i $r; i=$((i+1)); done
  row hdd-parity 6 "" failed false '"write /mnt/x: No space left on device"'
} >"$T/day1/transfers.csv"
{
  echo "$header"
  i=1; for r in 520.3 534.1 515.0 528.8 511.6; do row nvme-parity $i $r ok false "" buffered; i=$((i+1)); done
  i=1; for r in 403.7 397.2 409.9 401.4 393.5; do row hdd-again $i $r; i=$((i+1)); done
} >"$T/day2/transfers.csv"

"$NASPERF" compare "$T/day1" "$T/day2/transfers.csv" --by label >"$T/compare.log" 2>&1 \
  || fail "compare exited non-zero: $(cat "$T/compare.log")"
cat "$T/compare.log"
grep -q "baseline hdd-parity" "$T/compare.log" || fail "the first label in file order is not the baseline"
grep -E "^  nvme-parity +5 .*faster by 30\.0% \(95% CI [0-9.]+–[0-9.]+%\)" "$T/compare.log" >/dev/null \
  || fail "30% faster on 5 vs 5 runs not called faster"
grep -E "^  hdd-again +5 .*no significant difference \([-+][0-9.]+%, 95% CI " "$T/compare.log" >/dev/null \
  || fail "a second sample of the same config not called 'no significant difference'"

"$NASPERF" compare "$T/day1" "$T/day2" --baseline nvme-parity --json >"$T/compare.json" || fail "compare --json"
grep -q '"baseline":"nvme-parity"' "$T/compare.json" || fail "--baseline ignored"
grep -q '"verdict":"slower by 23.1%' "$T/compare.json" || fail "no 'slower by' verdict in JSON: $(cat "$T/compare.json")"
if command -v python3 >/dev/null; then python3 -m json.tool "$T/compare.json" >/dev/null || fail "compare --json is not JSON"; fi

"$NASPERF" compare "$T/day1" "$T/day2" --by write_mode >"$T/by.log" || fail "compare --by write_mode"
grep -E "^  buffered +5 .*faster by" "$T/by.log" >/dev/null || fail "--by write_mode: $(cat "$T/by.log")"

"$NASPERF" report "$T/day1" "$T/day2" --html "$T/r.html" >"$T/report.log" || fail "report exited non-zero"
cat "$T/report.log"
grep -E "^  hdd-parity +5 +400\.2 +402\.5 " "$T/report.log" >/dev/null || fail "hdd-parity summary wrong (warm-up or failure averaged in?)"
grep -q "failures (never averaged in): 1" "$T/report.log" || fail "failure not listed apart"
grep -q "day1/transfers.csv:8" "$T/report.log" || fail "failure row not located by file and line"
grep -q "No space left on device" "$T/report.log" || fail "failure reason missing"
grep -q "warm-ups skipped: 1 row" "$T/report.log" || fail "warm-up not skipped"
[ -s "$T/r.html" ] || fail "no HTML written"
grep -q "<script" "$T/r.html" && fail "the HTML report contains a script"
"$NASPERF" report "$T/day1" "$T/day2" --json >"$T/report.json" || fail "report --json"
grep -q '"label":"nvme-parity","role":"receiver","n":5,"median":520.3' "$T/report.json" || fail "report --json: $(cat "$T/report.json")"
if command -v python3 >/dev/null; then python3 -m json.tool "$T/report.json" >/dev/null || fail "report --json is not JSON"; fi
"$NASPERF" report "$T/day1" --role sender >"$T/sender.log" || fail "report --role sender"
grep -q "no measured rows for role sender" "$T/sender.log" || fail "no note that there are no sender rows"

# A malformed file: the error names the file and the line.
{ echo "$header"; row x 1 100; echo "run-x,x,2,0,receiver"; } >"$T/bad.csv"
rc=0; "$NASPERF" report "$T/bad.csv" >"$T/bad.log" 2>&1 || rc=$?
[ "$rc" -eq 1 ] || fail "malformed CSV: exit $rc, expected 1"
grep -q "bad.csv:3: 5 fields, the header has 33" "$T/bad.log" || fail "error does not name file and line: $(cat "$T/bad.log")"
{ echo "$header"; row x 1 fast; } >"$T/nan.csv"
rc=0; "$NASPERF" compare "$T/nan.csv" >"$T/nan.log" 2>&1 || rc=$?
[ "$rc" -eq 1 ] || fail "bad number: exit $rc, expected 1: $(cat "$T/nan.log")"
grep -q "nan.csv:2: column mb_per_s: 'fast' is not a number" "$T/nan.log" \
  || fail "bad number not reported with file and line: $(cat "$T/nan.log")"

# Usage errors: one line, exit 2.
rc=0; "$NASPERF" compare "$T/day1" --by colour >"$T/usage.log" 2>&1 || rc=$?
[ "$rc" -eq 2 ] || fail "--by colour: exit $rc, expected 2"
[ "$(wc -l <"$T/usage.log")" -eq 1 ] || fail "usage error is not one line: $(cat "$T/usage.log")"
rc=0; "$NASPERF" report >"$T/usage2.log" 2>&1 || rc=$?
[ "$rc" -eq 2 ] || fail "report without inputs: exit $rc, expected 2"
rc=0; "$NASPERF" compare "$T/day1" --baseline nope >"$T/nobase.log" 2>&1 || rc=$?
[ "$rc" -eq 1 ] || fail "unknown baseline: exit $rc, expected 1: $(cat "$T/nobase.log")"
grep -q "baseline 'nope'" "$T/nobase.log" || fail "unknown baseline: $(cat "$T/nobase.log")"
echo "ok: compare tells 30% from noise on 5 vs 5; report skips warm-ups and failures; errors name file and line"
