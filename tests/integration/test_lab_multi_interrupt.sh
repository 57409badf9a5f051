#!/usr/bin/env bash
# shellcheck disable=SC2154  # NAME_PID, NAME_PORT...: set by lib.sh's start_*, lab_* and cpu_group with printf -v
# Ctrl-C on `nasperf lab` mid-run: every agent aborts its transfers, the rows say
# "aborted", the NAS keeps no partial file, the CSV has no torn line, exit status
# 130, and the agents serve the next lab.
source "$(dirname "$0")/lib.sh"

lab_up --clients 2 --mtu 1500 --rate 100mbit --disk-size 1G
lab_agent nas nas --target "$CACHE" --min-free off
lab_agent c1 client1
lab_agent c2 client2
plan() {  # plan SIZE OUT
  cat <<PLAN
label = "interrupted"
runs = 5
[collector]
out = "$2"
[[host]]
name = "nas"
agent = "$NAS_IP:7600"
PLAN
  lab_plan_two_clients_to_nas "$1"
}
plan 200MiB "$T/out" >"$T/plan.toml"
"$LAB_SH" hop -- "$NASPERF" lab "$T/plan.toml" >"$T/lab.log" 2>&1 &  # exec chain: $! is nasperf itself
lab=$!
PIDS+=("$lab")
pushing() { partial_file_over 4194304 "$CACHE"; }
wait_for "run 1 to push its first 4 MiB into the NAS" 30 pushing
kill -INT "$lab"
rc=0
wait_pid "the lab to end after Ctrl-C" 60 "$lab" || rc=$?
cat "$T/lab.log"
[ $rc = 130 ] || fail "interrupted lab exited $rc, want 130"
csv=$T/out/transfers.csv
[ "$(csv_role_col "$csv" sender status | sort | tr '\n' ' ')" = "aborted aborted " ] \
  || fail "sender rows: $(csv_role_col "$csv" sender status | tr '\n' ' ') (want 2 aborted)"
awk -F, 'NR==1 { n = NF; next } NF < n { exit 1 }' "$csv" || fail "a torn row in transfers.csv"
[ -z "$(tail -c1 "$csv")" ] || fail "transfers.csv does not end with a newline"
gone() { ! compgen -G "$CACHE/nasperf-*.dat" >/dev/null; }
wait_for "the NAS to remove the partial files" 10 gone
alive "$nas_PID" || fail "the NAS's agent died"
alive "$c1_PID" || fail "client1's agent died"
alive "$c2_PID" || fail "client2's agent died"
plan 4MiB "$T/out2" | sed 's/^runs = 5/runs = 1/' >"$T/plan2.toml"
on_hop "$NASPERF" lab "$T/plan2.toml" >"$T/lab2.log" 2>&1 || fail "the agents do not serve after the abort: $(tail "$T/lab2.log")"
echo "ok: Ctrl-C aborted every transfer cleanly"
