#!/usr/bin/env bash
# shellcheck disable=SC2154  # NAME_PID, NAME_PORT...: set by lib.sh's start_*, lab_* and cpu_group with printf -v
# docs/DESIGN.md §5 (CSV contract): agents that cannot reach the collector spool their reports
# and resend them. The receiver and the sender run against a collector port where
# nothing listens yet: the sender still exits 0 and says reports are spooled. Once
# the collector starts on that port, every row arrives exactly once and
# `nasperf flush` finds an empty spool.
source "$(dirname "$0")/lib.sh"

runs=3
# Learn a free loopback port: a collector on port 0, stopped again.
free_port

mkdir -p "$T/target"
start_receiver rx --target "$T/target" --min-free off --collector 127.0.0.1:"$port"
"$NASPERF" sender --to 127.0.0.1:"$rx_PORT" --size 32MiB --runs "$runs" --collector 127.0.0.1:"$port" \
  --out "$T/local" --no-progress >"$T/sender.log" 2>&1 || fail "sender failed: $(tail -5 "$T/sender.log")"
grep -qE "[0-9]+ reports? still spooled in " "$T/sender.log" \
  || fail "sender did not say reports are still spooled: $(tail -3 "$T/sender.log")"
spool=$HOME/.local/state/nasperf/spool/127.0.0.1_$port
[ -n "$(ls "$spool"/*.report 2>/dev/null)" ] || fail "no spooled reports in $spool: $(ls -la "$spool" 2>&1)"
[ ! -e "$T/local/transfers.csv" ] || fail "sender with --collector wrote a local CSV"

start_collector col --listen 127.0.0.1:"$port"
csv=$T/col/transfers.csv
data_rows() { [ -f "$csv" ] && [ "$(($(wc -l <"$csv") - 1))" -ge "$1" ]; }
wait_for "$((2 * runs)) rows once the collector is up" 30 data_rows $((2 * runs))

"$NASPERF" flush --collector 127.0.0.1:"$port" --wait 20s >"$T/flush.log" 2>&1 \
  || fail "flush did not find an empty spool: $(cat "$T/flush.log")"
grep -q "every report delivered" "$T/flush.log" || fail "flush output: $(cat "$T/flush.log")"

[ "$(($(wc -l <"$csv") - 1))" -eq $((2 * runs)) ] || fail "expected exactly $((2 * runs)) rows: $(cat "$csv")"
[ "$(grep -c '^run_id,' "$csv")" -eq 1 ] || fail "header not exactly once"
[ "$(csv_role_col "$csv" sender status | grep -c .)" -eq "$runs" ] || fail "expected $runs sender rows"
[ "$(csv_role_col "$csv" receiver status | grep -c .)" -eq "$runs" ] || fail "expected $runs receiver rows"
dups=$(paste -d'|' <(csv_col "$csv" role) <(csv_col "$csv" transfer_id) | sort | uniq -d)
[ -z "$dups" ] || fail "(role, transfer_id) more than once: $dups"
bad=$(csv_col "$csv" status | grep -vx ok || true)
[ -z "$bad" ] || fail "rows not ok: $bad"
[ -z "$(ls "$spool"/*.report 2>/dev/null)" ] || fail "reports left in the spool: $(ls "$spool")"
echo "ok: sender spooled with nothing listening; $((2 * runs)) rows arrived once after a late start; flush exits 0"
