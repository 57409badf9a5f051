#!/usr/bin/env bash
# shellcheck disable=SC2154  # NAME_PID, NAME_PORT: set by lib.sh's start_agent with printf -v
# Issue 45 item 5: a lab plan's mounted-directory transfer (transport = "path",
# to = DIR) runs on its sending agent only beneath that agent's --allow-path. On
# loopback: an agent without --allow-path refuses it at the plan check, in one line
# naming the flag; one with it writes beneath the allowed directory (rows ok, the
# mount in share_protocol, no file left); a `to` outside it, or a symlink inside that
# leads out, is refused the same way, nothing is created there, and the agent serves on.
source "$(dirname "$0")/lib.sh"

mkdir -p "$T/bench/sub" "$T/outside"
ln -s "$T/outside" "$T/bench/escape"
start_agent open_client
start_agent client --allow-path "$T/bench"

# lab_into DIR CLIENT_PORT OUT: a one-transfer plan writing 2 x 1 MiB into DIR; sets rc.
lab_into() {
  cat >"$T/plan.toml" <<PLAN
label = "path-allow"
runs = 1
[collector]
out = "$3"
[[host]]
name = "client"
agent = "127.0.0.1:$2"
[[transfer]]
from = "client"
transport = "path"
to = "$1"
size = "1MiB"
streams = 2
PLAN
  rc=0
  timeout -k 5 60 "$NASPERF" lab "$T/plan.toml" >"$T/lab.log" 2>&1 || rc=$?
}

lab_into "$T/bench/sub" "$open_client_PORT" "$T/out0"
[ "$rc" -ne 0 ] || fail "an agent without --allow-path wrote: $(cat "$T/lab.log")"
grep -q "checked on client: .*this agent writes in no directory of its own host; start it with --allow-path DIR" \
  "$T/lab.log" || fail "no preflight line naming --allow-path: $(cat "$T/lab.log")"
grep -q "nothing ran" "$T/lab.log" || fail "the refused lab does not say nothing ran: $(cat "$T/lab.log")"
echo "refused: $(grep -m1 -- "--allow-path" "$T/lab.log")"

lab_into "$T/bench/sub" "$client_PORT" "$T/out1"
[ "$rc" -eq 0 ] || fail "a directory beneath --allow-path was refused: $(tail -20 "$T/lab.log")"
csv=$T/out1/transfers.csv
[ "$(csv_role_col "$csv" sender status | wc -l)" = 2 ] || fail "expected 2 sender rows: $(cat "$csv")"
csv_role_all "$csv" sender transport path
csv_role_all "$csv" sender status ok
csv_role_all "$csv" sender bytes 1048576
csv_role_col "$csv" sender share_protocol | grep -qv "^local " \
  && fail "share_protocol does not name a local file system: $(csv_role_col "$csv" sender share_protocol)"
[ -z "$(ls -A "$T/bench/sub")" ] || fail "files left beneath --allow-path: $(ls -A "$T/bench/sub")"
echo "ok: 2 rows ok ($(csv_role_col "$csv" sender share_protocol | head -1)), nothing left in $T/bench/sub"

for to in "$T/outside" "$T/bench/escape" "$T/bench/../outside"; do
  lab_into "$to" "$client_PORT" "$T/out-refused"
  [ "$rc" -ne 0 ] || fail "the agent wrote into $to"
  grep -q "is not a directory under this agent's --allow-path directories\|holds a \"..\" component" "$T/lab.log" \
    || fail "$to: no refusal naming --allow-path: $(cat "$T/lab.log")"
  [ -z "$(tail -n +2 "$T/out-refused/transfers.csv" 2>/dev/null)" ] || fail "$to: rows were written"
done
[ -z "$(ls -A "$T/outside")" ] || fail "files created outside --allow-path: $(ls -A "$T/outside")"
alive "$client_PID" || fail "the agent died after the refusals: $(tail -5 "$T/client.log")"
lab_into "$T/bench" "$client_PORT" "$T/out2"
[ "$rc" -eq 0 ] || fail "the agent no longer serves after the refusals: $(tail -20 "$T/lab.log")"
csv_role_all "$T/out2/transfers.csv" sender status ok
echo "ok: a path job runs only beneath the agent's --allow-path; outside, .. and a symlink out are refused, and the agent serves on"
