#!/usr/bin/env bash
# Issue 28: `--transport nfs` and `--transport smb` against the lab's real nfs-ganesha
# and smbd, apart from their rates (lab_shares_truth): files written and read come
# through byte for byte; and what goes wrong, each a one-line error and a non-zero
# exit, no row lost, nothing left hanging:
# - --verify reads each file written back and marks the rows verified;
# - SMB's parallel streams and channels, a worker process (and so a connection) each,
#   byte for byte;
# - a URL it cannot honour, NFSv4, --verify of a read, an export or share the server does not
#   have, a wrong SMB password, a credentials file others may read;
# - a stream's SMB worker process killed mid-transfer: that row fails saying so, its
#   partial file goes, the stream's next transfer gets a new process;
# - the export or share fills up mid-transfer (something else writes there after the
#   free-space check): a failed row with the server's reason, the partial file
#   removed, and the next transfer of the run works;
# - the server is killed mid-transfer: a failed row at once (no retry loop, no hang),
#   the loop goes on and ends with every row written.
source "$(dirname "$0")/lib.sh"

lab_up --mtu 1500 --rate 1gbit --disk-size 512M  # ganesha holds written files open: their room stays taken
lab_shares
nfs_cache="nfs://$NAS_IP$NFS_ROOT/cache"
smb_cache="smb://$NAS_IP/cache"
nfs_sender() { on_client timeout 120 "$NASPERF" sender --transport nfs "$@"; }
smb_sender() { on_client timeout 120 "$NASPERF" sender --transport smb --smb-credentials "$SMB_CREDENTIALS" "$@"; }
one_line() {  # LOG WORDS RC WANT: exactly one line holding WORDS, and exit code WANT
  [ "$3" = "$4" ] || fail "exit $3 (wanted $4): $(cat "$1")"
  [ "$(wc -l <"$1")" = 1 ] || fail "not one line: $(cat "$1")"
  grep -q "$2" "$1" || fail "no \"$2\" in: $(cat "$1")"
}
refused() {  # NAME WORDS WANT SENDER ARGS...: the run (of 1 MiB writes, unless ARGS read) is refused in one line, no rows
  local name=$1 words=$2 want=$3 rc=0
  shift 3
  local size=(--size 1MiB)
  [[ " $* " == *" --direction read "* ]] && size=()
  "$@" "${size[@]}" --out "$T/$name" >"$T/$name.log" 2>&1 || rc=$?
  one_line "$T/$name.log" "$words" "$rc" "$want"
  [ ! -e "$T/$name/transfers.csv" ] || [ "$(wc -l <"$T/$name/transfers.csv")" -le 1 ] || fail "$name: rows for a run that never started"
}
col() { csv_role_col "$1/transfers.csv" sender "$2" | tr '\n' ' '; }

# --- writes and reads, byte for byte
head -c 24M /dev/urandom >"$T/payload"
cp "$T/payload" "$CACHE/existing.bin"
for proto in nfs smb; do
  to=$nfs_cache; [ $proto = smb ] && to=$smb_cache
  ${proto}_sender --to "$to" --file "$T/payload" --runs 2 --cleanup never --verify --out "$T/$proto-w" \
    >"$T/$proto-w.log" 2>&1 || fail "$proto writes: $(cat "$T/$proto-w.log")"
  [ "$(col "$T/$proto-w" status)" = "ok ok " ] || fail "$proto writes: $(cat "$T/$proto-w.log")"
  [ "$(col "$T/$proto-w" verified)" = "true true " ] || fail "$proto rows not verified: $(col "$T/$proto-w" verified)"
  [ "$(col "$T/$proto-w" checksum | tr ' ' '\n' | sort -u | grep -c .)" = 1 ] || fail "$proto: two sums for one file"
  [ "$(grep -c "read back in .* the same bytes" "$T/$proto-w.log")" = 2 ] || fail "$proto: the read back is not said"
  grep -q "verdicts: the client's side only, no nasperf on the NAS" "$T/$proto-w.log" \
    || fail "$proto: the summary does not say its verdicts are the client's only: $(cat "$T/$proto-w.log")"
  [ "$(col "$T/$proto-w" transport)" = "$proto $proto " ] || fail "$proto rows say transport $(col "$T/$proto-w" transport)"
  for copy in "$CACHE"/nasperf-*.dat; do cmp -s "$copy" "$T/payload" || fail "$proto: $copy differs from what was sent"; done
  [ "$(find "$CACHE" -name 'nasperf-*.dat' | wc -l)" = 2 ] || fail "$proto: not two files: $(ls "$CACHE")"
  rm -f "$CACHE"/nasperf-*.dat
  mkdir -p "$T/$proto-copies"
  ${proto}_sender --to "$to" --direction read --remote-file existing.bin --runs 2 --local-target "$T/$proto-copies" \
    --cleanup never --out "$T/$proto-r" >"$T/$proto-r.log" 2>&1 || fail "$proto reads: $(cat "$T/$proto-r.log")"
  [ "$(col "$T/$proto-r" status)" = "ok ok " ] || fail "$proto reads: $(cat "$T/$proto-r.log")"
  [ "$(col "$T/$proto-r" direction)" = "read read " ] || fail "$proto: the rows do not say read"
  for copy in "$T/$proto-copies"/nasperf-*.dat; do cmp -s "$copy" "$T/payload" || fail "$proto: $copy differs from the NAS's file"; done
  # No --remote-file: a file of --size is laid out first (untimed), read, and removed.
  ${proto}_sender --to "$to" --direction read --size 8MiB --runs 2 --out "$T/$proto-laid" >"$T/$proto-laid.log" 2>&1 \
    || fail "$proto laid-out reads: $(cat "$T/$proto-laid.log")"
  [ "$(col "$T/$proto-laid" status)" = "ok ok " ] || fail "$proto laid-out reads: $(cat "$T/$proto-laid.log")"
  [ "$(col "$T/$proto-laid" bytes)" = "8388608 8388608 " ] || fail "$proto laid-out reads moved $(col "$T/$proto-laid" bytes)"
  [ -z "$(ls "$CACHE"/nasperf-*-read.dat 2>/dev/null)" ] || fail "$proto: the laid-out file stayed: $(ls "$CACHE")"
done
grep -q "no remote flush" "$T/smb-w.log" || fail "smb does not say it cannot flush: $(cat "$T/smb-w.log")"
[ "$(col "$T/smb-w" sync_policy)" = "none none " ] || fail "smb rows claim a sync: $(col "$T/smb-w" sync_policy)"
[ "$(col "$T/smb-w" share_protocol)" = "smb asked min=SMB3 encrypt=default signing=default channels=1 smb asked min=SMB3 encrypt=default signing=default channels=1 " ] \
  || fail "smb share_protocol: $(col "$T/smb-w" share_protocol)"
echo "ok: NFS and SMB wrote (verified by reading back) and read 24 MiB twice each, byte for byte, and read a file they laid out; SMB rows claim no sync"

# --- parallel SMB streams and channels: libsmbclient serialises a process's calls, so
# each stream's channel is a worker process with its own connection; a stream's file is
# written in 8 MiB pieces taken in turn by its two channels
smb_sender --to "$smb_cache" --file "$T/payload" --streams 2 --smb-channels 2 --runs 2 --cleanup never --verify \
  --out "$T/smb-streams" >"$T/smb-streams.log" 2>&1 || fail "SMB --streams 2: $(cat "$T/smb-streams.log")"
[ "$(col "$T/smb-streams" status)" = "ok ok ok ok " ] || fail "SMB --streams 2: $(cat "$T/smb-streams.log")"
[ "$(col "$T/smb-streams" verified)" = "true true true true " ] || fail "SMB --streams 2 not verified"
[ "$(col "$T/smb-streams" stream | tr ' ' '\n' | sort | tr '\n' ' ')" = "0 0 1 1 " ] \
  || fail "SMB --streams 2 rows: streams $(col "$T/smb-streams" stream)"
[ "$(find "$CACHE" -name 'nasperf-*.dat' | wc -l)" = 4 ] || fail "SMB --streams 2: not four files: $(ls "$CACHE")"
# Each worker ends with exit 0 when told to (a crash or a sanitizer's report would say so here).
! grep "the SMB worker for" "$T/smb-streams.log" || fail "an SMB worker ended badly after its last call"
for copy in "$CACHE"/nasperf-*.dat; do cmp -s "$copy" "$T/payload" || fail "SMB --streams 2: $copy differs"; done
rm -f "$CACHE"/nasperf-*.dat
echo "ok: SMB with --streams 2 --smb-channels 2 wrote 4 files through four worker processes, byte for byte"

# --- refused in one line
refused bad-url '"\.\." are not allowed' 2 nfs_sender --to "nfs://$NAS_IP/x/../etc"
refused nfs4 "NFSv4 is not offered" 2 nfs_sender --to "$nfs_cache?version=4"
refused verify-read "needs --transport native" 2 nfs_sender --to "$nfs_cache" --direction read --remote-file existing.bin --verify
refused no-export "nfs mount $NAS_IP:/srv/no-such-export" 1 nfs_sender --to "nfs://$NAS_IP/srv/no-such-export"
refused no-file "remote file /missing.bin" 1 nfs_sender --to "$nfs_cache" --direction read --remote-file missing.bin
refused no-share "//$NAS_IP/no-such-share: No such file" 1 smb_sender --to "smb://$NAS_IP/no-such-share"
(umask 077; printf 'username=root\npassword=wrong\n' >"$T/wrong")
refused wrong-password "Permission denied (a wrong user or password" 1 on_client timeout 60 "$NASPERF" sender \
  --transport smb --smb-credentials "$T/wrong" --to "$smb_cache"
chmod 644 "$T/wrong"
refused open-credentials "chmod 600" 1 on_client timeout 60 "$NASPERF" sender --transport smb \
  --smb-credentials "$T/wrong" --to "$smb_cache"
refused password-in-url "no password in the URL" 2 smb_sender --to "smb://root:pw@$NAS_IP/cache"
echo "ok: bad URLs, NFSv4, --verify of a read, a missing export, file or share, a wrong password, open credentials: one line each"

# --- the export or share fills up mid-transfer
# fill_cache: takes the free blocks (fallocate) until under 1 MiB is left or a 1 MiB
# fallocate finds none. The transfer writes on meanwhile, so each pass takes fifteen
# sixteenths of what df shows then: taking all of it at once failed when the transfer
# had written more than the margin between df and fallocate (a CI run under ASan).
fill_cache() {
  local avail pass
  for pass in $(seq 30); do
    avail=$(df --output=avail -B1 "$CACHE" | tail -1)
    [ "$avail" -gt $((1 << 20)) ] || return 0
    fallocate -l $((avail - avail / 16)) "$CACHE/filler.$pass" 2>/dev/null \
      || fallocate -l $((1 << 20)) "$CACHE/filler.$pass" 2>/dev/null || return 0
  done
  fail "30 fallocates did not fill $CACHE: $(df -h "$CACHE" | tail -1)"
}
first_row() { [ -s "$1" ] && [ "$(wc -l <"$1")" -ge 2 ]; }
for proto in smb nfs; do
  to=$nfs_cache; [ $proto = smb ] && to=$smb_cache
  ${proto}_sender --to "$to" --size 160MiB --runs 2 --pause 3s --sync none --out "$T/$proto-full" \
    >"$T/$proto-full.log" 2>&1 &
  sender=$!
  PIDS+=("$sender")
  wait_for "a $proto file over 16 MiB" 60 partial_file_over $((16 << 20)) "$CACHE"
  fill_cache
  wait_for "the first $proto row" 60 first_row "$T/$proto-full/transfers.csv"
  rm -f "$CACHE"/filler.*
  rc=0; wait "$sender" || rc=$?
  cat "$T/$proto-full.log"
  [ "$rc" = 1 ] || fail "$proto: exit $rc after a full disk (wanted 1)"
  [ "$(col "$T/$proto-full" status)" = "failed ok " ] || fail "$proto rows: $(col "$T/$proto-full" status)"
  [ -z "$(ls "$CACHE"/nasperf-* 2>/dev/null)" ] || fail "$proto: a partial file stayed: $(ls "$CACHE")"
done
csv_role_col "$T/nfs-full/transfers.csv" sender error | grep -q "disk full or over quota (NFS: Write failed with NFS3ERR_NOSPC" \
  || fail "the NFS error does not say the export was full: $(csv_role_col "$T/nfs-full/transfers.csv" sender error)"
csv_role_col "$T/smb-full/transfers.csv" sender error | grep -q "No space left on device" \
  || fail "the SMB error does not say the share was full: $(csv_role_col "$T/smb-full/transfers.csv" sender error)"
echo "ok: a full export or share gives a failed row with the server's reason, the partial file goes, the next works"

# --- a stream's SMB worker process killed mid-transfer, on a 200 Mbit/s link so it is
# caught with its file half written
"$LAB_SH" shape 200mbit >/dev/null
smb_sender --to "$smb_cache" --size 32MiB --streams 2 --runs 2 --pause 1s --sync none --out "$T/smb-worker-killed" \
  >"$T/smb-worker-killed.log" 2>&1 &
sender=$!
PIDS+=("$sender")
wait_for "an SMB file over 8 MiB" 60 partial_file_over $((8 << 20)) "$CACHE"
worker=
for pid in $(descendants "$sender"); do
  if tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q " smb-worker"; then worker=$pid; break; fi
done
[ -n "$worker" ] || fail "no smb-worker process under the sender"
kill -9 "$worker"
rc=0; wait "$sender" || rc=$?
"$LAB_SH" shape 1gbit >/dev/null
cat "$T/smb-worker-killed.log"
[ "$rc" = 1 ] || fail "exit $rc after a worker was killed (wanted 1)"
[ "$(col "$T/smb-worker-killed" status | tr ' ' '\n' | sort | tr '\n' ' ')" = "failed ok ok ok " ] \
  || fail "rows after a worker was killed: $(col "$T/smb-worker-killed" status)"
csv_role_col "$T/smb-worker-killed/transfers.csv" sender error | grep -q "the SMB worker for //$NAS_IP/cache was killed (signal 9)" \
  || fail "the failed row does not say the worker was killed: $(csv_role_col "$T/smb-worker-killed/transfers.csv" sender error)"
[ -z "$(ls "$CACHE"/nasperf-* 2>/dev/null)" ] || fail "the killed stream's partial file stayed: $(ls "$CACHE")"
echo "ok: a killed SMB worker fails its row in one line, its file goes, its stream's next transfer works"

# --- the server is killed mid-transfer
kill_nas() {  # COMM-PATTERN: every process of the NAS's namespace whose name matches
  local pid
  for pid in $(ip netns pids "$NASPERF_LAB-nas"); do
    # shellcheck disable=SC2254  # $1 is a glob on purpose
    case $(cat "/proc/$pid/comm" 2>/dev/null) in $1) kill -9 "$pid" ;; esac
  done
}
sender_done() { ! alive "$sender"; }
for proto in smb nfs; do
  to=$nfs_cache; [ $proto = smb ] && to=$smb_cache
  ${proto}_sender --to "$to" --size 160MiB --runs 2 --pause 1s --sync none --out "$T/$proto-killed" \
    >"$T/$proto-killed.log" 2>&1 &
  sender=$!
  PIDS+=("$sender")
  wait_for "a $proto file over 16 MiB" 60 partial_file_over $((16 << 20)) "$CACHE"
  if [ $proto = smb ]; then kill_nas 'smbd*'; else kill_nas ganesha.nfsd; fi
  wait_for "the $proto sender to finish after the server died" 60 sender_done
  rc=0; wait "$sender" || rc=$?
  cat "$T/$proto-killed.log"
  [ "$rc" = 1 ] || fail "$proto: exit $rc after the server died (wanted 1)"
  [ "$(col "$T/$proto-killed" status)" = "failed failed " ] || fail "$proto rows: $(col "$T/$proto-killed" status)"
  rm -f "$CACHE"/nasperf-*.dat  # the dead server's partial file
done
errors=$(csv_role_col "$T/nfs-killed/transfers.csv" sender error)
echo "$errors" | head -1 | grep -q "the connection to $NAS_IP:$NFS_ROOT/cache failed" || fail "first NFS error: $errors"
echo "$errors" | tail -1 | grep -q "nfs mount" || fail "second NFS error: $errors"
grep -q "cleanup: remove .* is gone" "$T/nfs-killed.log" || fail "no word on the partial file the dead NFS server keeps"
echo "ok: a killed smbd or ganesha gives a failed row at once, the loop goes on, every row kept"
