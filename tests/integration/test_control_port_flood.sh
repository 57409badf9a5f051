#!/usr/bin/env bash
# shellcheck disable=SC2154  # NAME_PID, NAME_PORT...: set by lib.sh's start_* with printf -v
# Issue 29, rows 3 and 12: the control port against idle connections, and a second
# nasperf on a busy port. The receiver starts with a soft limit of 1,024 open files (a
# common default) while 1,100 connections from 127.0.0.3 that never say a word hold
# its control port: it raised its limit at start, so a real sender still gets
# through, and gRPC's handshake deadline closes every idle one within seconds, not
# after 120 s. A second receiver on the same control port fails at once with one line
# instead of sharing the port (gRPC's SO_REUSEPORT is off).
#
# Issue 42, row 6: with a hard limit of 1,024 open files there is no room to raise
# the soft limit, and 1,100 idle connections would stop accept() ("Too many open
# files") until real senders time out: a receiver, an agent and a collector refuse to
# start instead (exit 1), with one line naming the limit and how to raise it.
source "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || skip "python3 is not installed"

low_limit_refused() {
  local name=$1; shift
  # The hard limit as `prlimit --nofile=1024:1024` sets it (ulimit -n sets both).
  if (ulimit -n 1024 && exec timeout 20 "$NASPERF" "$@") </dev/null >"$T/$name-low.log" 2>&1; then
    fail "$name started with a hard open-file limit of 1024: $(cat "$T/$name-low.log")"
  fi
  grep -q "^nasperf .*: the open-file limit is 1024 (hard limit.*ulimit -Hn 65536.*LimitNOFILE=65536" "$T/$name-low.log" \
    || fail "$name did not say why it refused to start: $(cat "$T/$name-low.log")"
}
low_limit_refused receiver receiver --target discard --listen 127.0.0.1:0 --stop-with-stdin
low_limit_refused agent agent --listen 127.0.0.1:0 --min-free off --stop-with-stdin
low_limit_refused collector collector --out "$T/col" --listen 127.0.0.1:0
echo "ok: a hard open-file limit of 1024 stops the receiver, the agent and the collector at start, in one line"

hard=$(ulimit -Hn)
[ "$hard" = unlimited ] || [ "$hard" -ge 2048 ] || skip "the hard open-file limit ($hard) leaves no room above 1,024"

ulimit -Sn 1024
start_receiver rx --target discard
ulimit -Sn "$hard"
grep -q "^Max open files *$hard " "/proc/$rx_PID/limits" \
  || fail "the receiver kept its soft limit: $(grep 'Max open files' "/proc/$rx_PID/limits")"

python3 "$(dirname "$0")/connection_flood.py" idle "$rx_PORT" 1100 30 127.0.0.3 "$T/idle.ready" >"$T/idle.out" 2>&1 &
flood=$!
PIDS+=("$flood")
wait_for "the idle connections to open" 60 test -s "$T/idle.ready"
opened=$(cat "$T/idle.ready")
[ "$opened" -ge 1100 ] || fail "only $opened of 1100 idle connections opened"

"$NASPERF" sender --to 127.0.0.1:"$rx_PORT" --size 8MiB --runs 1 --out "$T/out" --no-progress \
  >"$T/sender.log" 2>&1 || fail "a real transfer failed with 1100 idle connections on the control port: $(tail -3 "$T/sender.log")"
csv_role_all "$T/out/transfers.csv" receiver status ok

wait_pid "the idle connections to be closed" 60 "$flood" || fail "the flood script failed: $(cat "$T/idle.out")"
read -r _ connected _ closed <"$T/idle.out"
echo "idle flood: $connected connected, $closed closed by the receiver within 30 s"
[ "$closed" -eq "$connected" ] || fail "the receiver left $((connected - closed)) of $connected idle connections open for 30 s"

# A second receiver on the same control port, its data port one nothing holds (a port
# next to the first's may be a closed connection's source port, still in TIME_WAIT).
free_port
if timeout 20 "$NASPERF" receiver --target discard --listen 127.0.0.1:"$rx_PORT" --data-port "$port" \
  >"$T/second.log" 2>&1; then
  fail "a second receiver started on a busy control port"
fi
grep -q "port in use" "$T/second.log" \
  || fail "the second receiver did not say the port is in use: $(cat "$T/second.log")"
alive "$rx_PID" || fail "the first receiver died"
echo "ok: 1100 idle connections neither stop a transfer nor stay past the handshake deadline; a busy port is refused"
