#!/usr/bin/env bash
# Issue 31: a loop that survives being killed. A 6-copy loop over a shaped 200 Mbit/s lab
# link is killed with SIGKILL while its third copy runs (the loop's journal says which
# copy and which transfer it opened); `sender --resume DIR` goes on in the same run.
# Asserted: copies 1..6 each have one ok row on both ends, the killed copy one aborted
# row on each end (the NAS's as it kept it), no row twice, one run id, no partial file
# left on the NAS; --resume without a journal, or with other flags, is one clear line.
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
