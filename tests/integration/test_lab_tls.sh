#!/usr/bin/env bash
# shellcheck disable=SC2154  # NAME_PID, NAME_PORT...: set by lib.sh's start_*, lab_* and cpu_group with printf -v
# A lab run over TLS between three machines that never met: the NAS agent, the
# client agent and the controller (on the hop) each have their own HOME and so their
# own key. The controller refuses unknown agents until told --accept-new-agent-key;
# then the run works, and the client agent trusts the NAS receiver and the embedded
# collector only through the keys the controller pinned (it pins nothing itself).
# A packet capture on the hop (every lab link passes it) holds no token bytes; the
# same capture of a --plaintext transfer does, so the capture can see one.
source "$(dirname "$0")/lib.sh"
command -v tcpdump >/dev/null || fail "tcpdump is not installed (scripts/install-deps.sh installs it)"

lab_up --mtu 1500 --rate 1gbit --disk-size 1G
mkdir -p "$T/nas-home" "$T/client-home" "$T/hop-home"
HOME=$T/nas-home lab_agent nas nas --target "$CACHE" --min-free off
HOME=$T/client-home lab_agent c1 client

cat >"$T/plan.toml" <<PLAN
label = "tls"
runs = 2
[collector]
out = "$T/out"
[[host]]
name = "nas"
agent = "$NAS_IP:7600"
target = "$CACHE"
[[host]]
name = "client"
agent = "$CLIENT_IP:7600"
[[transfer]]
from = "client"
to = "nas"
size = "32MiB"
PLAN

# token_bytes FILE: how many times the token appears in the capture.
token_bytes() { grep -c -a -F "$NASPERF_TOKEN" "$1" || true; }
# packets FILE PORT: packets to or from PORT in the capture.
packets() { tcpdump -n -r "$1" "tcp port $2" 2>/dev/null | wc -l; }

# Strangers: refused before anything runs, one line per agent, nothing pinned.
rc=0
HOME=$T/hop-home on_hop "$NASPERF" lab "$T/plan.toml" >"$T/refused.log" 2>&1 || rc=$?
[ "$rc" -ne 0 ] || fail "the controller trusted agents it never saw: $(cat "$T/refused.log")"
[ "$(grep -c "is not in .*known_agents yet" "$T/refused.log")" -ge 2 ] \
  || fail "expected both agents refused by key: $(cat "$T/refused.log")"
[ ! -e "$T/hop-home/.config/nasperf/known_agents" ] || fail "a key was pinned without the flag"

lab_capture hop any "$T/tls.pcap" 0 tcp
HOME=$T/hop-home on_hop "$NASPERF" lab "$T/plan.toml" --accept-new-agent-key >"$T/lab-run.log" 2>&1 \
  || fail "nasperf lab over TLS failed: $(tail -20 "$T/lab-run.log")"
lab_stop_capture
csv=$T/out/transfers.csv
[ "$(tail -n +2 "$csv" | wc -l)" = 4 ] || fail "expected 4 rows (2 runs x sender+receiver): $(cat "$csv")"
csv_role_all "$csv" sender status ok
csv_role_all "$csv" receiver status ok
[ "$(grep -c "SHA256:" "$T/hop-home/.config/nasperf/known_agents")" = 2 ] \
  || fail "the controller should have pinned both agents: $(cat "$T/hop-home/.config/nasperf/known_agents")"
[ ! -e "$T/client-home/.config/nasperf/known_agents" ] \
  || fail "the client agent pinned keys itself instead of using the controller's: $(cat "$T/client-home/.config/nasperf/known_agents")"
control=$(packets "$T/tls.pcap" 7600)
[ "$control" -gt 20 ] || fail "the capture holds only $control control packets: it did not see the run"
[ "$(token_bytes "$T/tls.pcap")" = 0 ] || fail "the token crossed the lab link in clear during a TLS run"

# The same capture of a --plaintext transfer finds the token: the check above can fail.
lab_receiver plain --target "$CACHE" --min-free off --plaintext
lab_capture hop any "$T/plain.pcap" 0 tcp
on_client "$NASPERF" sender --to "$NAS_IP:$plain_PORT" --size 4MiB --runs 1 --no-progress --plaintext \
  --out "$T/plain-out" >"$T/plain-sender.log" 2>&1 || fail "plaintext sender: $(cat "$T/plain-sender.log")"
lab_stop_capture
[ "$(token_bytes "$T/plain.pcap")" -gt 0 ] || fail "the capture cannot see a plaintext token: the TLS check proves nothing"
echo "ok: lab over TLS with $control control packets captured on the hop and no token in them; a plaintext run shows it $(token_bytes "$T/plain.pcap") times"
