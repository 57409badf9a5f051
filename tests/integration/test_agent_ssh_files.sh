#!/usr/bin/env bash
# shellcheck disable=SC2154  # client_PORT, bare_PORT: set by start_agent with printf -v
# Issue 42: the key and known_hosts an agent's scp/sftp job names are files the agent
# checked, like a file to send. A job whose ssh_identity or ssh_known_hosts is outside
# the agent's --allow-source directories, or sent to an agent without --allow-source,
# is refused in one line (the c149aad build logged in with any key root could read).
# Then a job names a key under --allow-source; the moment the agent's check opens it,
# the directory holding it is swapped for a link to a private directory holding
# another key of the same name that sshd also accepts (swap_on_open.py holds the open
# until the swap is done). Both streams' logins must use the checked key: a build that
# opened the name again after the check logs in with the other one.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/ssh_lib.sh"
need_root "fanotify holds the agent's open while the directory is swapped"
command -v python3 >/dev/null || skip "python3 is not installed"

mkdir -p "$T/allowed/keys" "$T/private"
cp "$IDENTITY" "$T/allowed/keys/id"
ssh-keygen -q -t ed25519 -N '' -C nasperf-swapped-in -f "$T/private/id"
cat "$T/private/id.pub" >>"$SSHD_DIR/authorized_keys"
checked=$(ssh-keygen -lf "$IDENTITY.pub" | awk '{print $2}')
other=$(ssh-keygen -lf "$T/private/id.pub" | awk '{print $2}')
start_sshd
trust_sshd
cp "$KNOWN_HOSTS" "$T/allowed/known_hosts"

start_agent client --allow-source "$T/allowed"
start_agent bare

plan() {  # NAME AGENT_PORT IDENTITY KNOWN_HOSTS: a one-transfer sftp plan in $T/NAME.toml
  cat >"$T/$1.toml" <<PLAN
label = "$1"
runs = 1
[collector]
out = "$T/$1"
[[host]]
name = "client"
agent = "127.0.0.1:$2"
[[transfer]]
from = "client"
transport = "sftp"
to = "root@127.0.0.1:$SSHD_PORT:$T/remote"
ssh_identity = "$3"
ssh_known_hosts = "$4"
size = 1048576
streams = 2
PLAN
}

# refused NAME WANT: the plan's lab fails, before any login, with WANT in one line.
refused() {
  if timeout -k 5 60 "$NASPERF" lab "$T/$1.toml" >"$T/$1.log" 2>&1; then
    fail "$1: the lab ran: $(tail -5 "$T/$1.log")"
  fi
  [ "$(grep -c -- "$2" "$T/$1.log")" -ge 1 ] || fail "$1: no line says '$2': $(tail -5 "$T/$1.log")"
  echo "$1: $(grep -m1 -- "$2" "$T/$1.log")"
}
plan outside-key "$client_PORT" "$T/private/id" "$T/allowed/known_hosts"
refused outside-key "$T/private/id is not a file under this agent's --allow-source directories"
plan outside-hosts "$client_PORT" "$T/allowed/keys/id" "$KNOWN_HOSTS"
refused outside-hosts "$KNOWN_HOSTS is not a file under this agent's --allow-source directories"
plan bare "$bare_PORT" "$T/allowed/keys/id" "$T/allowed/known_hosts"
refused bare "start it with --allow-source DIR"
grep -q "Accepted publickey" "$T/sshd.log" && fail "a refused job logged in: $(grep Accepted "$T/sshd.log")"

python3 "$(dirname "$0")/swap_on_open.py" "$T/allowed/keys/id" "$T/private" "$T/swap.ready" 60 \
  "$T/allowed/keys" >"$T/swap.log" 2>&1 &
swapper=$!
PIDS+=("$swapper")
wait_for "the swapper's fanotify watch" 10 test -s "$T/swap.ready"
plan swapped "$client_PORT" "$T/allowed/keys/id" "$T/allowed/known_hosts"
rc=0
timeout -k 5 120 "$NASPERF" lab "$T/swapped.toml" >"$T/swapped.log" 2>&1 || rc=$?
wait "$swapper" || fail "the key was never opened: $(cat "$T/swap.log")"
[ -L "$T/allowed/keys" ] || fail "the directory was not swapped for a link"
grep -q "Accepted publickey.*$other" "$T/sshd.log" &&
  fail "sshd saw the swapped-in key: the job read the name again after the check"
[ "$rc" -eq 0 ] || fail "the lab failed: $(tail -5 "$T/swapped.log")"
[ "$(csv_role_col "$T/swapped/transfers.csv" sender status | grep -c '^ok$')" = 2 ] ||
  fail "expected 2 ok rows: $(cat "$T/swapped/transfers.csv")"
logins=$(grep -c "Accepted publickey.*$checked" "$T/sshd.log")
[ "$logins" -ge 2 ] || fail "sshd saw $logins logins with the checked key: $(grep -i accepted "$T/sshd.log")"
echo "ok: keys and known_hosts outside --allow-source refused; with the key's directory swapped during the check," \
  "sshd saw $logins logins, all with the checked key"
