#!/usr/bin/env bash
# shellcheck disable=SC2154  # NAME_PID, NAME_PORT...: set by lib.sh's start_*, lab_* and cpu_group with printf -v
# A receiver that dies mid-loop: after the first of 4 transfers the receiver is
# killed with SIGKILL. The sender must not hang: it finishes on its own with exit 1,
# and transfers.csv has 4 sender rows, the first ok, the other three failed with a
# non-empty error.
source "$(dirname "$0")/lib.sh"

mkdir -p "$T/target"
start_receiver rx --target "$T/target" --min-free off

"$NASPERF" sender --to 127.0.0.1:"$rx_PORT" --size 256MiB --runs 4 --pause 5s --out "$T/out" \
  --no-progress >"$T/sender.log" 2>&1 &
sender_pid=$!
PIDS+=("$sender_pid")

csv=$T/out/transfers.csv
data_rows() { [ -f "$csv" ] && [ "$(($(wc -l <"$csv") - 1))" -ge "$1" ]; }
wait_for "the first transfer's rows" 30 data_rows 2
kill -KILL "$rx_PID"
wait "$rx_PID" 2>/dev/null || true

sender_done() { ! alive "$sender_pid"; }
wait_for "the sender to give up on its own" 90 sender_done
rc=0
wait "$sender_pid" || rc=$?
[ "$rc" -eq 1 ] || fail "sender exited $rc, want 1: $(tail -5 "$T/sender.log")"

# role,status,error of the sender rows, in file order
rows=$(paste -d'|' <(csv_col "$csv" role) <(csv_col "$csv" status) <(csv_col "$csv" error) | grep '^sender|' || true)
[ "$(grep -c . <<<"$rows")" -eq 4 ] || fail "expected 4 sender rows, got: $rows"
[ "$(head -1 <<<"$rows" | cut -d'|' -f2)" = "ok" ] || fail "the first transfer is not ok: $(head -1 <<<"$rows")"
tail -n +2 <<<"$rows" | awk -F'|' '$2 != "failed" || $3 == "" { exit 1 }' \
  || fail "transfers after the receiver died are not all failed with an error: $rows"
echo "ok: sender gave up with exit 1; 1 ok row, 3 failed rows with errors"
