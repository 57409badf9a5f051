#!/usr/bin/env bash
# shellcheck disable=SC2154  # NAME_PID, NAME_PORT...: set by lib.sh's start_*, lab_* and cpu_group with printf -v
# Several transfers at once and the cleanup policies: --streams 3 runs three files
# and connections per iteration in parallel (each a row per role, each its own
# file name); --cleanup end keeps files until the run ends, then removes them;
# --cleanup never keeps them; two senders at once into one receiver both succeed.
source "$(dirname "$0")/lib.sh"

mkdir -p "$T/target"
start_receiver rx --target "$T/target" --min-free 0

"$NASPERF" sender --to 127.0.0.1:"$rx_PORT" --size 32MiB --streams 3 --runs 2 --cleanup end \
  --run-id streams --out "$T/out" --no-progress >"$T/streams.log" 2>&1 \
  || fail "3-stream run failed: $(tail -5 "$T/streams.log")"
[ "$(csv_role_col "$T/out/transfers.csv" sender status | grep -c '^ok$')" -eq 6 ] || fail "expected 6 ok sender rows"
[ "$(csv_role_col "$T/out/transfers.csv" receiver status | grep -c '^ok$')" -eq 6 ] || fail "expected 6 ok receiver rows"
[ "$(csv_role_col "$T/out/transfers.csv" receiver stream | sort -u | tr '\n' ' ')" = "0 1 2 " ] \
  || fail "receiver rows do not cover streams 0-2"
! compgen -G "$T/target/nasperf-*.dat" >/dev/null || fail "--cleanup end left files: $(ls "$T/target")"

# Two senders at once, files kept.
"$NASPERF" sender --to 127.0.0.1:"$rx_PORT" --size 48MiB --runs 2 --cleanup never --run-id a \
  --out "$T/a" --no-progress >"$T/a.log" 2>&1 &
a=$!
"$NASPERF" sender --to 127.0.0.1:"$rx_PORT" --size 48MiB --runs 2 --cleanup never --run-id b \
  --out "$T/b" --no-progress >"$T/b.log" 2>&1 &
b=$!
PIDS+=("$a" "$b")
wait_pid "sender a" 120 "$a" || fail "sender a failed: $(tail -3 "$T/a.log")"
wait_pid "sender b" 120 "$b" || fail "sender b failed: $(tail -3 "$T/b.log")"
files=("$T"/target/nasperf-*.dat)
[ "${#files[@]}" -eq 4 ] || fail "--cleanup never: expected 4 files, found ${#files[@]}"
for f in "${files[@]}"; do
  [ "$(stat -c %s "$f")" -eq $((48 << 20)) ] || fail "$f has the wrong size"
done
echo "ok: 3 streams x 2 runs, cleanup end and never, two senders at once"
