#!/usr/bin/env bash
# Issue 5: host keys and logins like OpenSSH. An unknown host key stops the run
# with its SHA256 fingerprint; --accept-new-host-key records it and the next run
# needs no flag; a changed key is refused even with that flag; a wrong identity is
# refused with a clear error. None of them writes a row. A key in ssh-agent works
# without --identity.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/ssh_lib.sh"

start_sshd
rm -f "$KNOWN_HOSTS"

# one_line FILE: exactly one line of output, the error.
one_line() { [ "$(wc -l <"$1")" -eq 1 ] || fail "expected one line, got: $(cat "$1")"; }

# Unknown key: refused, fingerprint shown, exit non-zero, nothing written.
if ssh_sender sftp --size 1MiB --out "$T/unknown" >"$T/unknown.log" 2>&1; then fail "unknown host key accepted"; fi
one_line "$T/unknown.log"
grep -q "unknown host key ssh-ed25519 $HOST_FINGERPRINT" "$T/unknown.log" \
  || fail "error does not show the fingerprint $HOST_FINGERPRINT: $(cat "$T/unknown.log")"
grep -q -- "--accept-new-host-key" "$T/unknown.log" || fail "error does not say how to accept the key"
[ ! -s "$KNOWN_HOSTS" ] || fail "an unknown key was recorded without --accept-new-host-key"
[ ! -s "$T/unknown/transfers.csv" ] || [ "$(wc -l <"$T/unknown/transfers.csv")" -le 1 ] || fail "rows written for a refused host"

# accept-new records it; the next run works without the flag.
ssh_sender sftp --size 1MiB --accept-new-host-key --out "$T/out" >"$T/accept.log" 2>&1 \
  || fail "--accept-new-host-key run failed: $(tail -3 "$T/accept.log")"
grep -q "recorded new host key ssh-ed25519 $HOST_FINGERPRINT" "$T/accept.log" || fail "no notice of the recorded key"
grep -q "127.0.0.1\]:$SSHD_PORT" "$KNOWN_HOSTS" || fail "known_hosts has no entry for [127.0.0.1]:$SSHD_PORT: $(cat "$KNOWN_HOSTS")"
ssh_sender scp --size 1MiB --out "$T/out" >"$T/next.log" 2>&1 || fail "run after recording failed: $(tail -3 "$T/next.log")"
grep -q "recorded new host key" "$T/next.log" && fail "the key was recorded twice"
[ "$(csv_col "$T/out/transfers.csv" status | sort | uniq -c | awk '{print $1 $2}')" = "2ok" ] || fail "expected 2 ok rows"

# A CHANGED key: refused, with or without --accept-new-host-key, and known_hosts kept.
ssh-keygen -q -t ed25519 -N '' -f "$T/other_host"
echo "[127.0.0.1]:$SSHD_PORT $(cut -d' ' -f1,2 "$T/other_host.pub")" >"$KNOWN_HOSTS"
cp "$KNOWN_HOSTS" "$T/known_hosts.before"
for flag in "" --accept-new-host-key; do
  if ssh_sender sftp --size 1MiB $flag --out "$T/changed" >"$T/changed.log" 2>&1; then fail "changed host key accepted ($flag)"; fi
  one_line "$T/changed.log"
  grep -q "host key CHANGED.*$HOST_FINGERPRINT" "$T/changed.log" || fail "no clear changed-key error: $(cat "$T/changed.log")"
done
cmp -s "$KNOWN_HOSTS" "$T/known_hosts.before" || fail "known_hosts was modified for a changed key"

# A wrong identity: refused with a clear error, no password prompt without a TTY.
trust_sshd
ssh-keygen -q -t ed25519 -N '' -f "$T/stranger"
if IDENTITY=$T/stranger ssh_sender sftp --size 1MiB --out "$T/wrong" </dev/null >"$T/wrong.log" 2>&1; then
  fail "a wrong identity logged in"
fi
one_line "$T/wrong.log"
grep -q "login refused (tried the key in $T/stranger; the server accepts publickey" "$T/wrong.log" \
  || fail "no clear login error: $(cat "$T/wrong.log")"
if IDENTITY=$T/no-such-key ssh_sender sftp --size 1MiB --out "$T/wrong" >"$T/nokey.log" 2>&1; then
  fail "a missing identity file logged in"
fi
grep -q "cannot read the private key $T/no-such-key" "$T/nokey.log" || fail "no clear missing-key error: $(cat "$T/nokey.log")"
# ssh-agent: no --identity, the key comes from the agent (our own agent, by its pid).
ssh-agent -D -a "$T/agent.sock" >/dev/null 2>&1 &
PIDS+=("$!")
export SSH_AUTH_SOCK=$T/agent.sock
# The socket file appears at bind(), before the agent listens: wait until it answers
# (ssh-add -l exits 1 for "no identities", 2 when it cannot talk to the agent).
agent_answers() { local rc=0; ssh-add -l >/dev/null 2>&1 || rc=$?; [ "$rc" -ne 2 ]; }
wait_for "ssh-agent to answer on its socket" 10 agent_answers
ssh-add -q "$CLIENT_DIR/id_ed25519" 2>"$T/ssh-add.err" || fail "ssh-add failed: $(cat "$T/ssh-add.err")"
"$NASPERF" sender --transport sftp --to "root@127.0.0.1:$T/remote" --ssh-port "$SSHD_PORT" \
  --known-hosts "$KNOWN_HOSTS" --ssh-config "$CLIENT_DIR/ssh_config" --no-progress --size 1MiB \
  --out "$T/agent" </dev/null >"$T/agent.log" 2>&1 || fail "login through ssh-agent failed: $(tail -3 "$T/agent.log")"
[ "$(csv_col "$T/agent/transfers.csv" status)" = "ok" ] || fail "no ok row through ssh-agent"
echo "ok: unknown key refused with fingerprint, accept-new records, changed key refused, wrong identity refused, agent login"
