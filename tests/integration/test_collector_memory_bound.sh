#!/usr/bin/env bash
# shellcheck disable=SC2154  # NAME_PID, NAME_PORT...: set by lib.sh's start_* with printf -v
# Issue 29, row 6 (SECURITY.md): a collector's memory is bounded by its own limits,
# not by what peers send or what its directory already holds. In a 512 MiB memory
# cgroup a collector starts on a 64 MiB transfers.csv, takes four reports at once with
# the most samples a report may carry (16384, the longest label and host: 9 MB of
# sample rows each), then four at once with a million samples (the old limit: some
# 560 MB of rows each, 11 MB on the wire). It must not be OOM-killed, must store a
# normal report after, and its peak RSS (VmHWM) must stay within an idle collector's
# plus 128 MiB: room for gRPC holding four 11 MB messages at once before it refuses
# them on size (~44 MB), four full reports parsed at once (~20 MB), 16 bytes per
# earlier row (~9 MB) and the allocator's per-thread slack (runs here: +55 to +73
# MiB). At start the bound is tighter: the idle peak + 4 MiB (two
# pieces of the file) + 40 bytes per earlier row (its key's digest in the set).
source "$(dirname "$0")/lib.sh"
[ -x "$COLLECTOR_CLIENT" ] || skip "no collector_client given"
need_root "a memory cgroup"
nasperf_in_memcg collector $((512 << 20))

# An idle collector: its peak after one small report is the base.
start_collector idle
"$COLLECTOR_CLIENT" 127.0.0.1:"$idle_PORT" "$NASPERF_TOKEN" twice >"$T/cc.log" 2>&1 \
  || fail "a small report to an idle collector: $(cat "$T/cc.log")"
base=$(hwm_mib "$idle_PID")
bound=$((base + 128))
stop_pids "$idle_PID"

# 64 MiB of earlier rows, each with a run of its own.
mkdir -p "$T/col"
head -1 "$T/idle/transfers.csv" >"$T/col/transfers.csv"
row=$(sed -n 2p "$T/idle/transfers.csv")
rows=$(((64 << 20) / (${#row} + 1)))
awk -v rest="${row#*,}" -v n="$rows" 'BEGIN { for (i = 0; i < n; i++) printf "old-%d,%s\n", i, rest }' \
  >>"$T/col/transfers.csv"

problems=()
start_collector col
addr=127.0.0.1:$col_PORT
grep -q "($rows rows already there)" "$T/col.log" || problems+=("the restart did not find the $rows rows: $(head -3 "$T/col.log")")
# At start: two 1 MiB pieces of the file, and a digest set of at most 40 bytes a row.
start_bound=$((base + 4 + rows * 40 / 1048576))
start_peak=$(hwm_mib "$col_PID")
[ "$start_peak" -le "$start_bound" ] \
  || problems+=("starting on a 64 MiB transfers.csv ($rows rows): peak RSS $start_peak MiB, bound $start_bound MiB (idle: $base MiB)")

"$COLLECTOR_CLIENT" "$addr" "$NASPERF_TOKEN" big 4 16384 >"$T/big.log" 2>&1 \
  || problems+=("four full reports at once: $(tail -1 "$T/big.log")")
grep -q '^stored=4 ' "$T/big.log" || problems+=("four full reports at once were not all stored: $(tail -1 "$T/big.log")")
if alive "$col_PID"; then
  peak=$(hwm_mib "$col_PID")
  [ "$peak" -le "$bound" ] || problems+=("peak RSS $peak MiB after four full reports, bound $bound MiB (idle: $base MiB)")
fi
"$COLLECTOR_CLIENT" "$addr" "$NASPERF_TOKEN" big 4 1000000 >"$T/huge.log" 2>&1 \
  || problems+=("four million-sample reports at once: $(tail -1 "$T/huge.log")")
grep -q 'refused=4$' "$T/huge.log" || problems+=("million-sample reports were not refused: $(tail -1 "$T/huge.log")")

if alive "$col_PID"; then
  peak=$(hwm_mib "$col_PID")
  [ "$peak" -le "$bound" ] || problems+=("peak RSS $peak MiB after the million-sample reports, bound $bound MiB (idle: $base MiB)")
  "$COLLECTOR_CLIENT" "$addr" "$NASPERF_TOKEN" twice >"$T/cc.log" 2>&1 \
    || problems+=("a normal report after the big ones: $(cat "$T/cc.log")")
else
  problems+=("the collector died (OOM kills in its cgroup: $(oom_kills))")
fi
[ "${#problems[@]}" -eq 0 ] || fail "$(printf '%s; ' "${problems[@]}")"
echo "ok: peak RSS $start_peak MiB at start on $rows rows (bound $start_bound), $peak MiB after the big reports (bound $bound; idle $base)"
