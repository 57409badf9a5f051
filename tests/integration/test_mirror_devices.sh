#!/usr/bin/env bash
# shellcheck disable=SC2154  # NAME_PID, NAME_PORT...: set by lib.sh's start_* with printf -v
# Issue 27 (docs/DESIGN.md §6, measurement semantics: Devices): the receiver names the mirror member that held
# writes back. A btrfs raid1 over two loop devices: a fast member (its backing file on
# this machine's disk) and a slow one whose backing file sits on ext4 on a third loop
# device, throttled for writes in the root blkio cgroup. The slow member's own requests
# then take long and its io_ticks show it, as a slow disk's would (a throttle on the
# member itself holds requests before the device, so it would never look busy).
# Asserted: the receiver's row names the slow member as busiest_device, at 50 % busy or
# more and 3 times the fast member's, and disk_detail says it is a member of the btrfs
# raid1 under the target, and its samples name it per interval; the rate is held to dd's
# through the same throttle, measured here (docs/DESIGN.md §9, tests: "Rate tests: the rule").
source "$(dirname "$0")/lib.sh"
need_root "loop devices, btrfs and a blkio throttle"
command -v mkfs.btrfs >/dev/null || skip "no mkfs.btrfs (btrfs-progs; scripts/install-deps.sh installs it)"
throttle_file=/sys/fs/cgroup/blkio/blkio.throttle.write_bps_device
[ -w "$throttle_file" ] || skip "no cgroup v1 blkio throttle in the root group ($throttle_file)"
grep -qw btrfs /proc/filesystems || modprobe btrfs 2>/dev/null || skip "the kernel has no btrfs"

THROTTLE_BPS=60000000
RUN_MIB=128

# The base: ext4 on its own loop device, throttled; the slow member's backing file on it.
loop_fs base 400M ext4
base_dev=$(losetup -j "$T/base.img" | cut -d: -f1 | head -1)
[ -n "$base_dev" ] || fail "no loop device behind $T/base"
base_majmin=$(lsblk -dno MAJ:MIN "$base_dev" | tr -d ' ')
truncate -s 320M "$T/base/slow.img" "$T/fast.img"
# O_DIRECT on the backing file: the member's requests wait for the base device itself,
# not for the page cache in front of it.
slow_dev=$(loop_locked losetup -f --show --direct-io=on "$T/base/slow.img") || fail "losetup of the slow member"
CLEANUPS+=("losetup -d '$slow_dev'")
fast_dev=$(loop_locked losetup -f --show --direct-io=on "$T/fast.img") || fail "losetup of the fast member"
CLEANUPS+=("losetup -d '$fast_dev'")
slow=${slow_dev#/dev/}
fast=${fast_dev#/dev/}
mkfs.btrfs -q -f -d raid1 -m raid1 "$fast_dev" "$slow_dev" >"$T/mkfs.log" 2>&1 || fail "mkfs.btrfs: $(tail -3 "$T/mkfs.log")"
mkdir -p "$T/mirror"
mount -t btrfs "$fast_dev" "$T/mirror" || fail "mount the btrfs raid1"
CLEANUPS+=("umount -l '$T/mirror'")
# Last added, first undone: the throttle is lifted before anything else is torn down.
CLEANUPS+=("echo '$base_majmin 0' >'$throttle_file'")
echo "$base_majmin $THROTTLE_BPS" >"$throttle_file"

# Ground truth: dd through the same throttle, the size of one run, O_DIRECT as the receiver.
truth_out=$(dd if=/dev/zero of="$T/mirror/truth.bin" bs=8M count=$((RUN_MIB / 8)) oflag=direct conv=fsync 2>&1) \
  || fail "dd into the mirror: $truth_out"
rm -f "$T/mirror/truth.bin"
truth=$(dd_mbs <<<"$truth_out") || fail "dd said: $truth_out"

start_receiver rx --target "$T/mirror" --min-free off
"$NASPERF" sender --to 127.0.0.1:"$rx_PORT" --size "${RUN_MIB}MiB" --runs 2 --write-mode direct \
  --interval 0.5s --out "$T/out" --no-progress >"$T/sender.log" 2>&1 || fail "sender: $(tail -5 "$T/sender.log")"
csv=$T/out/transfers.csv
[ "$(csv_role_col "$csv" receiver status | sort -u)" = ok ] || fail "not every receiver row is ok: $(cat "$csv")"

fails=0
while IFS=$'\t' read -r busiest pct list rate detail; do
  slow_pct=$(tr ';' '\n' <<<"$list" | sed -n "s/^$slow=//p")
  fast_pct=$(tr ';' '\n' <<<"$list" | sed -n "s/^$fast=//p")
  echo "row: busiest=$busiest ($pct %), $slow (slow) ${slow_pct:-?} %, $fast (fast) ${fast_pct:-?} %," \
    "$rate MB/s, dd $truth MB/s; disk_detail: $detail"
  [ "$busiest" = "$slow" ] || { echo "busiest_device is $busiest, not the slow member $slow" >&2; fails=1; }
  if [ -z "$slow_pct" ] || [ -z "$fast_pct" ]; then
    echo "device_busy lacks a member: $list" >&2
    fails=1
    continue
  fi
  awk -v s="$slow_pct" -v f="$fast_pct" 'BEGIN { exit !(s >= 50 && s >= 3 * f) }' \
    || { echo "slow member $slow_pct % busy, fast $fast_pct %: not >= 50 and >= 3x" >&2; fails=1; }
  [[ $detail == "$slow, member "[0-9]*" of the btrfs raid1 under the target, "* ]] \
    || { echo "disk_detail does not say what $slow is: $detail" >&2; fails=1; }
  # blk-throttle lets bursts through and a run of a few seconds is noisy: 25 % either way.
  awk -v r="$rate" -v t="$truth" 'BEGIN { exit !(r >= 0.75 * t && r <= 1.25 * t) }' \
    || { echo "$rate MB/s is not within 25 % of dd's $truth MB/s through the same throttle" >&2; fails=1; }
done < <(paste <(csv_role_col "$csv" receiver busiest_device) <(csv_role_col "$csv" receiver busiest_busy_pct) \
  <(csv_role_col "$csv" receiver device_busy) <(csv_role_col "$csv" receiver mb_per_s) \
  <(csv_role_col "$csv" receiver disk_detail))
[ "$(csv_role_col "$csv" receiver busiest_device | grep -c .)" -eq 2 ] || fail "expected 2 receiver rows: $(cat "$csv")"
[ "$fails" -eq 0 ] || fail "the device figures do not name the slow member (rows above)"
# The sender's summary names the device when it judged the transfers disk-bound.
verdicts=$(csv_role_col "$csv" sender bottleneck | sort -u | tr '\n' ' ')
echo "sender verdicts: $verdicts"
if [[ " $verdicts " == *" disk "* ]]; then
  grep -q "the NAS's devices (last such run): $slow, member" "$T/sender.log" \
    || fail "the sender's summary does not name $slow: $(grep -A3 'bottleneck:' "$T/sender.log")"
fi
# report reads the rows back and names the device too.
"$NASPERF" report "$T/out" >"$T/report.txt" 2>&1 || fail "report: $(tail -3 "$T/report.txt")"
grep -q "NAS device: $slow busiest in 2 of 2 rows" "$T/report.txt" \
  || fail "report does not name $slow: $(grep -i device "$T/report.txt")"
# Per interval too: samples.csv's receiver samples name the slow member whenever a member
# was busy (the first interval may end before the throttle bit).
samples=$T/out/samples.csv
per_interval=$(paste -d' ' <(csv_role_col "$samples" receiver busiest_device) \
  <(csv_role_col "$samples" receiver busiest_busy_pct) | awk -v slow="$slow" '
    $2 >= 50 { busy++; if ($1 == slow) named++ }
    END { printf "%d %d", busy, named }')
read -r busy_samples slow_named <<<"$per_interval"
echo "samples: $busy_samples intervals with a member >= 50 % busy; $slow busiest in $slow_named"
[ "$busy_samples" -ge 4 ] || fail "fewer than 4 busy intervals in samples.csv: $(head -5 "$samples")"
[ $((slow_named * 4)) -ge $((busy_samples * 3)) ] \
  || fail "the slow member is busiest in only $slow_named of $busy_samples busy intervals: $(cat "$samples")"
dirty=$(csv_role_col "$csv" receiver dirty_peak_bytes | head -1)
[[ $dirty =~ ^[0-9]+$ ]] || fail "dirty_peak_bytes is not a whole number: '$dirty'"
echo "PASS: the slow member $slow named on both rows; dirty peak $dirty bytes"
