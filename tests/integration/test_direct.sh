#!/usr/bin/env bash
# shellcheck disable=SC2154  # NAME_PID, NAME_PORT...: set by lib.sh's start_*, lab_* and cpu_group with printf -v
# docs/DESIGN.md §6 (measurement semantics: Receiver): --write-mode direct. On ext4 a file with an odd tail
# (64 MiB + 123 bytes) arrives byte-identical through O_DIRECT with --verify. On a
# file system that refuses O_DIRECT (tmpfs on kernels before 6.6, else ramfs) the
# sender exits non-zero with a one-line console error naming O_DIRECT, stops the
# loop after the first refusal (one sender row), and no file is left in the target;
# with --direct-fallback the run goes on buffered and the rows say buffered.
source "$(dirname "$0")/lib.sh"
need_root "loop-device and tmpfs/ramfs mounts"

# --- ext4: O_DIRECT works, the unaligned tail is written correctly
loop_fs ext4 512M ext4
start_receiver rx --target "$T/ext4" --min-free off
{ head -c 64M /dev/urandom; head -c 123 /dev/urandom; } >"$T/src.bin"
size=$(stat -c %s "$T/src.bin")
[ "$size" -eq $((64 * 1024 * 1024 + 123)) ] || fail "source has $size bytes"

"$NASPERF" sender --to 127.0.0.1:"$rx_PORT" --file "$T/src.bin" --write-mode direct --verify \
  --cleanup never --out "$T/out-ext4" --no-progress >"$T/sender-ext4.log" 2>&1 \
  || fail "direct write to ext4 failed: $(tail -5 "$T/sender-ext4.log")"
files=("$T"/ext4/nasperf-*.dat)
[[ ${#files[@]} -eq 1 && -f ${files[0]} ]] || fail "expected one file in the ext4 target: $(ls "$T/ext4")"
[ "$(stat -c %s "${files[0]}")" -eq "$size" ] || fail "received file has $(stat -c %s "${files[0]}") bytes, source $size"
cmp -s "$T/src.bin" "${files[0]}" || fail "received file differs from the source"
csv=$T/out-ext4/transfers.csv
[ "$(csv_col "$csv" status | sort -u)" = "ok" ] || fail "not every row is ok: $(cat "$csv")"
[ "$(csv_col "$csv" write_mode | sort -u)" = "direct" ] || fail "write_mode column is not direct"
[ "$(csv_role_col "$csv" sender verified | sort -u)" = "true" ] || fail "--verify did not mark the sender rows verified"

# --- a file system that refuses O_DIRECT: clear error, loop stops at once.
# tmpfs accepts O_DIRECT since Linux 6.6, so use the first of tmpfs and ramfs that
# refuses it (ramfs does: open(O_DIRECT) fails with EINVAL after creating the file).
nodirect_fs=
for fstype in tmpfs ramfs; do
  mkdir -p "$T/$fstype"
  mount -t "$fstype" nasperf-it "$T/$fstype" || continue
  CLEANUPS+=("umount -l '$T/$fstype'")
  if ! dd if=/dev/zero of="$T/$fstype/probe" bs=4096 count=1 oflag=direct status=none 2>/dev/null; then
    nodirect_fs=$fstype
    rm -f "$T/$fstype/probe"
    break
  fi
  rm -f "$T/$fstype/probe"
done
[ -n "$nodirect_fs" ] || skip "no mountable file system here refuses O_DIRECT (tried tmpfs, ramfs)"
target=$T/$nodirect_fs/target
mkdir -p "$target"
start_receiver rt --target "$target" --min-free off

rc=0
"$NASPERF" sender --to 127.0.0.1:"$rt_PORT" --size 8MiB --runs 3 --write-mode direct \
  --out "$T/out-nodirect" --no-progress >"$T/sender-nodirect.out" 2>"$T/sender-nodirect.err" || rc=$?
[ "$rc" -ne 0 ] || fail "direct write to $nodirect_fs exited 0"
# The refusal is one line on stderr (the sender may add its own one-line
# "N of M transfers failed" status after it); nothing multi-line.
[ "$(grep -c "O_DIRECT" "$T/sender-nodirect.err" || true)" -eq 1 ] \
  || fail "expected one stderr line mentioning O_DIRECT, got: $(cat "$T/sender-nodirect.err")"
! grep -qv '^nasperf sender: ' "$T/sender-nodirect.err" \
  || fail "stderr has lines that are not one-line sender messages: $(cat "$T/sender-nodirect.err")"
csv=$T/out-nodirect/transfers.csv
[ -f "$csv" ] || fail "no transfers.csv for the refused run"
senders=$(csv_col "$csv" role | grep -c '^sender$' || true)
[ "$senders" -eq 1 ] || fail "expected the loop to stop after the first refusal (1 sender row), got $senders"
[ "$(csv_col "$csv" status)" = "failed" ] || fail "the refused transfer's row is not failed"
! compgen -G "$target/*" >/dev/null || fail "files left in the $nodirect_fs target: $(ls "$target")"
alive "$rt_PID" || fail "receiver died on the O_DIRECT refusal"

# A read past the cache (--read-mode direct) from the same target: refused before any
# byte, in one line that says what to use instead; the laid-out file is removed.
rc=0
"$NASPERF" sender --to 127.0.0.1:"$rt_PORT" --direction read --size 8MiB --runs 3 --read-mode direct \
  --out "$T/out-readdirect" --no-progress >"$T/read-direct.out" 2>"$T/read-direct.err" || rc=$?
[ "$rc" -ne 0 ] || fail "a direct read from $nodirect_fs exited 0"
[ "$(grep -c "refuses O_DIRECT reads: use --read-mode buffered" "$T/read-direct.err" || true)" -eq 1 ] \
  || fail "expected one line naming the O_DIRECT refusal for reads, got: $(cat "$T/read-direct.err")"
csv=$T/out-readdirect/transfers.csv
[ "$(csv_col "$csv" role | grep -c '^sender$' || true)" -eq 1 ] || fail "the read loop went on after the refusal"
! compgen -G "$target/*" >/dev/null || fail "files left in the $nodirect_fs target after the refused read: $(ls "$target")"
alive "$rt_PID" || fail "receiver died on the refused direct read"

# --direct-fallback: the same target, the run goes on buffered, says so once, and
# the rows record what really happened.
"$NASPERF" sender --to 127.0.0.1:"$rt_PORT" --size 8MiB --runs 2 --write-mode direct --direct-fallback \
  --out "$T/out-fallback" --no-progress >"$T/sender-fallback.out" 2>"$T/sender-fallback.err" \
  || fail "--direct-fallback run failed: $(cat "$T/sender-fallback.err")"
[ "$(grep -c "refuses O_DIRECT; --direct-fallback" "$T/sender-fallback.err" || true)" -eq 1 ] \
  || fail "expected one fallback warning, got: $(cat "$T/sender-fallback.err")"
csv=$T/out-fallback/transfers.csv
for role in sender receiver; do
  [ "$(csv_role_col "$csv" $role write_mode | sort -u)" = buffered ] || fail "$role rows do not say buffered"
  [ "$(csv_role_col "$csv" $role status | sort -u)" = ok ] || fail "$role rows are not ok"
done
echo "ok: odd-sized file identical through O_DIRECT; $nodirect_fs refusal is one clear line (writes and reads);" \
  "--direct-fallback writes buffered"
