#!/usr/bin/env bash
# Issue 30: what a NAS took from clients of different speeds at once, against truth
# measured in the same run (docs/DESIGN.md §9: never a wall-clock constant). Two
# clients shaped to 1 Gbit/s and 100 Mbit/s write equal sizes to one NAS: "while all
# ran" is within 5 % of the two links' sum (iperf3 on each link), the intake
# timeline's peak at most 5 % over what the shapers let through in one 100 ms step
# (the sum, plus each token bucket's burst: a tbf passes at most rate x T + burst in
# any T, and its buckets start full), all bytes/span within 3 % of the bytes over the
# span of the receiver rows; the console and `report` print the same line. (Equal
# clients, where the three figures agree, are the unit tests' case: measure/intake.)
source "$(dirname "$0")/lib.sh"
command -v iperf3 >/dev/null || skip "iperf3 is not installed"

lab_up --clients 2 --mtu 1500 --rate 1gbit
[ "${CLIENTS:-1}" = 2 ] || fail "lab.sh up --clients 2 made $CLIENTS clients"
burst=262144  # bytes: lab.sh's tbf burst at 1gbit, and ours
slow_link() {  # client RATE: that client's NIC only (lab.sh shape changes them all)
  ip netns exec "$NASPERF_LAB-$1" tc qdisc change dev eth0 root tbf rate "$2" burst "$burst" latency 20ms
}
slow_link client2 100mbit
lab_agent nas nas --target discard
for c in 1 2; do lab_agent "c$c" "client$c"; done

iperf_port=$((20000 + $$ % 20000))
on_nas iperf3 -s -B "$NAS_IP" -p "$iperf_port" >"$T/iperf-server.log" 2>&1 &
PIDS+=($!)
iperf_listens() { "$LAB_SH" client1 -- bash -c "exec 3<>/dev/tcp/$NAS_IP/$iperf_port" 2>/dev/null; }
wait_for "iperf3 server" 20 iperf_listens
link_mbs() {  # client: its link's TCP goodput in MB/s, alone (the median of three, DESIGN §9)
  local i
  for i in 1 2 3; do
    "$LAB_SH" "$1" -- iperf3 -c "$NAS_IP" -p "$iperf_port" -t 2 -O 1 -l 1M -J >"$T/iperf-$1-$i.json" 2>"$T/iperf.err" \
      || fail "iperf3 from $1 failed: $(cat "$T/iperf.err")"
    python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["end"]["sum_received"]["bits_per_second"] / 8e6)' \
      "$T/iperf-$1-$i.json"
  done | sort -n | sed -n 2p
}
fast=$(link_mbs client1)
slow=$(link_mbs client2)
echo "iperf3: client1 $fast MB/s, client2 $slow MB/s"

plan() {  # OUT CLIENTS...: 3 runs of 48 MiB from each client, sampled every 20 ms
  printf 'label = "intake"\nruns = 3\npause = "200ms"\ninterval = "20ms"\n[collector]\nout = "%s"\n' "$1"
  printf '[[host]]\nname = "nas"\nagent = "%s:7600"\n' "$NAS_IP"
  local c
  for c in "${@:2}"; do
    printf '[[host]]\nname = "%s"\nagent = "198.18.0.%s:7600"\n' "$c" $((10 + ${c#client}))
    printf '[[transfer]]\nfrom = "%s"\nto = "nas"\nsize = "48MiB"\n' "$c"
  done
}

check_runs() {  # DIR: each lab-runs.csv row against the rows' truth and the links'
  python3 - "$1/transfers.csv" "$1/lab-runs.csv" "$fast" "$slow" "$burst" <<'PY'
import csv, sys
from datetime import datetime, timezone
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["role"] == "receiver"]
fast, slow, burst = float(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
step_s = 0.1  # the 20 ms samples on the timeline's grid: measure/intake.h kMinTimelineStepS
bad = 0
for run in csv.DictReader(open(sys.argv[2])):
    mine = [r for r in rows if r["iteration"] == run["iteration"]]
    start = [datetime.strptime(r["started_at"], "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc).timestamp()
             + float(r["first_byte_s"]) for r in mine]
    end = [s + float(r["duration_s"]) for s, r in zip(start, mine)]
    span_truth = sum(int(r["bytes"]) for r in mine) / (max(end) - min(start)) / 1e6
    f = {k: float(run[k]) if run[k] else None for k in ("all_mb_per_s", "while_all_mb_per_s", "window_s",
                                                        "peak_mb_per_s", "median_mb_per_s")}
    print(f"run {run['iteration']}: all bytes/span {f['all_mb_per_s']} (rows: {span_truth:.3f}), while all ran "
          f"{f['while_all_mb_per_s']} over {f['window_s']} s, peak {f['peak_mb_per_s']}, median {f['median_mb_per_s']}, "
          f"sum of rates {run['durable_mb_per_s']}; links {fast:.1f} + {slow:.1f}")
    ok = abs(f["all_mb_per_s"] - span_truth) <= 0.03 * span_truth
    links = fast + slow
    ok = ok and f["while_all_mb_per_s"] is not None and abs(f["while_all_mb_per_s"] - links) <= 0.05 * links
    shaped = links + 2 * burst / step_s / 1e6
    ok = ok and (f["peak_mb_per_s"] is None or f["peak_mb_per_s"] <= 1.05 * shaped)
    if not ok:
        print("  ^ out of bounds")
        bad += 1
sys.exit(1 if bad else 0)
PY
}

same_on_console_and_report() {  # LOG DIR
  grep -o "= nas .*all bytes/span.*" "$1" | sed 's/.*\(all bytes\/span\)/\1/' >"$T/console.txt"
  "$NASPERF" report "$2" >"$T/report.log" 2>&1 || fail "nasperf report: $(cat "$T/report.log")"
  grep -o "nas .* iteration [0-9]*: [0-9]* transfers, all bytes/span.*" "$T/report.log" |
    sed 's/.*\(all bytes\/span\)/\1/' >"$T/report.txt"
  [ "$(wc -l <"$T/console.txt")" = 3 ] || fail "no NAS intake per run on the console: $(cat "$1")"
  diff "$T/console.txt" "$T/report.txt" || fail "the console and report disagree on the NAS's intake"
}

plan "$T/two" client1 client2 >"$T/two.toml"
on_hop "$NASPERF" lab "$T/two.toml" >"$T/two.log" 2>&1 || fail "nasperf lab failed: $(tail -20 "$T/two.log")"
cat "$T/two.log"
same_on_console_and_report "$T/two.log" "$T/two"
check_runs "$T/two" || fail "1 Gbit/s + 100 Mbit/s: a figure is off its truth"

echo "ok: links $fast + $slow MB/s; while all ran, peak and all bytes/span hold to them"
