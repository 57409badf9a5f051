#!/usr/bin/env bash
# shellcheck disable=SC2154  # NAME_PID, NAME_PORT...: set by lib.sh's start_*, lab_* and cpu_group with printf -v
# Issue 16 item 1, compared like with like (issue 25): cpu_user_s + cpu_sys_s on each
# row are the CPU of the threads that moved the bytes, while each process also spends
# CPU outside transfers (its start, gRPC and TLS, the path check). So that cost is
# measured in the same run: a loop of small transfers first (4 x 32 MiB), whose
# process CPU minus its rows' CPU is what each process spends outside the data
# threads; then the same loop of 4 x 512 MiB into a page-cache target, whose process
# CPU less that cost must match its rows within 15 %. Process CPU is read in nanoseconds: the receiver's through its process CPU
# clock (clock_gettime on the pid's CPUCLOCK, exited threads included), the sender's
# from wait4's rusage once it exited. The summary prints CPU s/GB.
source "$(dirname "$0")/lib.sh"

# process_cpu PID: the live process's CPU seconds so far, all its threads.
process_cpu() { python3 -c 'import sys, time; pid = int(sys.argv[1]); print("%.4f" % time.clock_gettime(((~pid) << 3) | 2))' "$1"; }
# sender_with_cpu LOG ARGS...: runs the sender; the last line of LOG is "CPU <seconds>",
# its CPU (user + system) as wait4 reported it.
sender_with_cpu() {
  local log=$1; shift
  python3 - "$NASPERF" sender "$@" >"$log" 2>&1 <<'PY'
import resource, subprocess, sys
rc = subprocess.call(sys.argv[1:], stderr=subprocess.STDOUT)
used = resource.getrusage(resource.RUSAGE_CHILDREN)
print("CPU %.4f" % (used.ru_utime + used.ru_stime), flush=True)
sys.exit(rc)
PY
}
row_cpu() { awk -F, -v role="$2" 'NR==1 { for (i=1;i<=NF;i++) { if ($i=="role") r=i; if ($i=="cpu_user_s") u=i;
  if ($i=="cpu_sys_s") s=i }; next } $r == role { t += $u + $s } END { printf "%.4f", t }' "$1"; }
minus() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.4f", a - b }'; }

mkdir -p "$T/target"
start_receiver rx --target "$T/target" --min-free 0
# transfer NAME SIZE: a loop of 4 runs; sets rx_row, tx_row (the rows) and rx_process, tx_process.
transfer() {
  local before
  before=$(process_cpu "$rx_PID")
  sender_with_cpu "$T/$1.log" --to "127.0.0.1:$rx_PORT" --size "$2" --runs 4 --cleanup never --out "$T/$1" \
    --no-progress --accept-new-agent-key || fail "sender ($1) failed: $(tail -5 "$T/$1.log")"
  rx_process=$(minus "$(process_cpu "$rx_PID")" "$before")
  tx_process=$(sed -n 's/^CPU //p' "$T/$1.log")
  rx_row=$(row_cpu "$T/$1/transfers.csv" receiver)
  tx_row=$(row_cpu "$T/$1/transfers.csv" sender)
  for v in "$rx_row" "$tx_row"; do
    awk -v v="$v" 'BEGIN { exit !(v > 0) }' || fail "a row has no CPU time: $(head -1 "$T/$1/transfers.csv"; tail -2 "$T/$1/transfers.csv")"
  done
}

transfer small 32MiB
rx_outside=$(minus "$rx_process" "$rx_row")
tx_outside=$(minus "$tx_process" "$tx_row")
echo "outside the data threads: receiver $rx_outside s, sender $tx_outside s (4 x 32 MiB: rows $rx_row / $tx_row s)"
transfer large 512MiB
rx_expect=$(minus "$rx_process" "$rx_outside")
tx_expect=$(minus "$tx_process" "$tx_outside")
echo "4 x 512 MiB: receiver rows $rx_row s, process $rx_process s less $rx_outside = $rx_expect;" \
  "sender rows $tx_row s, process $tx_process s less $tx_outside = $tx_expect"
within 15 "$rx_row" "$rx_expect" || fail "receiver rows say $rx_row CPU s, its data threads spent $rx_expect s"
within 15 "$tx_row" "$tx_expect" || fail "sender rows say $tx_row CPU s, its data threads spent $tx_expect s"
grep -Eq "CPU s/GB: sender [0-9.]+, receiver [0-9.]+" "$T/large.log" || fail "no CPU s/GB in the summary: $(tail -8 "$T/large.log")"
echo "ok: CPU in the rows agrees with the processes' CPU less their cost outside transfers, within 15 % on both ends"
