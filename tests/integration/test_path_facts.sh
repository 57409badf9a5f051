#!/usr/bin/env bash
# shellcheck disable=SC2154  # NAME_PID, NAME_PORT...: set by lib.sh's start_*, lab_* and cpu_group with printf -v
# Network facts on every row (docs/DESIGN.md §6, measurement semantics: path facts): both roles record the MTU of
# their interface toward the other end and the negotiated MSS; a link that reports
# no speed (loopback, veth) leaves link_mbps and line_rate_pct empty unless the user
# gives --link-speed, and then line_rate_pct is computed against that rate.
source "$(dirname "$0")/lib.sh"

mkdir -p "$T/target"
start_receiver rx --target "$T/target" --min-free 0
lo_mtu=$(cat /sys/class/net/lo/mtu)

"$NASPERF" sender --to 127.0.0.1:"$rx_PORT" --size 16MiB --runs 1 --out "$T/plain" --no-progress \
  >"$T/plain.log" 2>&1 || fail "sender failed: $(tail -3 "$T/plain.log")"
csv=$T/plain/transfers.csv
for role in sender receiver; do
  [ "$(csv_role_col "$csv" $role mtu)" = "$lo_mtu" ] || fail "$role mtu is not lo's $lo_mtu"
  [ "$(csv_role_col "$csv" $role path_mtu)" = "$lo_mtu" ] || fail "$role path_mtu is not lo's $lo_mtu"
  [ -n "$(csv_role_col "$csv" $role mss)" ] || fail "$role mss is empty"
  [ -z "$(csv_role_col "$csv" $role link_mbps)" ] || fail "$role link_mbps should be empty (unknown), not a guess"
  [ -z "$(csv_role_col "$csv" $role line_rate_pct)" ] || fail "$role line_rate_pct without a link speed"
done
grep -q "path: 127.0.0.1:$rx_PORT via lo (127.0.0.1), MTU $lo_mtu, link unknown; receiver MTU $lo_mtu" "$T/plain.log" \
  || fail "no path line on the console: $(head -3 "$T/plain.log")"
! grep -q "MTU mismatch" "$T/plain.log" || fail "MTU mismatch warned on loopback"

"$NASPERF" sender --to 127.0.0.1:"$rx_PORT" --size 16MiB --runs 1 --link-speed 100gbit --out "$T/rated" \
  --no-progress >"$T/rated.log" 2>&1 || fail "sender with --link-speed failed"
csv=$T/rated/transfers.csv
[ "$(csv_role_col "$csv" sender link_mbps)" = 100000 ] || fail "--link-speed not recorded"
rate=$(csv_role_col "$csv" sender mb_per_s)
pct=$(csv_role_col "$csv" sender line_rate_pct)
# The ceiling for 100 Gb/s at lo's MTU, by the formula in docs/DESIGN.md §6 (measurement semantics: Ceiling).
want=$(awk -v r="$rate" -v m="$lo_mtu" 'BEGIN { printf "%.1f", 100 * r / (100000 * (m - 52) / (m + 38) / 8) }')
awk -v a="$pct" -v b="$want" 'BEGIN { d = a - b; exit !(d < 0.15 && d > -0.15) }' \
  || fail "line_rate_pct $pct, expected $want for $rate MB/s"
grep -q "TCP ceiling" "$T/rated.log" || fail "no TCP ceiling on the console"
# --window fixes the socket buffers at both ends and says so.
"$NASPERF" sender --to 127.0.0.1:"$rx_PORT" --size 16MiB --runs 1 --window 8MiB --out "$T/window" \
  --no-progress >"$T/window.log" 2>&1 || fail "sender with --window failed: $(tail -3 "$T/window.log")"
grep -q "window: 8.00 MiB socket buffers (--window)" "$T/window.log" || fail "no window line: $(head -4 "$T/window.log")"
# The probe alone, on loopback: a clean path.
"$NASPERF" probe 127.0.0.1:"$rx_PORT" >"$T/probe.log" 2>&1 || fail "probe on loopback exited $?: $(cat "$T/probe.log")"
grep -Eq "path MTU +$lo_mtu " "$T/probe.log" || fail "probe path MTU on loopback: $(cat "$T/probe.log")"
"$NASPERF" sender --to 127.0.0.1:"$rx_PORT" --size 1MiB --link-speed fast 2>"$T/bad.err" && fail "--link-speed fast accepted"
[ "$(wc -l <"$T/bad.err")" -eq 1 ] || fail "bad --link-speed error: $(cat "$T/bad.err")"
grep -q -- "--link-speed" "$T/bad.err" || fail "bad --link-speed error: $(cat "$T/bad.err")"
echo "ok: mtu/mss on both roles, unknown link empty, line_rate_pct $pct against --link-speed"
