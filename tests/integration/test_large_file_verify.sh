#!/usr/bin/env bash
# shellcheck disable=SC2154  # NAME_PID, NAME_PORT...: set by lib.sh's start_*, lab_* and cpu_group with printf -v
# docs/DESIGN.md §6 (measurement semantics) and §5 (CSV contract: checksum, verified): a real
# 1 GiB file (--file) with --verify arrives byte-identical; both the sender and the receiver
# row are ok, the sender verified=true and carry the full byte count.
source "$(dirname "$0")/lib.sh"

mkdir -p "$T/target"
start_receiver rx --target "$T/target" --min-free off
head -c 1G /dev/urandom >"$T/src.bin"

"$NASPERF" sender --to 127.0.0.1:"$rx_PORT" --file "$T/src.bin" --runs 1 --cleanup never --verify \
  --out "$T/out" --no-progress >"$T/sender.log" 2>&1 \
  || fail "sender exited non-zero: $(tail -5 "$T/sender.log")"

files=("$T"/target/nasperf-*.dat)
[[ ${#files[@]} -eq 1 && -f ${files[0]} ]] || fail "expected one file in the target: $(ls "$T/target")"
cmp -s "$T/src.bin" "${files[0]}" || fail "${files[0]} differs from the source"

csv=$T/out/transfers.csv
[ "$(($(wc -l <"$csv") - 1))" -eq 2 ] || fail "expected 2 rows: $(cat "$csv")"
[ "$(csv_col "$csv" role | sort | tr '\n' ' ')" = "receiver sender " ] || fail "expected one sender and one receiver row"
[ "$(csv_col "$csv" status | sort -u)" = "ok" ] || fail "not every row is ok"
[ "$(csv_role_col "$csv" sender verified | sort -u)" = "true" ] || fail "the sender row is not verified=true"
[ "$(csv_col "$csv" bytes | sort -u)" = "1073741824" ] || fail "byte counts are not 1 GiB: $(csv_col "$csv" bytes | tr '\n' ' ')"
[[ $(csv_col "$csv" checksum | sort -u | wc -l) -eq 1 && -n $(csv_col "$csv" checksum | head -1) ]] \
  || fail "sender and receiver checksums differ or are empty: $(csv_col "$csv" checksum | tr '\n' ' ')"
echo "ok: 1 GiB file identical, both rows ok and verified"
