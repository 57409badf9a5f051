#!/usr/bin/env bash
# shellcheck disable=SC2154  # NAME_PID, NAME_PORT...: set by lib.sh's start_*, lab_* and cpu_group with printf -v
# docs/DESIGN.md §6 (measurement semantics: path facts) in a namespace lab: MTU 9000 on every link. The probe and
# the sender find path MTU 9000 and the MSS jumbo frames allow, warn about
# nothing, and both roles record mtu = path_mtu = 9000.
source "$(dirname "$0")/lib.sh"

lab_up --mtu 9000 --rate 2gbit
lab_receiver rx --target discard

on_client "$NASPERF" probe "$NAS_IP:$rx_PORT" >"$T/probe.log" 2>&1 \
  || fail "probe exited $? on a clean jumbo path: $(cat "$T/probe.log")"
grep -Eq "path MTU +9000" "$T/probe.log" || fail "probe did not find path MTU 9000: $(cat "$T/probe.log")"
grep -q "path ok" "$T/probe.log" || fail "probe did not say the path is ok"

on_client "$NASPERF" sender --to "$NAS_IP:$rx_PORT" --size 64MiB --runs 2 --out "$T/out" --no-progress \
  >"$T/tx.log" 2>"$T/tx.err" || fail "sender failed: $(cat "$T/tx.err")"
[ ! -s "$T/tx.err" ] || fail "warnings on a clean jumbo path: $(cat "$T/tx.err")"
grep -q "path MTU 9000, MSS 8948" "$T/tx.log" || fail "path line: $(grep path: "$T/tx.log")"
csv=$T/out/transfers.csv
for role in sender receiver; do
  csv_role_all "$csv" $role status ok
  csv_role_all "$csv" $role mtu 9000
  csv_role_all "$csv" $role path_mtu 9000
  csv_role_all "$csv" $role mss 8948
done
echo "ok: MTU 9000 end to end: path_mtu 9000, MSS 8948 on both roles, no warning, probe exit 0"
