#!/usr/bin/env bash
# shellcheck disable=SC2154  # c_PID: set by lib.sh's lab_agent with printf -v
# Issue 28: a lab plan whose transfers say `transport = "nfs"` and `transport = "smb"`:
# the client's agent writes into the lab's real nfs-ganesha and smbd by URL, the SMB
# login from a credentials file on the client's host and its signing from the plan's
# transport_flags, each file read back (verify);
# the NAS's host has observe = true, so each copy also gets a row of role nas naming
# the server that wrote it (and, for SMB, what smbd negotiated). A sending agent whose
# build has no SMB (the static binary) is refused at the plan check, naming the host.
# And the NAS row's `server-cpu`, against its ground truth: smbd held to 5 % of a core
# by a cgroup quota, whose throttled time says when the quota held it back.
source "$(dirname "$0")/lib.sh"

# The CPU quota's group first: cleanups run last-made first, so it is removed after the
# lab (and its smbd) is down, when nothing is left in it.
cpu_quota smbcpu 5
lab_up --mtu 1500 --rate 1gbit --disk-size 512M
lab_shares
# The login file must lie under the sending agent's --allow-source directories.
lab_agent c client --allow-source "$(dirname "$SMB_CREDENTIALS")"
lab_agent observer nas --target "$CACHE"

size=16777216
plan() {  # OUT [CREDENTIALS]: the plan, its results into OUT
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
credentials = "${2:-$SMB_CREDENTIALS}"
transport_flags = ["--smb-signing", "required"]
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
# The plan's transport_flags reached the agent's libsmbclient: it asked for signing, and
# smbd says it signed every message.
csv_role_col "$csv" sender share_protocol | grep -q "^smb asked .* signing=required channels=1$" \
  || fail "the SMB row does not say signing was asked: $(csv_role_col "$csv" sender share_protocol | tr '\n' ';')"
csv_role_col "$csv" nas share_protocol | grep -q "^smb SMB3_11 signing=[^ ]*(full) " \
  || fail "smbd did not sign in full: $(csv_role_col "$csv" nas share_protocol | tr '\n' ';')"
[ -z "$(ls "$CACHE"/nasperf-* 2>/dev/null)" ] || fail "files left on the share: $(ls "$CACHE")"
echo "ok: a lab plan wrote over NFS and SMB by URL through the client's agent, both verified, both observed on the NAS; SMB signed in full as its transport_flags asked"

# A login file outside the agent's --allow-source directories (any file root can read) is
# refused, in one line naming the rule, and nothing is sent with it.
plan "$T/outside" /etc/shadow >"$T/outside.toml"
if on_hop "$NASPERF" lab "$T/outside.toml" >"$T/outside.log" 2>&1; then fail "a login file outside --allow-source was used: $(cat "$T/outside.log")"; fi
grep -q "/etc/shadow is not a file under this agent's --allow-source directories" "$T/outside.log" \
  || fail "no line refuses the login file: $(cat "$T/outside.log")"
echo "ok: a login file outside --allow-source is refused: $(grep -m1 "allow-source" "$T/outside.log")"

# --- smbd in a CPU quota: server-cpu on the NAS row, where the quota held smbd back
# through nearly all of the copy. The ground truth is the kernel's own account: the
# periods (100 ms) in which the group used up its quota and was throttled (cpu.stat
# nr_throttled; throttled_time sums over CPUs, so on two it can count a period twice).
throttled_s() { awk '$1 == "nr_throttled" { printf "%.3f", $2 * 0.1 }' "$1/cpu.stat"; }
smb_copy() {  # OUT: one encrypted SMB copy of 64 MiB, observed on the NAS
  on_client "$NASPERF" sender --transport smb --to "smb://$NAS_IP/cache" --smb-credentials "$SMB_CREDENTIALS" \
    --smb-encrypt required --size 64MiB --runs 1 --observer "$NAS_IP" --out "$1" --no-progress >"$1.log" 2>&1 \
    || fail "the SMB copy into $1 failed: $(tail -5 "$1.log")"
}
# First the idle part that must not be blamed: a 100 Mbit/s link holds the copy to a
# tenth of what smbd serves here, so smbd waits on the network nearly all the time (at
# 1 Gbit/s on two busy cores, smbd and the client's encryption can truly be the limit).
"$LAB_SH" shape 100mbit >/dev/null
smb_copy "$T/cpu-free"
"$LAB_SH" shape 1gbit >/dev/null
verdict=$(csv_role_col "$T/cpu-free/transfers.csv" nas bottleneck)
if [ -z "$verdict" ] || [ "$verdict" = server-cpu ]; then
  fail "smbd waiting on a 100 Mbit/s link was called '$verdict': $(csv_role_col "$T/cpu-free/transfers.csv" nas observed_detail)"
fi
# move_to CGROUP PID: PID into CGROUP; an smbd child that ended meanwhile (a connection's
# process exits when its client goes) is no error (the soak under load met that race).
move_to() {
  { echo "$2" >"$1/cgroup.procs"; } 2>/dev/null || ! grep -qs '^State:[[:space:]]*[^Z]' "/proc/$2/status" \
    || fail "cannot move $2 into $1"
}
for pid in $(ip netns pids "$NASPERF_LAB-nas"); do
  case $(cat "/proc/$pid/comm" 2>/dev/null) in smbd*) move_to "$smbcpu_CGROUP" "$pid" ;; esac
done
held_copies=0
for i in 1 2 3; do
  before=$(throttled_s "$smbcpu_CGROUP")
  smb_copy "$T/cpu-$i"
  held=$(awk -v a="$before" -v b="$(throttled_s "$smbcpu_CGROUP")" 'BEGIN { printf "%.3f", b - a }')
  ran=$(csv_role_col "$T/cpu-$i/transfers.csv" nas duration_s)
  verdict=$(csv_role_col "$T/cpu-$i/transfers.csv" nas bottleneck)
  echo "copy $i: smbd throttled in periods of $held s of its $ran s, verdict $verdict ($(csv_role_col "$T/cpu-$i/transfers.csv" nas mb_per_s) MB/s)"
  if awk -v h="$held" -v r="$ran" 'BEGIN { exit !(h >= 0.9 * r) }'; then
    held_copies=$((held_copies + 1))
    [ "$verdict" = server-cpu ] || fail "copy $i: the quota held smbd back $held s of $ran s, the NAS row says '$verdict': $(csv_role_col "$T/cpu-$i/transfers.csv" nas observed_detail)"
  fi
done
[ "$held_copies" -ge 1 ] || fail "the 5 % quota held smbd back for most of no copy: nothing was CPU-bound to judge"
while read -r pid; do move_to /sys/fs/cgroup/cpu "$pid"; done <"$smbcpu_CGROUP/cgroup.procs"
echo "ok: smbd waiting on a 100 Mbit/s link is not server-cpu ($(csv_role_col "$T/cpu-free/transfers.csv" nas bottleneck)); held by a 5 % quota, server-cpu in $held_copies of 3 copies held back for most of their time"

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
