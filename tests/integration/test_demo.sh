#!/usr/bin/env bash
# docs/guides/demo.md: `nasperf demo` runs receiver + sender on loopback in one
# command: 1 warm-up + 2 measured runs give 6 rows (sender and receiver each),
# exactly the 2 warm-up rows marked warmup=true, all ok, and a summary on the
# console.
source "$(dirname "$0")/lib.sh"

rc=0
timeout -k 5 180 "$NASPERF" demo --runs 2 --size 64MiB --dir "$T/demo" >"$T/demo.log" 2>&1 || rc=$?
[ "$rc" -eq 0 ] || fail "demo exited $rc: $(tail -5 "$T/demo.log")"

csv=$T/demo/results/transfers.csv
[ -f "$csv" ] || fail "no $csv"
rows=$(($(wc -l <"$csv") - 1))
[ "$rows" -eq 6 ] || fail "expected 6 data rows, got $rows"
[ "$(csv_col "$csv" role | sort | uniq -c | awk '{print $1 $2}' | tr '\n' ' ')" = "3receiver 3sender " ] \
  || fail "expected 3 sender and 3 receiver rows"
[ "$(csv_col "$csv" warmup | grep -c '^true$' || true)" -eq 2 ] || fail "expected exactly 2 rows with warmup=true"
[ "$(csv_col "$csv" warmup | grep -c '^false$' || true)" -eq 4 ] || fail "expected 4 rows with warmup=false"
[ "$(csv_col "$csv" status | sort -u)" = "ok" ] || fail "not every row is ok"
grep -q "summary" "$T/demo.log" || fail "no summary on the console"
echo "ok: demo wrote 6 rows (2 warm-up) and printed a summary"
