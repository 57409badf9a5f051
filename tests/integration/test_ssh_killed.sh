#!/usr/bin/env bash
# Issue 5: sshd dies in the middle of an sftp transfer. The sender writes a failed
# row with the reason and exits non-zero; the next run reports the connection error
# in one line and exits non-zero, with no row.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/ssh_lib.sh"

start_sshd
trust_sshd

ssh_sender sftp --size 20GiB --sync none --runs 1 --out "$T/out" >"$T/sender.log" 2>&1 &
sender_pid=$!
PIDS+=("$sender_pid")

wait_for "a remote file over 32 MiB" 60 partial_file_over $((32 << 20)) "$T/remote"
alive "$sender_pid" || fail "sender ended before sshd could be killed: $(tail -3 "$T/sender.log")"
kill_sshd

sender_done() { ! alive "$sender_pid"; }
wait_for "the sender to notice" 60 sender_done
rc=0; wait "$sender_pid" || rc=$?
[ "$rc" -ne 0 ] || fail "sender exited 0 after losing its server"
csv=$T/out/transfers.csv
[ "$(csv_col "$csv" status)" = "failed" ] || fail "expected one failed row: $(cat "$csv")"
csv_col "$csv" error | grep -q "connection lost" || fail "error column does not say the connection was lost: $(csv_col "$csv" error)"

# The next run: one line naming the problem, non-zero exit, no rows.
rc=0
ssh_sender sftp --size 1MiB --out "$T/next" >"$T/next.log" 2>&1 || rc=$?
[ "$rc" -ne 0 ] || fail "run against a dead sshd exited 0"
[ "$(wc -l <"$T/next.log")" -eq 1 ] || fail "expected one line, got: $(cat "$T/next.log")"
grep -q "cannot connect" "$T/next.log" || fail "no clear connection error: $(cat "$T/next.log")"
[ ! -e "$T/next/transfers.csv" ] || [ "$(wc -l <"$T/next/transfers.csv")" -le 1 ] || fail "rows for a run that never started"
echo "ok: failed row on a killed sshd, next run: $(cat "$T/next.log")"
