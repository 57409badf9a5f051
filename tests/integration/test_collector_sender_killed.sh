#!/usr/bin/env bash
# shellcheck disable=SC2154  # NAME_PID, NAME_PORT...: set by lib.sh's start_*, lab_* and cpu_group with printf -v
# docs/DESIGN.md §5 (CSV contract) and §4 (security: Files): a sender that dies mid-transfer cannot report
# anything, but the receiver reports its own row: the transfer, status aborted,
# reaches the collector's transfers.csv.
source "$(dirname "$0")/lib.sh"

mkdir -p "$T/target"
start_collector col
start_receiver rx --target "$T/target" --min-free off --collector 127.0.0.1:"$col_PORT"

"$NASPERF" sender --to 127.0.0.1:"$rx_PORT" --size 20GiB --sync none --collector 127.0.0.1:"$col_PORT" \
  --out "$T/local" --no-progress >"$T/sender.log" 2>&1 &
sender_pid=$!
PIDS+=("$sender_pid")

wait_for "a partial file over 32 MiB in the target" 30 partial_file_over $((32 << 20))
alive "$sender_pid" || fail "sender ended before it could be killed: $(tail -3 "$T/sender.log")"
kill -KILL "$sender_pid"
wait "$sender_pid" 2>/dev/null || true

csv=$T/col/transfers.csv
aborted_row() { [ -f "$csv" ] && csv_role_col "$csv" receiver status | grep -qx aborted; }
wait_for "the receiver's aborted row in the collector's transfers.csv" 30 aborted_row

[ "$(($(wc -l <"$csv") - 1))" -eq 1 ] || fail "expected only the receiver's row: $(cat "$csv")"
[ -n "$(csv_role_col "$csv" receiver error)" ] || fail "aborted row without an error: $(cat "$csv")"
[ -z "$(csv_role_col "$csv" sender status)" ] || fail "a sender row appeared from a killed sender"
alive "$rx_PID" || fail "receiver died after the sender was killed"
alive "$col_PID" || fail "collector died"
echo "ok: the receiver's aborted row reached the collector"
