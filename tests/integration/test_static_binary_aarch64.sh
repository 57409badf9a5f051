#!/usr/bin/env bash
# Issue 13: the aarch64 build of the self-contained binary (NASPERF_AARCH64=1
# scripts/package.sh) runs a receiver and a sender against each other over loopback
# under qemu-aarch64-static, `localhost` resolved, with ok rows in the CSV.
source "$(dirname "$0")/lib.sh"
src=$(cd "$(dirname "$0")/../.." && pwd)
binary=$(newest "$src"/dist/nasperf-*-linux-aarch64)
[ -n "$binary" ] || skip "no dist/nasperf-*-linux-aarch64: NASPERF_AARCH64=1 scripts/package.sh builds it"
command -v qemu-aarch64-static >/dev/null || skip "no qemu-aarch64-static (package qemu-user-static)"

file "$binary" | grep -q "ARM aarch64.*statically linked" || fail "$binary: $(file -b "$binary")"
arm() { qemu-aarch64-static "$binary" "$@"; }
arm --version | grep -q "static, aarch64" || fail "--version: $(arm --version)"
# Started as a plain command, not through arm(): a function put in the background
# runs in a subshell, so $! (and the cleanup's kill) would reach the subshell and
# leave the receiver running.
qemu-aarch64-static "$binary" receiver --target "$T" --min-free 0 --listen 127.0.0.1:0 --port-file "$T/ports" \
  >"$T/rx.log" 2>&1 &
PIDS+=($!)
wait_port_file "the aarch64 receiver to listen" "$T/ports" "$!" "$T/rx.log"
port=$(sed -n 's/^control=//p' "$T/ports")
arm sender --to "localhost:$port" --size 16MiB --runs 2 --out "$T/out" --no-progress --accept-new-agent-key \
  >"$T/tx.log" 2>&1 || fail "the aarch64 sender failed: $(tail -5 "$T/tx.log")"
[ "$(csv_col "$T/out/transfers.csv" status | sort | uniq -c | tr -s ' ')" = " 4 ok" ] || fail "not 4 ok rows"
echo "ok: $(basename "$binary") ($(( $(stat -c %s "$binary") / 1024 / 1024 )) MiB) ran receiver and sender under qemu"
