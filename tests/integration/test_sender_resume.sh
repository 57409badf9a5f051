#!/usr/bin/env bash
# Issue 31: a loop that survives being killed. A 6-copy loop over a shaped 200 Mbit/s lab
# link is killed with SIGKILL while its third copy runs (the loop's journal says which
# copy and which transfer it opened); `sender --resume DIR` goes on in the same run.
# Asserted: copies 1..6 each have one ok row on both ends, the killed copy one aborted
# row on each end (the NAS's as it kept it), no row twice, one run id, no partial file
# left on the NAS; --resume without a journal, or with other flags, is one clear line.
# Issue 42, row 11: the loop killed at every other point of a copy (after the transfer
# but before its rows were taken, after they were taken, between its rows, after they
# were stored, in the pause after it): the resumed run has each (iteration, stream,
# role) once, a copy with rows never runs again. Killed by a fault point
# (NASPERF_FAULT=POINT:COPY makes the sender SIGKILL itself there), the pause by the
# test as soon as the copy's rows are in the file (a 60 s pause: no race).
source "$(dirname "$0")/lib.sh"

lab_up --mtu 1500 --rate 200mbit --disk-size 1G
NASPERF_TOKEN=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
export NASPERF_TOKEN
lab_agent rx nas --target "$CACHE" --plaintext --min-free off
loop=(--to "$NAS_IP" --plaintext --size 24MiB --runs 6 --label survive --no-progress)

# Started directly (not through a shell function), so $! is the sender: lab.sh and
# ip netns exec exec it.
"$LAB_SH" client -- "$NASPERF" sender "${loop[@]}" --out "$T/out" >"$T/killed.log" 2>&1 &
sender=$!
# shellcheck disable=SC2317  # called by wait_for
third_copy_opened() { grep -q '^copy=2$' "$T/out/resume" 2>/dev/null && grep -q '^transfer=0:' "$T/out/resume"; }
wait_for "the loop's third copy to open its transfer" 60 third_copy_opened
kill -KILL "$sender"
wait "$sender" 2>/dev/null && fail "the sender was not killed"
cat "$T/out/resume"
[ "$(csv_role_col "$T/out/transfers.csv" sender status | wc -l)" = 2 ] ||
  fail "the killed loop should have stored 2 copies: $(cat "$T/out/transfers.csv")"

# Other flags, or no journal: one line each, nothing sent.
if on_client "$NASPERF" sender "${loop[@]/--runs/--warmup}" --resume "$T/out" >"$T/other.log" 2>&1; then
  fail "--resume with other flags ran"
fi
grep -q "give the same flags to go on with it" "$T/other.log" || fail "no line on other flags: $(cat "$T/other.log")"
if on_client "$NASPERF" sender "${loop[@]}" --resume "$T/nothing" >"$T/none.log" 2>&1; then
  fail "--resume without a journal ran"
fi
grep -q "nothing to resume" "$T/none.log" || fail "no line on a missing journal: $(cat "$T/none.log")"

on_client "$NASPERF" sender "${loop[@]}" --resume "$T/out" >"$T/resumed.log" 2>&1 ||
  fail "sender --resume: $(tail -5 "$T/resumed.log")"
cat "$T/resumed.log"
grep -q "resuming run .* at copy 3 of 6: stream 0's transfer [0-9]* recorded as aborted (the NAS's row: aborted)" \
  "$T/resumed.log" || fail "the resumed loop does not say what it recorded"
[ ! -e "$T/out/resume" ] || fail "the journal of a loop that ran to its end is still there"

python3 - "$T/out/transfers.csv" <<'PY' || fail "the rows of the resumed run are not as they should be"
import collections, csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
keys = collections.Counter((r["run_id"], r["role"], r["host"], r["iteration"], r["stream"], r["transfer_id"]) for r in rows)
assert max(keys.values()) == 1, f"a row twice: {keys.most_common(1)}"
assert len({r["run_id"] for r in rows}) == 1, "more than one run"
for role in ("sender", "receiver"):
    ok = sorted(int(r["iteration"]) for r in rows if r["role"] == role and r["status"] == "ok")
    aborted = [int(r["iteration"]) for r in rows if r["role"] == role and r["status"] == "aborted"]
    print(role, "ok:", ok, "aborted:", aborted)
    assert ok == [1, 2, 3, 4, 5, 6], ok
    assert aborted == [3], aborted
PY
leftover=$(find "$CACHE" -name 'nasperf-*' | head -3)
[ -z "$leftover" ] || fail "files left on the NAS: $leftover"
echo "ok: killed at copy 3 of 6, resumed: 6 ok copies on both ends, the killed one aborted once on each"

# check_rows CSV SENDER_OK SENDER_ABORTED RECEIVER_OK: one run, each (run, role,
# iteration, stream) once, and the iterations ok and aborted per role as given.
check_rows() {
  python3 - "$@" <<'PY'
import collections, csv, sys
path, want = sys.argv[1], {"sender": (sys.argv[2], sys.argv[3]), "receiver": (sys.argv[4], "")}
rows = list(csv.DictReader(open(path)))
keys = collections.Counter((r["run_id"], r["role"], r["iteration"], r["stream"]) for r in rows)
assert max(keys.values()) == 1, f"a copy recorded twice: {keys.most_common(2)}"
assert len({r["run_id"] for r in rows}) == 1, "more than one run"
for role, (ok, aborted) in want.items():
    got_ok = ",".join(r["iteration"] for r in rows if r["role"] == role and r["status"] == "ok")
    got_aborted = ",".join(r["iteration"] for r in rows if r["role"] == role and r["status"] == "aborted")
    assert (got_ok, got_aborted) == (ok, aborted), f"{role}: ok {got_ok}, aborted {got_aborted}"
PY
}
short=(--to "$NAS_IP" --plaintext --size 2MiB --runs 3 --label points --no-progress)
for point in ran taken row stored; do
  rc=0
  on_client env NASPERF_FAULT="$point:2" "$NASPERF" sender "${short[@]}" --out "$T/$point" >"$T/$point.log" 2>&1 || rc=$?
  [ "$rc" = 137 ] || fail "NASPERF_FAULT=$point:2: the sender was not killed (rc $rc): $(tail -3 "$T/$point.log")"
  on_client "$NASPERF" sender "${short[@]}" --resume "$T/$point" >"$T/$point.resumed.log" 2>&1 ||
    fail "--resume after $point: $(tail -5 "$T/$point.resumed.log")"
  [ ! -e "$T/$point/resume" ] || fail "$point: the journal of a loop that ran to its end is still there"
  if [ "$point" = ran ]; then
    # The NAS's row of copy 2 is stored ok; the sender's was lost with it: aborted, once.
    grep -q "at copy 2 of 3: stream 0's transfer [0-9]* recorded as aborted (the NAS's row: ok)" \
      "$T/$point.resumed.log" || fail "$point: $(cat "$T/$point.resumed.log")"
    check_rows "$T/$point/transfers.csv" 1,3 2 1,2,3 || fail "killed at $point: $(cat "$T/$point/transfers.csv")"
  else
    grep -q "copy 2 of 3 ran to its end; its 2 rows are stored once, going on at copy 3" "$T/$point.resumed.log" ||
      fail "$point: $(cat "$T/$point.resumed.log")"
    check_rows "$T/$point/transfers.csv" 1,2,3 "" 1,2,3 || fail "killed at $point: $(cat "$T/$point/transfers.csv")"
  fi
done

"$LAB_SH" client -- "$NASPERF" sender "${short[@]}" --pause 30s --out "$T/pause" >"$T/pause.log" 2>&1 &
sender=$!
# shellcheck disable=SC2317  # called by wait_for
first_copy_stored() { [ "$(csv_role_col "$T/pause/transfers.csv" receiver status 2>/dev/null | wc -l)" = 1 ]; }
wait_for "the loop's first copy's rows" 60 first_copy_stored
kill -KILL "$sender"
wait "$sender" 2>/dev/null && fail "the sender was not killed in the pause"
on_client "$NASPERF" sender "${short[@]}" --resume "$T/pause" >"$T/pause.resumed.log" 2>&1 ||
  fail "--resume after the pause: $(tail -5 "$T/pause.resumed.log")"
check_rows "$T/pause/transfers.csv" 1,2,3 "" 1,2,3 || fail "killed in the pause: $(cat "$T/pause/transfers.csv")"
echo "ok: killed after a copy's transfer, after its rows were taken, between them, after them, in the pause: each once"
