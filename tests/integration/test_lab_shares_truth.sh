#!/usr/bin/env bash
# Issue 28: `--transport nfs` and `--transport smb` against a real nfs-ganesha (NFSv3)
# and smbd in the lab, each rate against a ground truth measured in the same run
# (docs/DESIGN.md §9):
# - the link: over a 1 Gbit/s shaped link into the fast cache, the median of three
#   256 MiB runs within 5 % of iperf3 -l 1M moving the same bytes on the same link
#   (a fresh connection each, as each transfer's WRITEs ramp up too);
# - the disk: FILE_SYNC WRITEs (--write-mode dsync) into the array, whose writeback is
#   throttled in the root blkio cgroup (ganesha writes through the page cache), within
#   10 % of dd oflag=dsync through the same throttle on the NAS.
# - SMB over the same link with two channels (two WRITEs in flight, as smbclient keeps
#   several: libsmbclient waits for each answer): never above iperf3's rate, and within
#   15 % of Samba's own smbclient putting the same bytes. Not within 5 % of iperf3: here
#   both SMB clients' runs spread from 0.85 to 0.99 of it (stalls of the NAS's loop-backed
#   page cache that NFS's 16 WRITEs in flight ride out);
# - SMB into the array (no flush over SMB: the page cache's 16 MiB then writeback at the
#   throttle) within -15/+10 % of dd writing the same bytes buffered into it on the NAS.
# Rows say transport nfs and what was negotiated (share_protocol). An agent on the NAS
# observes each run (--observer): its rows (role nas) name the part that held each copy,
# `network` over the link into the cache, `disk` into the throttled array (for SMB into
# the cache `network` or `client`). The rates are measured unobserved, as iperf3 ran:
# here the observer shares the client's two cores; the verdicts come from observed runs.
source "$(dirname "$0")/lib.sh"
command -v iperf3 >/dev/null || skip "iperf3 is not installed"

lab_up --mtu 1500 --rate 1gbit --array-rate 40MB --cache-cliff 16MiB --disk-size 1G
lab_shares
NASPERF_TOKEN=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
export NASPERF_TOKEN
lab_agent observer nas --target "$(dirname "$CACHE")"
observe() { echo --observer "$NAS_IP" --observe-dir "$1" --accept-new-agent-key; }
# nas_verdicts CSV: the verdicts of the NAS's rows of the measured copies (not warm-ups)
nas_verdicts() {
  paste -d' ' <(csv_role_col "$1" nas iteration) <(csv_role_col "$1" nas bottleneck) | awk '$1 >= 1 { print $2 }' |
    sort | tr '\n' ' '
}
nfs_to() { echo "nfs://$NAS_IP$NFS_ROOT/$1"; }
col() { csv_role_col "$1" sender "$2"; }
median_rate() {  # CSV: the median mb_per_s of the measured rows (iterations 1..N; warm-ups are 0 and below)
  paste -d' ' <(col "$1" iteration) <(col "$1" mb_per_s) | awk '$1 >= 1 { print $2 }' | sort -n |
    awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

iperf_port=$((20000 + $$ % 20000))
on_nas iperf3 -s -B "$NAS_IP" -p "$iperf_port" >"$T/iperf-server.log" 2>&1 &
PIDS+=($!)
iperf_listens() { on_client bash -c "exec 3<>/dev/tcp/$NAS_IP/$iperf_port" 2>/dev/null; }
wait_for "iperf3 server" 20 iperf_listens
for i in 1 2 3; do
  on_client iperf3 -c "$NAS_IP" -p "$iperf_port" -n 256M -l 1M -J >"$T/iperf-$i.json" 2>"$T/iperf.err" \
    || fail "iperf3 failed: $(cat "$T/iperf.err")"
  python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["end"]["sum_received"]["bits_per_second"] / 8e6)' \
    "$T/iperf-$i.json"
done | sort -n | sed -n 2p >"$T/iperf.mbs"
iperf_mbs=$(cat "$T/iperf.mbs")

# The rate against iperf3 with nothing else running, as iperf3 ran: in this lab the NAS's
# observer shares the client's two cores (on a real NAS it has its own), and it cost NFS
# 3-5 % here, which put the median at the 5 % edge. The NAS's verdicts come from an observed run below.
on_client "$NASPERF" sender --transport nfs --to "$(nfs_to cache)" --size 256MiB --warmup 1 --runs 3 --sync none \
  --link-speed 1gbit --out "$T/link" >"$T/link.log" 2>&1 || fail "nasperf over NFS failed: $(cat "$T/link.log")"
cat "$T/link.log"
# shellcheck disable=SC2046  # observe's words
on_client "$NASPERF" sender --transport nfs --to "$(nfs_to cache)" --size 256MiB --runs 3 --sync none \
  --link-speed 1gbit $(observe cache) --out "$T/link-observed" >"$T/link-observed.log" 2>&1 \
  || fail "nasperf over NFS, observed, failed: $(cat "$T/link-observed.log")"
csv=$T/link/transfers.csv
[ "$(col "$csv" transport | sort -u)" = nfs ] || fail "rows do not say transport nfs: $(col "$csv" transport)"
col "$csv" share_protocol | grep -qx 'nfs3 wsize=[0-9]* rsize=[0-9]* stable=unstable' \
  || fail "share_protocol does not say what was negotiated: $(col "$csv" share_protocol)"
# tbf meters frames without the wire's 24 bytes of preamble, FCS and gap, so a shaped
# link carries up to 1538/1514 of a real one's goodput: 101.6 %, never more.
col "$csv" line_rate_pct | awk '$1 > 101.7 { exit 1 }' || fail "a line rate over the shaped link: $(col "$csv" line_rate_pct)"
[ -z "$(ls "$CACHE"/nasperf-* 2>/dev/null)" ] || fail "files left in the export after --cleanup each"
link=$(median_rate "$csv")
echo "NFS into the cache: median $link MB/s, iperf3 with the same bytes $iperf_mbs MB/s"
awk -v a="$link" -v b="$iperf_mbs" 'BEGIN { r = a / b; exit !(r > 0.95 && r < 1.05) }' \
  || fail "NFS $link MB/s vs iperf3 $iperf_mbs MB/s on the same 1 Gbit/s link: more than 5 % apart"

on_nas dd if=/dev/zero of="$ARRAY/dd.tmp" bs=1M count=64 oflag=dsync 2>"$T/dd.log" || fail "dd: $(cat "$T/dd.log")"
rm -f "$ARRAY/dd.tmp"
dd_mbs=$(awk '/copied/ { print $(NF-1) }' "$T/dd.log")
# shellcheck disable=SC2046
on_client "$NASPERF" sender --transport nfs --to "$(nfs_to array)" --size 64MiB --runs 2 --write-mode dsync \
  $(observe array) --out "$T/disk" >"$T/disk.log" 2>&1 || fail "nasperf over NFS into the array failed: $(cat "$T/disk.log")"
cat "$T/disk.log"
col "$T/disk/transfers.csv" share_protocol | grep -q "stable=file_sync" \
  || fail "dsync rows do not say FILE_SYNC: $(col "$T/disk/transfers.csv" share_protocol)"
disk=$(median_rate "$T/disk/transfers.csv")
echo "NFS FILE_SYNC into the throttled array: median $disk MB/s, dd oflag=dsync $dd_mbs MB/s"
awk -v a="$disk" -v b="$dd_mbs" 'BEGIN { r = a / b; exit !(r > 0.9 && r < 1.1) }' \
  || fail "NFS $disk MB/s vs dd $dd_mbs MB/s through the same throttle: more than 10 % apart"

# --- SMB: the link against iperf3 and smbclient, the array against dd
head -c 128M /dev/urandom >"$T/payload"
for i in 1 2 3; do smbclient_mbs cache "$T/payload" "put-$i.bin"; echo; rm -f "$CACHE/put-$i.bin"; done | sort -n | sed -n 2p >"$T/smbclient.mbs"
smbclient=$(cat "$T/smbclient.mbs")
[ -n "$smbclient" ] || fail "smbclient put gave no rate"
smb_sender() { on_client "$NASPERF" sender --transport smb --smb-credentials "$SMB_CREDENTIALS" "$@"; }
smb_sender --to "smb://$NAS_IP/cache" --smb-channels 2 --file "$T/payload" --warmup 1 --runs 3 --link-speed 1gbit \
  --out "$T/smb-rate" >"$T/smb-rate.log" 2>&1 || fail "nasperf over SMB failed: $(cat "$T/smb-rate.log")"
cat "$T/smb-rate.log"
# shellcheck disable=SC2046
smb_sender --to "smb://$NAS_IP/cache" --smb-channels 2 --file "$T/payload" --runs 3 --link-speed 1gbit $(observe cache) \
  --out "$T/smb-link" >"$T/smb-link.log" 2>&1 || fail "nasperf over SMB, observed, failed: $(cat "$T/smb-link.log")"
smb_link=$(median_rate "$T/smb-rate/transfers.csv")
echo "SMB into the cache: median $smb_link MB/s, smbclient put $smbclient MB/s, iperf3 $iperf_mbs MB/s"
awk -v a="$smb_link" -v i="$iperf_mbs" 'BEGIN { exit !(a < 1.02 * i) }' \
  || fail "SMB $smb_link MB/s over a link iperf3 puts at $iperf_mbs MB/s"
awk -v a="$smb_link" -v b="$smbclient" 'BEGIN { r = a / b; exit !(r > 0.85 && r < 1.15) }' \
  || fail "SMB $smb_link MB/s vs smbclient $smbclient MB/s: more than 15 % apart"

for i in 1 2 3; do
  on_nas dd if=/dev/zero of="$ARRAY/dd.tmp" bs=1M count=96 2>&1 | awk '/copied/ { print $(NF-1) }'
  rm -f "$ARRAY/dd.tmp"
done | sort -n >"$T/smb-dd.mbs"
smb_dd=$(sed -n 2p "$T/smb-dd.mbs")
smb_dd_max=$(sed -n 3p "$T/smb-dd.mbs")
# shellcheck disable=SC2046
smb_sender --to "smb://$NAS_IP/array" \
  --size 96MiB --runs 3 $(observe array) --out "$T/smb-disk" >"$T/smb-disk.log" 2>&1 || fail "nasperf over SMB into the array failed: $(cat "$T/smb-disk.log")"
cat "$T/smb-disk.log"
smb_disk=$(median_rate "$T/smb-disk/transfers.csv")
echo "SMB into the throttled array: median $smb_disk MB/s, dd (buffered, 96 MiB) $smb_dd MB/s"
# Below dd's median by up to 15 %: dd fills the first 16 MiB of page cache at memory
# speed, SMB at the link's (about 6 % of this transfer's time here); above dd's fastest
# run by 10 % at most (dd's own runs spread by several percent: one CI run had SMB 13 %
# over dd's median).
awk -v a="$smb_disk" -v b="$smb_dd" -v m="$smb_dd_max" 'BEGIN { exit !(a > 0.85 * b && a < 1.1 * m) }' \
  || fail "SMB $smb_disk MB/s vs dd $(tr '\n' ' ' <"$T/smb-dd.mbs")MB/s into the same array: under 85 % of dd's median or over 110 % of its fastest"
# The NAS's verdicts. Over the link most NFS copies fill it (a copy at 95 % of iperf3 sits
# at the 95 % rule's edge); none may blame the NAS's disk or CPU.
verdicts=$(nas_verdicts "$T/link-observed/transfers.csv")
echo "NAS rows: NFS cache: $verdicts; NFS array: $(nas_verdicts "$T/disk/transfers.csv");" \
  "SMB cache: $(nas_verdicts "$T/smb-link/transfers.csv"); SMB array: $(nas_verdicts "$T/smb-disk/transfers.csv")"
[ "$(echo "$verdicts" | tr ' ' '\n' | grep -c '^network$')" -ge 1 ] || fail "NFS over the full link, NAS verdicts: $verdicts"
[ "$(nas_verdicts "$T/disk/transfers.csv")" = "disk disk " ] || fail "NFS into the throttled array, NAS verdicts: $(nas_verdicts "$T/disk/transfers.csv")"
[ "$(nas_verdicts "$T/smb-disk/transfers.csv")" = "disk disk disk " ] \
  || fail "SMB into the throttled array, NAS verdicts: $(nas_verdicts "$T/smb-disk/transfers.csv")"
# Into the cache no copy blames smbd's or ganesha's CPU, none lacks a verdict; the cache
# (a loop device in RAM, copying on the same two cores) can truly stall one copy, which is
# then called disk and must be clearly slower than the fastest (CI: disk network network).
nas_rates() {  # CSV: "MB/s verdict" of the NAS's rows of the measured copies
  paste -d' ' <(csv_role_col "$1" nas iteration) <(csv_role_col "$1" nas mb_per_s) <(csv_role_col "$1" nas bottleneck) |
    awk '$1 >= 1 { print $2, ($3 == "" ? "none" : $3) }'
}
for f in link-observed smb-link; do
  nas_rates "$T/$f/transfers.csv" | awk '$1 > best { best = $1 } $2 == "server-cpu" || $2 == "none" { bad = 1 }
    $2 == "disk" { d[++k] = $1 } END { if (bad || NR == 0) exit 1; for (i = 1; i <= k; i++) if (d[i] >= 0.9 * best) exit 1 }' \
    || fail "$f: the NAS's verdicts blame an idle part or are missing (MB/s verdict): $(nas_rates "$T/$f/transfers.csv" | tr '\n' ';')"
done
echo "ok: NFS at $link MB/s on a link iperf3 puts at $iperf_mbs; $disk MB/s into an array dd puts at $dd_mbs;" \
  "SMB $smb_link MB/s (smbclient $smbclient), $smb_disk MB/s into the array (dd $smb_dd)"
