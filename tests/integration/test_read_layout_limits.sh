#!/usr/bin/env bash
# shellcheck disable=SC2154  # NAME_PID, NAME_PORT...: set by lib.sh's start_* with printf -v
# Issue 29, row 4 (docs/DESIGN.md §4, security; §6, Reads): the files PrepareRead lays
# out for reads obey the receiver's --max-size, --min-free and --max-transfers as a
# write does. On a 64 MiB tmpfs target (--max-size 16MiB, --min-free 48MiB,
# --max-transfers 2) a read of 8 MiB is laid out; one asked for while every transfer
# slot is taken (wire_client read-layout-busy), a read above --max-size and one that
# would leave less than --min-free are each refused with one line, and lay out
# nothing. Every read asks --cleanup never; once the receiver is stopped (SIGTERM) the
# file it laid out is gone, while a file someone else put there under a laid-out name
# and the user's own file stay. Each failed check is listed, then the test fails.
source "$(dirname "$0")/lib.sh"
need_root "a tmpfs target whose free space the test knows"
[ -x "$WIRE_CLIENT" ] || fail "wire_client not given or not executable: '$WIRE_CLIENT'"

mkdir -p "$T/nas"
mount -t tmpfs -o size=64m nasperf-it "$T/nas" || fail "mount a 64 MiB tmpfs"
CLEANUPS+=("umount -l '$T/nas'")
echo "the user's" >"$T/nas/notes.txt"
printf planted >"$T/nas/nasperf-read-planted-0.dat"
start_receiver rx --target "$T/nas" --max-size 16MiB --min-free 48MiB --max-transfers 2

problems=()
problem() { problems+=("$*"); echo "problem: $*"; }
laid_out() { compgen -G "$T/nas/nasperf-read-$1-*.dat" >/dev/null; }
# read_run NAME SIZE: the real client, a read of a file the NAS lays out, kept
# (--cleanup never); its exit status.
read_run() {
  "$NASPERF" sender --to 127.0.0.1:"$rx_PORT" --direction read --size "$2" --runs 1 --cleanup never \
    --run-id "$1" --out "$T/$1" --no-progress >"$T/$1.log" 2>"$T/$1.err"
}
# refused NAME SIZE WORD: that read must fail with one line holding WORD and leave no file.
refused() {
  local name=$1 size=$2 word=$3 rc=0
  read_run "$name" "$size" || rc=$?
  if [ "$rc" -eq 0 ]; then
    problem "a $size read ($name) was not refused; the NAS holds: $(find "$T/nas" -maxdepth 1 -type f -printf '%f ')"
  elif [ "$(wc -l <"$T/$name.err")" -ne 1 ] || ! grep -q -- "$word" "$T/$name.err"; then
    problem "the $size read ($name) was refused without one line naming $word: $(cat "$T/$name.err")"
  fi
  if laid_out "$name"; then problem "the refused $size read ($name) left a file on the NAS"; fi
}

read_run good 8MiB || fail "a read of 8 MiB within every limit failed: $(cat "$T/good.err")"
laid_out good || fail "the 8 MiB read left no laid-out file to test the stop with"

# Both slots taken by writes that never start (their tickets live 30 s), then a 1 MiB
# file to lay out: within --max-size and --min-free, but no slot is left.
rc=0
"$WIRE_CLIENT" 127.0.0.1:"$rx_PORT" "$NASPERF_TOKEN" read-layout-busy $((1 << 20)) >"$T/busy.log" 2>&1 || rc=$?
if [ "$rc" -ne 0 ]; then
  problem "$(cat "$T/busy.log")"
elif [ "$(wc -l <"$T/busy.log")" -ne 1 ] || ! grep -q -- "--max-transfers" "$T/busy.log"; then
  problem "the PrepareRead past --max-transfers was refused without one line naming it: $(cat "$T/busy.log")"
fi
if laid_out wire-busy; then problem "the PrepareRead past --max-transfers left a file on the NAS"; fi
refused above-max-size 32MiB "--max-size"
refused below-min-free 16MiB "--min-free"  # 56 MiB free (54 after the 2 MiB held), 38 after it
alive "$rx_PID" || fail "the receiver died after the refused reads"

kill -TERM "$rx_PID"
wait_pid "the receiver to stop after SIGTERM" 30 "$rx_PID" || true
left=$(compgen -G "$T/nas/nasperf-read-*.dat" | grep -v planted || true)
[ -z "$left" ] || problem "laid-out files outlived the receiver: $(echo "$left" | xargs -n1 basename | tr '\n' ' ')"
[ -f "$T/nas/notes.txt" ] || problem "the receiver removed the user's notes.txt"
[ "$(cat "$T/nas/nasperf-read-planted-0.dat" 2>/dev/null)" = planted ] \
  || problem "the receiver removed or changed a file it did not lay out (nasperf-read-planted-0.dat)"

[ ${#problems[@]} -eq 0 ] || fail "${#problems[@]} check(s) failed: $(printf '%s; ' "${problems[@]}")"
echo "ok: reads above --max-size, below --min-free and past --max-transfers refused with one line;" \
  "the laid-out file (cleanup never) went with the receiver, the others stayed"
