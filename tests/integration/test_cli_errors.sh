#!/usr/bin/env bash
# shellcheck disable=SC2154  # NAME_PID, NAME_PORT...: set by lib.sh's start_*, lab_* and cpu_group with printf -v
# docs/DESIGN.md §10d (a CLI flag): command-line mistakes give a one-line error and the right
# exit status: a bad value (exit 2, naming the flag), an unknown flag (exit 2), no
# token anywhere (non-zero, naming NASPERF_TOKEN), a receiver that is not there
# (exit 1, "unreachable"), a target directory that does not exist (non-zero,
# naming the path).
source "$(dirname "$0")/lib.sh"
NASPERF=$(realpath "$NASPERF")
cd "$T"   # anything written to the working directory lands in $T

# expect NAME WANT_RC PATTERN -- command...: runs the command with stdout and
# stderr captured; checks the exit status (WANT_RC "nonzero" = any but 0), that
# stderr is exactly one line, and that the line matches PATTERN (grep -E).
expect() {
  local name=$1 want=$2 pattern=$3; shift 4
  local rc=0
  timeout 30 "$@" >"$T/$name.out" 2>"$T/$name.err" || rc=$?
  [ "$rc" -ne 124 ] || fail "$name: timed out"
  if [ "$want" = nonzero ]; then
    [ "$rc" -ne 0 ] || fail "$name: exited 0"
  else
    [ "$rc" -eq "$want" ] || fail "$name: exited $rc, want $want; stderr: $(cat "$T/$name.err")"
  fi
  [ "$(wc -l <"$T/$name.err")" -eq 1 ] || fail "$name: expected one stderr line, got: $(cat "$T/$name.err")"
  grep -qE -- "$pattern" "$T/$name.err" || fail "$name: stderr does not match /$pattern/: $(cat "$T/$name.err")"
}

expect bad_size 2 '--size' -- "$NASPERF" sender --to x --size 45XB
expect unknown_flag 2 '--bogus' -- "$NASPERF" sender --to x --size 1MiB --bogus
expect unknown_flag_rx 2 '--bogus' -- "$NASPERF" receiver --target "$T" --bogus
expect small_window 2 '--window' -- "$NASPERF" sender --to x --size 1MiB --window 1KiB
expect read_mode_on_write 2 '--read-mode: only with --direction read' -- "$NASPERF" sender --to x --size 1MiB --read-mode direct
expect bad_read_mode 2 '--read-mode' -- "$NASPERF" sender --to x --size 1MiB --direction read --read-mode mmap
expect read_mode_over_sftp 2 '--read-mode: needs --transport native: over sftp the server.s page cache' -- \
  "$NASPERF" sender --transport sftp --to u@h:/d --direction read --remote-file f --read-mode direct
# The SSH login flags are the scp/sftp entries' own (transport/ssh_flags.cc): refused
# with native unless --to names a login that starts the receiver.
for flag in "--ssh-port 22" "--identity k" "--known-hosts f" "--ssh-config f" --accept-new-host-key; do
  name=${flag%% *}
  # shellcheck disable=SC2086  # the flag and its value are two words
  expect "login_flag_${name#--}_with_native" 2 "^nasperf sender: $name: only with --to \\[user@\\]host:/dir or --transport scp\\|sftp\$" -- \
    "$NASPERF" sender --to x --size 1MiB $flag
done
expect bad_ssh_port 2 '--ssh-port' -- "$NASPERF" sender --transport sftp --to u@h:/d --size 1MiB --ssh-port 70000
expect probe_no_host 2 'to' -- "$NASPERF" probe
expect probe_bad_speed 2 '--link-speed' -- "$NASPERF" probe 127.0.0.1 --link-speed fast

# No token: NASPERF_TOKEN unset and a HOME without ~/.config/nasperf/token (both an
# empty directory and an empty HOME variable).
mkdir -p "$T/emptyhome"
expect no_token_emptydir nonzero 'NASPERF_TOKEN' -- \
  env -u NASPERF_TOKEN HOME="$T/emptyhome" "$NASPERF" sender --to 127.0.0.1:1 --size 1MiB --out "$T/o1" --no-progress
expect no_token_nohome nonzero 'NASPERF_TOKEN' -- \
  env -u NASPERF_TOKEN HOME= "$NASPERF" sender --to 127.0.0.1:1 --size 1MiB --out "$T/o2" --no-progress

# A closed loopback port: start a receiver, note its port, stop it.
mkdir -p "$T/target"
start_receiver gone --target "$T/target" --min-free off
kill -TERM "$gone_PID"
wait "$gone_PID" 2>/dev/null || true
port_closed() { ! (exec 3<>"/dev/tcp/127.0.0.1/$gone_PORT") 2>/dev/null; }
wait_for "port $gone_PORT to close" 10 port_closed
expect unreachable 1 'unreachable' -- \
  "$NASPERF" sender --to 127.0.0.1:"$gone_PORT" --size 1MiB --out "$T/o3" --no-progress

expect probe_unreachable 1 'unreachable' -- "$NASPERF" probe 127.0.0.1:"$gone_PORT"

expect no_target nonzero '/nonexistent' -- "$NASPERF" receiver --target /nonexistent --listen 127.0.0.1:0
echo "ok: every command-line mistake gave one line and the right exit status"
