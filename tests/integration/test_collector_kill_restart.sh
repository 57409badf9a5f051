#!/usr/bin/env bash
# shellcheck disable=SC2154  # NAME_PID, NAME_PORT...: set by lib.sh's start_*, lab_* and cpu_group with printf -v
# docs/DESIGN.md §5 (CSV contract): no result is lost because the collector was down. The
# collector is SIGKILLed in the middle of an 8-run loop and restarted on the same
# port once a report has found it down and gone to a spool. The transfers themselves are unaffected (the sender exits
# 0); once the spools drain, transfers.csv holds 16 rows, 8 per role, every
# (role, transfer_id) exactly once, and the header only once.
source "$(dirname "$0")/lib.sh"

mkdir -p "$T/target"
free_port   # not an ephemeral port: the restart must find it still free
start_collector col --listen 127.0.0.1:"$port"
start_receiver rx --target "$T/target" --min-free off --collector 127.0.0.1:"$col_PORT"

"$NASPERF" sender --to 127.0.0.1:"$rx_PORT" --size 128MiB --runs 8 --pause 1s \
  --collector 127.0.0.1:"$col_PORT" --out "$T/local" --no-progress >"$T/sender.log" 2>&1 &
sender_pid=$!
PIDS+=("$sender_pid")

csv=$T/col/transfers.csv
data_rows() { [ -f "$csv" ] && [ "$(($(wc -l <"$csv") - 1))" -ge "$1" ]; }
wait_for "2 rows in the collector's transfers.csv" 30 data_rows 2
alive "$sender_pid" || fail "the sender finished before the collector could be killed"
kill -KILL "$col_PID"
wait "$col_PID" 2>/dev/null || true
rows_at_kill=$(($(wc -l <"$csv") - 1))

spooled() { grep -q "reports wait in" "$T/sender.log" "$T/rx.log"; }
wait_for "a report to find the collector down and spool" 60 spooled
start_collector col --listen 127.0.0.1:"$col_PORT"

sender_done() { ! alive "$sender_pid"; }
wait_for "the sender to finish" 60 sender_done
rc=0
wait "$sender_pid" || rc=$?
[ "$rc" -eq 0 ] || fail "sender exited $rc, want 0 (the transfers are fine): $(tail -5 "$T/sender.log")"

wait_for "16 rows after the spools drain" 60 data_rows 16

[ "$(($(wc -l <"$csv") - 1))" -eq 16 ] || fail "expected exactly 16 data rows, got $(($(wc -l <"$csv") - 1))"
[ "$(grep -c '^run_id,' "$csv")" -eq 1 ] || fail "header not exactly once: $(grep -n '^run_id,' "$csv")"
[ "$(csv_role_col "$csv" sender transfer_id | grep -c .)" -eq 8 ] || fail "expected 8 sender rows"
[ "$(csv_role_col "$csv" receiver transfer_id | grep -c .)" -eq 8 ] || fail "expected 8 receiver rows"
dups=$(paste -d'|' <(csv_col "$csv" role) <(csv_col "$csv" transfer_id) | sort | uniq -d)
[ -z "$dups" ] || fail "(role, transfer_id) more than once: $dups"
[ "$(csv_col "$csv" transfer_id | sort -u | grep -c .)" -eq 8 ] || fail "expected 8 distinct transfer ids"
bad=$(csv_col "$csv" status | grep -vx ok || true)
[ -z "$bad" ] || fail "rows not ok: $bad"
echo "ok: collector killed at $rows_at_kill rows and restarted; 16 rows, each once, one header"
