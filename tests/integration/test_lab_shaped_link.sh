#!/usr/bin/env bash
# shellcheck disable=SC2154  # NAME_PID, NAME_PORT...: set by lib.sh's start_*, lab_* and cpu_group with printf -v
# A link shaped to 1 Gb/s in the namespace lab (slow enough that a busy 2-core
# machine still fills it, so both tools measure the shaper, not the CPU): the
# sender's MB/s agrees with iperf3's on the same link within 3 %, and with
# --link-speed 1gbit (veth itself
# reports a nominal 10000 Mb/s) both roles compute line_rate_pct against the
# shaped rate: 100 * MB/s / TcpGoodputCeiling(1000 Mb/s, MTU 1500). With a
# --link-speed ten times too low the line rate would read ~1000 %: that figure is
# left out on both rows, each says why (notes), the sender warns once and `report`
# warns too. No per-interval sample on either end is faster than the link.
source "$(dirname "$0")/lib.sh"
command -v iperf3 >/dev/null || skip "iperf3 is not installed"

lab_up --mtu 1500 --rate 1gbit
lab_receiver rx --target discard
iperf_port=$((20000 + $$ % 20000))
on_nas iperf3 -s -B "$NAS_IP" -p "$iperf_port" >"$T/iperf-server.log" 2>&1 &
PIDS+=($!)
iperf_listens() { on_client bash -c "exec 3<>/dev/tcp/$NAS_IP/$iperf_port" 2>/dev/null; }
wait_for "iperf3 server" 20 iperf_listens

# One warm-up, then 3 measured runs; iperf3 omits its first second likewise.
on_client "$NASPERF" sender --to "$NAS_IP:$rx_PORT" --size 384MiB --warmup 1 --runs 3 --link-speed 1gbit \
  --out "$T/out" --no-progress >"$T/tx.log" 2>&1 || fail "sender failed: $(tail -5 "$T/tx.log")"
on_client iperf3 -c "$NAS_IP" -p "$iperf_port" -t 5 -O 1 -J >"$T/iperf.json" 2>"$T/iperf.err" \
  || fail "iperf3 failed: $(cat "$T/iperf.err")"
iperf_mbs=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["end"]["sum_received"]["bits_per_second"] / 8e6)' "$T/iperf.json")

csv=$T/out/transfers.csv
measured() { awk -F, -v role="$1" -v col="$2" 'NR==1 { for (i=1;i<=NF;i++) { if ($i==col) c=i; if ($i=="role") r=i; if ($i=="warmup") w=i }; next }
  $r == role && $w == "false" { print $c }' "$csv"; }
median=$(measured sender mb_per_s | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
echo "nasperf median $median MB/s, iperf3 $iperf_mbs MB/s"
awk -v a="$median" -v b="$iperf_mbs" 'BEGIN { r = a / b; exit !(r > 0.97 && r < 1.03) }' \
  || fail "nasperf $median MB/s vs iperf3 $iperf_mbs MB/s on the same shaped link: more than 3 % apart"

ceiling=$(awk 'BEGIN { printf "%.6f", 1000 * (1500 - 52) / (1500 + 38) / 8 }')
for role in sender receiver; do
  csv_role_all "$csv" $role link_mbps 1000
  paste -d' ' <(measured $role mb_per_s) <(measured $role line_rate_pct) | while read -r rate pct; do
    awk -v r="$rate" -v p="$pct" -v c="$ceiling" 'BEGIN { d = p - 100 * r / c; exit !(d < 0.15 && d > -0.15) }' \
      || fail "$role line_rate_pct $pct for $rate MB/s, expected $(awk -v r="$rate" -v c="$ceiling" 'BEGIN { print 100 * r / c }')"
  done
done

# No sample is faster than the link: the sender's count what the receiver's TCP
# acknowledged, not what a socket buffer took (a 48 MiB window swallows 48 MiB at
# once), the receiver's what arrived.
on_client "$NASPERF" sender --to "$NAS_IP:$rx_PORT" --size 128MiB --runs 2 --window 48MiB --interval 250ms \
  --out "$T/out" --no-progress >"$T/window.log" 2>&1 || fail "sender with a big window failed: $(tail -5 "$T/window.log")"
for role in sender receiver; do
  fastest=$(awk -F, -v role=$role 'NR==1 { for (i=1;i<=NF;i++) { if ($i=="role") r=i; if ($i=="mb_per_s") m=i }; next }
    $r == role && $m > max { max = $m } END { print max + 0 }' "$T/out/samples.csv")
  awk -v f="$fastest" -v c="$ceiling" 'BEGIN { exit !(f > 0 && f <= 1.05 * c) }' \
    || fail "a $role sample reads $fastest MB/s on a link whose TCP ceiling is $ceiling MB/s"
  echo "$role: fastest sample $fastest MB/s, ceiling $ceiling MB/s"
done

on_client "$NASPERF" sender --to "$NAS_IP:$rx_PORT" --size 64MiB --runs 2 --link-speed 100mbit \
  --out "$T/low" --no-progress >"$T/low.log" 2>&1 || fail "sender with a low --link-speed failed: $(tail -5 "$T/low.log")"
for role in sender receiver; do
  [ -z "$(csv_role_col "$T/low/transfers.csv" $role line_rate_pct | tr -d '\n')" ] \
    || fail "$role rows print a line rate above the link: $(csv_role_col "$T/low/transfers.csv" $role line_rate_pct)"
  csv_role_col "$T/low/transfers.csv" $role notes | grep -q "the link is faster than --link-speed" \
    || fail "$role rows do not say why line_rate_pct is missing"
done
[ "$(grep -c "warning (sender row, said once): .*the link is faster than --link-speed" "$T/low.log")" = 1 ] \
  || fail "the sender did not warn exactly once: $(cat "$T/low.log")"
"$NASPERF" report "$T/low" >"$T/low-report.txt" 2>&1 || fail "report failed: $(cat "$T/low-report.txt")"
grep -q "warning: 4 rows have a figure left out as impossible" "$T/low-report.txt" \
  || fail "report does not warn about the left-out figures: $(cat "$T/low-report.txt")"
echo "ok: shaped 1 Gb/s: nasperf $median MB/s vs iperf3 $iperf_mbs MB/s, line_rate_pct against --link-speed; a too-low --link-speed flagged, no figure over the link"
