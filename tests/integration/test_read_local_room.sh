#!/usr/bin/env bash
# shellcheck disable=SC2154  # NAME_PID, NAME_PORT...: set by lib.sh's start_* with printf -v
# Issue 29, row 13 (docs/DESIGN.md §4, security; §6, Reads): a reading client writes
# into its --local-target only what fits there. The NAS (a receiver that serves
# existing files) holds a 64 MiB file; the client reads it into an 8 MiB tmpfs: the
# read is refused with one line naming --local-target before any transfer starts,
# the client exits non-zero, the tmpfs is left empty and no transfer row exists.
# Then a file that fits (4 MiB) is read into the same tmpfs and kept (--cleanup never).
source "$(dirname "$0")/lib.sh"
need_root "an 8 MiB tmpfs as the reading client's --local-target"

mkdir -p "$T/nas" "$T/local"
mount -t tmpfs -o size=8m nasperf-it-local "$T/local" || fail "mount an 8 MiB tmpfs"
CLEANUPS+=("umount -l '$T/local'")
truncate -s 64M "$T/nas/big.bin"  # sparse: the NAS side needs no disk for it
head -c $((4 << 20)) /dev/urandom >"$T/nas/small.bin"
start_receiver rx --target "$T/nas" --min-free off --serve-existing-files

# read FILE: the real client reading FILE into the tmpfs; its exit status.
read_file() {
  "$NASPERF" sender --to 127.0.0.1:"$rx_PORT" --direction read --remote-file "$1" --local-target "$T/local" \
    --runs 1 --cleanup never --out "$T/out-$1" --no-progress >"$T/$1.log" 2>"$T/$1.err"
}

rc=0
read_file big.bin || rc=$?
[ "$rc" -ne 0 ] || fail "a read of a 64 MiB file into an 8 MiB --local-target exited 0: $(tail -3 "$T/big.bin.log")"
if ! { [ "$(wc -l <"$T/big.bin.err")" -eq 1 ] && grep -q -- "--local-target" "$T/big.bin.err" \
  && grep -q "free space" "$T/big.bin.err"; }; then
  fail "the read into the 8 MiB --local-target was not refused before writing with one line" \
    "naming --local-target and its free space; the client said: $(cat "$T/big.bin.err") $(tail -2 "$T/big.bin.log")"
fi
[ -z "$(ls -A "$T/local")" ] || fail "the refused read left files in --local-target: $(ls -A "$T/local")"
rows=$(find "$T/out-big.bin" -name transfers.csv -exec tail -n +2 {} + 2>/dev/null | wc -l)
[ "$rows" -eq 0 ] || fail "the refused read still made $rows transfer row(s)"
alive "$rx_PID" || fail "the receiver died"

read_file small.bin || fail "a 4 MiB read into the 8 MiB --local-target failed: $(cat "$T/small.bin.err")"
copies=("$T"/local/nasperf-*.dat)
if ! { [ -f "${copies[0]}" ] && [ "$(stat -c %s "${copies[0]}")" -eq $((4 << 20)) ]; }; then
  fail "the 4 MiB read left no 4 MiB copy in --local-target: $(ls -l "$T/local")"
fi
echo "ok: a 64 MiB read refused before writing into an 8 MiB --local-target; a 4 MiB one fits"
