#!/usr/bin/env bash
# shellcheck disable=SC2154  # NAME_PID, NAME_PORT...: set by lib.sh's start_*, lab_* and cpu_group with printf -v
# docs/DESIGN.md §4 (security: Files): ENOSPC mid-transfer. A 128 MiB transfer into a 64 MiB ext4
# (free-space guard off) must fail with "no space left on device" in the CSV and
# on the console, the sender exits non-zero, the partial file is deleted, and the
# receiver keeps serving the same target.
source "$(dirname "$0")/lib.sh"
need_root "loop-device file system"

loop_fs tiny 64M ext4
start_receiver rx --target "$T/tiny" --min-free off

rc=0
"$NASPERF" sender --to 127.0.0.1:"$rx_PORT" --size 128MiB --runs 2 --out "$T/out" \
  --no-progress >"$T/sender.log" 2>&1 || rc=$?
[ "$rc" -ne 0 ] || fail "sender exited 0 although the target is too small"

csv=$T/out/transfers.csv
[ -f "$csv" ] || fail "no transfers.csv"
failed=$(paste -d' ' <(csv_col "$csv" status) <(csv_col "$csv" error) | grep -c '^failed ' || true)
[ "$failed" -ge 1 ] || fail "no failed rows in transfers.csv: $(cat "$csv")"
grep -qi "no space left on device" "$csv" || fail "transfers.csv does not say 'no space left on device'"
# every failed row carries the reason
bad=$(paste -d'|' <(csv_col "$csv" status) <(csv_col "$csv" error) \
  | awk -F'|' '$1 == "failed" && tolower($2) !~ /no space left on device/' || true)
[ -z "$bad" ] || fail "failed rows without the ENOSPC reason: $bad"
grep -qi "no space left on device" "$T/sender.log" \
  || fail "console does not show the ENOSPC reason: $(tail -5 "$T/sender.log")"

no_dat_file() { ! compgen -G "$T/tiny/nasperf-*.dat" >/dev/null; }
wait_for "partial files to be deleted" 10 no_dat_file
alive "$rx_PID" || fail "receiver died on ENOSPC"

assert_serves "$rx_PORT"
echo "ok: ENOSPC reported on console and in CSV, partial file deleted, receiver still serves"
