#!/usr/bin/env bash
# shellcheck disable=SC2154  # ours_PID, other_PID...: set by lib.sh's start_receiver with printf -v
# scripts/test.sh's last stage ends what the run started and nothing else: a receiver
# started outside the run (no marker, or another run's) survives scripts/leftovers.sh,
# while one the run left behind is named, ended, and fails the stage.
source "$(dirname "$0")/lib.sh"
LEFTOVERS=$(cd "$(dirname "$0")/../../scripts" && pwd)/leftovers.sh
run_id="it-$$-$RANDOM"

# One the run left behind (its marker), one a NAS's own agent started (no marker), one
# another checkout's suite started (another marker): same binary, same command line.
NASPERF_SUITE_RUN=$run_id start_receiver ours --target discard
env -u NASPERF_SUITE_RUN "$NASPERF" receiver --listen 127.0.0.1:0 --port-file "$T/outside.ports" \
  --target discard >"$T/outside.log" 2>&1 &
outside=$!
PIDS+=("$outside")
NASPERF_SUITE_RUN=other-run start_receiver other --target discard
wait_port_file "the outside receiver to listen" "$T/outside.ports" "$outside" "$T/outside.log"

rc=0
LEFTOVERS_WAIT_TENTHS=3 "$LEFTOVERS" "$run_id" 2>"$T/leftovers.err" || rc=$?
[ "$rc" -eq 1 ] || fail "leftovers.sh exited $rc with a marked receiver still running (want 1)"
grep -q "^$ours_PID .*nasperf receiver" "$T/leftovers.err" || fail "the leftover was not named: $(cat "$T/leftovers.err")"
wait_pid "the leftover receiver to be ended" 5 "$ours_PID" || true
alive "$outside" || fail "a receiver started outside the run was killed"
alive "$other_PID" || fail "another run's receiver was killed"
[ "$(grep -c . "$T/leftovers.err")" -eq 2 ] || fail "leftovers.sh named more than the run's own: $(cat "$T/leftovers.err")"

# Nothing of the run left: exit 0, and still nothing else touched.
LEFTOVERS_WAIT_TENTHS=3 "$LEFTOVERS" "$run_id" || fail "leftovers.sh failed with nothing of the run left"
{ alive "$outside" && alive "$other_PID"; } || fail "a receiver not the run's was killed"
echo "ok: the run's receiver was named and ended; the outside one and another run's survived"
