#!/usr/bin/env bash
# shellcheck disable=SC2154  # NAME_PID, NAME_PORT...: set by lib.sh's start_*, lab_* and cpu_group with printf -v
# docs/DESIGN.md §5 (CSV contract) under load: 8 reporters x 200 distinct reports at once. Every
# report is stored (none lost, none taken for a duplicate), each row is whole
# (as many fields as the header: rows written concurrently never interleave), and
# every report's 3 samples are there.
source "$(dirname "$0")/lib.sh"
[ -x "$COLLECTOR_CLIENT" ] || skip "no collector_client given"

start_collector col
"$COLLECTOR_CLIENT" 127.0.0.1:"$col_PORT" "$NASPERF_TOKEN" flood 8 200 >"$T/flood.log" 2>&1 \
  || fail "flood: $(cat "$T/flood.log")"

csv=$T/col/transfers.csv
samples=$T/col/samples.csv
rows=$(($(wc -l <"$csv") - 1))
[ "$rows" -eq 1600 ] || fail "expected 1600 rows, got $rows"
[ "$(grep -c '^run_id,' "$csv")" -eq 1 ] || fail "header not exactly once"
fields=$(head -1 "$csv" | awk -F, '{print NF}')
bad=$(awk -F, -v n="$fields" 'NR > 1 && NF != n { print NR": "$0 }' "$csv" | head -3)
[ -z "$bad" ] || fail "rows with other than $fields fields: $bad"
[ "$(tail -c 1 "$csv" | od -An -c | tr -d ' ')" = '\n' ] || fail "transfers.csv does not end with a newline"
keys=$(paste -d'|' <(csv_col "$csv" iteration) <(csv_col "$csv" stream) | sort -u | grep -c .)
[ "$keys" -eq 1600 ] || fail "expected 1600 distinct (iteration, stream), got $keys"

srows=$(($(wc -l <"$samples") - 1))
[ "$srows" -eq 4800 ] || fail "expected 4800 sample rows, got $srows"
sfields=$(head -1 "$samples" | awk -F, '{print NF}')
sbad=$(awk -F, -v n="$sfields" 'NR > 1 && NF != n { print NR": "$0 }' "$samples" | head -3)
[ -z "$sbad" ] || fail "sample rows with other than $sfields fields: $sbad"
console_rows() { [ "$(grep -cE '^(sender|receiver) ' "$T/col.log" || true)" -ge 1600 ]; }
wait_for "1600 console lines" 10 console_rows
alive "$col_PID" || fail "collector died"
echo "ok: $(cat "$T/flood.log")"
