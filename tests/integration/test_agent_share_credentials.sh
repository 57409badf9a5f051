#!/usr/bin/env bash
# shellcheck disable=SC2154  # client_PORT: set by start_agent with printf -v
# Issue 42, row 3: the SMB login a job uses is the file the agent checked. A lab job
# names a credentials file under the agent's --allow-source directory; the moment the
# agent's check opens it, the directory holding it is swapped for a link to a private
# directory holding another root-only login file of the same name (swap_on_open.py
# holds the open until the swap is done, so the order is certain). The job then logs
# in to a throwaway smbd on loopback: smbd must see the checked login, never the
# other one (the c149aad build opened the name again at the job's start and logged in
# with the other file).
source "$(dirname "$0")/lib.sh"
need_root "fanotify holds the agent's open while the directory is swapped"
command -v smbd >/dev/null || skip "no smbd (scripts/install-deps.sh installs Samba)"
command -v smbpasswd >/dev/null || skip "no smbpasswd"
command -v python3 >/dev/null || skip "python3 is not installed"

# A throwaway smbd on 127.0.0.1:SMB_PORT: its own directories, one user (root, with the
# checked file's password) and a log that names each login it is offered.
free_port
SMB_PORT=$port
S=$T/smb
mkdir -p "$S"/{lock,state,cache,private,pid,ncalrpc} "$T/share"
cat >"$S/smb.conf" <<EOF
[global]
  server role = standalone server
  interfaces = 127.0.0.1
  bind interfaces only = yes
  disable netbios = yes
  smb ports = $SMB_PORT
  lock directory = $S/lock
  state directory = $S/state
  cache directory = $S/cache
  private dir = $S/private
  pid directory = $S/pid
  ncalrpc dir = $S/ncalrpc
  log file = $S/log.%m
  log level = 2
  passdb backend = tdbsam:$S/private/passdb.tdb
  map to guest = never
  load printers = no
  printing = bsd
  printcap name = /dev/null
[share]
  path = $T/share
  read only = no
EOF
password=$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')
printf '%s\n%s\n' "$password" "$password" | smbpasswd -c "$S/smb.conf" -s -a root >/dev/null ||
  fail "smbpasswd -a root"
setsid smbd -F --no-process-group --debug-stdout -s "$S/smb.conf" >"$T/smbd.log" 2>&1 &
PIDS+=("$!")
smbd_up() { (exec 3<>"/dev/tcp/127.0.0.1/$SMB_PORT") 2>/dev/null; }
wait_for "smbd on 127.0.0.1:$SMB_PORT" 20 smbd_up

# The checked login, under --allow-source; the other one, root's own elsewhere.
mkdir -p "$T/allowed/login" "$T/private"
(umask 077
 printf 'username=root\npassword=%s\n' "$password" >"$T/allowed/login/smb"
 printf 'username=swapped-in\npassword=not-the-checked-one\n' >"$T/private/smb")

start_agent client --allow-source "$T/allowed"

python3 "$(dirname "$0")/swap_on_open.py" "$T/allowed/login/smb" "$T/private" "$T/swap.ready" 60 \
  "$T/allowed/login" >"$T/swap.log" 2>&1 &
swapper=$!
PIDS+=("$swapper")
wait_for "the swapper's fanotify watch" 10 test -s "$T/swap.ready"

cat >"$T/plan.toml" <<PLAN
label = "credentials"
runs = 1
[collector]
out = "$T/out"
[[host]]
name = "client"
agent = "127.0.0.1:$client_PORT"
[[transfer]]
from = "client"
transport = "smb"
to = "smb://127.0.0.1:$SMB_PORT/share"
credentials = "$T/allowed/login/smb"
size = 1048576
PLAN
rc=0
timeout -k 5 120 "$NASPERF" lab "$T/plan.toml" >"$T/lab.log" 2>&1 || rc=$?
wait "$swapper" || fail "the credentials file was never opened: $(cat "$T/swap.log")"
[ -L "$T/allowed/login" ] || fail "the directory was not swapped for a link"
grep -q 'user \[swapped-in\]' "$T/smbd.log" &&
  fail "smbd was offered the swapped-in login: the job read the name again after the check"
[ "$rc" -eq 0 ] || fail "the lab failed: $(tail -5 "$T/lab.log")"
[ "$(csv_role_col "$T/out/transfers.csv" sender status)" = ok ] || fail "the transfer is not ok: $(cat "$T/lab.log")"
grep -q 'authentication for user \[root\].* succeeded' "$T/smbd.log" ||
  fail "smbd never saw the checked login: $(grep -i 'authentication for' "$T/smbd.log")"
echo "ok: the directory of the checked login file was swapped during the check; smbd saw only the checked login"
