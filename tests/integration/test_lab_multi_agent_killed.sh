#!/usr/bin/env bash
# shellcheck disable=SC2154  # NAME_PID, NAME_PORT...: set by lib.sh's start_*, lab_* and cpu_group with printf -v
# An agent that dies mid-run, handled as the plan says. client2's agent is killed
# while run 1 pushes: with on_failure = "continue" its transfers are rows marked
# failed (run 1 mid-transfer, later runs unreachable) while client1 goes on; the
# NAS removed the partial file. Then, with client2 still down, the lab stops before
# anything runs with one clear line naming the host. With client2 back and
# on_failure = "stop", a second kill ends the lab after that run.
source "$(dirname "$0")/lib.sh"

lab_up --clients 2 --mtu 1500 --rate 200mbit --disk-size 1G
lab_agent nas nas --target "$CACHE" --min-free off
lab_agent c1 client1
lab_agent c2 client2

write_plan() {  # write_plan FILE ON_FAILURE OUT
  cat >"$1" <<PLAN
label = "killed"
runs = 3
on_failure = "$2"
[collector]
out = "$3"
[[host]]
name = "nas"
agent = "$NAS_IP:7600"
PLAN
  lab_plan_two_clients_to_nas "40MiB" >>"$1"
}

# kill_c2_mid_run LOG: waits until client2's run-1 file on the NAS holds its first
# MiB (of 40), then kills client2's agent.
kill_c2_mid_run() {
  pushing() {
    local f
    for f in "$CACHE"/nasperf-*-1-1.dat; do [ "$(stat -c %s "$f" 2>/dev/null || echo 0)" -gt 1048576 ] && return 0; done
    return 1
  }
  wait_for "run 1 to push into the NAS" 30 pushing
  kill -9 "$c2_PID"
  wait "$c2_PID" 2>/dev/null || true
}

# run_lab_killing_c2 PLAN LOG: runs $T/PLAN.toml into $T/LOG.log, kills client2's
# agent during run 1, and sets rc to the lab's exit status.
run_lab_killing_c2() {
  on_hop "$NASPERF" lab "$T/$1.toml" >"$T/$2.log" 2>&1 &
  local lab=$!
  PIDS+=("$lab")
  kill_c2_mid_run
  rc=0
  wait_pid "the lab to end" 120 "$lab" || rc=$?
  cat "$T/$2.log"
}

write_plan "$T/continue.toml" continue "$T/out"
run_lab_killing_c2 continue lab1
[ $rc = 1 ] || fail "lab with failed transfers exited $rc, want 1"
csv=$T/out/transfers.csv
rows() { awk -F, -v want="$1" 'NR==1 { for (c=1;c<=NF;c++) { if ($c=="role") r=c; if ($c=="host") h=c; if ($c=="iteration") i=c; if ($c=="status") s=c }; next }
  $r == "sender" && $h == want { print $i ":" $s }' "$csv" | sort | tr '\n' ' '; }
[ "$(rows client1)" = "1:ok 2:ok 3:ok " ] || fail "client1 rows: $(rows client1) (want ok in every run)"
[ "$(rows client2)" = "1:failed 2:failed 3:failed " ] || fail "client2 rows: $(rows client2) (want failed in every run)"
grep -q "stopped answering mid-run" "$csv" || fail "client2's run-1 row does not say its agent stopped answering"
compgen -G "$CACHE/nasperf-*.dat" >/dev/null && fail "partial files left on the NAS: $(ls "$CACHE")"
grep -q 'receiver.*aborted\|aborted' "$T/nas.log" || echo "note: the NAS log does not mention the aborted transfer"

# client2 is down: nothing runs, one line names it.
write_plan "$T/stop.toml" stop "$T/out2"
rc=0
on_hop "$NASPERF" lab "$T/stop.toml" >"$T/lab2.log" 2>&1 || rc=$?
cat "$T/lab2.log"
[ $rc = 1 ] || fail "lab with an unreachable agent exited $rc, want 1"
grep -q "problem.*before the first run; nothing ran" "$T/lab2.log" || fail "no 'nothing ran' error"
grep -q "host client2: .*198.18.0.12:7600" "$T/lab2.log" || fail "the error does not name client2 and its address"
[ -s "$T/out2/transfers.csv" ] && [ "$(tail -n +2 "$T/out2/transfers.csv" | wc -l)" != 0 ] && fail "rows written although nothing should run"

# client2 back; on_failure = "stop": a kill in run 1 ends the lab after run 1.
lab_agent c2 client2
run_lab_killing_c2 stop lab3
[ $rc = 1 ] || fail "stopped lab exited $rc, want 1"
grep -q 'stopping: a transfer failed and the plan says on_failure = "stop"' "$T/lab3.log" || fail "the lab did not stop"
csv=$T/out2/transfers.csv
[ "$(csv_col "$csv" iteration | sort -u | tr '\n' ' ')" = "1 " ] || fail "rows beyond run 1: $(csv_col "$csv" iteration | sort -u)"
echo "ok: a killed agent's rows are failed; continue goes on, stop stops, an unreachable agent stops the lab before it runs"
