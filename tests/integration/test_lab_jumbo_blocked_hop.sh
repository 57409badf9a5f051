#!/usr/bin/env bash
# shellcheck disable=SC2154  # NAME_PID, NAME_PORT...: set by lib.sh's start_*, lab_* and cpu_group with printf -v
# docs/DESIGN.md §6 (measurement semantics: path facts, warnings): both ends at MTU 9000
# with a 1500-byte hop between them (a router that answers with ICMP "fragmentation
# needed"). The DF UDP probe finds path MTU 1500, the sender warns that jumbo frames do
# not pass end to end and still completes its transfers, both roles record path_mtu 1500
# next to mtu 9000, and `nasperf probe` exits 1.
source "$(dirname "$0")/lib.sh"

lab_up --mtu 9000 --hop-mtu 1500 --rate 2gbit
lab_receiver rx --target discard

rc=0
on_client "$NASPERF" probe "$NAS_IP:$rx_PORT" >"$T/probe.log" 2>&1 || rc=$?
[ "$rc" -eq 1 ] || fail "probe exited $rc, expected 1: $(cat "$T/probe.log")"
grep -Eq "path MTU +1500" "$T/probe.log" || fail "probe did not find path MTU 1500: $(cat "$T/probe.log")"
grep -q "jumbo frames do not pass end to end" "$T/probe.log" || fail "no jumbo warning from probe"

on_client "$NASPERF" sender --to "$NAS_IP:$rx_PORT" --size 64MiB --runs 2 --out "$T/out" --no-progress \
  >"$T/tx.log" 2>"$T/tx.err" || fail "sender failed: $(cat "$T/tx.err")"
grep -q "jumbo frames do not pass end to end.*check the switch or bridge" "$T/tx.err" \
  || fail "no jumbo warning from the sender: $(cat "$T/tx.err")"
[ "$(grep -c "jumbo frames" "$T/tx.err")" -eq 1 ] || fail "the jumbo warning is not one line before the run"
csv=$T/out/transfers.csv
for role in sender receiver; do
  csv_role_all "$csv" $role status ok
  csv_role_all "$csv" $role mtu 9000
  csv_role_all "$csv" $role path_mtu 1500
done
echo "ok: 1500 hop between 9000 ends: path_mtu 1500, jumbo warning, probe exit 1, transfers ok"

# The same with a switch port left at 1500 that drops jumbo frames silently: the
# probe finds the path MTU by timeouts alone (veth lets 4 bytes of VLAN tag pass, so
# up to 1504), reports it as the 1500 it means (saying what passed), records 1500 in
# the CSV, and caps its MSS for 1500, so TCP does not stall in the black hole.
kill -TERM "$rx_PID"; wait "$rx_PID" 2>/dev/null || true
"$LAB_SH" down >>"$T/lab.log" 2>&1
lab_up --mtu 9000 --switch-mtu 1500 --rate 2gbit
lab_receiver rx2 --target discard
rc=0
on_client "$NASPERF" probe "$NAS_IP:$rx2_PORT" >"$T/probe2.log" 2>&1 || rc=$?
[ "$rc" -eq 1 ] || fail "probe behind a silent switch exited $rc, expected 1: $(cat "$T/probe2.log")"
grep -Eq "path MTU +1500 \(UDP probe(; packets up to 150[1-8] pass: the few bytes a port allows beyond its MTU for VLAN tags)?\)" \
  "$T/probe2.log" || fail "probe behind a silent switch: $(cat "$T/probe2.log")"
timeout 60 "$LAB_SH" client -- "$NASPERF" sender --to "$NAS_IP:$rx2_PORT" --size 32MiB --runs 1 --out "$T/out2" \
  --no-progress >"$T/tx2.log" 2>"$T/tx2.err" || fail "sender behind a silent switch failed: $(cat "$T/tx2.err" "$T/tx2.log")"
grep -q "jumbo frames do not pass end to end" "$T/tx2.err" || fail "no jumbo warning behind a silent switch"
grep -q "mss: data connections capped" "$T/tx2.log" || fail "no MSS cap line: $(cat "$T/tx2.log")"
csv_role_all "$T/out2/transfers.csv" sender status ok
for role in sender receiver; do csv_role_all "$T/out2/transfers.csv" $role path_mtu 1500; done
grep -q "mss: data connections capped at 1460 bytes to fit the path MTU 1500" "$T/tx2.log" \
  || fail "the MSS is not capped for MTU 1500: $(grep mss: "$T/tx2.log")"
echo "ok: silent 1500 switch between 9000 ends: found by timeouts, MSS capped, transfer ok"
