#!/usr/bin/env bash
# shellcheck disable=SC2154  # NAME_PID, NAME_PORT...: set by lib.sh's start_*, lab_* and cpu_group with printf -v
# Issue 12, row 2: an agent sends only what its operator allowed. On loopback, a
# NAS agent and a client agent; `nasperf lab` (a token holder) asks the client to
# send files. Without --allow-source it sends generated data only; with it, files
# under that directory go (and only those): a mode-0600 file outside it, a path
# that climbs out with .., and a symlink inside that points out are all refused
# with the same one line, which does not tell whether the file exists.
# Issue 29, row 1: the file a job checked is the file it sends. The moment the
# allowed file is first opened, its name is swapped for a link to the secret
# (swap_on_open.py); the receiver must get the checked bytes, not the secret.
source "$(dirname "$0")/lib.sh"

mkdir -p "$T/allowed" "$T/private"
head -c 4M /dev/urandom >"$T/allowed/data.bin"
head -c 1M /dev/urandom >"$T/private/secret" && chmod 600 "$T/private/secret"
ln -s "$T/private/secret" "$T/allowed/link-out"
start_agent nas --target discard
start_agent open_client
start_agent client --allow-source "$T/allowed"

# lab_with FILE CLIENT_PORT OUT: runs a one-transfer plan sending FILE; sets rc.
lab_with() {
  cat >"$T/plan.toml" <<PLAN
label = "sources"
runs = 1
[collector]
out = "$3"
[[host]]
name = "nas"
agent = "127.0.0.1:$nas_PORT"
[[host]]
name = "client"
agent = "127.0.0.1:$2"
[[transfer]]
from = "client"
to = "nas"
file = "$1"
PLAN
  rc=0
  timeout -k 5 120 "$NASPERF" lab "$T/plan.toml" >"$T/lab.log" 2>&1 || rc=$?
}

lab_with "$T/allowed/data.bin" "$open_client_PORT" "$T/out0"
[ "$rc" -ne 0 ] || fail "an agent without --allow-source sent a file"
grep -q "generated data only; start it with --allow-source DIR" "$T/lab.log" || fail "no hint about --allow-source: $(cat "$T/lab.log")"

lab_with "$T/allowed/data.bin" "$client_PORT" "$T/out1"
[ "$rc" -eq 0 ] || fail "a file under --allow-source was refused: $(tail -5 "$T/lab.log")"
[ "$(csv_role_col "$T/out1/transfers.csv" sender status)" = ok ] || fail "the allowed file's transfer is not ok"

for file in "$T/private/secret" "$T/allowed/../private/secret" "$T/allowed/link-out" "$T/private/no-such-file"; do
  lab_with "$file" "$client_PORT" "$T/out-refused"
  [ "$rc" -ne 0 ] || fail "the agent sent $file"
  line=$(grep -o "is not a file under this agent's --allow-source directories" "$T/lab.log" | head -1)
  [ -n "$line" ] || fail "$file: no refusal naming --allow-source: $(cat "$T/lab.log")"
  grep -q "No such file\|Permission denied\|not a regular" "$T/lab.log" && fail "$file: the refusal tells whether it exists: $(cat "$T/lab.log")"
  [ -z "$(tail -n +2 "$T/out-refused/transfers.csv" 2>/dev/null)" ] || fail "$file: rows were written"
done

mkdir -p "$T/nas"
start_agent nas_files --target "$T/nas"
head -c 1M /dev/urandom >"$T/allowed/swap.bin"
cp "$T/allowed/swap.bin" "$T/checked.bin"
# The name goes the moment anything first opens the file: the agent's own check (now
# the only open) or, before, the job opening it again by name after a realpath check.
python3 "$(dirname "$0")/swap_on_open.py" "$T/allowed/swap.bin" "$T/private/secret" "$T/swap.ready" 60 \
  >"$T/swap.log" 2>&1 &
swapper=$!
PIDS+=("$swapper")
wait_for "the swapper's inotify watch" 10 test -s "$T/swap.ready"
"$AGENT_CLIENT" "127.0.0.1:$client_PORT" "$NASPERF_TOKEN" ready swap-job "127.0.0.1:$nas_files_PORT" \
  "$T/allowed/swap.bin" >"$T/swap-ready.log" 2>&1 || fail "the swap job did not get ready: $(cat "$T/swap-ready.log")"
wait "$swapper" || fail "the file was never opened: $(cat "$T/swap.log")"
[ -L "$T/allowed/swap.bin" ] || fail "the name was not swapped for a link"
"$AGENT_CLIENT" "127.0.0.1:$client_PORT" "$NASPERF_TOKEN" go swap-job >"$T/swap-go.log" 2>&1 \
  || fail "the swap job failed: $(cat "$T/swap-go.log")"
grep -q "^sender ok" "$T/swap-go.log" || fail "the swap job's transfer is not ok: $(cat "$T/swap-go.log")"
mapfile -t received < <(find "$T/nas" -type f)
[ "${#received[@]}" -eq 1 ] || fail "expected one file on the NAS, found ${#received[@]}"
cmp -s "${received[0]}" "$T/private/secret" && fail "the agent sent the secret the name was swapped to"
cmp -s "${received[0]}" "$T/checked.bin" || fail "the NAS did not get the checked file's bytes"
echo "ok: generated data only by default; files only under --allow-source; outside paths refused alike;" \
  "a name swapped for a link after the check sends the checked file"
