#!/usr/bin/env bash
# shellcheck disable=SC2154  # NAME_PID, NAME_PORT...: set by lib.sh's start_*, lab_* and cpu_group with printf -v
# docs/DESIGN.md §4 (security: Files): a sender that dies mid-transfer. The receiver notices the
# EOF before the announced length, deletes the partial file, logs the transfer as
# aborted and keeps serving.
source "$(dirname "$0")/lib.sh"

mkdir -p "$T/target"
start_receiver rx --target "$T/target" --min-free off

"$NASPERF" sender --to 127.0.0.1:"$rx_PORT" --size 20GiB --sync none --out "$T/out" \
  --no-progress >"$T/sender.log" 2>&1 &
sender_pid=$!
PIDS+=("$sender_pid")

no_dat_file() { ! compgen -G "$T/target/nasperf-*.dat" >/dev/null; }

wait_for "a partial file over 32 MiB in the target" 30 partial_file_over $((32 << 20))
alive "$sender_pid" || fail "sender ended before it could be killed: $(tail -3 "$T/sender.log")"
kill -KILL "$sender_pid"
wait "$sender_pid" 2>/dev/null || true

wait_for "the partial file to be deleted" 30 no_dat_file
alive "$rx_PID" || fail "receiver died after the sender was killed"
wait_for "the receiver to log the aborted transfer" 10 grep -qiE "transfer .*aborted" "$T/rx.log"

assert_serves "$rx_PORT"
no_dat_file || fail "files left in the target after the good transfer: $(ls "$T/target")"
echo "ok: partial file deleted, abort logged, receiver still serves"
