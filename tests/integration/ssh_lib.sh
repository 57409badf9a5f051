# shellcheck shell=bash
# Helpers for the scp/sftp tests: a real OpenSSH sshd on a loopback high port with
# throwaway keys (recipe in TOOLCHAIN.md), and a client side that never touches the
# real ~/.ssh (own known_hosts, ssh_config, identity; no ssh-agent). Sourced after
# lib.sh. Needs root (sshd's privilege separation) and /usr/sbin/sshd.
need_root "a real sshd needs root for privilege separation"
[ -x /usr/sbin/sshd ] || skip "no /usr/sbin/sshd (openssh-server)"
unset SSH_AUTH_SOCK SSH_AGENT_PID   # the test's keys only, never a developer's agent

SSHD_DIR=$T/sshd
CLIENT_DIR=$T/client
mkdir -p "$SSHD_DIR" "$CLIENT_DIR" "$T/remote"
install -d -m0755 /run/sshd
ssh-keygen -q -t ed25519 -N '' -C nasperf-test-host -f "$SSHD_DIR/host_ed25519"
ssh-keygen -q -t ed25519 -N '' -C nasperf-test-user -f "$CLIENT_DIR/id_ed25519"
cp "$CLIENT_DIR/id_ed25519.pub" "$SSHD_DIR/authorized_keys"
: >"$CLIENT_DIR/ssh_config"
KNOWN_HOSTS=$CLIENT_DIR/known_hosts
IDENTITY=$CLIENT_DIR/id_ed25519
# shellcheck disable=SC2034  # used by the tests that source this file
HOST_FINGERPRINT=$(ssh-keygen -lf "$SSHD_DIR/host_ed25519.pub" | awk '{print $2}')

# start_sshd: sshd on a free loopback port; sets SSHD_PID and SSHD_PORT. The same
# host key every time, so a restarted sshd is the same "NAS". SSHD_SETENV: more
# NAME=VALUE words for the sessions' environment (e.g. XDG_CACHE_HOME). SSHD_NETNS: a
# network namespace of the test's to listen in (its loopback), else this one's.
start_sshd() {
  local in_ns=()
  [ -z "${SSHD_NETNS:-}" ] || in_ns=(nsenter "--net=/run/netns/$SSHD_NETNS")
  # sshd cannot take port 0: a port picked free can still be taken before sshd
  # binds it, so a bind failure picks another (a few times, then fails).
  for _ in 1 2 3 4 5; do
    free_port
    # shellcheck disable=SC2154  # port: set by lib.sh's free_port (lib.sh is sourced first)
    SSHD_PORT=$port
    cat >"$SSHD_DIR/sshd_config" <<EOF
Port $SSHD_PORT
ListenAddress 127.0.0.1
HostKey $SSHD_DIR/host_ed25519
AuthorizedKeysFile $SSHD_DIR/authorized_keys
PidFile $SSHD_DIR/sshd.pid
StrictModes no
UsePAM no
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
Subsystem sftp internal-sftp
SetEnv SHLVL=1 ${NASPERF_SUITE_RUN:+NASPERF_SUITE_RUN=$NASPERF_SUITE_RUN} ${SSHD_SETENV:-}
UseDNS no
EOF
    /usr/sbin/sshd -t -f "$SSHD_DIR/sshd_config" || fail "sshd -t rejected the config"
    : >"$T/sshd.log"
    "${in_ns[@]}" /usr/sbin/sshd -f "$SSHD_DIR/sshd_config" -D -e 2>>"$T/sshd.log" &
    SSHD_PID=$!
    # shellcheck disable=SC2317  # called by wait_for, through "$@"
    sshd_up_or_dead() { grep -q "Server listening" "$T/sshd.log" || ! alive "$SSHD_PID"; }
    wait_for "sshd to listen on $SSHD_PORT" 20 sshd_up_or_dead
    if grep -q "Server listening" "$T/sshd.log"; then
      CLEANUPS+=("kill_sshd")   # not in PIDS: its session children must go with it
      return 0
    fi
    wait "$SSHD_PID" 2>/dev/null || true
  done
  fail "sshd did not start: $(tail -3 "$T/sshd.log")"
}

# kill_sshd: SIGKILL to sshd and every session process it forked, then reap it.
kill_sshd() {
  local below
  mapfile -t below < <(descendants "$SSHD_PID")
  kill -KILL "$SSHD_PID" "${below[@]}" 2>/dev/null || true
  wait "$SSHD_PID" 2>/dev/null || true
}

# ssh_sender TRANSPORT [flags...]: nasperf sender toward the test sshd with the
# test's own client files; the key is $IDENTITY.
ssh_sender() {
  local transport=$1; shift
  "$NASPERF" sender --transport "$transport" --to "root@127.0.0.1:$T/remote" --ssh-port "$SSHD_PORT" \
    --identity "$IDENTITY" --known-hosts "$KNOWN_HOSTS" --ssh-config "$CLIENT_DIR/ssh_config" \
    --no-progress "$@"
}

# trust_sshd: the host key in known_hosts, as after a first accepted login.
trust_sshd() {
  echo "[127.0.0.1]:$SSHD_PORT $(cut -d' ' -f1,2 "$SSHD_DIR/host_ed25519.pub")" >"$KNOWN_HOSTS"
}
