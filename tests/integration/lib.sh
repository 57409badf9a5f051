# shellcheck shell=bash
# Shared helpers for the integration tests. Sourced by each test_*.sh with
#   $1 = path to nasperf, $2 = wire_client, $3 = collector_client, $4 = agent_client.
# Every wait is bounded; every process a test starts is killed on exit.
set -euo pipefail

NASPERF=${1:?usage: test_x.sh NASPERF WIRE_CLIENT}
# shellcheck disable=SC2034  # used by the tests that source this file
WIRE_CLIENT=${2:-}
# shellcheck disable=SC2034  # used by the tests that source this file
COLLECTOR_CLIENT=${3:-}
# shellcheck disable=SC2034  # used by the tests that source this file
AGENT_CLIENT=${4:-}
T=$(mktemp -d /tmp/nasperf-it.XXXXXX)
NASPERF_TOKEN=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
export NASPERF_TOKEN
export HOME=$T/home   # never touch the user's ~/.config/nasperf
mkdir -p "$HOME"
PIDS=()
CLEANUPS=()

cleanup() {
  local rc=$?
  stop_pids "${PIDS[@]}"
  for ((i=${#CLEANUPS[@]}-1; i>=0; i--)); do eval "${CLEANUPS[$i]}" || true; done
  if [ $rc -ne 0 ] && [ $rc -ne 77 ]; then
    echo "--- test failed (rc=$rc); logs in $T:"
    for f in "$T"/*.log; do [ -f "$f" ] && { echo "== $f"; tail -20 "$f"; }; done
  else
    rm -rf "$T"
  fi
  exit $rc
}
trap cleanup EXIT

# descendants PID: every process below PID (sshd forks one per connection; a shell
# function started with & is a subshell whose children do the work).
descendants() {
  local child
  for child in $(pgrep -P "$1" || true); do
    echo "$child"
    descendants "$child"
  done
}

# stop_pids PID...: SIGTERM to each and everything below it, up to 10 s to exit, then
# SIGKILL; reaps them all. A process stuck on a throttled disk must not hold the
# cleanup past ctest's limit, and none may outlive the test.
stop_pids() {
  local pid left all=() below
  for pid in "$@"; do
    mapfile -t below < <(descendants "$pid")
    all+=("$pid" "${below[@]}")
  done
  for pid in "${all[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for _ in $(seq 200); do
    left=0
    for pid in "${all[@]}"; do [ -d "/proc/$pid" ] && [ "$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)" != Z ] && left=1; done
    [ $left -eq 0 ] && break
    sleep 0.05
  done
  for pid in "${all[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
  for pid in "$@"; do wait "$pid" 2>/dev/null || true; done
}

fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "SKIP: $*"; exit 77; }
need_root() { [ "$(id -u)" -eq 0 ] || skip "needs root ($1)"; }

# wait_for "description" SECONDS command...: polls the condition every 50 ms.
wait_for() {
  local what=$1 seconds=$2; shift 2
  local deadline=$(( $(date +%s%N) + seconds * 1000000000 ))
  until "$@"; do
    [ "$(date +%s%N)" -lt "$deadline" ] || fail "timed out after ${seconds}s waiting for $what"
    sleep 0.05
  done
}

# wait_port_file WHAT FILE PID: waits (bounded: LISTEN_SECONDS, 20 unless set) until
# the process wrote its port file; fails at once with its log when it died first (a
# bind error, say).
wait_port_file() {
  local what=$1 file=$2 pid=$3 log=${4:-}
  # shellcheck disable=SC2317  # called by wait_for, through "$@"
  port_file_or_dead() { test -s "$file" || ! alive "$pid"; }
  wait_for "$what" "${LISTEN_SECONDS:-20}" port_file_or_dead
  test -s "$file" || fail "$what: the process exited first${log:+: $(tail -3 "$log")}"
}

# wait_pid WHAT SECONDS PID: waits, bounded, for a background process to end and
# returns its exit status.
wait_pid() {
  local what=$1 seconds=$2 pid=$3
  wait_for "$what" "$seconds" eval '! alive '"$pid"
  wait "$pid"
}

# start_collector NAME [flags...]: a collector on an ephemeral loopback port writing
# into $T/NAME; sets ${NAME}_PID and ${NAME}_PORT. Pass --listen 127.0.0.1:PORT to
# restart one on a known port.
start_collector() {
  local name=$1; shift
  local portfile=$T/$name.port
  rm -f "$portfile"
  local listen=(--listen 127.0.0.1:0)
  [[ " $* " == *" --listen "* ]] && listen=()
  "$NASPERF" collector --out "$T/$name" "${listen[@]}" --port-file "$portfile" "$@" >>"$T/$name.log" 2>&1 &
  local pid=$!
  PIDS+=("$pid")
  wait_port_file "collector $name to listen" "$portfile" "$pid" "$T/$name.log"
  printf -v "${name}_PID" '%s' "$pid"
  printf -v "${name}_PORT" '%s' "$(sed -n 's/^port=//p' "$portfile")"
}

# start_receiver NAME --target DIR [flags...]: starts a receiver on ephemeral
# loopback ports (or its own --listen); sets ${NAME}_PID, ${NAME}_PORT (control)
# and ${NAME}_DATA.
start_receiver() {
  local name=$1; shift
  local portfile=$T/$name.ports
  rm -f "$portfile"
  local listen=(--listen 127.0.0.1:0)
  [[ " $* " == *" --listen "* ]] && listen=()
  "$NASPERF" receiver "${listen[@]}" --port-file "$portfile" "$@" >"$T/$name.log" 2>&1 &
  local pid=$!
  PIDS+=("$pid")
  wait_port_file "receiver $name to listen" "$portfile" "$pid" "$T/$name.log"
  printf -v "${name}_PID" '%s' "$pid"
  printf -v "${name}_PORT" '%s' "$(sed -n 's/^control=//p' "$portfile")"
  printf -v "${name}_DATA" '%s' "$(sed -n 's/^data=//p' "$portfile")"
}

# start_agent NAME [flags...]: `nasperf agent` on loopback; sets ${NAME}_PID and ${NAME}_PORT.
start_agent() {
  local name=$1; shift
  rm -f "$T/$name.ports"
  "$NASPERF" agent --listen 127.0.0.1:0 --port-file "$T/$name.ports" --min-free off "$@" >>"$T/$name.log" 2>&1 &
  local pid=$!
  PIDS+=("$pid")
  wait_port_file "agent $name to listen" "$T/$name.ports" "$pid" "$T/$name.log"
  printf -v "${name}_PID" '%s' "$pid"
  printf -v "${name}_PORT" '%s' "$(sed -n 's/^control=//p' "$T/$name.ports")"
}

alive() { kill -0 "$1" 2>/dev/null; }

# newest PATH...: the most recently modified of the PATHs that exist (pass a glob),
# or nothing when none does (what `ls -t GLOB | head -1` gave, without parsing ls).
newest() {
  local f best=""
  for f in "$@"; do
    if [ -e "$f" ] && { [ -z "$best" ] || [ "$f" -nt "$best" ]; }; then best=$f; fi
  done
  [ -z "$best" ] || echo "$best"
}

# csv_col FILE COLUMN: prints that column of every data row (simple CSV: no quoted commas).
csv_col() {
  awk -F, -v col="$2" 'NR==1 { for (i=1;i<=NF;i++) if ($i==col) c=i; next } { print $c }' "$1"
}

# within PCT VALUE TRUTH: VALUE is within PCT % of TRUTH.
within() { awk -v p="$1" -v v="$2" -v l="$3" 'BEGIN { exit !(v >= l * (1 - p / 100) && v <= l * (1 + p / 100)) }'; }

# A small good transfer proves the receiver still serves.
assert_serves() {
  local port=$1
  "$NASPERF" sender --to 127.0.0.1:"$port" --size 1MiB --runs 1 --out "$T/serves" --no-progress \
    >"$T/serves.log" 2>&1 || fail "receiver on port $port no longer serves: $(tail -3 "$T/serves.log")"
}

# loop_locked CMD...: CMD (a losetup -f or mount -o loop) under the machine-wide lock
# scripts/lab.sh takes too: tests run side by side must not be handed one free device.
loop_locked() { mkdir -p /run/lock && flock /run/lock/nasperf-loop.lock "$@"; }

# loop_fs NAME SIZE FSTYPE: a loop-mounted file system at $T/NAME (root only).
loop_fs() {
  local name=$1 size=$2 fstype=$3
  truncate -s "$size" "$T/$name.img"
  case $fstype in
    ext4) mkfs.ext4 -q -F "$T/$name.img" ;;
    *) "mkfs.$fstype" -q "$T/$name.img" >/dev/null ;;
  esac
  mkdir -p "$T/$name"
  loop_locked mount -o loop "$T/$name.img" "$T/$name" || fail "mount $fstype loop device"
  CLEANUPS+=("umount -l '$T/$name'")
}

# slow_source SIZE_MIB READ_BYTES_PER_S (root): a sender's source disk that reads
# slower than the network. A file of SIZE_MIB random MiB ($SOURCE_FILE) on a loop file
# system whose reads a cgroup v1 blkio throttle holds to READ_BYTES_PER_S for the
# processes in_slow_source runs. The file is not in the page cache afterwards.
slow_source() {
  local mib=$1 bps=$2 dev
  [ -d /sys/fs/cgroup/blkio ] || skip "no cgroup v1 blkio hierarchy (the slow source needs it)"
  loop_fs source $((mib + 64))M ext4
  SOURCE_FILE=$T/source/payload.bin
  head -c $((mib << 20)) /dev/urandom >"$SOURCE_FILE"
  sync
  dev=$(losetup -j "$T/source.img" | cut -d: -f1 | head -1)
  [ -n "$dev" ] || fail "no loop device behind $T/source"
  SOURCE_CGROUP=/sys/fs/cgroup/blkio/nasperf-it-source-$$
  mkdir -p "$SOURCE_CGROUP"
  CLEANUPS+=("rmdir '$SOURCE_CGROUP'")
  echo "$(lsblk -dno MAJ:MIN "$dev" | tr -d ' ') $bps" >"$SOURCE_CGROUP/blkio.throttle.read_bps_device"
  drop_source_cache
}

# drop_source_cache: $SOURCE_FILE out of the page cache (that file only).
drop_source_cache() { dd if="$SOURCE_FILE" iflag=nocache count=0 status=none; }

# in_slow_source CMD...: runs CMD with its reads of the slow source throttled (and,
# after source_cache_limit, with its page cache held below the file's size).
in_slow_source() {
  if [ -n "${SOURCE_MEMCG:-}" ]; then
    # shellcheck disable=SC2016  # $$, $0 and $@ are the inner sh's
    in_cgroup "$SOURCE_CGROUP" sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$SOURCE_MEMCG" "$@"
  else
    in_cgroup "$SOURCE_CGROUP" "$@"
  fi
}

# source_cache_limit MIB (root): what in_slow_source runs may keep in the page cache
# (a cgroup v1 memory limit), smaller than $SOURCE_FILE: every run of a loop reads
# the source from its disk again, as a file larger than the sender's RAM would.
source_cache_limit() {
  [ -f /sys/fs/cgroup/memory/memory.limit_in_bytes ] || skip "no cgroup v1 memory controller (the source's cache limit needs it)"
  SOURCE_MEMCG=/sys/fs/cgroup/memory/nasperf-it-source-$$
  mkdir -p "$SOURCE_MEMCG"
  CLEANUPS+=("for _ in \$(seq 200); do cgroup_empty '$SOURCE_MEMCG' && break; sleep 0.05; done; rmdir '$SOURCE_MEMCG'")
  echo $(($1 << 20)) >"$SOURCE_MEMCG/memory.limit_in_bytes"
}

# dd_mbs: MB/s (10^6) from dd's closing line on stdin ("N bytes (...) copied, S s, ...").
dd_mbs() {
  awk '/ copied, / { b = $1; for (i = 1; i <= NF; i++) if ($i == "s,") s = $(i - 1) }
    END { if (b > 0 && s > 0) printf "%.2f", b / s / 1e6; else exit 1 }'
}

# Ground truths for the rate tests (docs/DESIGN.md §9, tests: "Rate tests: the rule"): what a throttled disk
# gives is measured in the same run, by dd through the same throttle with the size the
# transfer moves, never taken from the configured rate: blk-throttle lets a short burst
# through above its rate, so a 64 MiB transfer can read 10 % over it.

# source_truth_mbs: the slow source read cold by dd through the same throttle (and
# cache limit) the sender meets, in MB/s.
source_truth_mbs() {
  local out
  drop_source_cache
  out=$(in_slow_source dd if="$SOURCE_FILE" of=/dev/null bs=1M 2>&1) || fail "dd of the slow source: $out"
  drop_source_cache
  dd_mbs <<<"$out" || fail "dd said: $out"
}

# array_truth_mbs read|write MIB: the lab's array through its throttle, MIB MiB (a
# multiple of 8) by dd on the NAS with O_DIRECT (a read: of a file laid out first,
# outside the throttle). 8 MiB blocks: dd has one block in flight, and on a loaded
# machine the wait to be scheduled again after each throttled block slowed 1 MiB
# blocks to 50 of 60 MB/s; nasperf keeps the disk busy while it waits.
array_truth_mbs() {
  local file=$ARRAY/nasperf-truth.bin out
  if [ "$1" = write ]; then
    out=$("$LAB_SH" nas -- dd if=/dev/zero of="$file" bs=8M count=$(($2 / 8)) oflag=direct conv=fsync 2>&1)
  else
    head -c $(($2 << 20)) /dev/urandom >"$file" && sync "$file"
    out=$("$LAB_SH" nas -- dd if="$file" of=/dev/null bs=8M iflag=direct 2>&1)
  fi
  rm -f "$file"
  dd_mbs <<<"$out" || fail "dd on the array ($1, $2 MiB) said: $out"
}

# cpu_quota NAME PERCENT (root): a cgroup v1 cpu group whose processes get PERCENT of
# one core (CFS bandwidth, 100 ms periods): a small NAS CPU, or a busy one. Sets
# ${NAME}_CGROUP; removed on exit.
cpu_quota() {
  local name=$1 percent=$2
  cpu_group "$name"
  echo 100000 >"${!cpu_dir}/cpu.cfs_period_us"
  echo $((percent * 1000)) >"${!cpu_dir}/cpu.cfs_quota_us"
}

# cpu_first NAME (root): a cgroup v1 cpu group whose processes win the CPU over
# everything in the root group (cpu.shares 262144 against 1024): on a loaded machine
# (a CPU hog per core) the end a test means to leave unlimited stays so. Sets
# ${NAME}_CGROUP; removed on exit.
cpu_first() {
  cpu_group "$1"
  echo 262144 >"${!cpu_dir}/cpu.shares"
}

# cpu_group NAME: makes the group for cpu_quota and cpu_first; sets ${NAME}_CGROUP
# and cpu_dir (the name of that variable).
cpu_group() {
  local dir
  [ -f /sys/fs/cgroup/cpu/cpu.cfs_quota_us ] || skip "no cgroup v1 cpu controller with CFS bandwidth (the CPU limit needs it)"
  dir=/sys/fs/cgroup/cpu/nasperf-it-$1-$$
  mkdir -p "$dir"
  # Removable once its processes are gone (stop_pids has waited for ours); a bounded
  # wait that never exits the cleanup (wait_for would fail out of the trap).
  CLEANUPS+=("for _ in \$(seq 200); do cgroup_empty '$dir' && break; sleep 0.05; done; rmdir '$dir'")
  printf -v "${1}_CGROUP" '%s' "$dir"
  cpu_dir=${1}_CGROUP
}

# cgroup_empty DIR: no process is left in the cgroup DIR.
cgroup_empty() { [ ! -s "$1/cgroup.procs" ]; }

# in_cgroup DIR CMD...: runs CMD inside the cgroup DIR.
in_cgroup() { sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$@"; }

# nasperf_in_memcg NAME BYTES: a memory cgroup of BYTES for this test (v1 or v2; skips
# without one), removed on exit; NASPERF then starts every nasperf inside it. Sets
# memcg and hwm_mib/oom_kills. Under ASan freed memory waits in a quarantine (256 MiB
# by default) and would count as the process's: it is kept to 1 MiB here.
nasperf_in_memcg() {
  local name=$1 bytes=$2
  need_root "a memory cgroup"
  if [ -f /sys/fs/cgroup/memory/memory.limit_in_bytes ]; then
    memcg=/sys/fs/cgroup/memory/nasperf-it-$name-$$
    mkdir "$memcg"
    echo "$bytes" >"$memcg/memory.limit_in_bytes"
    # shellcheck disable=SC2317  # called by the tests that use the cgroup
    oom_kills() { awk '/^oom_kill / { print $2 }' "$memcg/memory.oom_control"; }
  elif grep -qw memory /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
    memcg=/sys/fs/cgroup/nasperf-it-$name-$$
    mkdir "$memcg"
    echo "$bytes" >"$memcg/memory.max"
    # shellcheck disable=SC2317  # called by the tests that use the cgroup
    oom_kills() { awk '/^oom_kill / { print $2 }' "$memcg/memory.events"; }
  else
    skip "no memory cgroup controller (v1 or v2)"
  fi
  CLEANUPS+=("for _ in \$(seq 200); do cgroup_empty '$memcg' && break; sleep 0.05; done; rmdir '$memcg'")
  export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=1:thread_local_quarantine_size_kb=64
  local real_nasperf=$NASPERF
  NASPERF=$T/nasperf-in-memcg
  printf '#!/bin/sh\necho $$ >"%s/cgroup.procs" && exec "%s" "$@"\n' "$memcg" "$real_nasperf" >"$NASPERF"
  chmod +x "$NASPERF"
}
hwm_mib() { awk '/^VmHWM:/ { print int($2 / 1024) }' "/proc/$1/status"; }

# csv_role_col FILE ROLE COLUMN: that column of the rows of one role. Quoted cells
# (RFC 4180: a note or error with commas, "" for a quote) count as one.
csv_role_col() {
  awk -v role="$2" -v col="$3" '
    function split_csv(line, out,   n, i, c, quoted, cell) {
      n = 0; cell = ""; quoted = 0
      for (i = 1; i <= length(line); i++) {
        c = substr(line, i, 1)
        if (quoted) {
          if (c == "\"" && substr(line, i + 1, 1) == "\"") { cell = cell c; i++ }
          else if (c == "\"") quoted = 0
          else cell = cell c
        } else if (c == "\"") quoted = 1
        else if (c == ",") { out[++n] = cell; cell = "" }
        else cell = cell c
      }
      out[++n] = cell
      return n
    }
    { n = split_csv($0, f) }
    NR == 1 { for (i = 1; i <= n; i++) { if (f[i] == col) c = i; if (f[i] == "role") r = i }; next }
    f[r] == role { print f[c] }' "$1"
}

# partial_file_over SIZE [DIR]: some nasperf-*.dat in DIR (default $T/target) is
# larger than SIZE bytes.
partial_file_over() {
  local f
  for f in "${2:-$T/target}"/nasperf-*.dat; do
    [ -f "$f" ] && [ "$(stat -c %s "$f" 2>/dev/null || echo 0)" -gt "$1" ] && return 0
  done
  return 1
}

# free_port: sets $port to a loopback port that nothing listens on, chosen at
# random below the kernel's ephemeral range, so no outgoing connection (this
# test's, or a second suite's) takes it as its source port before the test binds
# it, and a process restarted on it finds it still free. The port above it is free
# too: a receiver's data port defaults to its control port + 1.
free_port() {
  local low
  low=$(awk '{print $1}' /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
  [ "$low" -gt 12000 ] || low=32768
  for _ in $(seq 50); do
    port=$((10000 + RANDOM % (low - 10001)))
    ! (exec 3<>/dev/tcp/127.0.0.1/"$port") 2>/dev/null \
      && ! (exec 3<>/dev/tcp/127.0.0.1/"$((port + 1))") 2>/dev/null && return 0
  done
  fail "no free loopback port below $low after 50 tries"
}

# ---- the namespace lab (scripts/lab.sh), root only
LAB_SH=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../scripts" && pwd)/lab.sh

# lab_up [lab.sh up flags...]: a lab with this test's own namespaces, torn down on
# exit; sets NAS_IP, CLIENT_IP, CACHE, ARRAY, MTU, RATE_MBPS from its state file.
lab_up() {
  need_root "network namespaces, tc and loop devices"
  command -v tc >/dev/null || skip "tc (iproute2) is not installed"
  [ -d /sys/fs/cgroup/blkio ] || skip "no cgroup v1 blkio controller (the lab's array throttle needs it)"
  sweep_dead_labs
  export NASPERF_LAB=t$$
  # Any state under this live pid's name is a leftover of a killed run.
  "$LAB_SH" down >/dev/null 2>&1 || true
  CLEANUPS+=("'$LAB_SH' down >/dev/null 2>&1")
  "$LAB_SH" up "$@" >"$T/lab.log" 2>&1 || fail "lab.sh up $*: $(cat "$T/lab.log")"
  # shellcheck disable=SC1090
  . "/run/nasperf-lab/$NASPERF_LAB/env"
}

# lab_shares: the lab's Samba and nfs-ganesha (scripts/lab.sh shares) on the NAS;
# sets SMB_CREDENTIALS and NFS_ROOT. Stopped with the lab. Their own clients
# (smbclient, nfs-cp) make the baselines, so they are needed too.
lab_shares() {
  local tool
  for tool in smbd ganesha.nfsd smbclient nfs-cp; do
    command -v $tool >/dev/null || skip "no $tool (scripts/install-deps.sh installs Samba, nfs-ganesha and their clients)"
  done
  "$LAB_SH" shares >"$T/shares.log" 2>&1 || fail "lab.sh shares: $(cat "$T/shares.log")"
  # shellcheck disable=SC1090
  . "/run/nasperf-lab/$NASPERF_LAB/env"
}

# smbclient_mbs SHARE FILE NAME: Samba's own client putting FILE into the lab's SHARE as
# NAME; prints its own rate in MB/s (its "(N kb/s)" is KiB/s).
smbclient_mbs() {
  on_client timeout 120 smbclient "//$NAS_IP/$1" -A "$SMB_CREDENTIALS" -m SMB3 -c "put $2 $3" \
    2>&1 | sed -n 's/.*(\([0-9.]*\) kb\/s).*/\1/p' | head -1 | awk '{ printf "%.1f", $1 * 1024 / 1e6 }'
}

# scp_mbs FILE DEST: OpenSSH's scp from the lab's client to DEST (root@NAS:PATH) through
# lab_sshd, under a pty so it prints its progress meter; prints its own rate in MB/s
# (the meter's last figure: bytes over the time since the file began, in MiB/s).
scp_mbs() {
  on_client timeout 120 script -qec "scp -o BatchMode=yes -o UserKnownHostsFile=$T/ssh/known_hosts \
    -i $T/ssh/user_ed25519 -P 2222 $1 $2" /dev/null 2>&1 | tr '\r' '\n' \
    | sed -n 's/.* \([0-9.]*\)\([KMG]\)B\/s .*/\1 \2/p' | tail -1 \
    | awk '{ f = $2 == "K" ? 1024 : $2 == "M" ? 1048576 : 1073741824; printf "%.1f", $1 * f / 1e6 }'
}

# sweep_dead_labs: tears down the labs of test runs that were killed before their
# cleanup ran (ctest's timeout kills with SIGKILL): their RAM images would
# otherwise pile up in /dev/shm. A test lab is named t<pid> of its test process.
sweep_dead_labs() {
  local dir pid
  for dir in /run/nasperf-lab/t[0-9]*; do
    [ -d "$dir" ] || continue
    pid=${dir##*/t}
    alive "$pid" && continue
    NASPERF_LAB=t$pid "$LAB_SH" down >/dev/null 2>&1 || true
  done
}

on_client() { "$LAB_SH" client -- "$@"; }
on_nas() { "$LAB_SH" nas -- "$@"; }

# lab_receiver NAME [receiver flags...]: a receiver on the lab's NAS; sets
# ${NAME}_PID and ${NAME}_PORT like start_receiver.
lab_receiver() {
  local name=$1; shift
  local portfile=$T/$name.ports
  rm -f "$portfile"
  "$LAB_SH" nas -- "$NASPERF" receiver --listen "$NAS_IP:0" --port-file "$portfile" "$@" >"$T/$name.log" 2>&1 &
  local pid=$!
  PIDS+=("$pid")
  wait_port_file "receiver $name to listen on the lab NAS" "$portfile" "$pid" "$T/$name.log"
  printf -v "${name}_PID" '%s' "$pid"
  printf -v "${name}_PORT" '%s' "$(sed -n 's/^control=//p' "$portfile")"
}

# csv_role_all FILE ROLE COLUMN VALUE: every row of ROLE has COLUMN = VALUE.
csv_role_all() {
  local file=$1 role=$2 col=$3 want=$4 got
  got=$(csv_role_col "$file" "$role" "$col" | sort -u)
  [ "$got" = "$want" ] || fail "$role $col: expected $want on every row, got: ${got//$'\n'/ }"
}

on_hop() { "$LAB_SH" hop -- "$@"; }

# lab_capture WHERE IFACE FILE SNAPLEN FILTER: tcpdump on the lab's WHERE (client, hop,
# nas), interface IFACE (any: all), into FILE, SNAPLEN bytes of each packet (0: all),
# until lab_stop_capture; returns once it listens. One capture at a time.
lab_capture() {
  rm -f "$T/tcpdump.log" "$T/tcpdump.pid"
  # tcpdump's own pid, not lab.sh's: only tcpdump flushes its file on SIGINT. Immediate
  # mode: SIGINT ends it at once, and what waits in its ring unread is lost; an 8 MiB
  # ring drops less.
  # shellcheck disable=SC2016  # $$ and the positionals are the inner sh's
  "$LAB_SH" "$1" -- sh -c 'echo $$ >"$1"; exec tcpdump -i "$2" --immediate-mode -U -n -B 8192 -s "$4" -w "$3" $5' sh \
    "$T/tcpdump.pid" "$2" "$3" "$4" "$5" >"$T/tcpdump.log" 2>&1 &
  CAPTURE_PID=$!
  PIDS+=("$CAPTURE_PID")
  # shellcheck disable=SC2317  # called by wait_for
  tcpdump_listening() { grep -q "listening on" "$T/tcpdump.log"; }
  wait_for "tcpdump to listen on the lab's $1" 10 tcpdump_listening
}
# lab_stop_capture: ends lab_capture's tcpdump, its file flushed.
lab_stop_capture() {
  kill -INT "$(cat "$T/tcpdump.pid")"
  wait_pid "tcpdump to stop" 10 "$CAPTURE_PID" || true
}
# lab_stop_whole_capture: the same, and a capture from which the kernel dropped a packet
# fails the test (a ground truth counted from it would come out short). A packet or two
# still in flight at SIGINT may go uncaught: what the capture is read for must check it
# holds all it counts (every file's calls answered).
lab_stop_whole_capture() {
  lab_stop_capture
  grep -q "^0 packets dropped by kernel" "$T/tcpdump.log" ||
    fail "the capture is not whole: $(tail -3 "$T/tcpdump.log" | tr '\n' ' ')"
}

# lab_agent NAME WHERE [agent flags...]: `nasperf agent` on the lab's WHERE (nas,
# client1, client2, ...) listening on ADDR:7600 of that namespace; sets ${NAME}_PID.
lab_agent() {
  local name=$1 where=$2; shift 2
  local portfile=$T/$name.ports address
  case $where in
    nas) address=$NAS_IP ;;
    client) address=$CLIENT_IP ;;
    client*) address=198.18.0.$((10 + ${where#client})) ;;
    *) fail "lab_agent: no host $where" ;;
  esac
  rm -f "$portfile"
  "$LAB_SH" "$where" -- "$NASPERF" agent --listen "$address:7600" --port-file "$portfile" "$@" >>"$T/$name.log" 2>&1 &
  local pid=$!
  PIDS+=("$pid")
  wait_port_file "agent $name to listen on the lab's $where" "$portfile" "$pid" "$T/$name.log"
  printf -v "${name}_PID" '%s' "$pid"
}

# lab_plan_two_clients_to_nas SIZE: the plan lines for agents client1 and client2,
# each sending SIZE to the host named "nas" (append after a plan's own header).
lab_plan_two_clients_to_nas() {
  local c
  for c in 1 2; do printf '[[host]]\nname = "client%s"\nagent = "198.18.0.%s:7600"\n' "$c" $((10 + c)); done
  for c in 1 2; do printf '[[transfer]]\nfrom = "client%s"\nto = "nas"\nsize = "%s"\n' "$c" "$1"; done
}

# lab_sshd [SETENV]: a real sshd on the lab's NAS ($NAS_IP:2222) with throwaway keys in
# $T/ssh: log in with $T/ssh/user_ed25519, its host key in $T/ssh/known_hosts. SETENV:
# the session environment ("NAME=VALUE ...", default SHLVL=1). SFTP is on.
lab_sshd() {
  [ -x /usr/sbin/sshd ] || skip "openssh-server is not installed"
  install -d -m0755 /run/sshd
  mkdir -p "$T/ssh"
  ssh-keygen -q -t ed25519 -N '' -f "$T/ssh/host_ed25519"
  ssh-keygen -q -t ed25519 -N '' -f "$T/ssh/user_ed25519"
  cp "$T/ssh/user_ed25519.pub" "$T/ssh/authorized_keys"
  echo "[$NAS_IP]:2222 $(cut -d' ' -f1,2 "$T/ssh/host_ed25519.pub")" >"$T/ssh/known_hosts"
  cat >"$T/ssh/sshd_config" <<CONF
Port 2222
ListenAddress $NAS_IP
HostKey $T/ssh/host_ed25519
AuthorizedKeysFile $T/ssh/authorized_keys
PidFile $T/ssh/sshd.pid
StrictModes no
UsePAM no
PasswordAuthentication no
PermitRootLogin prohibit-password
Subsystem sftp internal-sftp
SetEnv ${1:-SHLVL=1} ${NASPERF_SUITE_RUN:+NASPERF_SUITE_RUN=$NASPERF_SUITE_RUN}
UseDNS no
CONF
  /usr/sbin/sshd -t -f "$T/ssh/sshd_config" || fail "sshd_config rejected"
  "$LAB_SH" nas -- /usr/sbin/sshd -D -e -f "$T/ssh/sshd_config" 2>"$T/sshd.log" &
  PIDS+=($!)
  # shellcheck disable=SC2317  # called by wait_for, through "$@"
  sshd_up() { on_client bash -c "exec 3<>/dev/tcp/$NAS_IP/2222" 2>/dev/null; }
  wait_for "sshd in the NAS namespace" 20 sshd_up
}
