#!/usr/bin/env bash
# shellcheck disable=SC2154  # NAME_PID, NAME_PORT...: set by lib.sh's start_*, lab_* and cpu_group with printf -v
# TLS with no set-up, as two machines meet: the receiver and collector run with one
# HOME (the NAS), the sender, probe and flush with another (the client), so each side
# has its own key. A first contact is refused with one line that names the key and
# the flag; --accept-new-agent-key pins it; later runs need no flag; a receiver that
# comes back with another key on the same address is refused (one line, nothing
# sent); a --plaintext client is refused by a TLS receiver, and --plaintext on both
# ends works. Every refusal exits non-zero and the receiver keeps serving.
source "$(dirname "$0")/lib.sh"

nas_home=$T/nas-home client_home=$T/client-home
mkdir -p "$nas_home" "$client_home" "$T/target"
as_nas() { HOME=$nas_home "$@"; }
as_client() { HOME=$client_home "$@"; }
known=$client_home/.config/nasperf/known_agents

# one_error FILE: FILE holds exactly one line, from nasperf.
one_error() {
  [ "$(grep -c . "$1")" -eq 1 ] || fail "expected a one-line error, got: $(cat "$1")"
  grep -q '^nasperf [a-z]*: ' "$1" || fail "error line: $(cat "$1")"
}
# send TAG [flags...]: one small transfer from the client; its exit code in $rc.
send() {
  local tag=$1; shift
  rc=0
  as_client "$NASPERF" sender --to "127.0.0.1:$rx_PORT" --size 4MiB --runs 1 --no-progress --out "$T/out-$tag" "$@" \
    >"$T/$tag.out" 2>"$T/$tag.err" || rc=$?
}

as_nas start_collector col
# Not an ephemeral port: the receiver comes back on it with its data port next to it,
# and this test's own closed connections leave ephemeral source ports in TIME_WAIT,
# which a bind there cannot reuse (CI: "bind 127.0.0.1:33998: Address already in use").
free_port
as_nas start_receiver rx --target "$T/target" --min-free off --listen "127.0.0.1:$port"
grep -q "TLS key SHA256:.* (new, in $nas_home/.config/nasperf/tls.pem)" "$T/col.log" \
  || fail "the collector made no key at first start: $(cat "$T/col.log")"
fingerprint=$(as_nas "$NASPERF" fingerprint | cut -d' ' -f1)
grep -q "TLS key $fingerprint (from " "$T/rx.log" || fail "the receiver does not show the host's key $fingerprint: $(cat "$T/rx.log")"
grep -q "TLS key $fingerprint" "$T/col.log" || fail "the collector does not show the host's key $fingerprint: $(cat "$T/col.log")"
[ "$(stat -c %a "$nas_home/.config/nasperf/tls.pem")" = 600 ] || fail "tls.pem is not mode 0600"

# First contact: refused, one line naming the key and the flag; nothing pinned.
send first
[ "$rc" -ne 0 ] || fail "a sender trusted an unknown receiver key"
one_error "$T/first.err"
grep -q "$fingerprint" "$T/first.err" || fail "the refusal does not show the key: $(cat "$T/first.err")"
grep -q -- "--accept-new-agent-key" "$T/first.err" || fail "the refusal does not name the flag: $(cat "$T/first.err")"
[ ! -e "$known" ] || fail "an unknown key was pinned without the flag: $(cat "$known")"
rc=0
as_client "$NASPERF" probe "127.0.0.1:$rx_PORT" >"$T/probe.out" 2>"$T/probe.err" || rc=$?
[ "$rc" -ne 0 ] || fail "probe trusted an unknown key: $(cat "$T/probe.err")"
grep -q "not in .*known_agents" "$T/probe.err" || fail "probe trusted an unknown key: $(cat "$T/probe.err")"

# Pinned on request, then trusted without the flag.
send pin --accept-new-agent-key
[ "$rc" -eq 0 ] || fail "--accept-new-agent-key: $(cat "$T/pin.err")"
grep -qx "127.0.0.1:$rx_PORT $fingerprint" "$known" || fail "known_agents lacks the pin: $(cat "$known")"
send again --collector "127.0.0.1:$col_PORT" --accept-new-agent-key
[ "$rc" -eq 0 ] || fail "a pinned receiver and a new collector: $(cat "$T/again.err")"
grep -q "every report delivered to collector" "$T/again.out" || fail "rows did not reach the TLS collector: $(cat "$T/again.out")"
[ "$(grep -c "$fingerprint" "$known")" -eq 2 ] || fail "expected the receiver and the collector pinned: $(cat "$known")"
send pinned
[ "$rc" -eq 0 ] || fail "a pinned receiver was refused: $(cat "$T/pinned.err")"

# Plaintext client against a TLS receiver: refused, the receiver keeps serving.
send plain --plaintext
[ "$rc" -ne 0 ] || fail "a --plaintext sender got through to a TLS receiver"
grep -v -- "--plaintext: the token crosses" "$T/plain.err" >"$T/plain.err1" || true
one_error "$T/plain.err1"
alive "$rx_PID" || fail "the receiver died after a plaintext client"

# The same address comes back with another key: refused even with the flag.
stop_pids "$rx_PID"
rm "$nas_home/.config/nasperf/tls.pem"
old_port=$rx_PORT
as_nas start_receiver rx --target "$T/target" --min-free off --listen "127.0.0.1:$old_port"
[ "$rx_PORT" = "$old_port" ] || fail "the receiver did not come back on port $old_port"
new_fingerprint=$(sed -n 's/.*TLS key \(SHA256:[^ ]*\) (new.*/\1/p' "$T/rx.log")
[[ -n $new_fingerprint && $new_fingerprint != "$fingerprint" ]] || fail "no new key: $(cat "$T/rx.log")"
cp "$known" "$T/known.before"
send changed --accept-new-agent-key
[ "$rc" -ne 0 ] || fail "a changed key was accepted"
one_error "$T/changed.err"
grep -q "TLS key changed: .*known_agents line 2 says $fingerprint, it now shows $new_fingerprint" "$T/changed.err" \
  || fail "the refusal does not say what changed: $(cat "$T/changed.err")"
cmp -s "$known" "$T/known.before" || fail "known_agents changed: $(cat "$known")"
! compgen -G "$T/target/*" >/dev/null || fail "a file reached the target of an unverified receiver: $(ls "$T/target")"
alive "$rx_PID" || fail "the receiver died"

# --plaintext on both ends: works, and says what it gives up.
stop_pids "$rx_PID"
as_nas start_receiver rx --target "$T/target" --min-free off --plaintext
grep -q "PLAINTEXT" "$T/rx.log" || fail "a plaintext receiver does not say so: $(cat "$T/rx.log")"
send both-plain --plaintext
[ "$rc" -eq 0 ] || fail "plaintext on both ends: $(cat "$T/both-plain.err")"
grep -q -- "--plaintext: the token crosses the network readable" "$T/both-plain.err" \
  || fail "a plaintext sender does not warn: $(cat "$T/both-plain.err")"
echo "ok: unknown key refused ($(cat "$T/first.err"))"
echo "ok: changed key refused ($(cat "$T/changed.err"))"
