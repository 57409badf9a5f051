#!/usr/bin/env bash
# Issue 13 item 5: nothing installed on the NAS beyond sshd. The lab's NAS runs only
# a real sshd (no nasperf on its PATH); `nasperf sender --to root@NAS:/dir` uploads the
# static binary over SFTP into a per-user cache there, starts a receiver with it,
# runs the native loop to the NAS's own address (both roles' rows, the disk columns
# filled, files written) and stops it: no nasperf process is left on the NAS. A second
# run reuses the cache (no upload); a binary for another processor, or one that is not
# static, is refused with a clear error; Ctrl-C mid-run, or a sender killed outright,
# leaves nothing running and no partial file. `nasperf lab --ssh` uses the same cache for an agent.
source "$(dirname "$0")/lib.sh"
src=$(cd "$(dirname "$0")/../.." && pwd)
static=$(newest "$src"/dist/nasperf-*-linux-x86_64)
[ -n "$static" ] || skip "no dist/nasperf-*-linux-x86_64: run scripts/package.sh first (test.sh does)"
[ "$(uname -m)" = x86_64 ] || skip "the test's NAS is this x86_64 machine"

lab_up --mtu 1500 --rate 400mbit --disk-size 2G  # the receiver keeps its default --min-free 1GiB

# --- a NAS with sshd only; its user's cache and config live in this test's directory
NAS_HOME=$T/nas-home
mkdir -p "$NAS_HOME"
lab_sshd "SHLVL=1 XDG_CACHE_HOME=$NAS_HOME/cache XDG_CONFIG_HOME=$NAS_HOME/config"
: >"$T/ssh/config"

nas_ssh() {
  on_client ssh -n -p 2222 -i "$T/ssh/user_ed25519" -F "$T/ssh/config" -o BatchMode=yes \
    -o UserKnownHostsFile="$T/ssh/known_hosts" -o GlobalKnownHostsFile=/dev/null "root@$NAS_IP" "$@"
}
[ "$(nas_ssh 'command -v nasperf || echo none')" = none ] || fail "nasperf is on the NAS's PATH: the test needs a bare NAS"
nas_processes() { ip netns pids "$NASPERF_LAB-nas" | xargs -r ps -o args= -p | grep -c "nasperf-x86_64-[0-9a-f]* \(receiver\|agent\)" || true; }
none_left() { [ "$(nas_processes)" = 0 ]; }

# deploy OUT [sender flags...]: a sender from the lab's client toward the bare NAS.
deploy() {
  local out=$1; shift
  on_client "$NASPERF" sender --to "root@$NAS_IP:$CACHE" --ssh-port 2222 --identity "$T/ssh/user_ed25519" \
    --known-hosts "$T/ssh/known_hosts" --ssh-config "$T/ssh/config" --out "$out" --no-progress "$@"
}

# --- first run: upload, receiver, both roles' rows, files, nothing left
deploy "$T/out1" --deploy-binary "$static" --size 16MiB --runs 2 --cleanup never >"$T/run1.log" 2>&1 \
  || fail "the first deploying run failed: $(tail -8 "$T/run1.log")"
cat "$T/run1.log"
grep -q "uploaded nasperf for x86_64 (.* MiB) to $NAS_HOME/cache/nasperf/nasperf-x86_64-" "$T/run1.log" || fail "no upload line"
grep -q "receiver started (pid [0-9]*) on $NAS_IP:[0-9]*, target $CACHE" "$T/run1.log" || fail "no 'receiver started' line"
grep -q "receiver stopped" "$T/run1.log" || fail "no 'receiver stopped' line"
csv=$T/out1/transfers.csv
[ "$(tail -n +2 "$csv" | wc -l)" = 4 ] || fail "expected 4 rows, got $(tail -n +2 "$csv" | wc -l)"
for role in sender receiver; do
  csv_role_all "$csv" $role status ok
  csv_role_all "$csv" $role transport native
done
[ -n "$(csv_role_col "$csv" receiver disk_wait_pct | grep -v '^$' | head -1)" ] || fail "the receiver rows have no disk figures"
[ -n "$(csv_role_col "$csv" receiver bottleneck | grep -v '^$' | head -1)" ] || fail "the receiver rows have no verdict"
written=$(find "$CACHE" -type f -size 16M | wc -l)
[ "$written" = 2 ] || fail "expected 2 files of 16 MiB in the NAS target, found $written"
cached=$(ls "$NAS_HOME/cache/nasperf/")
[ "$(echo "$cached" | wc -l)" = 1 ] || fail "the cache holds more than the binary: $cached"
cmp -s "$static" "$NAS_HOME/cache/nasperf/$cached" || fail "the cached binary differs from $static"
[ "$(stat -c %a "$NAS_HOME/cache/nasperf")" = 700 ] || fail "the cache directory is not private"
wait_for "the deployed receiver to exit" 10 none_left

# --- second run: the cached binary, no upload
deploy "$T/out2" --deploy-binary "$static" --size 8MiB --runs 1 >"$T/run2.log" 2>&1 \
  || fail "the second run failed: $(tail -8 "$T/run2.log")"
grep -q "reusing the cached nasperf for x86_64" "$T/run2.log" || fail "the second run did not reuse the cache: $(cat "$T/run2.log")"
! grep -q "uploaded" "$T/run2.log" || fail "the second run uploaded again"
csv_role_all "$T/out2/transfers.csv" receiver status ok
wait_for "the second receiver to exit" 10 none_left

# --- a damaged cached copy is replaced, not run
printf 'garbage' | dd of="$NAS_HOME/cache/nasperf/$cached" bs=1 seek=4096 conv=notrunc status=none
deploy "$T/out3" --deploy-binary "$static" --size 8MiB --runs 1 >"$T/run3.log" 2>&1 \
  || fail "the run after damaging the cache failed: $(tail -8 "$T/run3.log")"
grep -q "uploaded nasperf" "$T/run3.log" || fail "a damaged cached binary was not replaced"
cmp -s "$static" "$NAS_HOME/cache/nasperf/$cached" || fail "the replaced binary differs from $static"

# --- refused: another processor, a binary that is not static, no binary at all
cp "$static" "$T/fake-aarch64"
printf '\267\000' | dd of="$T/fake-aarch64" bs=1 seek=18 conv=notrunc status=none  # e_machine = EM_AARCH64
rc=0
deploy "$T/out4" --deploy-binary "$T/fake-aarch64" --size 8MiB >"$T/arch.log" 2>&1 || rc=$?
cat "$T/arch.log"
[ $rc = 1 ] || fail "a binary for another processor: exit $rc, want 1"
grep -q "the host is x86_64 but $T/fake-aarch64 is built for aarch64: pass --deploy-binary dist/nasperf-VERSION-linux-x86_64" \
  "$T/arch.log" || fail "no clear error for the wrong processor"
rc=0
deploy "$T/out5" --size 8MiB >"$T/dynamic.log" 2>&1 || rc=$?
[ $rc = 1 ] || fail "a dynamically linked sender without --deploy-binary: exit $rc, want 1"
grep -q "this nasperf is linked against shared libraries the NAS does not have: pass --deploy-binary" "$T/dynamic.log" \
  || fail "no clear error for a dynamic binary: $(cat "$T/dynamic.log")"
[ "$(nas_processes)" = 0 ] || fail "a refused deploy left a process on the NAS"

# --- Ctrl-C mid-run, and a sender killed outright: nothing left running, no partial file
# start_long_run NAME: a long deploying run in the background, once it writes on the NAS.
start_long_run() {
  find "$CACHE" -maxdepth 1 -type f -delete
  "$LAB_SH" client -- "$NASPERF" sender --to "root@$NAS_IP:$CACHE" --ssh-port 2222 --identity "$T/ssh/user_ed25519" \
    --known-hosts "$T/ssh/known_hosts" --ssh-config "$T/ssh/config" --out "$T/$1" --no-progress \
    --deploy-binary "$static" --size 600MiB --runs 3 >"$T/$1.log" 2>&1 &
  sender=$!
  PIDS+=("$sender")
  growing() { [ -n "$(find "$CACHE" -type f -size +8M 2>/dev/null | head -1)" ] || ! alive "$sender"; }
  wait_for "the $1 run to be writing on the NAS" 60 growing
  alive "$sender" || fail "the sender ended before it could be stopped: $(tail -5 "$T/$1.log")"
}
no_partial() { [ -z "$(find "$CACHE" -type f | head -1)" ]; }

start_long_run interrupted
kill -INT "$sender"
rc=0
wait "$sender" 2>/dev/null || rc=$?
[ $rc = 130 ] || fail "an interrupted sender: exit $rc, want 130: $(tail -5 "$T/interrupted.log")"
grep -q "aborted: the run was stopped (Ctrl-C" "$T/interrupted.log" || fail "the interrupted transfer is not marked aborted"
grep -q "receiver stopped" "$T/interrupted.log" || fail "the receiver was not stopped after Ctrl-C"
wait_for "the receiver on the NAS to stop after Ctrl-C" 20 none_left
wait_for "the partial file to be removed after Ctrl-C" 10 no_partial

start_long_run killed
kill -KILL "$sender"
wait "$sender" 2>/dev/null || true
wait_for "the receiver on the NAS to stop once its SSH channel closed" 20 none_left
wait_for "the partial file to be removed after the kill" 10 no_partial

# --- lab --ssh: the agent from the same cache
lab_agent c1 client
cat >"$T/plan.toml" <<PLAN
label = "deployed"
runs = 1
[collector]
out = "$T/lab-out"
[[host]]
name = "nas"
agent = "$NAS_IP:7600"
target = "$CACHE"
ssh = "root@$NAS_IP:2222"
ssh_identity = "$T/ssh/user_ed25519"
ssh_known_hosts = "$T/ssh/known_hosts"
agent_flags = ["--min-free", "off"]
[[host]]
name = "client"
agent = "$CLIENT_IP:7600"
[[transfer]]
from = "client"
to = "nas"
size = "8MiB"
PLAN
on_hop "$NASPERF" lab --ssh "$T/plan.toml" --deploy-binary "$static" >"$T/lab.log" 2>&1 \
  || fail "nasperf lab --ssh failed: $(tail -20 "$T/lab.log")"
grep -q "nas: ssh root@$NAS_IP:2222: reusing the cached nasperf for x86_64" "$T/lab.log" || fail "the lab did not use the cache: $(cat "$T/lab.log")"
csv_role_all "$T/lab-out/transfers.csv" receiver status ok
csv_role_all "$T/lab-out/transfers.csv" sender status ok
wait_for "the lab's agent on the NAS to stop" 10 none_left
echo "ok: deployed over SSH (upload, cache reuse, damaged copy replaced), refused wrong binaries, Ctrl-C and lab --ssh left nothing on the NAS"
