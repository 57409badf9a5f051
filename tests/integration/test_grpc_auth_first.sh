#!/usr/bin/env bash
# shellcheck disable=SC2154  # NAME_PID, NAME_PORT...: set by lib.sh's start_* with printf -v
# Issue 42, row 1 (SECURITY.md): a wrong token costs a gRPC server nothing. Each of a
# receiver, an agent and a collector (TLS, the default) takes 6 calls at once, each
# carrying the largest request the old servers read (16 MiB; the collector's 3 MiB)
# made of empty unknown fields (a parsed string per 3 bytes: ~2 GB for six Hellos
# before the token was looked at) and a wrong token. Every call must end
# UNAUTHENTICATED, refused from its metadata before the message is read (the log
# line of the auth filter says so), the server must stay alive in a 384 MiB memory
# cgroup (room for an ASan build; the old servers needed GBs and were OOM-killed),
# its peak RSS (VmHWM) within its idle peak + 48 MiB, and a call with the
# right token must still be served. A 16 MiB call refused UNAUTHENTICATED by a server
# that reads at most 64 KiB shows the token was checked before the message was read
# (after, it would be RESOURCE_EXHAUSTED); the collector, which still reads 3 MiB,
# shows the memory is not spent. A plaintext receiver, where no auth filter runs,
# refuses the same flood on size (RESOURCE_EXHAUSTED): gRPC's transport holds each
# request whole before it checks the size, up to its 64 MiB resource quota (+128 MiB).
source "$(dirname "$0")/lib.sh"
[ -x "$WIRE_CLIENT" ] || skip "no wire_client given"
need_root "a memory cgroup"

CALLS=6
SLACK_MIB=48
PLAINTEXT_SLACK_MIB=128
nasperf_in_memcg auth-first $((384 << 20))
problems=()

# flood NAME PID PORT METHOD BYTES EXPECT SLACK [--plaintext]: CALLS calls at once
# with a wrong token; each must end EXPECT, and NAME must live within SLACK MiB.
flood() {
  local name=$1 pid=$2 port=$3 method=$4 bytes=$5 expect=$6 slack=$7 base peak
  shift 7
  base=$(hwm_mib "$pid")
  if ! "$WIRE_CLIENT" 127.0.0.1:"$port" "wrong-$NASPERF_TOKEN" raw "$method" "$bytes" "$CALLS" "$expect" "$@" \
    >"$T/$name-flood.log" 2>&1; then
    problems+=("$name: $(tail -1 "$T/$name-flood.log")")
  fi
  if ! alive "$pid"; then
    problems+=("$name died under the flood (OOM kills in its cgroup: $(oom_kills))")
    return 1
  fi
  peak=$(hwm_mib "$pid")
  echo "$name: idle peak $base MiB, after $CALLS x $bytes bytes with a wrong token $peak MiB ($(cat "$T/$name-flood.log"))"
  [ "$peak" -le $((base + slack)) ] \
    || problems+=("$name: peak RSS $peak MiB after the flood, bound $((base + slack)) MiB (idle: $base MiB)")
}

old_limit=$((16 << 20))  # kMaxMessageBytes, what the control port used to read
report_limit=$((3 << 20))  # kMaxReportBytes
near() { echo $(($1 - 64)); }

# A receiver: Hellos. The right token after: a Hello still answered.
start_receiver rx --target discard
if flood receiver "$rx_PID" "$rx_PORT" /nasperf.proto.Receiver/Hello "$(near $old_limit)" UNAUTHENTICATED "$SLACK_MIB"; then
  "$WIRE_CLIENT" 127.0.0.1:"$rx_PORT" "$NASPERF_TOKEN" raw /nasperf.proto.Receiver/Hello 0 1 OK >"$T/rx-good.log" 2>&1 \
    || problems+=("receiver: a Hello with the right token after the flood: $(tail -1 "$T/rx-good.log")")
  grep -q "refused a call to /nasperf.proto.Receiver/Hello before reading it" "$T/rx.log" \
    || problems+=("receiver: no refusal from the auth filter in its log: $(grep refused "$T/rx.log" | head -2)")
fi
stop_pids "$rx_PID"

# An agent: its own service (Abort) on the receiver's port.
portfile=$T/agent.ports
"$NASPERF" agent --listen 127.0.0.1:0 --port-file "$portfile" --min-free off >"$T/agent.log" 2>&1 &
agent_PID=$!
PIDS+=("$agent_PID")
wait_port_file "agent to listen" "$portfile" "$agent_PID" "$T/agent.log"
agent_PORT=$(sed -n 's/^control=//p' "$portfile")
if flood agent "$agent_PID" "$agent_PORT" /nasperf.proto.Agent/Abort "$(near $old_limit)" UNAUTHENTICATED "$SLACK_MIB"; then
  "$WIRE_CLIENT" 127.0.0.1:"$agent_PORT" "$NASPERF_TOKEN" raw /nasperf.proto.Agent/Abort 0 1 OK >"$T/agent-good.log" 2>&1 \
    || problems+=("agent: an Abort with the right token after the flood: $(tail -1 "$T/agent-good.log")")
fi
stop_pids "$agent_PID"

# A collector: live updates (any method reads up to kMaxReportBytes). After: a report.
start_collector col
if flood collector "$col_PID" "$col_PORT" /nasperf.proto.Collector/Live "$(near $report_limit)" UNAUTHENTICATED "$SLACK_MIB"; then
  if [ -x "$COLLECTOR_CLIENT" ]; then
    "$COLLECTOR_CLIENT" 127.0.0.1:"$col_PORT" "$NASPERF_TOKEN" twice >"$T/col-good.log" 2>&1 \
      || problems+=("collector: a report with the right token after the flood: $(tail -1 "$T/col-good.log")")
  fi
fi
stop_pids "$col_PID"

# A plaintext receiver: no auth filter, so the small receive limit is the bound.
start_receiver plain --target discard --plaintext
if flood plaintext-receiver "$plain_PID" "$plain_PORT" /nasperf.proto.Receiver/Hello "$(near $old_limit)" \
  RESOURCE_EXHAUSTED "$PLAINTEXT_SLACK_MIB" --plaintext; then
  "$WIRE_CLIENT" 127.0.0.1:"$plain_PORT" "$NASPERF_TOKEN" raw /nasperf.proto.Receiver/Hello 0 1 OK --plaintext \
    >"$T/plain-good.log" 2>&1 \
    || problems+=("plaintext receiver: a Hello with the right token after the flood: $(tail -1 "$T/plain-good.log")")
fi
stop_pids "$plain_PID"

[ "${#problems[@]}" -eq 0 ] || fail "$(printf '%s; ' "${problems[@]}")"
echo "ok: $CALLS near-limit requests with a wrong token refused unread on every TLS gRPC port (+$SLACK_MIB MiB at most), on size in plaintext"
