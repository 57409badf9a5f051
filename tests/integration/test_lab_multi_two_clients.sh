#!/usr/bin/env bash
# Two clients write to one NAS at once, driven by `nasperf lab` from the hop (which
# reaches every agent), its embedded collector's live view showing both jobs as they go: each run's transfers start together (the barrier: the start
# skew is shorter than the shortest transfer, so they overlapped instead of taking
# turns), lab-runs.csv keeps the sum of its transfers' MB/s, all rows share one run id
# in one CSV, and `nasperf report` reads it. The NAS's intake (issue 30): the console
# and `report` print the same figures for each run, and all bytes/span is the
# receiver rows' bytes over the span this test computes from the same rows.
source "$(dirname "$0")/lib.sh"

lab_up --clients 2 --mtu 1500 --rate 400mbit --disk-size 1G
[ "${CLIENTS:-1}" = 2 ] || fail "lab.sh up --clients 2 made $CLIENTS clients"
lab_agent nas nas --target "$CACHE" --min-free off
lab_agent c1 client1
lab_agent c2 client2

cat >"$T/plan.toml" <<PLAN
label = "two-clients"
runs = 3
pause = "200ms"
interval = "250ms"
link_speed = "400mbit"
[collector]
out = "$T/out"
http = "127.0.0.1:7702"
[[host]]
name = "nas"
agent = "$NAS_IP:7600"
target = "$CACHE"
mtu = 1500
PLAN
lab_plan_two_clients_to_nas "40MiB" >>"$T/plan.toml"

"$LAB_SH" hop -- "$NASPERF" lab "$T/plan.toml" >"$T/lab.log" 2>&1 &
lab=$!
# The embedded collector's live view (issue 31): while the runs go, both clients' jobs
# show as loops at the lab's copy i of 3.
# shellcheck disable=SC2317  # called by wait_for
both_live() {
  on_hop curl -sf --max-time 2 http://127.0.0.1:7702/live.json >"$T/live.json" 2>/dev/null &&
    python3 - "$T/live.json" <<'PY'
import json, sys
loops = json.load(open(sys.argv[1]))["loops"]
hosts = {l["host"] for l in loops if l["copies"] == 3 and 1 <= l["copy"] <= 3 and l["points"]}
sys.exit(0 if hosts == {"client1", "client2"} else 1)
PY
}
wait_for "both clients' jobs on the lab's live page" 60 both_live
echo "live view during the lab: $(head -c 300 "$T/live.json")"
wait "$lab" || fail "nasperf lab failed: $(tail -20 "$T/lab.log")"
cat "$T/lab.log"
grep -q "^live view: http://127.0.0.1:7702/ and /metrics" "$T/lab.log" || fail "the lab does not say where its live view is"
csv=$T/out/transfers.csv runs=$T/out/lab-runs.csv
[ "$(tail -n +2 "$csv" | wc -l)" = 12 ] || fail "expected 12 rows (3 runs x 2 transfers x sender+receiver), got $(tail -n +2 "$csv" | wc -l)"
[ "$(csv_col "$csv" run_id | sort -u | wc -l)" = 1 ] || fail "the transfers of the lab do not share one run id"
csv_role_all "$csv" sender status ok
csv_role_all "$csv" receiver status ok
[ "$(csv_role_col "$csv" sender host | sort -u | tr '\n' ' ')" = "client1 client2 " ] || fail "sender hosts are not the plan's names"
csv_role_all "$csv" receiver host nas

# Every run's transfers overlapped; the aggregate is the sum of its transfers.
[ "$(tail -n +2 "$runs" | wc -l)" = 3 ] || fail "lab-runs.csv: expected 3 rows"
for iteration in 1 2 3; do
  skew=$(awk -F, -v i=$iteration 'NR > 1 && $3 == i { print $9 }' "$runs")
  aggregate=$(awk -F, -v i=$iteration 'NR > 1 && $3 == i { print $7 }' "$runs")
  sum=$(awk -F, -v i=$iteration 'NR==1 { for (c=1;c<=NF;c++) { if ($c=="role") r=c; if ($c=="iteration") it=c; if ($c=="mb_per_s") m=c }; next }
    $r == "sender" && $it == i { s += $m } END { printf "%.3f", s }' "$csv")
  shortest=$(awk -F, -v i=$iteration 'NR==1 { for (c=1;c<=NF;c++) { if ($c=="role") r=c; if ($c=="iteration") it=c; if ($c=="duration_s") d=c }; next }
    $r == "sender" && $it == i && (m == "" || $d < m) { m = $d } END { print m * 1000 }' "$csv")
  echo "run $iteration: start skew $skew ms (shortest transfer $shortest ms), aggregate $aggregate MB/s, sum of transfers $sum MB/s"
  if [ -z "$skew" ] || ! awk -v s="$skew" -v d="$shortest" 'BEGIN { exit !(s >= 0 && s < d) }'; then
    fail "run $iteration: start skew $skew ms is not shorter than the shortest transfer ($shortest ms): the transfers took turns"
  fi
  awk -v a="$aggregate" -v b="$sum" 'BEGIN { d = a - b; exit !(d < 0.02 && d > -0.02) }' \
    || fail "run $iteration: aggregate $aggregate MB/s is not the sum of its transfers ($sum MB/s)"
done
grep -q "aggregate" "$T/lab.log" && fail "the console still calls a sum of rates the aggregate"

grep -q "start skew: median" "$T/lab.log" || fail "no skew summary"
ls "$CACHE"/nasperf-*.dat >/dev/null 2>&1 && fail "files left in the target: $(ls "$CACHE")"

"$NASPERF" report "$T/out" >"$T/report.log" 2>&1 || fail "nasperf report: $(cat "$T/report.log")"
grep -q "two-clients" "$T/report.log" || fail "report does not show the lab's label: $(cat "$T/report.log")"
# One figure per run, the same on the console and in the report.
grep -o "= nas .*all bytes/span.*" "$T/lab.log" | sed 's/.*\(all bytes\/span\)/\1/' >"$T/console-intake.txt"
grep -o "nas .* iteration [0-9]*: 2 transfers, all bytes/span.*" "$T/report.log" | sed 's/.*\(all bytes\/span\)/\1/' \
  >"$T/report-intake.txt"
[ "$(wc -l <"$T/console-intake.txt")" = 3 ] || fail "the console gave no NAS intake per run: $(cat "$T/lab.log")"
diff "$T/console-intake.txt" "$T/report-intake.txt" || fail "the console and report disagree on the NAS's intake"
# The HTML stacks the last run by transfer, a band per client, named by its host.
"$NASPERF" report "$T/out" --html "$T/report.html" >/dev/null 2>&1 || fail "nasperf report --html failed"
grep -q "timeline peak" <(tail -n 1 "$T/console-intake.txt") || fail "the last run has no intake timeline to stack"
python3 - "$T/report.html" <<'PY' || fail "the stacked intake chart lacks a band per client"
import re, sys
html = open(sys.argv[1]).read()
chart = re.search(r'data-chart="intake-stack-nas".*?</svg>', html, re.S)
bands = re.findall(r"<polygon[^>]*><title>([^<]*)</title>", chart.group(0)) if chart else []
print("stacked bands:", bands)
sys.exit(0 if sorted(b.split()[0] for b in bands) == ["client1", "client2"] else 1)
PY
# all bytes/span against the span of the receiver rows, computed here.
python3 - "$csv" "$runs" <<'PY' || fail "all bytes/span is not the rows' bytes over their span"
import csv, sys
from datetime import datetime, timezone
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["role"] == "receiver"]
for run in csv.DictReader(open(sys.argv[2])):
    mine = [r for r in rows if r["iteration"] == run["iteration"]]
    start = [datetime.strptime(r["started_at"], "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc).timestamp()
             + float(r["first_byte_s"]) for r in mine]
    end = [s + float(r["duration_s"]) for s, r in zip(start, mine)]
    truth = sum(int(r["bytes"]) for r in mine) / (max(end) - min(start)) / 1e6
    got = float(run["all_mb_per_s"])
    print(f"run {run['iteration']}: all bytes/span {got:.1f} MB/s, from the rows {truth:.1f} MB/s, "
          f"while all ran {run['while_all_mb_per_s'] or '-'} MB/s, sum of rates {run['durable_mb_per_s']} MB/s")
    if abs(got - truth) > 0.03 * truth:
        sys.exit(1)
PY
echo "ok: two clients, one NAS, one CSV; transfers overlapped in every run; console and report give one NAS intake"
