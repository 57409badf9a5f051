#!/usr/bin/env bash
# shellcheck disable=SC2154  # NAME_PID, NAME_PORT...: set by lib.sh's start_*, lab_* and cpu_group with printf -v
# docs/DESIGN.md §5 (CSV contract): a crash never leaves a half row, and a restart continues the
# same files. A collector with 2 rows is killed, a torn partial line (no newline,
# an unterminated quote) is appended to transfers.csv as a crash mid-write would
# leave it, and the collector restarts on the same directory: the partial text is
# moved to transfers.csv.torn-*, transfers.csv ends with a newline and keeps its
# rows, and a new report lands as a clean row.
source "$(dirname "$0")/lib.sh"
[ -x "$COLLECTOR_CLIENT" ] || skip "no collector_client given"

free_port   # not an ephemeral port: the restart must find it still free
start_collector col --listen 127.0.0.1:"$port"
"$COLLECTOR_CLIENT" 127.0.0.1:"$col_PORT" "$NASPERF_TOKEN" twice >"$T/cc.log" 2>&1 || fail "twice: $(cat "$T/cc.log")"
"$COLLECTOR_CLIENT" 127.0.0.1:"$col_PORT" "$NASPERF_TOKEN" twice >"$T/cc.log" 2>&1 || fail "twice: $(cat "$T/cc.log")"
csv=$T/col/transfers.csv
[ "$(($(wc -l <"$csv") - 1))" -eq 2 ] || fail "expected 2 rows before the crash: $(cat "$csv")"
kill -KILL "$col_PID"
wait "$col_PID" 2>/dev/null || true
before=$(cat "$csv")
fields=$(head -1 "$csv" | awk -F, '{print NF}')

torn='run1,lab,"unterminated'
printf '%s' "$torn" >>"$csv"

start_collector col --listen 127.0.0.1:"$col_PORT"
alive "$col_PID" || fail "collector did not restart over a torn line: $(tail -3 "$T/col.log")"
shopt -s nullglob
aside=("$T"/col/transfers.csv.torn-*)
shopt -u nullglob
[ "${#aside[@]}" -eq 1 ] || fail "expected one transfers.csv.torn-* file, got: $(ls "$T/col")"
[ "$(cat "${aside[0]}")" = "$torn" ] || fail "the torn file holds '$(cat "${aside[0]}")', want '$torn'"
[ "$(tail -c 1 "$csv" | od -An -c | tr -d ' ')" = '\n' ] || fail "transfers.csv does not end with a newline"
[ "$(cat "$csv")" = "$before" ] || fail "transfers.csv changed beyond the torn line: $(cat "$csv")"
grep -q "2 rows already there" "$T/col.log" || fail "restart did not find the 2 rows: $(tail -3 "$T/col.log")"

"$COLLECTOR_CLIENT" 127.0.0.1:"$col_PORT" "$NASPERF_TOKEN" twice >"$T/cc.log" 2>&1 || fail "twice after restart: $(cat "$T/cc.log")"
[ "$(($(wc -l <"$csv") - 1))" -eq 3 ] || fail "expected 3 rows after the restart: $(cat "$csv")"
[ "$(grep -c '^run_id,' "$csv")" -eq 1 ] || fail "header not exactly once"
bad=$(awk -F, -v n="$fields" 'NF != n { print NR": "$0 }' "$csv")
[ -z "$bad" ] || fail "rows with other than $fields fields: $bad"
grep -q unterminated "$csv" && fail "the torn text is still in transfers.csv"
echo "ok: torn line set aside in ${aside[0]##*/}; rows kept; a new row is clean"
