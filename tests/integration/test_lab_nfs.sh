#!/usr/bin/env bash
# Issue 28: `--transport nfs` against a real nfs-ganesha, apart from its rates
# (lab_nfs_truth): reads of an existing file come back byte for byte; and what goes
# wrong, each a one-line error and a non-zero exit, no row lost, nothing left hanging:
# - a URL it cannot honour, an export the server does not have, --verify;
# - the export fills up mid-transfer (something else writes there after the
#   free-space check): a failed row with the server's NFS3ERR_NOSPC, the partial file
#   removed, and the next transfer of the run works on the same connection;
# - the server is killed mid-transfer: a failed row at once (no retry loop, no hang),
#   the next transfer fails at its mount, the loop ends with both rows written.
source "$(dirname "$0")/lib.sh"

lab_up --mtu 1500 --rate 1gbit --disk-size 256M
lab_shares
to_cache="nfs://$NAS_IP$NFS_ROOT/cache"
nfs_sender() { on_client timeout 120 "$NASPERF" sender --transport nfs "$@"; }
one_line() {  # LOG WORDS RC WANT: exactly one line holding WORDS, and exit code WANT
  [ "$3" = "$4" ] || fail "exit $3 (wanted $4): $(cat "$1")"
  [ "$(wc -l <"$1")" = 1 ] || fail "not one line: $(cat "$1")"
  grep -q "$2" "$1" || fail "no \"$2\" in: $(cat "$1")"
}

rc=0; nfs_sender --to "nfs://$NAS_IP/x/../etc" --size 1MiB --out "$T/bad" >"$T/bad.log" 2>&1 || rc=$?
one_line "$T/bad.log" '"\.\." are not allowed' "$rc" 2
rc=0; nfs_sender --to "$to_cache?version=4" --size 1MiB --out "$T/v4" >"$T/v4.log" 2>&1 || rc=$?
one_line "$T/v4.log" "NFSv4 is not offered" "$rc" 2
rc=0; nfs_sender --to "$to_cache" --size 1MiB --verify --out "$T/verify" >"$T/verify.log" 2>&1 || rc=$?
one_line "$T/verify.log" "cannot" "$rc" 2
rc=0; nfs_sender --to "nfs://$NAS_IP/srv/no-such-export" --size 1MiB --out "$T/none" >"$T/none.log" 2>&1 || rc=$?
one_line "$T/none.log" "nfs mount $NAS_IP:/srv/no-such-export" "$rc" 1
[ ! -e "$T/none/transfers.csv" ] || [ "$(wc -l <"$T/none/transfers.csv")" -le 1 ] || fail "rows for a run that never started"
echo "ok: a bad URL, NFSv4, --verify and a missing export: one line each"

# --- reads: an existing file, pipelined READs, byte for byte into --local-target
head -c 24M /dev/urandom >"$CACHE/existing.bin"
mkdir -p "$T/copies"
nfs_sender --to "$to_cache" --direction read --remote-file existing.bin --runs 2 --local-target "$T/copies" \
  --cleanup never --out "$T/reads" >"$T/reads.log" 2>&1 || fail "nfs reads failed: $(cat "$T/reads.log")"
[ "$(csv_role_col "$T/reads/transfers.csv" sender status | tr '\n' ' ')" = "ok ok " ] || fail "reads: $(cat "$T/reads.log")"
[ "$(csv_role_col "$T/reads/transfers.csv" sender direction | sort -u)" = read ] || fail "the rows do not say read"
for copy in "$T"/copies/nasperf-*.dat; do cmp -s "$copy" "$CACHE/existing.bin" || fail "$copy differs from the NAS's file"; done
[ "$(find "$T/copies" -name 'nasperf-*.dat' | wc -l)" = 2 ] || fail "not two copies: $(ls "$T/copies")"
rc=0; nfs_sender --to "$to_cache" --direction read --remote-file missing.bin --out "$T/noread" >"$T/noread.log" 2>&1 || rc=$?
one_line "$T/noread.log" "remote file /missing.bin" "$rc" 1
echo "ok: two reads of an existing file came back byte for byte; a missing one is one line"

# --- the export fills up mid-transfer
nfs_sender --to "$to_cache" --size 160MiB --runs 2 --pause 3s --sync none --out "$T/full" >"$T/full.log" 2>&1 &
sender=$!
PIDS+=("$sender")
wait_for "a file over 16 MiB in the export" 60 partial_file_over $((16 << 20)) "$CACHE"
head -c 1G /dev/zero >"$CACHE/filler" 2>/dev/null || true
first_row() { [ -s "$T/full/transfers.csv" ] && [ "$(wc -l <"$T/full/transfers.csv")" -ge 2 ]; }
wait_for "the first row" 60 first_row
rm -f "$CACHE/filler"
rc=0; wait "$sender" || rc=$?
cat "$T/full.log"
[ "$rc" = 1 ] || fail "exit $rc after a full export (wanted 1)"
status=$(csv_role_col "$T/full/transfers.csv" sender status | tr '\n' ' ')
[ "$status" = "failed ok " ] || fail "rows: $status (wanted a failed one, then an ok one)"
csv_role_col "$T/full/transfers.csv" sender error | grep -q "disk full or over quota (NFS: Write failed with NFS3ERR_NOSPC" \
  || fail "the error does not say the export was full: $(csv_role_col "$T/full/transfers.csv" sender error)"
[ -z "$(ls "$CACHE"/nasperf-* 2>/dev/null)" ] || fail "a partial file stayed: $(ls "$CACHE")"
echo "ok: a full export gives a failed row with NFS3ERR_NOSPC, the partial file goes, the next transfer works"

# --- the server is killed mid-transfer
nfs_sender --to "$to_cache" --size 160MiB --runs 2 --pause 1s --sync none --nfs-timeout 5 --out "$T/killed" \
  >"$T/killed.log" 2>&1 &
sender=$!
PIDS+=("$sender")
wait_for "a file over 16 MiB in the export" 60 partial_file_over $((16 << 20)) "$CACHE"
for pid in $(ip netns pids "$NASPERF_LAB-nas"); do
  [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = ganesha.nfsd ] && kill -9 "$pid"
done
sender_done() { ! alive "$sender"; }
wait_for "the sender to finish after the server died" 30 sender_done
rc=0; wait "$sender" || rc=$?
cat "$T/killed.log"
[ "$rc" = 1 ] || fail "exit $rc after the server died (wanted 1)"
errors=$(csv_role_col "$T/killed/transfers.csv" sender error)
[ "$(csv_role_col "$T/killed/transfers.csv" sender status | tr '\n' ' ')" = "failed failed " ] \
  || fail "rows: $(cat "$T/killed/transfers.csv")"
echo "$errors" | head -1 | grep -q "the connection to $NAS_IP:$NFS_ROOT/cache failed" || fail "first error: $errors"
echo "$errors" | tail -1 | grep -q "nfs mount" || fail "second error: $errors"
grep -q "cleanup: remove .* is gone" "$T/killed.log" || fail "no word on the partial file the dead server keeps"
echo "ok: a killed server gives a failed row at once, the next transfer fails at its mount, both rows kept"
