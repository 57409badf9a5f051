#!/usr/bin/env bash
# shellcheck disable=SC2154  # NAME_PID, NAME_PORT...: set by lib.sh's start_*, lab_* and cpu_group with printf -v
# Issue 5: the scp and sftp transports against a real sshd. Both loops land files
# byte-identical to the source and write ok sender rows (no receiver rows: there is
# no agent) into the same transfers.csv as a native run, so they compare side by
# side. Also: ~/.ssh/config is honoured, a name that exists is never overwritten,
# --cleanup each or end leaves nothing, --sync every=SIZE is what the rows say, a
# run that would fill the target is refused, --verify reads each sftp file back, and --direction read pulls an existing
# remote file byte for byte.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/ssh_lib.sh"

start_sshd
trust_sshd
head -c 48M /dev/urandom >"$T/src.bin"

ssh_sender sftp --file "$T/src.bin" --runs 2 --warmup 1 --cleanup never --label over-sftp --interval 100ms --verify \
  --out "$T/out" >"$T/sftp.log" 2>&1 || fail "sftp loop failed: $(tail -5 "$T/sftp.log")"
grep -q "summary: 2 transfers measured" "$T/sftp.log" || fail "no sftp summary"
[ "$(csv_col "$T/out/transfers.csv" verified | sort | uniq -c | awk '{print $1 $2}')" = "3true" ] \
  || fail "--verify over sftp: $(csv_col "$T/out/transfers.csv" verified | tr '\n' ' ')"

# scp through a Host alias in the ssh_config: HostName, Port, User, IdentityFile from there.
cat >"$CLIENT_DIR/ssh_config" <<EOF
Host nas
  HostName 127.0.0.1
  Port $SSHD_PORT
  User root
  IdentityFile $CLIENT_DIR/id_ed25519
EOF
"$NASPERF" sender --transport scp --to "nas:$T/remote" --ssh-config "$CLIENT_DIR/ssh_config" \
  --known-hosts "$KNOWN_HOSTS" --no-progress --file "$T/src.bin" --runs 2 --cleanup never --label over-scp \
  --out "$T/out" >"$T/scp.log" 2>&1 || fail "scp loop failed: $(tail -5 "$T/scp.log")"

# The native path into the same CSV, for the side-by-side the issue is about.
mkdir -p "$T/target"
start_receiver rx --target "$T/target" --min-free 0
"$NASPERF" sender --to 127.0.0.1:"$rx_PORT" --file "$T/src.bin" --runs 1 --label native \
  --out "$T/out" --no-progress >"$T/native.log" 2>&1 || fail "native run failed: $(tail -5 "$T/native.log")"

csv=$T/out/transfers.csv
files=("$T"/remote/nasperf-*.dat)
[ "${#files[@]}" -eq 5 ] || fail "expected 5 files (3 sftp incl. warm-up, 2 scp), found ${#files[@]}"
for f in "${files[@]}"; do cmp -s "$T/src.bin" "$f" || fail "$f differs from the source"; done

[ "$(paste -d, <(csv_col "$csv" transport) <(csv_col "$csv" role) <(csv_col "$csv" status) | sort | uniq -c | awk '{print $1 $2}' | tr '\n' ' ')" \
  = "1native,receiver,ok 1native,sender,ok 2scp,sender,ok 3sftp,sender,ok " ] \
  || fail "expected 3 sftp + 2 scp sender rows and a native pair, all ok: $(cut -d, -f5,8,28 "$csv")"
[ "$(paste -d, <(csv_col "$csv" transport) <(csv_col "$csv" sync_policy) | sort -u | tr '\n' ' ')" \
  = "native,end scp,none sftp,end " ] || fail "sync_policy must say end for sftp (fsync@openssh.com) and none for scp"
[ "$(csv_role_col "$csv" sender bytes | sort -u)" = "50331648" ] || fail "byte counts differ"
for col in mb_per_s duration_s first_byte_s; do
  csv_role_col "$csv" sender "$col" | grep -qvE '^[0-9.]+$' && fail "sender $col not a number everywhere"
done
# Only an agent knows these: empty for scp/sftp rows, never guessed. A verdict there
# names this end only: its source or its own CPU (the cipher), or nothing.
[ "$(awk -F, 'NR==1 {for (i=1;i<=NF;i++) {h[$i]=i}; next} $h["transport"]!="native" {print $h["net_wait_pct"] $h["disk_wait_pct"] $h["write_mode"]}' "$csv" | sort -u)" = "" ] \
  || fail "agent-only columns are filled on scp/sftp rows"
paste -d, <(csv_col "$csv" transport) <(csv_col "$csv" bottleneck) | awk -F, '$1 != "native" && $2 != "" && $2 != "source" && $2 != "sender-cpu" { exit 1 }' \
  || fail "an scp/sftp row names a part it cannot see: $(paste -d, <(csv_col "$csv" transport) <(csv_col "$csv" bottleneck) | sort -u)"
[ "$(paste -d, <(csv_col "$csv" label) <(csv_col "$csv" warmup) | grep -c '^over-sftp,true$')" -eq 1 ] || fail "warm-up row not marked"
grep -q ",over-sftp,.*sender" "$T/out/samples.csv" || fail "no samples for the sftp rows"
grep -q "recorded new host key" "$T/sftp.log" && fail "a trusted host key was recorded again"

# A name that exists is never overwritten: the same run id again.
run_id=$(csv_col "$csv" run_id | head -1)
before=$(sha256sum "$T"/remote/nasperf-"$run_id"-1-0.dat | cut -d' ' -f1)
if ssh_sender sftp --size 1MiB --run-id "$run_id" --warmup 1 --runs 1 --out "$T/again" >"$T/again.log" 2>&1; then
  fail "overwrote an existing file"
fi
grep -q "already exists; nasperf never overwrites" "$T/again.log" || fail "no clear 'exists' error: $(tail -3 "$T/again.log")"
[ "$(sha256sum "$T"/remote/nasperf-"$run_id"-1-0.dat | cut -d' ' -f1)" = "$before" ] || fail "existing file changed"
if ssh_sender scp --size 1MiB --run-id "$run_id" --runs 1 --out "$T/again-scp" >"$T/again-scp.log" 2>&1; then
  fail "scp overwrote an existing file"
fi
grep -q "already exists" "$T/again-scp.log" || fail "no clear 'exists' error from scp: $(tail -3 "$T/again-scp.log")"

# Default cleanup (each): nothing of this run stays behind.
rm -f "$T"/remote/*
ssh_sender sftp --size 8MiB --runs 2 --out "$T/clean" >"$T/clean.log" 2>&1 || fail "cleanup run failed: $(tail -3 "$T/clean.log")"
ssh_sender scp --size 8MiB --runs 1 --cleanup end --out "$T/clean" >>"$T/clean.log" 2>&1 || fail "scp cleanup run failed"
# sftp keeping its files to the end and syncing on the way (transport/remote_fs.cc's
# RemoteFsRun, as every remote file system): the rows claim the policy they had.
ssh_sender sftp --size 8MiB --runs 2 --sync every=2MiB --cleanup end --out "$T/every" >>"$T/clean.log" 2>&1 \
  || fail "sftp --sync every --cleanup end failed: $(tail -3 "$T/clean.log")"
[ "$(csv_col "$T/every/transfers.csv" sync_policy | sort -u)" = "every=2MiB" ] \
  || fail "sftp rows must say every=2MiB: $(csv_col "$T/every/transfers.csv" sync_policy | sort -u)"
[ -z "$(ls "$T/remote")" ] || fail "files left behind by --cleanup each/end: $(ls "$T/remote")"

# A run that would fill the target is refused before it starts.
if ssh_sender sftp --size 900TiB --runs 1 --out "$T/full" >"$T/full.log" 2>&1; then fail "a 900 TiB run was not refused"; fi
grep -q "free, this run would write up to" "$T/full.log" || fail "no free-space refusal: $(cat "$T/full.log")"
[ ! -e "$T/full/transfers.csv" ] || [ "$(wc -l <"$T/full/transfers.csv")" -le 1 ] || fail "refused run wrote rows"
# Reads over sftp (the `scp nas:file .` baseline): an existing remote file pulled into a
# local directory, byte for byte, with read rows; nothing is said of the server's cache.
cp "$T/src.bin" "$T/remote/movie.mov"
mkdir -p "$T/pulled"
ssh_sender sftp --direction read --remote-file movie.mov --runs 2 --local-target "$T/pulled" --cleanup never \
  --label sftp-read --out "$T/reads" >"$T/read.log" 2>&1 || fail "sftp read failed: $(tail -5 "$T/read.log")"
csv=$T/reads/transfers.csv
csv_role_all "$csv" sender status ok
csv_role_all "$csv" sender direction read
csv_role_all "$csv" sender bytes 50331648
[ -z "$(csv_role_col "$csv" sender cache | sort -u)" ] || fail "an sftp read claims a cache state"
for f in "$T"/pulled/nasperf-*.dat; do cmp -s "$T/src.bin" "$f" || fail "$f differs from the remote file"; done
pulled=("$T"/pulled/nasperf-*.dat)
[ "${#pulled[@]}" -eq 2 ] || fail "expected 2 pulled files: $(ls "$T/pulled")"
[ -f "$T/remote/movie.mov" ] || fail "the remote file was removed after a read"
if ssh_sender sftp --direction read --remote-file nothing-here --runs 1 --out "$T/reads-missing" >"$T/missing.log" 2>&1; then
  fail "a read of a missing remote file succeeded"
fi
grep -q "nothing-here" "$T/missing.log" || fail "the missing file is not named: $(tail -2 "$T/missing.log")"
echo "ok: sftp + scp loops byte-identical, rows beside native, no overwrite, cleanup, free-space guard; sftp reads byte-identical"
