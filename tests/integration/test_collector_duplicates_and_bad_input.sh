#!/usr/bin/env bash
# shellcheck disable=SC2154  # NAME_PID, NAME_PORT...: set by lib.sh's start_*, lab_* and cpu_group with printf -v
# docs/DESIGN.md §5 (CSV contract): Report is idempotent, and the collector survives bad input.
# The same report twice is written once; malformed reports are refused with
# INVALID_ARGUMENT, a wrong token with UNAUTHENTICATED, neither writes a row; random
# bytes on the port do not kill the collector, which still takes reports after.
source "$(dirname "$0")/lib.sh"
[ -x "$COLLECTOR_CLIENT" ] || skip "no collector_client given"

start_collector col
addr=127.0.0.1:$col_PORT
csv=$T/col/transfers.csv
data_rows() { echo $(($(wc -l <"$csv") - 1)); }

"$COLLECTOR_CLIENT" "$addr" "$NASPERF_TOKEN" twice >"$T/cc.log" 2>&1 \
  || fail "twice: $(cat "$T/cc.log")"
[ "$(data_rows)" -eq 1 ] || fail "after the same report twice: $(data_rows) rows, want 1: $(cat "$csv")"
[ "$(csv_col "$csv" run_id | grep -c '^cc-')" -eq 1 ] || fail "the report's run is not there once: $(cat "$csv")"
samples=$(($(wc -l <"$T/col/samples.csv") - 1))
[ "$samples" -eq 3 ] || fail "after the same report twice: $samples sample rows, want 3"

"$COLLECTOR_CLIENT" "$addr" "$NASPERF_TOKEN" malformed >"$T/cc.log" 2>&1 \
  || fail "malformed: $(cat "$T/cc.log")"
"$COLLECTOR_CLIENT" "$addr" "$NASPERF_TOKEN" wrong-token >"$T/cc.log" 2>&1 \
  || fail "wrong-token: $(cat "$T/cc.log")"
[ "$(data_rows)" -eq 1 ] || fail "refused reports wrote rows: $(cat "$csv")"
[ "$(($(wc -l <"$T/col/samples.csv") - 1))" -eq 3 ] || fail "refused reports wrote samples"
alive "$col_PID" || fail "collector died after malformed reports"

# Garbage on the gRPC port: not HTTP/2 at all.
for _ in 1 2 3; do
  head -c 4096 /dev/urandom >/dev/tcp/127.0.0.1/"$col_PORT" 2>/dev/null || true
done
# and an HTTP/2 preface followed by garbage. A subshell: the TLS port may close
# before the last byte, and the SIGPIPE must end the writer, not this script.
( printf 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'; head -c 4096 /dev/urandom ) >/dev/tcp/127.0.0.1/"$col_PORT" 2>/dev/null || true
alive "$col_PID" || fail "collector died after random bytes on its port"

"$COLLECTOR_CLIENT" "$addr" "$NASPERF_TOKEN" twice >"$T/cc.log" 2>&1 \
  || fail "twice after the garbage: $(cat "$T/cc.log")"
[ "$(data_rows)" -eq 2 ] || fail "after a second run: $(data_rows) rows, want 2: $(cat "$csv")"
[ "$(csv_col "$csv" run_id | sort -u | grep -c .)" -eq 2 ] || fail "expected 2 distinct runs"
fields=$(head -1 "$csv" | awk -F, '{print NF}')
awk -F, -v n="$fields" 'NF != n { exit 1 }' "$csv" || fail "a row with the wrong number of fields"
alive "$col_PID" || fail "collector died"
echo "ok: duplicate written once; malformed and wrong-token refused, no rows; collector survives garbage"
