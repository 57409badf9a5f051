#!/usr/bin/env bash
# Issue 47: many files per transfer (--files, --file-size) against the lab's real Samba
# and nfs-ganesha, and a local file system on a throttled disk, each figure against a
# ground truth measured in the same run (docs/DESIGN.md §9):
# - SMB: files/s within 15 % of Samba's own smbclient putting files of the same size
#   (`prompt; mput *`), the mean of fourteen rounds each, the two in turns on one core,
#   both rates taken on a capture of the client's link (smb_wire.py: a file is a CREATE
#   through the CLOSE of its handle; smbclient's log-in left out); each nasperf row within
#   10 % of its files' rate on the wire;
# - NFS: every row has its files whole, files/s and latency percentiles in order; on a
#   packet capture of the client's link, files/s within 10 % of the rate nasperf's files
#   had on the wire, and each file no longer there than libnfs's own nfs-cp's of the same
#   size (nfs-cp per file: a process, a mount, CREATE, LOOKUP, SETATTR, WRITE, COMMIT;
#   nasperf on one connection: CREATE, LOOKUP, WRITE, COMMIT);
# - files over time: the samples of an NFS and a native set count every file the row does;
# - --files-per-dir: natively, over NFS, SMB and on the NAS's own disk, a set laid out in
#   new directories of K files (the last one the rest), and none left after cleanup;
# - --tree: natively, over SMB and NFS, one file for each of a real tree's files with
#   bytes, of its size and with its bytes, in its order;
# - native: the receiver writes the set into the tmpfs share's directory with no round
#   trip per file, so its files/s there is at least 0.4 of the same set written on the
#   NAS itself (--transport path, the file system's own cost; see below why so loose);
#   into the array, small files get the receiver's metadata verdict, on the sender's row too;
# - the metadata verdict: small files (source-tree) with an fsync each into the lab's
#   array (ext4 on a loop device under a blkio write throttle) are held back by the file
#   system's work per file (`metadata`); photos into the same array by its bytes (`disk`).
# shellcheck disable=SC2154  # rx_PORT: set by lib.sh's lab_receiver with printf -v
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

# files_over_time DIR ROLE: each of ROLE's measured rows in DIR/transfers.csv has samples
# whose `files` sum to its files, at least two of them with some (files/s over time);
# prints the busiest sample's files/s.
files_over_time() {
  python3 - "$1" "$2" <<'EOF' || fail "$1: the $2 rows' samples do not count their files over time"
import collections, csv, sys
d, role = sys.argv[1], sys.argv[2]
counts = collections.defaultdict(list)
for s in csv.DictReader(open(d + "/samples.csv")):
    if s["role"] == role and s["files"] != "":
        counts[(s["iteration"], s["stream"])].append((int(s["files"]), float(s["t_s"])))
rows = [r for r in csv.DictReader(open(d + "/transfers.csv")) if r["role"] == role and int(r["iteration"]) >= 1]
assert rows, "no rows"
best = 0
for r in rows:
    got = counts[(r["iteration"], r["stream"])]
    assert sum(f for f, _ in got) == int(r["files"]), (r["iteration"], r["stream"], got, r["files"])
    assert sum(1 for f, _ in got if f > 0) >= 2, got
    times = [0.0] + [t for _, t in got]
    best = max(best, max(f / (b - a) for (f, b), a in zip(got, times) if b > a))
print("%.0f" % best)
EOF
}

# --- SMB against smbclient, files of one size into the tmpfs share, in turns (a round
# of each, seven times), each on the wire: a capture on the client's link of every
# smbclient `mput` and every nasperf run (whole packets: smb_wire.py reads SMB's calls
# from each connection's byte stream). smbclient's rate is its files' own there (the
# first CREATE's request to the last CLOSE's answer: its log-in left out, its files
# into an empty directory as nasperf's are). Either tool's rate swings 360-970 files/s
# from one round to the next here, in spells longer than a round, so the two take
# fourteen short turns, each on the same core (smbd on the other, as on two machines),
# and their mean rates are compared. Each nasperf figure also agrees with its own files
# on the wire.
n=300
size=64KiB
# base_name P I: file I of a baseline tool's set, named as long as nasperf's own
# (nasperf-RUN-ITER-STREAM-fNNNNNNN.dat): Samba's CREATE of a 43-character name took
# 0.93-1.02 ms a file on the wire against 0.87-0.89 for one of three characters.
base_name() { printf '%s-base-20261207-000000-0000-1-0-%07d.dat' "$1" "$2"; }
mkdir -p "$T/set1"
for i in $(seq "$n"); do head -c 64K /dev/urandom >"$T/set1/$(base_name f "$i")"; done
nfs_wire_py=$(dirname "$0")/nfs_wire.py
smb_wire_py=$(dirname "$0")/smb_wire.py
# wire_word KEY WORDS: KEY's value in a wire script's KEY=VALUE line.
wire_word() { tr ' ' '\n' <<<"$2" | sed -n "s/^$1=//p"; }
# smb_wire WHO PCAP: the capture's files/s, after checking it saw all n files whole;
# the median time a file took on the wire goes to $T/WHO.per_file.
smb_wire() {
  local words
  words=$(python3 "$smb_wire_py" "$2")
  [ "$(wire_word files "$words")" = "$n" ] || fail "the capture saw $(wire_word files "$words") of $1's $n files whole"
  rm -f "$2"
  wire_word per_file_ms "$words" >>"$T/$1.per_file"
  wire_word wire_fps "$words"
}
# smbclient_round: one mput of the set on the wire; its files/s to smbclient.fps.
smbclient_round() {
  lab_capture client eth0 "$T/smbclient.pcap" 0 "tcp port 445"
  on_client "${pin[@]}" timeout 120 smbclient "//$NAS_IP/fast" -A "$SMB_CREDENTIALS" -m SMB3 \
    -c "prompt; lcd $T/set1; mput *" >"$T/smbclient.log" 2>&1 || fail "smbclient mput: $(tail -3 "$T/smbclient.log")"
  lab_stop_whole_capture
  rm -f "$FAST"/f-base-*
  smb_wire smbclient "$T/smbclient.pcap" >>"$T/smbclient.fps"
}
# nasperf_smb_round ROUND: nasperf's set on the wire, its row checked against it.
nasperf_smb_round() {
  local ours wire
  lab_capture client eth0 "$T/smb.pcap" 0 "tcp port 445"
  on_client "${pin[@]}" "$NASPERF" sender --transport smb --smb-credentials "$SMB_CREDENTIALS" --to "smb://$NAS_IP/fast" \
    --files "$n" --file-size "$size" --sync none --runs 1 --no-progress --out "$T/smb$1" >"$T/smb$1.log" 2>&1 ||
    fail "nasperf --files over SMB failed: $(cat "$T/smb$1.log")"
  lab_stop_whole_capture
  rows_whole "$T/smb$1/transfers.csv" "$n"
  ours=$(measured "$T/smb$1/transfers.csv" files_per_s)
  wire=$(smb_wire nasperf "$T/smb.pcap")
  within 10 "$ours" "$wire" ||
    fail "SMB: nasperf's $ours files/s is more than 10 % from the $wire files/s its files had on the wire"
  echo "$ours" >>"$T/smb.fps"
  echo "$wire" >>"$T/smb-wire.fps"
}
# Fourteen rounds, the two in turns (smbclient first in odd rounds); the mean of each
# tool's rates. Unpinned, with seven rounds of 600 files, the median of the rounds'
# ratios ran 0.92-1.18 in eleven runs here; pinned in fourteen of 300, the means' ratio
# 0.96-1.09 in eight (the median of the ratios 0.94-1.14). The bound is 15 %: the
# machine's spells can still fall on one tool's turns.
pin=()
if [ "$(nproc)" -ge 2 ]; then
  pin=(taskset -c 0)
  for pid in $(ip netns pids "$LAB-nas"); do
    case $(cat "/proc/$pid/comm" 2>/dev/null) in smbd*) taskset -a -p -c 1 "$pid" >/dev/null ;; esac
  done
fi
for round in $(seq 14); do
  if [ $((round % 2)) = 1 ]; then smbclient_round; nasperf_smb_round "$round"
  else nasperf_smb_round "$round"; smbclient_round; fi
done
grep "files:" "$T/smb1.log"
mean() { awk '{ s += $1 } END { print s / NR }' "$1"; }
ratio=$(awk -v a="$(mean "$T/smb.fps")" -v b="$(mean "$T/smbclient.fps")" 'BEGIN { printf "%.3f", a / b }')
echo "SMB, $n files of $size: nasperf $(tr '\n' ' ' <"$T/smb.fps")files/s (on the wire $(tr '\n' ' ' <"$T/smb-wire.fps")), smbclient" \
  "mput on the wire $(tr '\n' ' ' <"$T/smbclient.fps")files/s; the means' ratio $ratio"
echo "SMB per file on the wire (ms): nasperf $(tr '\n' ' ' <"$T/nasperf.per_file")smbclient $(tr '\n' ' ' <"$T/smbclient.per_file")"
within 15 "$ratio" 1 || fail "SMB vs smbclient: nasperf's mean rate over fourteen rounds is $ratio of smbclient's, more than 15 % from it"
left=$(find "$FAST" -name 'nasperf-*' | head -3)
[ -z "$left" ] || fail "files left in the share after --cleanup each: $left"
# --files-per-dir through the SMB worker: its directories made, and gone with the files
on_client "$NASPERF" sender --transport smb --smb-credentials "$SMB_CREDENTIALS" --to "smb://$NAS_IP/fast" \
  --files 50 --file-size 4KiB --files-per-dir 20 --sync none --runs 1 --no-progress --out "$T/smb-dirs" \
  >"$T/smb-dirs.log" 2>&1 || fail "--files-per-dir over SMB failed: $(cat "$T/smb-dirs.log")"
rows_whole "$T/smb-dirs/transfers.csv" 50
left=$(find "$FAST" -name 'nasperf-*' | head -3)
[ -z "$left" ] || fail "files or directories left in the share after --files-per-dir: $left"

# --- NFS: a photo folder's sizes, two streams at once
on_client "$NASPERF" sender --transport nfs --to "nfs://$NAS_IP$NFS_ROOT/fast" --files 40 --file-size photos \
  --streams 2 --sync none --runs 1 --interval 50ms --files-per-dir 16 --cleanup never --no-progress --out "$T/nfs" \
  >"$T/nfs.log" 2>&1 ||
  fail "nasperf --files over NFS failed: $(cat "$T/nfs.log")"
grep "files:\|files/s" "$T/nfs.log"
rows_whole "$T/nfs/transfers.csv" 40
# --files-per-dir 16: each stream's 40 files in three new directories of 16, 16 and 8
layout=$(find "$FAST" -mindepth 2 -name 'nasperf-*.dat' -printf '%h\n' | sort | uniq -c | awk '{ print $1 }' | sort -n | tr '\n' ' ')
[ "$layout" = "8 8 16 16 16 16 " ] || fail "--files-per-dir 16 laid 2 x 40 files out as $layout, not 16, 16, 8 each"
[ -z "$(find "$FAST" -maxdepth 1 -name 'nasperf-*.dat')" ] || fail "--files-per-dir left files beside its directories"
rm -rf "$FAST"/nasperf-*
busiest=$(files_over_time "$T/nfs" sender)
echo "NFS photos: samples every 50 ms count every file, the busiest at $busiest files/s"
# --- NFS against nfs-cp, on the wire: each tool's files as a capture on the client's link
# saw them (nfs_wire.py: a file is a CREATE through the COMMIT after it, every call
# answered). nasperf's files/s agrees within 10 % with the rate its files had on the
# wire (the first CREATE's request to the last COMMIT's reply), and none of its files
# takes longer on the wire than nfs-cp's (10 % leeway: no cost per file nfs-cp does not
# pay). nfs-cp's rate as a process is no truth for the figure: every file is a process,
# a mount and a new connection (its WRITE in TCP's slow start), and it sends a SETATTR
# nasperf does not; both tools' calls and round trips are printed.
n=200
nfs_url() { echo "nfs://$NAS_IP$NFS_ROOT/fast/$1?uid=0&gid=0&version=3&autoreconnect=0"; }
cp_files=40
lab_capture client eth0 "$T/nfs-cp.pcap" 256 "tcp port 2049"
for i in $(seq "$cp_files"); do
  on_client timeout 30 nfs-cp "$T/set1/$(base_name f "$i")" "$(nfs_url "$(base_name c "$i")")" >/dev/null 2>"$T/nfs-cp.log" ||
    fail "nfs-cp of file $i: $(tail -3 "$T/nfs-cp.log")"
done
lab_stop_whole_capture
rm -f "$FAST"/c*
theirs=$(python3 "$nfs_wire_py" "$T/nfs-cp.pcap")
lab_capture client eth0 "$T/nfs-set.pcap" 256 "tcp port 2049"
on_client "$NASPERF" sender --transport nfs --to "nfs://$NAS_IP$NFS_ROOT/fast" --files "$n" --file-size "$size" \
  --sync end --runs 1 --warmup 0 --no-progress --out "$T/nfs-set" >"$T/nfs-set.log" 2>&1 ||
  fail "nasperf --files over NFS failed: $(cat "$T/nfs-set.log")"
lab_stop_whole_capture
rows_whole "$T/nfs-set/transfers.csv" "$n"
ours=$(python3 "$nfs_wire_py" "$T/nfs-set.pcap")
nfs_fps=$(measured "$T/nfs-set/transfers.csv" files_per_s)
echo "NFS, $n files of $size, --sync end: nasperf $nfs_fps files/s; on the wire: $ours"
echo "nfs-cp, $cp_files files, a process each, on the wire: $theirs"
[ "$(wire_word files "$theirs")" = "$cp_files" ] || fail "the capture saw $(wire_word files "$theirs") of nfs-cp's $cp_files files whole"
[ "$(wire_word files "$ours")" -ge $((n * 95 / 100)) ] ||
  fail "the capture saw $(wire_word files "$ours") of nasperf's $n files whole"
within 10 "$nfs_fps" "$(wire_word wire_fps "$ours")" ||
  fail "NFS: nasperf's $nfs_fps files/s is more than 10 % from the $(wire_word wire_fps "$ours") files/s its files had on the wire"
awk -v a="$(wire_word per_file_ms "$ours")" -v b="$(wire_word per_file_ms "$theirs")" 'BEGIN { exit !(a <= 1.1 * b) }' ||
  fail "NFS: nasperf's files took $(wire_word per_file_ms "$ours") ms each on the wire, nfs-cp's $(wire_word per_file_ms "$theirs"): a cost per file nfs-cp does not pay"

# --- Native: the receiver writes the set; against the NAS's own writes of it, small
# files with an fsync each into the array (a file's cost there is the file system's,
# against microseconds of its bytes on the link), seven turns each, the fastest of each.
# Single runs of either swing 2400-5900 files/s here in two modes (about 2600, and 4500
# and up); native runs mostly in the slower one, the NAS's own writes often in the faster
# (why is not known yet), so the fastest native ran 0.79-1.04 of the NAS's own in five
# tries and a native run that never left the slower mode would be 0.45. The bound, 0.4,
# guards against a gross cost per file only (a control call per file would be far below);
# the protocol has none by construction (one header, one payload for the set)
NASPERF_TOKEN=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
export NASPERF_TOKEN
mkdir -p "$ARRAY/rx"
lab_receiver rx --target "$ARRAY/rx" --min-free 0
for round in 1 2 3 4 5 6 7; do
  on_nas "$NASPERF" sender --transport path --to "$ARRAY" --files 300 --file-size source-tree --runs 1 \
    --no-progress --out "$T/own$round" >"$T/own$round.log" 2>&1 || fail "the NAS's own set: $(cat "$T/own$round.log")"
  measured "$T/own$round/transfers.csv" files_per_s >>"$T/own.fps"
  measured "$T/own$round/transfers.csv" bottleneck >>"$T/own.verdicts"
  on_client "$NASPERF" sender --to "$NAS_IP:$rx_PORT" --files 300 --file-size source-tree --runs 1 --interval 20ms \
    --no-progress --out "$T/native$round" >"$T/native$round.log" 2>&1 || fail "native set: $(cat "$T/native$round.log")"
  csv_role_col "$T/native$round/transfers.csv" receiver files_per_s >>"$T/native.fps"
  csv_role_col "$T/native$round/transfers.csv" receiver bottleneck >>"$T/native.verdicts"
  csv_role_col "$T/native$round/transfers.csv" sender bottleneck >>"$T/native-sender.verdicts"
done
grep "files:" "$T/native1.log" "$T/own1.log"
[ "$(csv_role_col "$T/native1/transfers.csv" receiver files)" = 300 ] ||
  fail "the receiver's row does not count 300 files: $(csv_role_col "$T/native1/transfers.csv" receiver files)"
[ -z "$(find "$ARRAY/rx" -name 'nasperf-*')" ] || fail "the receiver left files after --cleanup each"
on_client "$NASPERF" sender --to "$NAS_IP:$rx_PORT" --files 300 --file-size source-tree --files-per-dir 64 --runs 1 \
  --cleanup never --no-progress --out "$T/native-dirs" >"$T/native-dirs.log" 2>&1 ||
  fail "native --files-per-dir: $(cat "$T/native-dirs.log")"
layout=$(find "$ARRAY/rx" -mindepth 2 -name 'nasperf-*.dat' -printf '%h\n' | sort | uniq -c | awk '{ print $1 }' | tr '\n' ' ')
[ "$layout" = "64 64 64 64 44 " ] || fail "the receiver laid 300 files out as $layout, not four directories of 64 and one of 44"
rm -rf "$ARRAY/rx"/nasperf-*

# --- --tree: a real tree (a checkout's shape: nested, 1 B to 100 KB of random bytes, two
# empty files and a link left out), written natively (the sizes on the data connection),
# over SMB and over NFS: each target holds one file for each of the tree's files with
# bytes, of its size and with its bytes, in the tree's order (a directory's names sorted,
# depth first).
tree=$T/tree
python3 - "$tree" <<'EOF'
import os, random, sys
root, rng = sys.argv[1], random.Random(47)
os.makedirs(os.path.join(root, "d0"))
for i in range(60):
    d = os.path.join(root, *["d%d" % rng.randrange(3) for _ in range(rng.randrange(3))])
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "f%02d.c" % i), "wb") as f:
        f.write(os.urandom(int(10 ** rng.uniform(0, 5))))
open(os.path.join(root, "empty"), "w").close()
open(os.path.join(root, "d0", "empty"), "w").close()
os.symlink("/etc", os.path.join(root, "link"))
EOF
# tree.sizes: a size a line in the walk's order; tree.sha256: of all their bytes in it.
python3 - "$tree" "$T/tree.sha256" >"$T/tree.sizes" <<'EOF'
import hashlib, os, stat, sys
def walk(d):
    for name in sorted(os.listdir(d)):
        path = os.path.join(d, name)
        st = os.lstat(path)
        if stat.S_ISDIR(st.st_mode):
            yield from walk(path)
        elif stat.S_ISREG(st.st_mode) and st.st_size > 0:
            yield path, st.st_size
digest = hashlib.sha256()
for path, size in walk(sys.argv[1]):
    print(size)
    digest.update(open(path, "rb").read())
open(sys.argv[2], "w").write(digest.hexdigest() + "\n")
EOF
tree_files=$(wc -l <"$T/tree.sizes")
# tree_copy NAME DIR ARGS...: one --tree run into DIR, its files' sizes and bytes held to
# the tree's.
tree_copy() {
  local name=$1 dir=$2
  shift 2
  on_client "$NASPERF" sender --tree "$tree" --runs 1 --warmup 0 --cleanup never --no-progress --out "$T/$name" "$@" \
    >"$T/$name.log" 2>&1 || fail "--tree ($name): $(cat "$T/$name.log")"
  grep -q "of $tree_files files from $tree (3 empty files, links and others left out)" "$T/$name.log" ||
    fail "--tree ($name): the run does not say what it copies: $(head -3 "$T/$name.log")"
  [ "$(csv_role_col "$T/$name/transfers.csv" sender files)" = "$tree_files" ] ||
    fail "--tree ($name): the row has $(csv_role_col "$T/$name/transfers.csv" sender files) files, not $tree_files"
  find "$dir" -maxdepth 1 -name 'nasperf-*.dat' -printf '%f %s\n' | sort | awk '{ print $2 }' >"$T/$name.sizes"
  cmp -s "$T/$name.sizes" "$T/tree.sizes" || fail "--tree ($name): the files in $dir are not the tree's sizes in its order"
  find "$dir" -maxdepth 1 -name 'nasperf-*.dat' | sort | xargs cat | sha256sum | awk '{ print $1 }' >"$T/$name.sha256"
  cmp -s "$T/$name.sha256" "$T/tree.sha256" || fail "--tree ($name): the files in $dir do not hold the tree's bytes in its order"
  rm -rf "$dir"/nasperf-*
}
tree_copy tree-native "$ARRAY/rx" --to "$NAS_IP:$rx_PORT"
tree_copy tree-smb "$FAST" --transport smb --smb-credentials "$SMB_CREDENTIALS" --to "smb://$NAS_IP/fast"
tree_copy tree-nfs "$FAST" --transport nfs --to "nfs://$NAS_IP$NFS_ROOT/fast"
echo "--tree: $tree_files files of $(awk '{ s += $1 } END { print s }' "$T/tree.sizes") bytes, the tree's sizes and bytes natively, over SMB and NFS"
busiest=$(files_over_time "$T/native1" receiver)
echo "native: the receiver's samples every 20 ms count every file, the busiest at $busiest files/s"
own_fps=$(sort -n "$T/own.fps" | tail -1)
native_fps=$(sort -n "$T/native.fps" | tail -1)
echo "300 source-tree files with an fsync each into the array: native fastest $native_fps files/s" \
  "(of $(tr '\n' ' ' <"$T/native.fps")), the NAS's own writes fastest $own_fps files/s (of $(tr '\n' ' ' <"$T/own.fps"))"
echo "verdicts: native $(sort "$T/native.verdicts" | uniq -c | tr '\n' ' '), the NAS's own $(sort "$T/own.verdicts" | uniq -c | tr '\n' ' ')"
awk -v a="$native_fps" -v b="$own_fps" 'BEGIN { exit !(a >= 0.4 * b) }' ||
  fail "native $native_fps files/s is under 0.4 of the NAS's own $own_fps files/s: a cost per file in the protocol"
[ "$(sort -u "$T/native.verdicts")" = metadata ] ||
  fail "the receiver judged small files with an fsync each $(sort -u "$T/native.verdicts" | tr '\n' ' '), not metadata"
cmp -s "$T/native.verdicts" "$T/native-sender.verdicts" ||
  fail "the sender's rows (what the console shows) judged $(tr '\n' ' ' <"$T/native-sender.verdicts"), the receiver's metadata"
[ "$(sort -u "$T/own.verdicts")" = metadata ] ||
  fail "the NAS's own small files with an fsync each were judged $(sort -u "$T/own.verdicts" | tr '\n' ' '), not metadata"

# --- The disk's verdict for large files on the same array
on_nas "$NASPERF" sender --transport path --to "$ARRAY" --files 8 --file-size 2MiB-8MiB --runs 1 --no-progress \
  --out "$T/large" >"$T/large.log" 2>&1 || fail "large files into the array: $(cat "$T/large.log")"
grep "files:" "$T/large.log"
on_nas "$NASPERF" sender --transport path --to "$ARRAY" --files 7 --file-size 4KiB --files-per-dir 3 --runs 1 \
  --no-progress --out "$T/own-dirs" >"$T/own-dirs.log" 2>&1 || fail "--files-per-dir on the NAS: $(cat "$T/own-dirs.log")"
rows_whole "$T/own-dirs/transfers.csv" 7
[ -z "$(find "$ARRAY" -maxdepth 1 -name 'nasperf-*')" ] || fail "--transport path left a set's directories"
rows_whole "$T/own1/transfers.csv" 300
large=$(measured "$T/large/transfers.csv" bottleneck)
echo "2-8 MiB files: $large ($(measured "$T/large/transfers.csv" metadata_pct) % the files' own work)"
[ "$large" = disk ] || fail "2-8 MiB files through a 40 MB/s throttle were judged $large, not disk"
echo "ok"
