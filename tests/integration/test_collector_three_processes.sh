#!/usr/bin/env bash
# shellcheck disable=SC2154  # NAME_PID, NAME_PORT...: set by lib.sh's start_*, lab_* and cpu_group with printf -v
# docs/DESIGN.md §5 (CSV contract): collector, receiver and sender as three processes. The
# receiver and the sender both report to the collector (the receiver's row is
# reported twice, deduplicated); after 3 runs transfers.csv holds exactly 6 rows,
# 3 per role, all ok, each (role, transfer_id) once, and the sender says every
# report was delivered.
source "$(dirname "$0")/lib.sh"

mkdir -p "$T/target"
start_collector col
start_receiver rx --target "$T/target" --min-free off --collector 127.0.0.1:"$col_PORT"

"$NASPERF" sender --to 127.0.0.1:"$rx_PORT" --size 64MiB --runs 3 --collector 127.0.0.1:"$col_PORT" \
  --out "$T/local" --no-progress >"$T/sender.log" 2>&1 || fail "sender failed: $(tail -5 "$T/sender.log")"
grep -q "every report delivered to collector" "$T/sender.log" \
  || fail "sender did not say every report was delivered: $(tail -5 "$T/sender.log")"

csv=$T/col/transfers.csv
data_rows() { [ -f "$csv" ] && [ "$(($(wc -l <"$csv") - 1))" -ge "$1" ]; }
wait_for "6 rows in the collector's transfers.csv" 20 data_rows 6
# one console line per row that lands: "ROLE HOST ..." (the collector also logs
# "nasperf collector: ..." lines, which are not rows)
row_lines() { grep -cE '^(sender|receiver) ' "$T/col.log" || true; }
console_lines() { [ "$(row_lines)" -ge "$1" ]; }
wait_for "6 console lines from the collector" 10 console_lines 6

[ "$(($(wc -l <"$csv") - 1))" -eq 6 ] || fail "expected exactly 6 data rows, got: $(cat "$csv")"
[ "$(grep -c '^run_id,' "$csv")" -eq 1 ] || fail "header not exactly once"
[ "$(csv_role_col "$csv" sender status | grep -c .)" -eq 3 ] || fail "expected 3 sender rows: $(cat "$csv")"
[ "$(csv_role_col "$csv" receiver status | grep -c .)" -eq 3 ] || fail "expected 3 receiver rows: $(cat "$csv")"
bad=$(csv_col "$csv" status | grep -vx ok || true)
[ -z "$bad" ] || fail "rows not ok: $bad"
dups=$(paste -d'|' <(csv_col "$csv" role) <(csv_col "$csv" transfer_id) | sort | uniq -d)
[ -z "$dups" ] || fail "(role, transfer_id) more than once: $dups"
empty_id=$(csv_col "$csv" transfer_id | grep -cx '' || true)
[ "$empty_id" -eq 0 ] || fail "$empty_id rows with an empty transfer_id"
[ "$(($(wc -l <"$T/col/samples.csv") - 1))" -gt 0 ] || fail "samples.csv has no rows"
[ "$(row_lines)" -eq 6 ] || fail "expected 6 collector console lines, got: $(cat "$T/col.log")"
[ ! -e "$T/local/transfers.csv" ] || fail "sender with --collector wrote a local CSV"
echo "ok: 6 rows (3 sender, 3 receiver), all ok, each once; 6 console lines; every report delivered"
