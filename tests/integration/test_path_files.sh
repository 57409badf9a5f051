#!/usr/bin/env bash
# Issue 45: `nasperf sender --transport path` apart from its rates (path_transport has
# those): what it does with files in a directory, on a loop-device ext4 and a ramfs, in
# the fault tier, so the sanitizer pass runs its code (aligned copies, mmap/mincore):
# - --write-mode direct of a size that is not a multiple of 4 KiB (the tail written
#   after O_DIRECT is cleared), two streams, --verify, --cleanup end: every row ok
#   and verified, nothing left;
# - a read of an existing --remote-file, and one laid out there: this client's pages
#   dropped first (cache cold, cache_resident_pct 0); a symlink is not read;
# - O_DIRECT where the file system refuses it (ramfs): one line before any row, or
#   buffered with --direct-fallback, saying so;
# - a bad --to (relative, missing, a file, ".."): one line and a non-zero exit.
# Root (a loop device, a ramfs mount).
source "$(dirname "$0")/lib.sh"
need_root "a loop device and a ramfs mount"

sender() { timeout 120 "$NASPERF" sender --transport path --no-progress "$@"; }
col() { csv_role_col "$1/transfers.csv" sender "$2" | sort -u | tr '\n' ' ' | sed 's/ $//'; }
left() { find "$@" -maxdepth 1 -name 'nasperf-*'; }
one_line() {  # NAME WORDS ARGS...: refused in one line, non-zero exit, no rows
  local name=$1 words=$2 rc=0
  shift 2
  sender "$@" --out "$T/$name" >"$T/$name.log" 2>&1 || rc=$?
  [ "$rc" -ne 0 ] || fail "$name: taken: $*"
  [ "$(wc -l <"$T/$name.log")" = 1 ] || fail "$name: not one line: $(cat "$T/$name.log")"
  grep -q -- "$words" "$T/$name.log" || fail "$name: no \"$words\" in: $(cat "$T/$name.log")"
  [ ! -e "$T/$name/transfers.csv" ] || [ "$(wc -l <"$T/$name/transfers.csv")" -le 1 ] ||
    fail "$name: rows for a run that never started"
}

echo notadir >"$T/file"
one_line relative "must be an absolute directory" --to relative/dir --size 1MiB
one_line missing "No such file or directory" --to "$T/missing" --size 1MiB
one_line file "Not a directory" --to "$T/file" --size 1MiB
one_line dotdot '".." component' --to "$T/../etc" --size 1MiB

loop_fs disk 128M ext4
sender --to "$T/disk" --size 3000100 --write-mode direct --streams 2 --runs 2 --verify --cleanup end \
  --out "$T/direct" >"$T/direct.log" 2>&1 || fail "direct writes: $(tail -3 "$T/direct.log")"
[ "$(col "$T/direct" status)/$(col "$T/direct" verified)/$(col "$T/direct" write_mode)" = ok/true/direct ] ||
  fail "direct rows: $(col "$T/direct" status) $(col "$T/direct" verified) $(col "$T/direct" write_mode) $(col "$T/direct" error)"
[ "$(col "$T/direct" bytes)" = 3000100 ] || fail "direct rows moved $(col "$T/direct" bytes) bytes"
[ "$(col "$T/direct" share_protocol)/$(col "$T/direct" peer)" = "local ext4/local" ] ||
  fail "mount cells: $(col "$T/direct" share_protocol) $(col "$T/direct" peer)"
[ -z "$(left "$T/disk")" ] || fail "--cleanup end left: $(left "$T/disk")"

head -c 5000000 /dev/urandom >"$T/disk/existing.bin"
ln -s /etc/passwd "$T/disk/link"
for what in existing laid-out; do
  args=(--remote-file existing.bin)
  [ "$what" = laid-out ] && args=(--size 4MiB)
  sender --to "$T/disk" --direction read "${args[@]}" --runs 2 --out "$T/read-$what" >"$T/read-$what.log" 2>&1 ||
    fail "read ($what): $(tail -3 "$T/read-$what.log")"
  [ "$(col "$T/read-$what" status)/$(col "$T/read-$what" cache)" = ok/cold ] ||
    fail "read ($what) rows: $(col "$T/read-$what" status) $(col "$T/read-$what" cache) $(col "$T/read-$what" notes)"
  [ "$(col "$T/read-$what" cache_resident_pct)" = 0.0 ] || fail "pages left: $(col "$T/read-$what" cache_resident_pct)"
done
[ "$(col "$T/read-existing" bytes)" = 5000000 ] || fail "read $(col "$T/read-existing" bytes) bytes of 5000000"
one_line symlink "is not a non-empty regular file" --to "$T/disk" --direction read --remote-file link
[ -z "$(left "$T/disk")" ] || fail "the laid-out file stayed: $(left "$T/disk")"

mkdir -p "$T/ramfs"
mount -t ramfs ramfs "$T/ramfs"
CLEANUPS+=("umount -l '$T/ramfs'")
one_line ramfs-direct "refuses O_DIRECT" --to "$T/ramfs" --size 1MiB --write-mode direct
sender --to "$T/ramfs" --size 1MiB --write-mode direct --direct-fallback --out "$T/ramfs-fallback" \
  >"$T/ramfs-fallback.log" 2>&1 || fail "--direct-fallback on ramfs: $(tail -3 "$T/ramfs-fallback.log")"
[ "$(col "$T/ramfs-fallback" write_mode)" = buffered ] || fail "fallback row: $(col "$T/ramfs-fallback" write_mode)"
[[ $(col "$T/ramfs-fallback" notes) == *"refuses O_DIRECT"* ]] || fail "no note: $(col "$T/ramfs-fallback" notes)"
[ -z "$(left "$T/ramfs")" ] || fail "files left on ramfs: $(left "$T/ramfs")"
# A file nasperf leaves is its owner's alone (0600): a job's bytes may come from a file
# only root may read, and the directory may be shared.
mkdir -p "$T/kept"
sender --to "$T/kept" --size 64KiB --cleanup never --out "$T/kept-out" >"$T/kept.log" 2>&1 ||
  fail "--cleanup never: $(tail -3 "$T/kept.log")"
modes=$(find "$T/kept" -maxdepth 1 -name 'nasperf-*' -printf '%m\n' | sort -u)
[ "$modes" = 600 ] || fail "files left with mode ${modes:-none}, not 600"
echo "ok: path files on ext4 and ramfs"
