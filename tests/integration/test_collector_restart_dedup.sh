#!/usr/bin/env bash
# shellcheck disable=SC2154  # NAME_PID, NAME_PORT...: set by lib.sh's start_*, lab_* and cpu_group with printf -v
# docs/DESIGN.md §5 (CSV contract): "a restart continues the same files without duplicating ...
# any row", also for a report resent after the restart (the collector crashed after
# writing a row but before its ack reached the agent). The agents run with a host
# name that starts with '=', so the host cell is stored escaped ('=nas): the keys a
# restarted collector rebuilds from the file must still match the reports.
# Simulated ack loss: the spooled reports are copied before delivery and put back
# after the collector was SIGKILLed and restarted.
source "$(dirname "$0")/lib.sh"
need_root "a host name of its own (unshare --uts)"
command -v unshare >/dev/null || skip "no unshare"

# nasperf in a UTS namespace of its own whose host name is "=nas" (same pid: exec).
as_host=$T/nasperf-as-host
cat >"$as_host" <<WRAP
#!/bin/sh
exec unshare --uts sh -c 'printf %s "=nas" >/proc/sys/kernel/hostname && exec "\$0" "\$@"' "$NASPERF" "\$@"
WRAP
chmod +x "$as_host"
unshare --uts sh -c 'printf %s "=nas" >/proc/sys/kernel/hostname' 2>/dev/null || skip "cannot set a host name"

# A port where nothing listens yet: the reports wait in the spool.
free_port

mkdir -p "$T/target"
real_nasperf=$NASPERF
NASPERF=$as_host start_receiver rx --target "$T/target" --min-free off --collector 127.0.0.1:"$port"
NASPERF=$real_nasperf
"$as_host" sender --to 127.0.0.1:"$rx_PORT" --size 4MiB --runs 1 --collector 127.0.0.1:"$port" \
  --out "$T/local" --no-progress >"$T/sender.log" 2>&1 || fail "sender failed: $(tail -5 "$T/sender.log")"
kill -TERM "$rx_PID"
wait "$rx_PID" 2>/dev/null || true
spool=$HOME/.local/state/nasperf/spool/127.0.0.1_$port
mkdir -p "$T/copy"
cp "$spool"/*.report "$T/copy/" || fail "nothing spooled in $spool"

start_collector col --listen 127.0.0.1:"$port"
"$NASPERF" flush --collector 127.0.0.1:"$port" --wait 20s >"$T/flush.log" 2>&1 \
  || fail "flush: $(cat "$T/flush.log")"
csv=$T/col/transfers.csv
[ "$(($(wc -l <"$csv") - 1))" -eq 2 ] || fail "expected 2 rows: $(cat "$csv")"
[ "$(csv_col "$csv" host | sort -u)" = "'=nas" ] || fail "host cells: $(csv_col "$csv" host | sort -u)"

kill -KILL "$col_PID"
wait "$col_PID" 2>/dev/null || true
cp "$T"/copy/*.report "$spool"/
start_collector col --listen 127.0.0.1:"$port"
"$NASPERF" flush --collector 127.0.0.1:"$port" --wait 20s >"$T/flush.log" 2>&1 \
  || fail "flush after the restart: $(cat "$T/flush.log")"
rows=$(($(wc -l <"$csv") - 1))
[ "$rows" -eq 2 ] || fail "reports resent after a restart were written again: $rows rows, want 2:
$(cut -d, -f1-6 "$csv")"
echo "ok: resent reports with an escaped host cell are not duplicated across a restart"
