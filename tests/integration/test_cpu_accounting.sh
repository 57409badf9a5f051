# Issue 16 item 1: cpu_user_s and cpu_sys_s on both rows, checked against the outside
# view. For one transfer of 1 GiB into a page-cache target, the receiver process's
# CPU time from /proc/PID/stat over the run, and the sender process's (its parent's
# cutime + cstime once it exited), agree with their rows within 20 % (the processes
# also spend a little on gRPC, TLS and the path check). The summary prints CPU s/GB.
source "$(dirname "$0")/lib.sh"

# cpu_seconds STAT_LINE [children]: utime + stime (or cutime + cstime) of a
# /proc/PID/stat line, in seconds. After the ") " closing the command name, field 3
# (state) is index 0, so utime (field 14) is index 11 and cutime (16) index 13.
cpu_seconds() {
  local fields i=11
  read -r -a fields <<<"${1##*) }"
  [ "${2:-}" = children ] && i=13
  awk -v a="${fields[i]}" -v b="${fields[i + 1]}" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.3f", (a + b) / hz }'
}
within() { awk -v p="$1" -v v="$2" -v l="$3" 'BEGIN { exit !(v >= l * (1 - p / 100) && v <= l * (1 + p / 100)) }'; }

mkdir -p "$T/target"
start_receiver rx --target "$T/target" --min-free 0
rx_before=$(cpu_seconds "$(cat "/proc/$rx_PID/stat")")
# The sender runs as the only child of a shell that reports the child's CPU once it
# has been waited for.
bash -c '"$@"; rc=$?; read -r stat </proc/$$/stat; echo "STAT $stat"; exit $rc' sender \
  "$NASPERF" sender --to "127.0.0.1:$rx_PORT" --size 1GiB --runs 1 --out "$T/out" --no-progress \
  --accept-new-agent-key >"$T/tx.log" 2>&1 || fail "sender failed: $(tail -5 "$T/tx.log")"
rx_after=$(cpu_seconds "$(cat "/proc/$rx_PID/stat")")

csv=$T/out/transfers.csv
row_cpu() { awk -F, -v role="$1" 'NR==1 { for (i=1;i<=NF;i++) { if ($i=="role") r=i; if ($i=="cpu_user_s") u=i;
  if ($i=="cpu_sys_s") s=i }; next } $r == role { printf "%.3f", $u + $s }' "$csv"; }
rx_row=$(row_cpu receiver)
tx_row=$(row_cpu sender)
rx_process=$(awk -v a="$rx_before" -v b="$rx_after" 'BEGIN { printf "%.3f", b - a }')
tx_process=$(cpu_seconds "$(sed -n 's/^STAT //p' "$T/tx.log")" children)
echo "receiver: row $rx_row s, process $rx_process s; sender: row $tx_row s, process $tx_process s"

for v in "$rx_row" "$tx_row"; do
  awk -v v="$v" 'BEGIN { exit !(v > 0) }' || fail "a row has no CPU time: $(head -1 "$csv"; tail -2 "$csv")"
done
within 20 "$rx_row" "$rx_process" || fail "receiver row says $rx_row CPU s, the process spent $rx_process s"
within 20 "$tx_row" "$tx_process" || fail "sender row says $tx_row CPU s, the process spent $tx_process s"
grep -Eq "CPU s/GB: sender [0-9.]+, receiver [0-9.]+" "$T/tx.log" || fail "no CPU s/GB in the summary: $(tail -8 "$T/tx.log")"
echo "ok: CPU in the rows agrees with /proc within 20 % on both ends"
