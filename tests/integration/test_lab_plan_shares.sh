#!/usr/bin/env bash
# shellcheck disable=SC2154  # c_PID: set by lib.sh's lab_agent with printf -v
# Issue 28: a lab plan whose transfers say `transport = "nfs"` and `transport = "smb"`:
# the client's agent writes into the lab's real nfs-ganesha and smbd by URL, the SMB
# login from a credentials file on the client's host, each file read back (verify);
# the NAS's host has observe = true, so each copy also gets a row of role nas naming
# the server that wrote it (and, for SMB, what smbd negotiated). A sending agent whose
# build has no SMB (the static binary) is refused at the plan check, naming the host.
source "$(dirname "$0")/lib.sh"

lab_up --mtu 1500 --rate 1gbit --disk-size 512M
lab_shares
lab_agent c client
lab_agent observer nas --target "$CACHE"

size=16777216
plan() {  # OUT: the plan, its results into OUT
  cat <<PLAN
label = "shares-lab"
[collector]
out = "$1"
[[host]]
name = "client"
agent = "$CLIENT_IP:7600"
[[host]]
name = "nas"
agent = "$NAS_IP:7600"
observe = true
[[transfer]]
from = "client"
transport = "nfs"
to = "nfs://$NAS_IP$NFS_ROOT/cache"
size = $size
verify = true
[[transfer]]
from = "client"
transport = "smb"
to = "smb://$NAS_IP/cache"
credentials = "$SMB_CREDENTIALS"
size = $size
verify = true
PLAN
}
plan "$T/out" >"$T/plan.toml"
on_hop "$NASPERF" lab "$T/plan.toml" >"$T/lab.log" 2>&1 || fail "nasperf lab failed: $(tail -20 "$T/lab.log")"
cat "$T/lab.log"
csv=$T/out/transfers.csv
[ "$(csv_role_col "$csv" sender transport | sort | tr '\n' ' ')" = "nfs smb " ] || fail "sender rows: $(cat "$csv")"
csv_role_all "$csv" sender status ok
csv_role_all "$csv" sender verified true
csv_role_all "$csv" sender bytes $size
grep -q "^observer nas: 2 copies measured on the NAS" "$T/lab.log" || fail "no observer line: $(cat "$T/lab.log")"
csv_role_all "$csv" nas status ok
csv_role_all "$csv" nas bytes $size
csv_role_all "$csv" nas run_id "$(csv_role_col "$csv" sender run_id | head -1)"
peers=$(csv_role_col "$csv" nas peer | sed 's/\[[0-9]*\]//' | sort | tr '\n' ' ')
[ "$peers" = "ganesha.nfsd smbd " ] || fail "the NAS rows do not name ganesha and smbd: $peers"
csv_role_col "$csv" nas share_protocol | grep -q "^smb SMB3_11 signing=" \
  || fail "the smbd row does not say what was negotiated: $(csv_role_col "$csv" nas share_protocol | tr '\n' ';')"
[ -z "$(ls "$CACHE"/nasperf-* 2>/dev/null)" ] || fail "files left on the share: $(ls "$CACHE")"
echo "ok: a lab plan wrote over NFS and SMB by URL through the client's agent, both verified, both observed on the NAS"

# The static binary as the sending agent: no SMB in it, said at the plan check.
src=$(cd "$(dirname "$0")/../.." && pwd)
static=$(newest "$src"/dist/nasperf-*-linux-"$(uname -m)")
commit() { "$1" --version | sed -n 's/.*commit \([0-9a-f]*\).*/\1/p'; }
if [ -z "$static" ]; then
  echo "skip the static agent: no dist/nasperf-*-linux-$(uname -m) (scripts/package.sh makes it; test.sh does)"
elif [ "$(commit "$static")" != "$(commit "$NASPERF")" ]; then
  echo "skip the static agent: $static is of another commit than $NASPERF (scripts/package.sh makes it anew)"
else
  kill "$c_PID" && wait "$c_PID" 2>/dev/null
  NASPERF=$static lab_agent cs client
  plan "$T/refused" >"$T/refused.toml"
  if on_hop "$NASPERF" lab "$T/refused.toml" >"$T/refused.log" 2>&1; then fail "a static agent ran SMB: $(cat "$T/refused.log")"; fi
  grep -q "transfer 2 (client -> smb://$NAS_IP/cache): host client's nasperf cannot run transport = \"smb\"" \
    "$T/refused.log" || fail "no line names the static agent: $(cat "$T/refused.log")"
  grep -q "nothing ran" "$T/refused.log" || fail "the refused lab does not say nothing ran: $(cat "$T/refused.log")"
  [ "$(csv_role_col "$T/refused/transfers.csv" sender status 2>/dev/null | wc -l)" = 0 ] \
    || fail "a refused lab sent: $(cat "$T/refused/transfers.csv")"
  echo "ok: a static sending agent is refused at the plan check: $(grep "cannot run transport" "$T/refused.log")"
fi
