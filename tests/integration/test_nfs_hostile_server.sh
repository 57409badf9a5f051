#!/usr/bin/env bash
# `--transport nfs` against a server that lies (hostile_nfs_server.py: a fake NFSv3
# server, portmapper and MOUNT included, in a network namespace of its own so its
# portmapper can take port 111 on a loopback nobody else uses). Root only.
# - honest: the baseline. A read of its file arrives byte for byte, and a write
#   (CREATE, WRITE, COMMIT, the --verify read back, REMOVE) is an ok, verified row;
# - each lie is a clear error in one line, exit status 1, no hang, no crash:
#   read-overlong (a READ answering more than was asked), read-count-mismatch (a
#   READ whose count is not the length of its data), read-short (a READ cut short
#   before the end of the file) and silent (READs never answered: the row fails
#   after --nfs-timeout, not later) are a row that is not ok, with the reason in its
#   error column and on its line of the table; huge-size (a file said to hold
#   2^62 bytes) and tiny-wsize (FSINFO offering 512-byte READs and WRITEs) are
#   refused before the run, in one line on stderr, with no row.
# Issue 42: the lies of a write (WRITE saying it wrote 0 bytes, more than sent, half
# of it; a COMMIT whose write verifier is not the UNSTABLE WRITEs' — data not known
# to be on disk), a READ saying eof in the middle of the file, file handles longer
# than NFSv3's 64 bytes, a file type that is none and a reply record said to be
# 2^31 - 16 bytes long: each a failed row or a refusal in one line, exit 1, bounded
# time, never a row that says ok.
# Then a READ whose count says half of the data it carries (read-count-mismatch is the
# other way round), and the lies told before any NFS call: MOUNT's root handle of 128
# bytes, a MOUNT refusal (MNT3ERR_ACCES), 2^30 + 1 auth flavours said and 4096 sent
# (libnfs 4.0 wrote them into 4 bytes: nasperf aborted, before its own zdr_array); the
# portmapper saying MOUNT is on port 0, on its own port (which answers only PORTMAP),
# or answering garbage. Each a failed row or a one-line refusal naming the mount. An
# empty flavour list is no lie: AUTH_SYS is used, as Linux's own mount does.
source "$(dirname "$0")/lib.sh"
need_root "a network namespace of its own (the fake server's portmapper takes port 111)"
command -v ip >/dev/null || skip "ip (iproute2) is not installed"
command -v ss >/dev/null || skip "ss (iproute2) is not installed"
command -v python3 >/dev/null || skip "python3 is not installed"
NASPERF=$(realpath "$NASPERF")
SERVER=$(cd "$(dirname "$0")" && pwd)/hostile_nfs_server.py
URL="nfs://127.0.0.1:2049/export?uid=0&gid=0"
SIZE=$((8 << 20))  # big.bin on the fake server: read in 8 READs of its 1 MiB rtmax

# The namespaces of runs killed before their cleanup ran (named after their pid).
for ns in $(ip netns list | awk '$1 ~ /^nasperf-hnfs-[0-9]+$/ { print $1 }'); do
  alive "${ns##*-}" || ip netns del "$ns" 2>/dev/null || true
done
NS=nasperf-hnfs-$$
ip netns add "$NS" || fail "ip netns add $NS"
CLEANUPS+=("ip netns del '$NS'")
ip netns exec "$NS" ip link set lo up || fail "loopback up in $NS"
in_ns() { ip netns exec "$NS" "$@"; }

# start_server MODE: the fake server in MODE, listening (bounded wait); sets SERVER_PID.
start_server() {
  ip netns exec "$NS" python3 "$SERVER" --mode "$1" --port 2049 --size "$SIZE" --lifetime 120 >"$T/server-$1.log" 2>&1 &
  SERVER_PID=$!
  PIDS+=("$SERVER_PID")
  # shellcheck disable=SC2317  # called by wait_for, through "$@"
  listening_or_dead() {
    ! alive "$SERVER_PID" ||
      { in_ns ss -ltnH 'sport = :111' | grep -q . && in_ns ss -ltnH 'sport = :2049' | grep -q .; }
  }
  wait_for "the fake NFS server ($1) to listen" 20 listening_or_dead
  alive "$SERVER_PID" || fail "the fake NFS server ($1) exited: $(tail -3 "$T/server-$1.log")"
}

# stop_server: ends it (the next one takes the same ports).
stop_server() {
  local keep=() pid
  stop_pids "$SERVER_PID"
  for pid in "${PIDS[@]}"; do [ "$pid" = "$SERVER_PID" ] || keep+=("$pid"); done
  PIDS=("${keep[@]}")
}

# read_with MODE [flags...]: `nasperf sender` reading big.bin from the server in MODE
# (bounded by timeout); sets RC and ELAPSED_MS, output in $T/MODE.out, .err.
read_with() {
  local mode=$1 start
  shift
  start_server "$mode"
  start=$(date +%s%N)
  RC=0
  timeout 60 ip netns exec "$NS" "$NASPERF" sender --transport nfs --to "$URL" --direction read \
    --remote-file big.bin --runs 1 --nfs-timeout 3 --no-progress --out "$T/$mode" "$@" \
    </dev/null >"$T/$mode.out" 2>"$T/$mode.err" || RC=$?
  ELAPSED_MS=$((($(date +%s%N) - start) / 1000000))
  stop_server
  [ "$RC" -ne 124 ] || fail "$mode: nasperf hung (killed by timeout after 60 s)"
  [ "$RC" -lt 128 ] || fail "$mode: nasperf died of signal $((RC - 128)): $(cat "$T/$mode.err")"
}

# write_with MODE: `nasperf sender` writing 1 MiB (one WRITE, then COMMIT) to the
# server in MODE, bounded; sets RC and ELAPSED_MS, output in $T/MODE.out, .err.
write_with() {
  local mode=$1 start
  start_server "$mode"
  start=$(date +%s%N)
  RC=0
  timeout 60 ip netns exec "$NS" "$NASPERF" sender --transport nfs --to "$URL" --size 1MiB --runs 1 \
    --nfs-timeout 3 --no-progress --out "$T/$mode" </dev/null >"$T/$mode.out" 2>"$T/$mode.err" || RC=$?
  ELAPSED_MS=$((($(date +%s%N) - start) / 1000000))
  stop_server
  [ "$RC" -ne 124 ] || fail "$mode: nasperf hung (killed by timeout after 60 s)"
  [ "$RC" -lt 128 ] || fail "$mode: nasperf died of signal $((RC - 128)): $(cat "$T/$mode.err")"
}

# failed_row MODE WORDS [flags...]: a read from the server in MODE ends in one row that
# is not ok, with WORDS (fixed string) in its error column and on its line of the
# table; one stderr line says a transfer failed; exit status 1. failed_write: the same
# for a write.
failed_write() { WITH=write_with failed_row "$@"; }
failed_row() {
  local mode=$1 words=$2 status error
  shift 2
  "${WITH:-read_with}" "$mode" "$@"
  [ "$RC" -eq 1 ] || fail "$mode: exit $RC, want 1: $(cat "$T/$mode.err" "$T/$mode.out")"
  [ "$(wc -l <"$T/$mode.err")" -eq 1 ] || fail "$mode: not one stderr line: $(cat "$T/$mode.err")"
  grep -qF "1 of 1 transfers failed" "$T/$mode.err" || fail "$mode: stderr says: $(cat "$T/$mode.err")"
  [ -f "$T/$mode/transfers.csv" ] || fail "$mode: no transfers.csv: $(cat "$T/$mode.out")"
  status=$(csv_role_col "$T/$mode/transfers.csv" sender status)
  error=$(csv_role_col "$T/$mode/transfers.csv" sender error)
  # A server's bad answer is a failed read (aborted is for a stop or a closed far end).
  [ "$status" = failed ] || fail "$mode: one failed row expected, status: $status"
  [[ $error == *"$words"* ]] || fail "$mode: the row's error is \"$error\", not \"$words\""
  [ "$(grep -cF -- "$words" "$T/$mode.out")" -eq 1 ] || fail "$mode: the table does not say \"$words\" once: $(cat "$T/$mode.out")"
  echo "ok: $mode: $status row after ${ELAPSED_MS} ms: $error"
}

# refused MODE PATTERN: a read from the server in MODE is refused before the run: exit
# 1, exactly one stderr line matching PATTERN (grep -E), no row.
refused() {
  local mode=$1 pattern=$2
  "${WITH:-read_with}" "$mode"
  [ "$RC" -eq 1 ] || fail "$mode: exit $RC, want 1: $(cat "$T/$mode.err" "$T/$mode.out")"
  [ "$(wc -l <"$T/$mode.err")" -eq 1 ] || fail "$mode: not one stderr line: $(cat "$T/$mode.err")"
  grep -qE -- "$pattern" "$T/$mode.err" || fail "$mode: stderr does not match /$pattern/: $(cat "$T/$mode.err")"
  [ ! -e "$T/$mode/transfers.csv" ] || [ "$(wc -l <"$T/$mode/transfers.csv")" -le 1 ] ||
    fail "$mode: rows for a run that never started"
  echo "ok: $mode: refused: $(cat "$T/$mode.err")"
}

# --- honest: a read arrives byte for byte; a write, read back, is verified
python3 "$SERVER" --size "$SIZE" --write-content "$T/truth.bin" || fail "the server's content"
mkdir -p "$T/copies"
read_with honest --local-target "$T/copies" --cleanup never
[ "$RC" -eq 0 ] || fail "honest read: exit $RC: $(cat "$T/honest.err" "$T/honest.out")"
[ "$(csv_role_col "$T/honest/transfers.csv" sender status)" = ok ] || fail "honest read: $(cat "$T/honest.out")"
[ "$(csv_role_col "$T/honest/transfers.csv" sender bytes)" = "$SIZE" ] || fail "honest read: not $SIZE bytes"
copies=("$T"/copies/nasperf-*.dat)
if [ "${#copies[@]}" -ne 1 ] || [ ! -f "${copies[0]}" ]; then fail "honest read: not one copy: $(ls "$T/copies")"; fi
cmp "${copies[0]}" "$T/truth.bin" || fail "honest read: the copy differs from the server's big.bin"
echo "ok: honest: read $SIZE bytes, the same as the server's"

start_server honest
ip netns exec "$NS" timeout 60 "$NASPERF" sender --transport nfs --to "$URL" --size 1MiB --runs 1 --verify \
  --nfs-timeout 3 --no-progress --out "$T/honest-write" </dev/null >"$T/honest-write.log" 2>&1 ||
  fail "honest write: $(cat "$T/honest-write.log")"
stop_server
[ "$(csv_role_col "$T/honest-write/transfers.csv" sender status)" = ok ] || fail "honest write: $(cat "$T/honest-write.log")"
[ "$(csv_role_col "$T/honest-write/transfers.csv" sender verified)" = true ] || fail "honest write: not verified"
for call in CREATE WRITE COMMIT READ REMOVE; do
  grep -q "NFS3 $call: ok" "$T/server-honest.log" || fail "honest write: the server saw no $call: $(cat "$T/server-honest.log")"
done
echo "ok: honest: wrote 1 MiB (CREATE, WRITE, COMMIT), read it back the same, removed it"

# --- the lies
failed_row read-overlong "a malformed READ reply at byte 0: count 1049600, 1049600 bytes, 1048576 asked"
failed_row read-count-mismatch "a malformed READ reply at byte 0: count 1048576, 524288 bytes, 1048576 asked"
failed_row read-short "/big.bin gave 524288 of 1048576 bytes at offset 0 (the file shrank, or the server cut the read short)"
failed_row silent "a read at byte 0 failed: no answer (--nfs-timeout)"
grep -q "NFS3 READ: never answered" "$T/server-silent.log" || fail "silent: the server answered its READs"
refused huge-size "/big.bin is said to hold 4611686018427387904 bytes \(more than 1 PiB\)"
# libnfs 4.0 refuses an rtmax or wtmax under 8 KiB at its mount, before nasperf's own
# 4 KiB floor is asked; either refusal names the mount.
refused tiny-wsize "nfs mount 127.0.0.1:2049:/export: .*(max rsize of 512|max wsize of 512)|under 4 KiB: refused"
failed_write write-count-zero "the server said it wrote 0 of 1048576 bytes at offset 0 (disk full?)"
failed_write write-count-over "the server said it wrote 1052672 of 1048576 bytes at offset 0"
failed_write write-count-short "the server said it wrote 524288 of 1048576 bytes at offset 0"
failed_write commit-verf "the server's COMMIT verifier is not its WRITEs' (it restarted?): the data is not known to be on disk"
failed_row read-eof-mid "/big.bin gave 0 of 1048576 bytes at offset 4194304 (the file shrank, or the server cut the read short)"
failed_write fh-oversized "the server's file handle is 128 bytes (NFSv3: 1 to 64)"
refused bad-ftype "/big.bin is not a non-empty regular file"
failed_row huge-record "failed: Incoming PDU exceeds limit of 1052672 bytes"
failed_row read-count-under "a malformed READ reply at byte 0: count 524288, 1048576 bytes, 1048576 asked"
refused mnt-fh-oversized "^nasperf sender: nfs mount 127.0.0.1:2049:/export: the server's root file handle is 128 bytes \(NFSv3: 1 to 64\)$"
refused mnt-status "^nasperf sender: nfs mount 127.0.0.1:2049:/export: Permission denied \(.*MNT3ERR_ACCES"
refused mnt-auth-absurd "^nasperf sender: nfs mount 127.0.0.1:2049:/export: the portmapper or MOUNT call failed \(.*failed to decode"
refused pmap-port-zero "^nasperf sender: nfs mount 127.0.0.1:2049:/export: the portmapper or MOUNT call failed \(.*Program is not available"
refused pmap-port-self "^nasperf sender: nfs mount 127.0.0.1:2049:/export: the portmapper or MOUNT call failed \(mount_cb: no reason given\)$"
refused pmap-garbage "^nasperf sender: nfs mount 127.0.0.1:2049:/export: the portmapper or MOUNT call failed \(.*failed to decode"
read_with mnt-auth-empty
[ "$RC" -eq 0 ] || fail "mnt-auth-empty: exit $RC: $(cat "$T/mnt-auth-empty.err" "$T/mnt-auth-empty.out")"
[ "$(csv_role_col "$T/mnt-auth-empty/transfers.csv" sender status)" = ok ] || fail "mnt-auth-empty: $(cat "$T/mnt-auth-empty.out")"
echo "ok: mnt-auth-empty: no flavour offered, AUTH_SYS used, the read is ok"
echo "ok: a hostile NFS server's lies are each one clear error, exit 1, no hang"
