#!/usr/bin/env bash
# Issue 5: the NAS's file system fills up during an sftp transfer (something else
# writes there after nasperf's free-space check). The server refuses a write; the
# row is failed with the server's reason, the partial file is deleted, and once the
# space is back the next transfer of the same run works on a fresh session.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/ssh_lib.sh"

mount -t tmpfs -o size=1g tmpfs "$T/remote" || fail "mount tmpfs"
CLEANUPS+=("umount -l '$T/remote'")
start_sshd
trust_sshd

ssh_sender sftp --size 900MiB --runs 2 --pause 10s --sync none --out "$T/out" >"$T/sender.log" 2>&1 &
sender_pid=$!
PIDS+=("$sender_pid")

wait_for "the first remote file to pass 16 MiB" 60 partial_file_over $((16 << 20)) "$T/remote"
# Fill what is left (tmpfs takes this far faster than SSH delivers), then free it
# once the first transfer's row is written; the sender's 10 s pause is the margin
# before the second transfer starts.
head -c 1G /dev/zero >"$T/remote/filler" 2>/dev/null || true
first_row() { [ -s "$T/out/transfers.csv" ] && [ "$(wc -l <"$T/out/transfers.csv")" -ge 2 ]; }
wait_for "the first row" 60 first_row
rm -f "$T/remote/filler"
sender_done() { ! alive "$sender_pid"; }
wait_for "the sender to finish" 120 sender_done
rc=0; wait "$sender_pid" || rc=$?
[ "$rc" -ne 0 ] || fail "sender exited 0 with a failed transfer"

csv=$T/out/transfers.csv
[ "$(csv_col "$csv" status | tr '\n' ' ')" = "failed ok " ] || fail "expected a failed then an ok row: $(cut -d, -f3,28,29 "$csv")"
csv_col "$csv" error | head -1 | grep -q "the server refused a write: it could not write (disk full or over quota?)" \
  || fail "the error does not give the server's reason: $(csv_col "$csv" error | head -1)"
[ -z "$(ls "$T/remote")" ] || fail "files left behind (the partial one should be deleted): $(ls "$T/remote")"
echo "ok: disk full mid-transfer -> failed row with the server's reason; partial file gone; next transfer ok"
