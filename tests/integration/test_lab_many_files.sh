#!/usr/bin/env bash
# Issue 47: many files per transfer (--files, --file-size) against the lab's real Samba
# and nfs-ganesha, and a local file system on a throttled disk, each figure against a
# ground truth measured in the same run (docs/DESIGN.md §9):
# - SMB: files/s within 10 % of Samba's own smbclient putting files of the same size
#   (`prompt; mput *`). smbclient's rate is its own, with its log-in taken out: the
#   difference between putting 2N and N files, over N;
# - NFS: every row has its files whole, files/s and latency percentiles in order;
# - the metadata verdict: small files (source-tree) with an fsync each into the lab's
#   array (ext4 on a loop device under a blkio write throttle) are held back by the file
#   system's work per file (`metadata`); photos into the same array by its bytes (`disk`).
source "$(dirname "$0")/lib.sh"

lab_up --mtu 1500 --array-rate 40MB --disk-size 512M
lab_shares
col() { csv_role_col "$1" sender "$2"; }
measured() {  # CSV COLUMN: the column of the measured rows (iterations 1..N), sorted
  paste -d' ' <(col "$1" iteration) <(col "$1" "$2") | awk '$1 >= 1 { print $2 }' | sort -n
}
# rows_whole CSV N: every measured row wrote N files whole, with its figures in order.
rows_whole() {
  local csv=$1 n=$2
  [ "$(measured "$csv" files | sort -u)" = "$n" ] || fail "$csv: files $(measured "$csv" files | tr '\n' ' '), not $n"
  python3 - "$csv" <<'EOF' || fail "$csv: a row's file figures are out of order"
import csv, sys
for row in csv.DictReader(open(sys.argv[1])):
    if row["role"] != "sender" or int(row["iteration"]) < 1:
        continue
    p = [float(row[k]) for k in ("file_p50_s", "file_p90_s", "file_p99_s", "file_max_s")]
    assert 0 < p[0] <= p[1] <= p[2] <= p[3] <= float(row["duration_s"]), p
    rate = int(row["files"]) / float(row["duration_s"])
    assert abs(float(row["files_per_s"]) - rate) <= 0.01 * rate + 0.01, (row["files_per_s"], rate)
    assert 0 <= float(row["metadata_pct"]) <= 100
EOF
}

# --- SMB against smbclient, files of one size into the tmpfs share, in turns (a round
# of each, four times: the machine's other work falls on both alike), the fastest of each
n=400
size=64KiB
mkdir -p "$T/set1" "$T/set2"
for i in $(seq "$n"); do head -c 64K /dev/urandom >"$T/set1/f$i"; done
cp "$T/set1"/f* "$T/set2/"
for i in $(seq "$n"); do cp "$T/set1/f$i" "$T/set2/g$i"; done
# smbclient_put DIR: microseconds smbclient took to log in and put every file of DIR.
smbclient_put() {
  local start end
  start=$(date +%s%N)
  on_client timeout 120 smbclient "//$NAS_IP/fast" -A "$SMB_CREDENTIALS" -m SMB3 \
    -c "prompt; lcd $1; mput *" >"$T/smbclient.log" 2>&1 || fail "smbclient mput: $(tail -3 "$T/smbclient.log")"
  end=$(date +%s%N)
  rm -f "$FAST"/f* "$FAST"/g*
  echo $(((end - start) / 1000))
}
for round in 1 2 3 4; do
  one=$(smbclient_put "$T/set1")
  two=$(smbclient_put "$T/set2")
  awk -v n="$n" -v a="$one" -v b="$two" 'BEGIN { if (b > a) printf "%.1f\n", n * 1e6 / (b - a) }' >>"$T/smbclient.fps"
  on_client "$NASPERF" sender --transport smb --smb-credentials "$SMB_CREDENTIALS" --to "smb://$NAS_IP/fast" \
    --files "$n" --file-size "$size" --sync none --runs 1 --no-progress --out "$T/smb$round" >"$T/smb$round.log" 2>&1 ||
    fail "nasperf --files over SMB failed: $(cat "$T/smb$round.log")"
  rows_whole "$T/smb$round/transfers.csv" "$n"
  measured "$T/smb$round/transfers.csv" files_per_s >>"$T/smb.fps"
done
grep "files:" "$T/smb1.log"
smbclient_fps=$(sort -n "$T/smbclient.fps" | tail -1)
smb_fps=$(sort -n "$T/smb.fps" | tail -1)
[ -n "$smbclient_fps" ] || fail "smbclient's puts gave no rate"
echo "SMB, $n files of $size: nasperf fastest $smb_fps files/s (of $(tr '\n' ' ' <"$T/smb.fps")), smbclient mput" \
  "fastest $smbclient_fps files/s (of $(tr '\n' ' ' <"$T/smbclient.fps"))"
within 10 "$smb_fps" "$smbclient_fps" ||
  fail "SMB $smb_fps files/s vs smbclient $smbclient_fps files/s: more than 10 % apart"
left=$(find "$FAST" -name 'nasperf-*' | head -3)
[ -z "$left" ] || fail "files left in the share after --cleanup each: $left"

# --- NFS: a photo folder's sizes, two streams at once
on_client "$NASPERF" sender --transport nfs --to "nfs://$NAS_IP$NFS_ROOT/fast" --files 40 --file-size photos \
  --streams 2 --sync none --runs 1 --no-progress --out "$T/nfs" >"$T/nfs.log" 2>&1 ||
  fail "nasperf --files over NFS failed: $(cat "$T/nfs.log")"
grep "files:\|files/s" "$T/nfs.log"
rows_whole "$T/nfs/transfers.csv" 40

# --- The metadata verdict on the throttled array, and the disk's for large files
on_nas "$NASPERF" sender --transport path --to "$ARRAY" --files 300 --file-size source-tree --runs 1 --no-progress \
  --out "$T/small" >"$T/small.log" 2>&1 || fail "small files into the array: $(cat "$T/small.log")"
on_nas "$NASPERF" sender --transport path --to "$ARRAY" --files 8 --file-size 2MiB-8MiB --runs 1 --no-progress \
  --out "$T/large" >"$T/large.log" 2>&1 || fail "large files into the array: $(cat "$T/large.log")"
grep "files:" "$T/small.log" "$T/large.log"
rows_whole "$T/small/transfers.csv" 300
small=$(measured "$T/small/transfers.csv" bottleneck)
large=$(measured "$T/large/transfers.csv" bottleneck)
echo "verdicts: source-tree $small ($(measured "$T/small/transfers.csv" metadata_pct) % metadata)," \
  "2-8 MiB files $large ($(measured "$T/large/transfers.csv" metadata_pct) % metadata)"
[ "$small" = metadata ] || fail "small files with an fsync each were judged $small, not metadata"
[ "$large" = disk ] || fail "2-8 MiB files through a 40 MB/s throttle were judged $large, not disk"
echo "ok"
