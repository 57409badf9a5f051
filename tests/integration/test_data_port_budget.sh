#!/usr/bin/env bash
# shellcheck disable=SC2154  # NAME_PID, NAME_PORT...: set by lib.sh's start_* with printf -v
# Issue 29, row 2: a slow-header flood on the data port from many addresses, which
# holds its ground (every connection the receiver closes is opened again). 16
# connections from each of 29 addresses (127.0.0.2..30) would fill all 256 slots
# under the per-address cap alone; the receiver must hold at most 64 of them (its
# budget for connections without a header), so real transfers from 127.0.0.1 go
# through while the flood holds on. As root, in a network namespace of its own, the
# same from 20 addresses of one IPv6 /64 (fd00::2..21), which count as one source:
# at most 16 held, and a real transfer from ::1 goes through.
# The 5c05ba9 receiver fails this test: the flood holds 256 connections and the
# sender's are closed at accept.
source "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || skip "python3 is not installed"
FLOOD=$(dirname "$0")/connection_flood.py
UNADMITTED_BUDGET=64 # ConnectionLimits in receiver/data_listener.h
PER_SOURCE=16

# flood_and_transfer NAME DATA_PORT CONTROL_ADDRESS SOURCES MAX_HELD RX_PID [netns...]:
# the hold flood from SOURCES, three real transfers while it holds on, then the
# flood's own count of the connections the receiver RX_PID held at most (no more than
# MAX_HELD may be: one accepted just before the receiver closes it counts too, hence
# +1 in the callers).
flood_and_transfer() {
  local name=$1 data=$2 control=$3 sources=$4 max_held=$5 rx_pid=$6
  shift 6
  local ready=$T/$name.flood.ready out=$T/$name.flood.out flood
  "$@" python3 "$FLOOD" hold "$data" "$PER_SOURCE" 180 "$sources" "$ready" "$rx_pid" >"$out" 2>&1 &
  flood=$!
  PIDS+=("$flood")
  wait_for "the $name flood to open its connections" 60 test -s "$ready"
  echo "$name flood: $(cat "$ready") connections opened from $(tr ',' '\n' <<<"$sources" | wc -l) addresses"

  "$@" "$NASPERF" sender --to "$control" --size 16MiB --runs 3 --out "$T/$name.out" --no-progress \
    >"$T/$name.sender.log" 2>&1 || fail "$name: a real transfer failed during the flood: $(tail -5 "$T/$name.sender.log")"
  [ "$(csv_role_col "$T/$name.out/transfers.csv" receiver status | grep -c '^ok$')" -eq 3 ] ||
    fail "$name: expected 3 ok receiver rows"
  alive "$flood" || fail "$name: the flood ended before the transfers did: $(cat "$out")"

  kill -TERM "$flood"
  wait_pid "the $name flood to stop" 30 "$flood" || fail "$name: the flood script failed: $(cat "$out")"
  local connected closed reopened held
  read -r _ connected _ closed _ reopened _ held <"$out"
  echo "$name flood: $connected connected, $closed closed by the receiver, $reopened reopened, at most $held held at once"
  [ "$held" -le "$max_held" ] || fail "$name: the receiver held $held flood connections at once (at most $max_held)"
  [ "$closed" -ge $((connected - max_held)) ] || fail "$name: only $closed of $connected flood connections were closed"
}

# The receiver's final line: the flood was closed as over the limits, and its log
# was throttled.
final_counts() {
  local name=$1 pid=$2 line over logged
  kill -TERM "$pid"
  wait_pid "the $name receiver to stop" 30 "$pid" || true
  line=$(grep "over the connection limits" "$T/$name.log") || fail "$name: no final counts line: $(tail -3 "$T/$name.log")"
  echo "$name: $line"
  over=$(sed -E 's/.* ([0-9]+) over the connection limits.*/\1/' <<<"$line")
  [ "$over" -ge 1 ] || fail "$name: no connection counted over the limits: $line"
  logged=$(grep -c "refused data connection" "$T/$name.log" || true)
  [ "$logged" -le 40 ] || fail "$name: $logged refusal lines for one flood: the log is not throttled"
}

mkdir -p "$T/target"
start_receiver rx --target "$T/target" --min-free off
sources=$(seq -s, -f '127.0.0.%g' 2 30)
flood_and_transfer v4 "$rx_DATA" 127.0.0.1:"$rx_PORT" "$sources" $((UNADMITTED_BUDGET + 1)) "$rx_PID"
final_counts rx "$rx_PID"
echo "ok: IPv4: real transfers through a slow-header flood from 29 addresses; at most $UNADMITTED_BUDGET held"

if [ "$(id -u)" -ne 0 ]; then
  echo "skipped the IPv6 part: adding addresses to a network namespace's loopback needs root"
  exit 0
fi
ns=nasperf-budget-$$
ip netns add "$ns" || { echo "skipped the IPv6 part: ip netns add failed"; exit 0; }
CLEANUPS+=("ip netns del '$ns'")
ip -n "$ns" link set lo up
for i in $(seq 2 21); do ip -n "$ns" -6 addr add "fd00::$i/64" dev lo nodad; done
ip netns exec "$ns" "$NASPERF" receiver --listen '[::1]:0' --port-file "$T/rx6.ports" --target discard \
  >"$T/rx6.log" 2>&1 &
rx6=$!
PIDS+=("$rx6")
wait_port_file "the IPv6 receiver to listen" "$T/rx6.ports" "$rx6" "$T/rx6.log"
sources=$(seq -s, -f 'fd00::%g' 2 21)
flood_and_transfer v6 "$(sed -n 's/^data=//p' "$T/rx6.ports")" "[::1]:$(sed -n 's/^control=//p' "$T/rx6.ports")" \
  "$sources" $((PER_SOURCE + 1)) "$rx6" ip netns exec "$ns"
final_counts rx6 "$rx6"
echo "ok: IPv6: 20 addresses of one /64 count as one source; at most $PER_SOURCE held; real transfers from ::1 went through"
