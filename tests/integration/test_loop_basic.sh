#!/usr/bin/env bash
# shellcheck disable=SC2154  # NAME_PID, NAME_PORT...: set by lib.sh's start_*, lab_* and cpu_group with printf -v
# Issue 2 "done when": a 3-run loop of a 256 MiB file gives 3 sender + 3 receiver
# rows with status ok, the contract columns in order, and (--cleanup never) three
# files byte-identical to the source.
source "$(dirname "$0")/lib.sh"

mkdir -p "$T/target"
start_receiver rx --target "$T/target" --min-free 0
head -c 256M /dev/urandom >"$T/src.bin"

"$NASPERF" sender --to 127.0.0.1:"$rx_PORT" --file "$T/src.bin" --runs 3 --cleanup never \
  --verify --label basic --out "$T/out" --no-progress >"$T/sender.log" 2>&1 \
  || fail "sender exited non-zero: $(tail -5 "$T/sender.log")"

expected="run_id,label,iteration,stream,role,host,peer,transport,bytes,started_at,duration_s,mb_per_s,first_byte_s,write_s,sync_s,net_wait_pct,disk_wait_pct,bottleneck,write_mode,sync_policy,mtu,path_mtu,mss,link_mbps,line_rate_pct,checksum,verified,status,error"
header=$(head -1 "$T/out/transfers.csv")
[[ "$header" == "$expected"* ]] || fail "transfers.csv header is not the contract: $header"

rows=$(($(wc -l <"$T/out/transfers.csv") - 1))
[ "$rows" -eq 6 ] || fail "expected 6 rows, got $rows"
[ "$(csv_col "$T/out/transfers.csv" role | sort | uniq -c | awk '{print $1 $2}' | tr '\n' ' ')" = "3receiver 3sender " ] \
  || fail "expected 3 sender and 3 receiver rows"
[ "$(csv_col "$T/out/transfers.csv" status | sort -u)" = "ok" ] || fail "not every row is ok"
# verified is the sender's comparison; the receiver's rows carry their checksum only.
[ "$(paste -d, <(csv_col "$T/out/transfers.csv" role) <(csv_col "$T/out/transfers.csv" verified) | sort -u | tr '\n' ' ')" = "receiver, sender,true " ] \
  || fail "sender rows must say verified=true, receiver rows leave it empty"
[ "$(csv_col "$T/out/transfers.csv" checksum | sort -u | wc -l)" -eq 1 ] || fail "checksums differ between rows"
[ "$(csv_col "$T/out/transfers.csv" bytes | sort -u)" = "268435456" ] || fail "byte counts differ"

files=("$T"/target/nasperf-*.dat)
[ "${#files[@]}" -eq 3 ] || fail "expected 3 files in the target, found ${#files[@]}"
for f in "${files[@]}"; do cmp -s "$T/src.bin" "$f" || fail "$f differs from the source"; done
grep -q "summary: 3 transfers measured" "$T/sender.log" || fail "no summary on the console"
echo "ok: 6 rows, 3 identical files"
