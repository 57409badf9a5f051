#!/usr/bin/env bash
# shellcheck disable=SC2154  # NAME_PID, NAME_PORT...: set by lib.sh's start_*, lab_* and cpu_group with printf -v
# Issue 12, row 3: a slow-header flood on the data port. 256 connections from
# another address (127.0.0.2) send their header one byte a second. A real sender
# from 127.0.0.1 still gets its transfers through; the receiver closes every flood
# connection (at accept once 16 from that address wait for a header, or 5 s after
# accept), and its final line counts both kinds.
source "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || skip "python3 is not installed"

mkdir -p "$T/target"
start_receiver rx --target "$T/target" --min-free off
python3 "$(dirname "$0")/connection_flood.py" trickle "$rx_DATA" 256 20 127.0.0.2 "$T/flood.ready" >"$T/flood.out" 2>&1 &
flood=$!
PIDS+=("$flood")
wait_for "the flood to open its connections" 60 test -s "$T/flood.ready"

"$NASPERF" sender --to 127.0.0.1:"$rx_PORT" --size 32MiB --runs 2 --out "$T/out" --no-progress \
  >"$T/sender.log" 2>&1 || fail "a real transfer failed during the flood: $(tail -5 "$T/sender.log")"
[ "$(csv_role_col "$T/out/transfers.csv" receiver status | grep -c '^ok$')" -eq 2 ] || fail "expected 2 ok receiver rows"

wait_pid "the flood to end" 60 "$flood" || fail "the flood script failed: $(cat "$T/flood.out")"
read -r _ connected _ closed <"$T/flood.out"
echo "flood: $connected connected, $closed closed by the receiver"
[ "$closed" -eq "$connected" ] || fail "the receiver left $((connected - closed)) of $connected trickling connections open after 20 s"

kill -TERM "$rx_PID"
wait_pid "the receiver to stop" 30 "$rx_PID" || true
line=$(grep "timed out before a header" "$T/rx.log") || fail "no final counts line: $(tail -3 "$T/rx.log")"
echo "$line"
timed_out=$(sed -E 's/.* ([0-9]+) timed out before a header.*/\1/' <<<"$line")
over=$(sed -E 's/.* ([0-9]+) over the connection limits.*/\1/' <<<"$line")
[ "$timed_out" -ge 1 ] || fail "no connection counted as timed out: $line"
[ "$over" -ge 1 ] || fail "no connection counted over the limits: $line"
logged=$(grep -c "refused data connection" "$T/rx.log" || true)
[ "$logged" -le 20 ] || fail "$logged refusal lines for one flood: the log is not throttled"
echo "ok: real transfers through a 256-connection slow-header flood; every flood connection closed"
