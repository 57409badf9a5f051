#!/usr/bin/env bash
# Issue 13: the self-contained binary (scripts/package.sh) works with nothing else on
# the machine. It is copied alone into an empty directory (plus /etc/hosts, /dev/null
# and /tmp), chrooted into, and runs a receiver and a sender against each other over
# loopback, `localhost` resolved there, with ok rows in the CSV. It says it is static.
source "$(dirname "$0")/lib.sh"
need_root "chroot and a bind mount"
src=$(cd "$(dirname "$0")/../.." && pwd)
binary=$(newest "$src"/dist/nasperf-*-linux-"$(uname -m)")
[ -n "$binary" ] || skip "no dist/nasperf-*-linux-$(uname -m): run scripts/package.sh first (test.sh does)"

file "$binary" | grep -q "statically linked" || fail "$binary is not statically linked: $(file -b "$binary")"
{ ldd "$binary" 2>&1 || true; } | grep -q "not a dynamic executable" || fail "ldd finds libraries in $binary"
"$binary" --version | grep -q "static" || fail "--version does not say static: $("$binary" --version)"

root=$T/root
mkdir -p "$root/bin" "$root/etc" "$root/dev" "$root/tmp"
cp "$binary" "$root/bin/nasperf"
echo "127.0.0.1 localhost" >"$root/etc/hosts"
touch "$root/dev/null"
mount --bind /dev/null "$root/dev/null" || fail "bind-mount /dev/null"
CLEANUPS+=("umount -l '$root/dev/null'")
listing=$(cd "$root" && find . -mindepth 1 -not -path './tmp/*' | sort | tr '\n' ' ')
[ "$listing" = "./bin ./bin/nasperf ./dev ./dev/null ./etc ./etc/hosts ./tmp " ] || fail "the chroot holds more: $listing"

in_root() { HOME=/tmp/home chroot "$root" /bin/nasperf "$@"; }
# A plain command in the background, not in_root: a backgrounded function runs in a
# subshell, so $! (and the cleanup's kill) would reach the subshell, not the receiver.
HOME=/tmp/home chroot "$root" /bin/nasperf receiver --target /tmp --min-free 0 --listen 127.0.0.1:0 \
  --port-file /tmp/ports >"$T/rx.log" 2>&1 &
PIDS+=($!)
wait_port_file "the chrooted receiver to listen" "$root/tmp/ports" "$!" "$T/rx.log"
port=$(sed -n 's/^control=//p' "$root/tmp/ports")
in_root sender --to "localhost:$port" --size 32MiB --runs 2 --out /tmp/out --no-progress --accept-new-agent-key \
  >"$T/tx.log" 2>&1 || fail "the chrooted sender failed: $(tail -5 "$T/tx.log")"
csv=$root/tmp/out/transfers.csv
[ "$(csv_col "$csv" status | sort | uniq -c | tr -s ' ')" = " 4 ok" ] || fail "not 4 ok rows: $(cat "$csv")"
echo "ok: $(basename "$binary") ($(( $(stat -c %s "$binary") / 1024 / 1024 )) MiB) ran receiver and sender alone in a chroot"
