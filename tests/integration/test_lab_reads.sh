#!/usr/bin/env bash
# shellcheck disable=SC2154  # NAME_PID, NAME_PORT...: set by lib.sh's start_*, lab_* and cpu_group with printf -v
# Reads from the NAS (issue 15: sender --direction read), checked against the namespace
# lab's ground truth. The array's reads are throttled to 60 MB/s (cgroup blkio):
#   cold  - every run starts with the file's pages out of the NAS's page cache
#           (cache_resident_pct near 0), reads within 10 % of what dd reads through
#           the same throttle in this run (array_truth_mbs), verdict disk
#   warm  - the same file read through first: cached, well above the disk, not disk
#   direct - warm again (fully cached), but --read-mode direct reads past the cache:
#           back at the disk's rate (dd's, again), verdict disk, checksums agreeing
#   verify and --local-target - both ends' checksums agree, and the client's copy is
#           byte for byte the NAS's file
#   --remote-file - an existing file is read only from a receiver started with
#           --serve-existing-files; a symlink out of the target is refused
#   a lab plan - direction = "read" in a [[transfer]]: the client's agent reads from
#               the NAS's agent, warm, and the laid-out file is gone afterwards
#   the link  - shaped to 1 Gb/s, a warm read into nothing runs within 3 % of iperf3 -R
#               (the NAS sends) on the same link, and says network
source "$(dirname "$0")/lib.sh"
command -v iperf3 >/dev/null || skip "iperf3 is not installed"

all_rows() { local role; for role in sender receiver; do csv_role_all "$1" $role "$2" "$3"; done; }

lab_up --mtu 9000 --rate 10gbit --array-rate 60MB --disk-size 1500M
lab_receiver array --target "$ARRAY" --min-free 0

# --- cold: the array's disk at its throttle
on_client "$NASPERF" sender --to "$NAS_IP:$array_PORT" --direction read --size 96MiB --runs 3 --link-speed 10gbit \
  --out "$T/cold" --no-progress >"$T/cold.log" 2>&1 || fail "cold reads failed: $(tail -5 "$T/cold.log")"
csv=$T/cold/transfers.csv
all_rows "$csv" status ok
all_rows "$csv" direction read
all_rows "$csv" cache cold
all_rows "$csv" bottleneck disk
cold_truth=$(array_truth_mbs read 96)
for rate in $(csv_role_col "$csv" receiver mb_per_s); do
  within 10 "$rate" "$cold_truth" || fail "a cold read gave $rate MB/s, dd reads the array at $cold_truth MB/s (throttle 60)"
done
for pct in $(csv_role_col "$csv" receiver cache_resident_pct); do
  awk -v p="$pct" 'BEGIN { exit !(p <= 5) }' || fail "a cold run began with $pct % of the file cached"
done
grep -q "laid out" "$T/cold.log" || fail "no setup line for the laid-out file: $(head -5 "$T/cold.log")"
ls "$ARRAY"/nasperf-read-* >/dev/null 2>&1 && fail "the laid-out file was left on the NAS: $(ls "$ARRAY")"
cold_rates=$(csv_role_col "$csv" receiver mb_per_s | tr '\n' ' ')

# --- warm: the same size, read through first
on_client "$NASPERF" sender --to "$NAS_IP:$array_PORT" --direction read --size 96MiB --runs 2 --cache warm \
  --link-speed 10gbit --out "$T/warm" --no-progress >"$T/warm.log" 2>&1 || fail "warm reads failed: $(tail -5 "$T/warm.log")"
csv=$T/warm/transfers.csv
all_rows "$csv" status ok
all_rows "$csv" cache warm
for rate in $(csv_role_col "$csv" receiver mb_per_s); do
  awk -v r="$rate" -v d="$cold_truth" 'BEGIN { exit !(r > 1.5 * d) }' \
    || fail "a warm read gave only $rate MB/s, not clearly above the disk's $cold_truth MB/s"
done
for pct in $(csv_role_col "$csv" receiver cache_resident_pct); do
  awk -v p="$pct" 'BEGIN { exit !(p >= 95) }' || fail "a warm run began with only $pct % cached"
done
if grep -qx disk <<<"$(csv_role_col "$csv" receiver bottleneck)"; then fail "a warm read from RAM was called disk"; fi
warm_rates=$(csv_role_col "$csv" receiver mb_per_s | tr '\n' ' ')

# --- direct: the file fully cached, read past the cache
on_client "$NASPERF" sender --to "$NAS_IP:$array_PORT" --direction read --size 64MiB --runs 2 --cache warm \
  --read-mode direct --verify --link-speed 10gbit --out "$T/direct" --no-progress >"$T/direct.log" 2>&1 \
  || fail "direct reads failed: $(tail -5 "$T/direct.log")"
csv=$T/direct/transfers.csv
all_rows "$csv" status ok
all_rows "$csv" read_mode direct
all_rows "$csv" verified true
all_rows "$csv" bottleneck disk
for pct in $(csv_role_col "$csv" receiver cache_resident_pct); do
  awk -v p="$pct" 'BEGIN { exit !(p >= 95) }' || fail "the direct run's file was only $pct % cached: the test proves nothing"
done
direct_truth=$(array_truth_mbs read 64)
for rate in $(csv_role_col "$csv" receiver mb_per_s); do
  within 10 "$rate" "$direct_truth" || fail "a direct read of a cached file gave $rate MB/s: dd reads the array at $direct_truth MB/s"
done
direct_rates=$(csv_role_col "$csv" receiver mb_per_s | tr '\n' ' ')

# --- verify, into a local directory, the NAS's file kept to compare
mkdir -p "$T/local"
on_client "$NASPERF" sender --to "$NAS_IP:$array_PORT" --direction read --size 32MiB --runs 1 --verify \
  --local-target "$T/local" --cleanup never --out "$T/verify" --no-progress >"$T/verify.log" 2>&1 \
  || fail "verified read failed: $(tail -5 "$T/verify.log")"
all_rows "$T/verify/transfers.csv" verified true
cmp "$ARRAY"/nasperf-read-*.dat "$T/local"/nasperf-*.dat || fail "the client's copy differs from the NAS's file"

# --- an existing file: only from a receiver that serves them, and never through a symlink
head -c $((8 << 20)) /dev/urandom >"$ARRAY/movie.mov"
if on_client "$NASPERF" sender --to "$NAS_IP:$array_PORT" --direction read --remote-file movie.mov --runs 1 \
    --out "$T/unserved" --no-progress >"$T/unserved.log" 2>&1; then
  fail "a receiver without --serve-existing-files served the user's file"
fi
grep -q "serve-existing-files" "$T/unserved.log" || fail "the refusal does not say how: $(tail -3 "$T/unserved.log")"
lab_receiver serving --target "$ARRAY" --min-free 0 --serve-existing-files
on_client "$NASPERF" sender --to "$NAS_IP:$serving_PORT" --direction read --remote-file movie.mov --runs 1 \
  --out "$T/existing" --no-progress >"$T/existing.log" 2>&1 || fail "reading movie.mov failed: $(tail -5 "$T/existing.log")"
[ "$(csv_role_col "$T/existing/transfers.csv" receiver bytes)" = $((8 << 20)) ] || fail "movie.mov: wrong byte count"
[ -f "$ARRAY/movie.mov" ] || fail "an existing file was removed after a read"
ln -s /etc/passwd "$ARRAY/escape"
if on_client "$NASPERF" sender --to "$NAS_IP:$serving_PORT" --direction read --remote-file escape --runs 1 \
    --out "$T/escape" --no-progress >"$T/escape.log" 2>&1; then
  fail "a symlink out of the target was read"
fi
grep -q "symlink" "$T/escape.log" || fail "the refusal does not say why: $(tail -3 "$T/escape.log")"
"$NASPERF" sender --to 127.0.0.1:1 --direction read --remote-file ../x >"$T/dots.log" 2>&1 && fail "--remote-file ../x was accepted"
grep -q "no '/'" "$T/dots.log" || fail "--remote-file ../x: $(cat "$T/dots.log")"

# --- a lab plan: direction = "read" per transfer, driven from the hop
lab_agent nasagent nas --target "$CACHE" --min-free off
lab_agent clientagent client
cat >"$T/plan.toml" <<PLAN
label = "lab-reads"
runs = 2
link_speed = "10gbit"
[collector]
out = "$T/lab-out"
[[host]]
name = "nas"
agent = "$NAS_IP:7600"
target = "$CACHE"
[[host]]
name = "client"
agent = "$CLIENT_IP:7600"
[[transfer]]
from = "client"
to = "nas"
size = "24MiB"
direction = "read"
cache = "warm"
PLAN
on_hop "$NASPERF" lab "$T/plan.toml" --accept-new-agent-key >"$T/lab-run.log" 2>&1 \
  || fail "nasperf lab with a read failed: $(tail -15 "$T/lab-run.log")"
csv=$T/lab-out/transfers.csv
all_rows "$csv" status ok
all_rows "$csv" direction read
all_rows "$csv" cache warm
for pct in $(csv_role_col "$csv" receiver cache_resident_pct); do
  awk -v p="$pct" 'BEGIN { exit !(p >= 95) }' || fail "a warm lab read began with only $pct % cached"
done
[ "$(csv_role_col "$csv" sender status | wc -l)" = 2 ] || fail "expected 2 lab reads: $(cat "$csv")"
"$LAB_SH" nas -- ls "$CACHE" | grep -q nasperf-read- && fail "the lab left its read file on the NAS: $(ls "$CACHE")"

# --- the link: 1 Gb/s both ways, the file in the NAS's RAM
"$LAB_SH" shape 1gbit >>"$T/lab.log"
lab_receiver cache --target "$CACHE" --min-free 0
on_client "$NASPERF" sender --to "$NAS_IP:$cache_PORT" --direction read --cache warm --size 384MiB --warmup 1 --runs 3 \
  --link-speed 1gbit --out "$T/link" --no-progress >"$T/link.log" 2>&1 || fail "reads over 1 Gb/s failed: $(tail -5 "$T/link.log")"
iperf_port=$((20000 + $$ % 20000))
on_nas iperf3 -s -B "$NAS_IP" -p "$iperf_port" >"$T/iperf-server.log" 2>&1 &
PIDS+=($!)
iperf_listens() { on_client bash -c "exec 3<>/dev/tcp/$NAS_IP/$iperf_port" 2>/dev/null; }
wait_for "iperf3 server" 20 iperf_listens
# iperf3 on a 2-core VM swings a few percent from run to run: the median of three.
for i in 1 2 3; do
  on_client iperf3 -c "$NAS_IP" -p "$iperf_port" -R -l 1M -t 4 -O 1 -J >"$T/iperf$i.json" 2>"$T/iperf.err" \
    || fail "iperf3 -R failed: $(cat "$T/iperf.err")"
done
iperf_mbs=$(python3 -c 'import json,sys,statistics; print(statistics.median(json.load(open(f))["end"]["sum_received"]["bits_per_second"] / 8e6 for f in sys.argv[1:]))' "$T"/iperf[123].json)
csv=$T/link/transfers.csv
measured() { paste -d' ' <(csv_role_col "$csv" "$1" warmup) <(csv_role_col "$csv" "$1" "$2") | awk '$1 == "false" { print $2 }'; }
median=$(measured sender mb_per_s | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
awk -v a="$median" -v b="$iperf_mbs" 'BEGIN { r = a / b; exit !(r > 0.97 && r < 1.03) }' \
  || fail "reads at $median MB/s vs iperf3 -R $iperf_mbs MB/s on the same 1 Gb/s link: more than 3 % apart"
for role in sender receiver; do
  verdicts=$(measured $role bottleneck | sort -u)
  [ "$verdicts" = network ] || fail "$role rows over a full 1 Gb/s link said: $verdicts"
done
echo "ok: cold reads at ${cold_rates}MB/s (dd: $cold_truth, throttle 60) -> disk; warm at ${warm_rates}MB/s; direct of a cached file at ${direct_rates}MB/s (dd: $direct_truth) -> disk; verify and cmp; --remote-file;" \
  "symlink refused; 1 Gb/s: reads $median MB/s vs iperf3 -R $iperf_mbs MB/s -> network"
