#!/usr/bin/env bash
# `nasperf lab --ssh`: the NAS has no agent running, only a real sshd in its
# namespace; the controller starts `nasperf agent` there over SSH (libssh, host key
# checked against a known_hosts file, a throwaway key), runs the plan with two
# clients, and stops that agent at the end. A host key that is not the one in
# known_hosts stops the lab before anything runs, and leaves no empty results behind.
source "$(dirname "$0")/lib.sh"

lab_up --clients 2 --mtu 1500 --rate 400mbit --disk-size 1G
lab_agent c1 client1
lab_agent c2 client2

# shellcheck disable=SC2119  # lab_sshd's one argument (SETENV) is optional
lab_sshd
ssh-keygen -q -t ed25519 -N '' -f "$T/ssh/other_host"
echo "[$NAS_IP]:2222 $(cut -d' ' -f1,2 "$T/ssh/other_host.pub")" >"$T/ssh/wrong_known_hosts"

plan() {  # plan KNOWN_HOSTS OUT
  cat <<PLAN
label = "ssh-started"
runs = 2
[collector]
out = "$2"
[[host]]
name = "nas"
agent = "$NAS_IP:7600"
target = "$CACHE"
ssh = "root@$NAS_IP:2222"
ssh_identity = "$T/ssh/user_ed25519"
ssh_known_hosts = "$1"
nasperf = "$NASPERF"
agent_flags = ["--min-free", "off"]
PLAN
  lab_plan_two_clients_to_nas "16MiB"
}
nas_agents() { ip netns pids "$NASPERF_LAB-nas" | xargs -r ps -o args= -p | grep -c "nasperf agent" || true; }

plan "$T/ssh/wrong_known_hosts" "$T/out0" >"$T/wrong.toml"
rc=0
on_hop "$NASPERF" lab --ssh "$T/wrong.toml" >"$T/wrong.log" 2>&1 || rc=$?
cat "$T/wrong.log"
[ $rc = 1 ] || fail "a wrong host key: exit $rc, want 1"
grep -q "host nas: ssh root@$NAS_IP:2222: the host key CHANGED" "$T/wrong.log" || fail "no clear host-key error"
[ "$(nas_agents)" = 0 ] || fail "an agent started despite the wrong host key"
[ ! -e "$T/out0" ] || fail "a lab stopped by its checks left a results directory: $(ls -R "$T/out0")"

plan "$T/ssh/known_hosts" "$T/out" >"$T/plan.toml"
on_hop "$NASPERF" lab --ssh "$T/plan.toml" >"$T/lab.log" 2>&1 || fail "nasperf lab --ssh failed: $(tail -20 "$T/lab.log")"
cat "$T/lab.log"
grep -q "nas: started .* agent. over ssh root@$NAS_IP:2222 (pid [0-9]*)" "$T/lab.log" || fail "no 'started over ssh' line"
grep -q "stopped 1 agent started over ssh" "$T/lab.log" || fail "the ssh-started agent was not stopped"
csv=$T/out/transfers.csv
[ "$(tail -n +2 "$csv" | wc -l)" = 8 ] || fail "expected 8 rows, got $(tail -n +2 "$csv" | wc -l)"
csv_role_all "$csv" receiver status ok
csv_role_all "$csv" sender status ok
gone() { [ "$(nas_agents)" = 0 ]; }
wait_for "the ssh-started agent to exit" 10 gone
echo "ok: the NAS agent was started over SSH (host key checked) and stopped at the end"
