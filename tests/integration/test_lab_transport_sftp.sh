#!/usr/bin/env bash
# A lab plan whose transfer says `transport = "sftp"`: the client's agent logs in to
# a real sshd on the NAS (no agent there) with its own throwaway key and known_hosts,
# both streams wait at the lab's barrier and start on the controller's Go, and the
# rows say sftp and ok. cleanup = "never" keeps the files, so the bytes can be counted
# on the NAS's side. The NAS's host has observe = true: an agent there watches the
# share while the lab runs, and each copy also gets a row of role nas in the lab's run.
source "$(dirname "$0")/lib.sh"

lab_up --mtu 1500 --rate 1gbit --disk-size 1G
# The key and known_hosts a job names must lie under the agent's --allow-source.
mkdir -p "$T/ssh"
lab_agent c client --allow-source "$T/ssh"
lab_agent observer nas --target "$CACHE"
# shellcheck disable=SC2119  # lab_sshd's one argument (SETENV) is optional
lab_sshd

size=16777216
cat >"$T/plan.toml" <<PLAN
label = "sftp-lab"
cleanup = "never"
[collector]
out = "$T/out"
[[host]]
name = "client"
agent = "$CLIENT_IP:7600"
[[host]]
name = "nas"
agent = "$NAS_IP:7600"
observe = true
[[transfer]]
from = "client"
transport = "sftp"
to = "root@$NAS_IP:2222:$CACHE"
ssh_identity = "$T/ssh/user_ed25519"
ssh_known_hosts = "$T/ssh/known_hosts"
size = $size
streams = 2
PLAN

on_hop "$NASPERF" lab "$T/plan.toml" >"$T/lab.log" 2>&1 || fail "nasperf lab failed: $(tail -20 "$T/lab.log")"
cat "$T/lab.log"
csv=$T/out/transfers.csv
# Both streams passed the barrier and started on Go: a skew, shorter than either
# transfer, so they overlapped rather than took turns.
skew=$(sed -n 's/^run 1\/1 .*start skew \([0-9.]*\) ms$/\1/p' "$T/lab.log")
shortest=$(csv_role_col "$csv" sender duration_s | sort -g | head -1)
echo "start skew $skew ms, shortest transfer $shortest s"
if [ -z "$skew" ] || ! awk -v s="$skew" -v d="$shortest" 'BEGIN { exit !(s >= 0 && s < d * 1000) }'; then
  fail "start skew '$skew' ms is not shorter than the shortest transfer ($shortest s)"
fi
[ "$(csv_role_col "$csv" sender status | wc -l)" = 2 ] || fail "expected 2 sender rows, got: $(cat "$csv")"
grep -q "^observer nas: 2 copies measured on the NAS" "$T/lab.log" || fail "no observer line: $(cat "$T/lab.log")"
csv_role_all "$csv" nas transport observed
csv_role_all "$csv" nas status ok
csv_role_all "$csv" nas bytes $size
csv_role_all "$csv" nas run_id "$(csv_role_col "$csv" sender run_id | head -1)"
[ "$(csv_role_col "$csv" nas bytes | wc -l)" = 2 ] || fail "expected 2 nas rows (one per copy): $(cat "$csv")"
echo "nas rows: $(paste -d' ' <(csv_role_col "$csv" nas peer) <(csv_role_col "$csv" nas mb_per_s) \
  <(csv_role_col "$csv" nas bottleneck) | tr '\n' ';')"
csv_role_all "$csv" sender transport sftp
csv_role_all "$csv" sender status ok
csv_role_all "$csv" sender bytes $size
files=("$CACHE"/nasperf-*.dat)
[ "${#files[@]}" = 2 ] || fail "expected 2 files on the NAS, got: $(ls -l "$CACHE")"
for f in "${files[@]}"; do
  [ "$(stat -c %s "$f")" = $size ] || fail "$f: $(stat -c %s "$f") bytes on the NAS, want $size"
done
# An observer that refuses (the client's agent has no --target to watch) stops the lab
# before any transfer, in one line.
sed -e 's/^observe = true$//' -e "s|^agent = \"$CLIENT_IP:7600\"$|&\nobserve = true|" \
  -e "s|^out = .*|out = \"$T/refused\"|" "$T/plan.toml" >"$T/refused.toml"
grep -q "observe = true" "$T/refused.toml" || fail "the refused plan has no observer: $(cat "$T/refused.toml")"
if on_hop "$NASPERF" lab "$T/refused.toml" >"$T/refused.log" 2>&1; then
  fail "a lab whose observer refused ran: $(cat "$T/refused.log")"
fi
grep -q "host client: .*no target directory to observe.*(start observing)" "$T/refused.log" || fail "no line names the refusing observer: $(cat "$T/refused.log")"
[ "$(csv_role_col "$T/refused/transfers.csv" sender status 2>/dev/null | wc -l)" = 0 ] \
  || fail "a lab whose observer refused sent: $(cat "$T/refused/transfers.csv")"
echo "refused: $(grep "start observing" "$T/refused.log")"
echo "ok: a lab plan sent over sftp through an agent: 2 rows ok, 2 x $size bytes on the NAS, both observed there"
