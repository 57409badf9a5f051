#!/usr/bin/env bash
# Issue 12, row 9: a symlink where nasperf would write on the SSH server (planted
# in a shared directory, pointing out of it, even dangling) is never written
# through: scp and sftp both refuse the transfer as "already exists", and the
# symlink's target is not created.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/ssh_lib.sh"

start_sshd
trust_sshd
mkdir -p "$T/outside"
for transport in scp sftp; do
  ln -s "$T/outside/$transport-victim" "$T/remote/nasperf-sym$transport-1-0.dat"
  rc=0
  ssh_sender "$transport" --size 1MiB --runs 1 --run-id "sym$transport" --out "$T/$transport" \
    >"$T/$transport.log" 2>&1 || rc=$?
  [ "$rc" -ne 0 ] || fail "$transport wrote over a planted symlink and exited 0: $(tail -3 "$T/$transport.log")"
  [ ! -e "$T/outside/$transport-victim" ] || fail "$transport wrote through the symlink into $T/outside"
  grep -q "already exists; nasperf never overwrites" "$T/$transport/transfers.csv" \
    || fail "$transport row does not say the name was taken: $(cat "$T/$transport/transfers.csv")"
  [ -L "$T/remote/nasperf-sym$transport-1-0.dat" ] || fail "$transport removed or replaced the planted symlink"
done
echo "ok: scp and sftp refuse to write through a planted symlink"
