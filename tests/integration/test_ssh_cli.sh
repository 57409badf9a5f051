#!/usr/bin/env bash
# Issue 5, the command line of the SSH transports (no sshd, no root): a bad --to,
# SSH-only flags with the native transport, agent-only flags with scp/sftp, and a
# server that is not there are one-line errors with the right exit status.
source "$(dirname "$0")/lib.sh"
NASPERF=$(realpath "$NASPERF")
cd "$T"
unset SSH_AUTH_SOCK

# expect NAME WANT_RC PATTERN -- command...: exit status, exactly one stderr line, and
# that line matching PATTERN (grep -E).
expect() {
  local name=$1 want=$2 pattern=$3; shift 4
  local rc=0
  timeout 30 "$@" </dev/null >"$T/$name.out" 2>"$T/$name.err" || rc=$?
  [ "$rc" -ne 124 ] || fail "$name: timed out"
  [ "$rc" -eq "$want" ] || fail "$name: exited $rc, want $want; stderr: $(cat "$T/$name.err")"
  [ "$(wc -l <"$T/$name.err")" -eq 1 ] || fail "$name: expected one stderr line, got: $(cat "$T/$name.err")"
  grep -qE -- "$pattern" "$T/$name.err" || fail "$name: stderr does not match /$pattern/: $(cat "$T/$name.err")"
}

expect no_dir 2 '--to: expected \[user@\]host:/remote/dir' -- "$NASPERF" sender --transport sftp --to nas --size 1MiB
expect bad_transport 2 '--transport' -- "$NASPERF" sender --transport ftp --to nas:/x --size 1MiB
expect port_native 2 '--ssh-port: only with --to \[user@\]host:/dir or --transport scp|sftp' -- "$NASPERF" sender --to nas --ssh-port 22 --size 1MiB
expect accept_native 2 '--accept-new-host-key: only with' -- "$NASPERF" sender --to nas --accept-new-host-key --size 1MiB
expect verify_scp 2 '--verify: --transport scp cannot: it needs --transport native\|sftp\|nfs\|smb' -- "$NASPERF" sender --transport scp --to nas:/x --verify --size 1MiB
expect verify_sftp_read 2 '--verify: --transport sftp cannot: it needs --transport native;' -- "$NASPERF" sender --transport sftp --to nas:/x --verify --direction read --remote-file f
expect direct_scp 2 '--write-mode: --transport scp cannot: it needs --transport native' -- "$NASPERF" sender --transport scp --to nas:/x --write-mode direct --size 1MiB
expect run_id_path 2 '--run-id' -- "$NASPERF" sender --transport sftp --to nas:/x --run-id ../../etc/x --size 1MiB
expect chunk_knob 2 'NASPERF_SFTP_WRITE' -- env NASPERF_SFTP_WRITE=1MiB "$NASPERF" sender --transport sftp --to nas:/x --size 1MiB
expect deploy_binary_native 2 '--deploy-binary: only with --to \[user@\]host:/dir' -- "$NASPERF" sender --to nas --deploy-binary /x --size 1MiB
expect deploy_plaintext 2 '--plaintext: not with --to \[user@\]host:/dir' -- "$NASPERF" sender --to nas:/x --plaintext --size 1MiB

# Nothing listens: one line naming the server, exit 1, and no token needed.
free_port
unset NASPERF_TOKEN
expect refused 1 "ssh root@127.0.0.1:$port: cannot connect" -- "$NASPERF" sender --transport sftp \
  --to "root@127.0.0.1:/tmp" --ssh-port "$port" --size 1MiB --known-hosts "$T/kh" --ssh-config /dev/null --out "$T/out"
[ ! -e "$T/out/transfers.csv" ] || [ "$(wc -l <"$T/out/transfers.csv")" -le 1 ] || fail "rows for a run that never started"
echo "ok: SSH command-line errors are one line with the right exit status"
