#!/usr/bin/env bash
# Benchmark (not a test): nasperf next to iperf3 on loopback, interleaved rounds,
# the same byte count for every tool, medians and ratios in one markdown table.
#   1. iperf3 single stream (-l 1M) vs nasperf into a discard target, and nasperf
#      with 4 streams of a quarter each
#   2. iperf3 -s -F /dev/shm/file  vs  nasperf into a /dev/shm directory, and dd
#      writing the same bytes there with no network (the kernel's page-cache cost)
#   3. the floor of each end's own work (tests/perf/tcp_floor): bare sends of nasperf's
#      payload or of one unchanging buffer, a bare splice receiver into discard or /dev/shm
# Also: CPU seconds per GB on each end (processes seen from outside: /proc ticks,
# the shell's `times`, iperf3's own -J figures), and how short iperf3's -F file came out.
# Then the collector: reports per second from 8 concurrent reporters, and the memory
# it holds after 100k rows.
# ssh (root: starts its own sshd on loopback with throwaway keys): one file, from and
# to /dev/shm, through nasperf native, nasperf sftp, nasperf scp, OpenSSH scp (SFTP
# protocol) and scp -O, all to the same sshd.
# reads: a file of READ_SIZE on the checkout's own disk (READ_DIR, default build/bench-reads),
# read by the NAS agent and streamed over loopback into a discarding client, next to fio
# and dd reading the same file with no network: past the cache (nasperf --read-mode
# direct; fio --direct=1; dd iflag=direct) and cold through it (the file's pages dropped
# first: nasperf --cache cold; fio --invalidate=1). Every tool in 1 MiB reads.
# `lab` (root, not in `all`): the namespace lab's link (scripts/lab.sh) shaped to
# LAB_RATE at MTU 1500 and 9000, iperf3 vs nasperf into discard, with line_rate_pct.
# `shares` (root, not in `all`): nasperf --transport nfs next to libnfs's own nfs-cp,
# nasperf --transport smb (one channel, two, four) next to Samba's own smbclient put,
# nasperf --transport path next to dd conv=fsync into the export's directory mounted on the
# client through sshfs, and the same on the NAS with no network: the same
# SHARE_SIZE file from /dev/shm into the lab's nfs-ganesha export and smbd share of its
# RAM-backed cache, over the lab link at SHARE_RATE (default 10gbit: far above 1 Gbit/s);
# every transfer in a fresh lab of its own, the tools' order reversed every other round.
# `durable` (root, not in `all`): DURABLE_SIZE written with O_DIRECT into ext4 on a loop
# device over a file on the checkout's disk, by nasperf (--write-mode direct, over loopback
# and with no network through --transport path), fio
# appending and dd, with the device's own count and mean size of the writes it saw.
#   ROUNDS=3 SIZE=4GiB SSH_SIZE=1GiB READ_SIZE=2GiB REPORTS=100000 LAB_RATE=4gbit \
#     SHARE_SIZE=1GiB SHARE_RATE=10gbit DURABLE_SIZE=1GiB \
#     scripts/bench.sh [network|collector|ssh|reads|lab|shares|durable|all]...
# NASPERF=FILE measures another nasperf binary, e.g. the static one a NAS runs
# (dist/nasperf-VERSION-linux-ARCH from scripts/package.sh): its start-up costs less CPU
# than the dynamic build/nasperf's, which the senders' whole-process figures include.
# (run nothing else meanwhile)
set -euo pipefail
cd "$(dirname "$0")/.."
SECTIONS=("${@:-all}")
ROUNDS=${ROUNDS:-3}
REPORTS=${REPORTS:-100000}
SIZE=${SIZE:-4GiB}
SSH_SIZE=${SSH_SIZE:-1GiB}
NASPERF=${NASPERF:-build/nasperf}
if [ ! -x "$NASPERF" ]; then
  scripts/install-deps.sh
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  cmake --build build -j2 >/dev/null
fi
command -v iperf3 >/dev/null || scripts/install-deps.sh

T=$(mktemp -d /tmp/nasperf-bench.XXXXXX)
SHM=$(mktemp -d /dev/shm/nasperf-bench.XXXXXX)
NASPERF_TOKEN=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
export NASPERF_TOKEN
export HOME=$T
PIDS=()
BENCH_LAB=""  # set while a lab of the bench's own is up
bench_cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null
  [ -z "$BENCH_LAB" ] || NASPERF_LAB=$BENCH_LAB scripts/lab.sh down >/dev/null 2>&1
  [ -z "$HUGE_BEFORE" ] || echo "$HUGE_BEFORE" >/proc/sys/vm/nr_hugepages
  if [ -n "$DURABLE_DEV" ]; then  # bench_durable's loop device, after its receiver is gone
    sync
    umount "$DURABLE_MNT" 2>/dev/null
    losetup -d "$DURABLE_DEV" 2>/dev/null
    rm -rf "$DURABLE_IMAGE_DIR"
  fi
  rm -rf "$SHM"
  [ -n "${BENCH_KEEP:-}" ] || rm -rf "$T"
}
trap bench_cleanup EXIT
# fio's buffers in huge pages (--mem=shmhuge) need pages reserved: as root, 16 more
# (32 MiB) for the bench's life. nasperf's O_DIRECT buffers are huge pages by advice
# (common/huge_buffer.h), and on a disk that takes few segments per request the
# buffer's layout decides the rate (a VM's disk here: fio read 666 MB/s from ordinary
# pages, 3475-3652 from huge ones), so fio runs both ways. FIO_HUGE: 1 when it can.
HUGE_BEFORE="" FIO_HUGE="" DURABLE_DEV=""
reserve_fio_huge_pages() {
  [ "$(id -u)" -eq 0 ] && [ -z "$HUGE_BEFORE" ] || return 0
  HUGE_BEFORE=$(cat /proc/sys/vm/nr_hugepages)
  echo $((HUGE_BEFORE + 16)) >/proc/sys/vm/nr_hugepages 2>/dev/null || true
  [ "$(cat /proc/sys/vm/nr_hugepages)" -lt $((HUGE_BEFORE + 2)) ] || FIO_HUGE=1
}
# fio_mb_s READ|WRITE FIO_ARGS...: fio's MB/s for one job; "—" for --mem=shmhuge without FIO_HUGE.
fio_mb_s() {
  local dir=$1
  shift
  if [[ " $* " == *" --mem=shmhuge "* ]] && [ -z "$FIO_HUGE" ]; then echo "—"; return 0; fi
  fio "$@" --output-format=json \
    | python3 -c 'import json,sys; print("%.1f" % (json.load(sys.stdin)["jobs"][0][sys.argv[1]]["bw_bytes"] / 1e6))' "$dir"
}

size_bytes=$(numfmt --from=iec "${SIZE%iB}" 2>/dev/null || numfmt --from=iec "$SIZE")
ssh_bytes=$(numfmt --from=iec "${SSH_SIZE%iB}" 2>/dev/null || numfmt --from=iec "$SSH_SIZE")
tick=$(getconf CLK_TCK)

wait_file() { for _ in $(seq 200); do [ -s "$1" ] && return 0; sleep 0.05; done; echo "bench: $1 never appeared" >&2; exit 1; }
wait_listen() { for _ in $(seq 200); do ss -ltn "sport = :$1" | grep -q LISTEN && return 0; sleep 0.05; done; echo "bench: nothing listens on $1" >&2; exit 1; }
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

start_receiver() {  # name target -> sets ${name}_port ${name}_pid
  "$NASPERF" receiver --target "$2" --listen 127.0.0.1:0 --min-free off --port-file "$T/$1.ports" >"$T/$1.log" 2>&1 &
  PIDS+=($!)
  printf -v "$1_pid" '%s' $!
  wait_file "$T/$1.ports"
  printf -v "$1_port" '%s' "$(sed -n 's/^control=//p' "$T/$1.ports")"
}
start_receiver discard discard
start_receiver shm "$SHM"

iperf_port=$(( 20000 + RANDOM % 20000 ))
run_iperf() {  # [extra server args] -> "MB/s sender_cpu_s_per_GB receiver_cpu_s_per_GB"
  iperf3 -s -1 -p "$iperf_port" "$@" >/dev/null 2>&1 &
  local server=$!
  wait_listen "$iperf_port"
  # -l 1M: the same 1 MiB writes nasperf makes (iperf3's default 128 KiB halves it on loopback)
  local cpu user sys
  # The client's whole process, as nasperf's sender is measured (start-up and set-up
  # included; iperf3's own figure covers the test's seconds alone).
  cpu=$( ( iperf3 -c 127.0.0.1 -p "$iperf_port" -n "$size_bytes" -l 1M -J >"$T/iperf.json"; times ) | tail -1 )
  read -r user sys <<<"$cpu"
  wait "$server" || true
  # cpu_utilization_percent: each process's user + system time over the test's wall
  # time (host = the client, which sends; remote = the server, which receives).
  awk -F'[:,]' -v b="$size_bytes" -v whole="$(seconds "$user") $(seconds "$sys")" '
    /"sum_received"/ {rx=1} rx && /"seconds"/ && !secs {secs=$2}
    rx && /"bits_per_second"/ && !rate {rate=$2/8e6}
    /"host_total"/ {host=$2} /"remote_total"/ {remote=$2}
    END {gb=b/1e9; split(whole, c, " ");
      printf "%.1f %.3f %.3f %.3f\n", rate, (c[1] + c[2])/gb, remote/100*secs/gb, host/100*secs/gb}' "$T/iperf.json"
}

# seconds SPEC: "1m2.5s" (bash `times`) -> seconds
seconds() { awk -v t="$1" 'BEGIN {split(t, p, "m"); sub("s", "", p[2]); printf "%.3f", p[1] * 60 + p[2]}'; }

run_nasperf() {  # name [streams] -> "MB/s sender_cpu_s_per_GB receiver_cpu_s_per_GB"
  local name=$1 streams=${2:-1} port_var="$1_port" pid_var="$1_pid"
  local before after each=$((size_bytes / ${2:-1})) cpu
  rm -rf "$T/out-$name"  # this run's rows only
  before=$(cpu_ticks "${!pid_var}")
  # The sender's own CPU: the subshell's `times` after it, children's line (`times`
  # itself must not run in a pipeline's subshell, which has no children).
  cpu=$( ( "$NASPERF" sender --to 127.0.0.1:"${!port_var}" --size "$each" --streams "$streams" --runs 1 --no-progress \
      --out "$T/out-$name" --label "$name" >"$T/sender-$name.log" 2>&1 || { cat "$T/sender-$name.log" >&2; exit 1; }
    times ) | tail -1 )
  after=$(cpu_ticks "${!pid_var}")
  local user sys rate
  read -r user sys <<<"$cpu"
  # In total: every stream's bytes over the span from the first one's first byte to
  # the last one's answer (one stream: its own MB/s).
  rate=$(awk -F, 'NR==1 {for (i=1;i<=NF;i++) h[$i]=i; next} $h["role"]=="sender" {
      split($h["started_at"], d, "T"); split(d[2], c, ":"); sub("Z", "", c[3]);
      t0 = c[1] * 3600 + c[2] * 60 + c[3] + $h["first_byte_s"]; t1 = t0 + $h["duration_s"];
      if (n == 0 || t0 < lo) lo = t0; if (n == 0 || t1 > hi) hi = t1; bytes += $h["bytes"]; n++ }
    END {printf "%.1f", bytes / (hi - lo) / 1e6}' "$T/out-$name/transfers.csv")
  awk -v r="$rate" -v s="$(seconds "$user") $(seconds "$sys")" -v t=$((after - before)) -v hz="$tick" -v b="$size_bytes" \
    'BEGIN {split(s, c, " "); gb = b / 1e9; printf "%s %.3f %.3f\n", r, (c[1] + c[2]) / gb, t / hz / gb}'
}

# dd of the same byte count into /dev/shm: no network, one copy from user space into
# the page cache (and the rm that frees it), so its CPU is the floor for any receiver
# that keeps the bytes there.
run_dd() {  # -> "MB/s cpu_s_per_GB"
  local cpu start end user sys
  start=$(date +%s%N)
  cpu=$( ( dd if=/dev/zero of="$SHM/dd.out" bs=1M count=$((size_bytes >> 20)) status=none; times ) | tail -1 )
  end=$(date +%s%N)
  # Freeing the pages is CPU too, and the receiver's figure holds its own removal.
  cpu=$( ( rm "$SHM/dd.out"; times ) | tail -1 | awk -v w="$cpu" '{split(w, a, " "); print a[1], a[2], $1, $2}')
  local rm_user rm_sys
  read -r user sys rm_user rm_sys <<<"$cpu"
  awk -v c="$(seconds "$user") $(seconds "$sys") $(seconds "$rm_user") $(seconds "$rm_sys")" -v ns=$((end - start)) -v b="$size_bytes" \
    'BEGIN {split(c, t, " "); printf "%.1f %.3f\n", b / (ns / 1e9) / 1e6, (t[1] + t[2] + t[3] + t[4]) / (b / 1e9)}'
}

# The floor of each end's own work (tests/perf/tcp_floor: a bare loop of 1 MiB sends, a
# bare splice receiver, no control channel, samples or rows), so the table shows how far
# nasperf's ends are from it: the floor sending nasperf's payload (its one XOR pass per
# chunk) or one unchanging buffer (iperf3's way), the floor receiver into discard or a
# /dev/shm file (removed after, as dd's is).
FLOOR=build/tests/tcp_floor
run_floor() {  # KIND FILE -> "MB/s sender_cpu_s_per_GB receiver_cpu_s_per_GB" ("? ? ?" without it)
  [ -x "$FLOOR" ] || { echo "? ? ?"; return 0; }
  rm -f "$T/floor.port"
  ( "$FLOOR" receive "$T/floor.port" "$2" && times >"$T/floor.rx" ) &
  local receiver=$! start end cpu user sys rx_user rx_sys
  wait_file "$T/floor.port"
  start=$(date +%s%N)
  cpu=$( ( "$FLOOR" send "$(cat "$T/floor.port")" "$size_bytes" "$1"; times ) | tail -1 )
  end=$(date +%s%N)
  wait "$receiver"
  read -r user sys <<<"$cpu"
  read -r rx_user rx_sys < <(tail -1 "$T/floor.rx")
  awk -v c="$(seconds "$user") $(seconds "$sys") $(seconds "$rx_user") $(seconds "$rx_sys")" -v ns=$((end - start)) \
    -v b="$size_bytes" 'BEGIN {split(c, t, " "); gb = b / 1e9; printf "%.1f %.3f %.3f\n", b / (ns / 1e9) / 1e6, (t[1] + t[2]) / gb, (t[3] + t[4]) / gb}'
}

bench_collector() {
  "$NASPERF" collector --out "$T/collector" --listen 127.0.0.1:0 --port-file "$T/collector.port" >"$T/collector.log" 2>&1 &
  local pid=$!
  PIDS+=("$pid")
  wait_file "$T/collector.port"
  local port rss_before flood rss_after
  port=$(sed -n 's/^port=//p' "$T/collector.port")
  rss_before=$(awk '/VmRSS/ {print $2}' "/proc/$pid/status")
  flood=$(build/tests/collector_client 127.0.0.1:"$port" "$NASPERF_TOKEN" flood 8 $((REPORTS / 8)))
  rss_after=$(awk '/VmRSS/ {print $2}' "/proc/$pid/status")
  local rows per_s
  rows=$(($(wc -l <"$T/collector/transfers.csv") - 1))
  per_s=${flood##*reports_per_s=}
  per_s=${per_s%%[!0-9]*}
  cat <<TABLE
| collector, 8 concurrent reporters (one gRPC channel each) | |
|---|---:|
| reports (each a row + 3 samples), all acknowledged | $rows |
| reports per second (synced before each ack) | $per_s |
| collector RSS before / after $rows rows | $((rss_before / 1024)) MiB / $((rss_after / 1024)) MiB |

TABLE
}

# One lab per MTU; in each, interleaved rounds of iperf3 and nasperf over the same
# shaped link, both from the client namespace into the NAS namespace.
bench_lab() {
  [ "$(id -u)" -eq 0 ] || { echo "bench: lab needs root" >&2; exit 1; }
  local rate=${LAB_RATE:-4gbit} mtu round
  BENCH_LAB=bench$$
  export NASPERF_LAB=$BENCH_LAB
  echo "| lab link shaped to $rate, $SIZE per transfer, median of $ROUNDS rounds | iperf3 MB/s | nasperf MB/s | ratio | nasperf line_rate_pct | TCP ceiling MB/s |"
  echo "|---|---:|---:|---:|---:|---:|"
  for mtu in 1500 9000; do
    scripts/lab.sh up --mtu "$mtu" --rate "$rate" >"$T/lab-$mtu.log"
    # shellcheck disable=SC1090
    . "/run/nasperf-lab/$NASPERF_LAB/env"
    scripts/lab.sh nas -- "$NASPERF" receiver --target discard --listen "$NAS_IP:0" --port-file "$T/lab.ports" \
      >"$T/lab-rx-$mtu.log" 2>&1 &
    PIDS+=($!)
    scripts/lab.sh nas -- iperf3 -s -B "$NAS_IP" -p "$iperf_port" >/dev/null 2>&1 &
    PIDS+=($!)
    wait_file "$T/lab.ports"
    local port iperf=() nas=() pct=() ceiling
    port=$(sed -n 's/^control=//p' "$T/lab.ports")
    for _ in $(seq 50); do scripts/lab.sh client -- bash -c "exec 3<>/dev/tcp/$NAS_IP/$iperf_port" 2>/dev/null && break; sleep 0.1; done
    for round in $(seq "$ROUNDS"); do
      echo "bench: lab MTU $mtu round $round/$ROUNDS" >&2
      scripts/lab.sh client -- iperf3 -c "$NAS_IP" -p "$iperf_port" -n "$size_bytes" -l 1M -J >"$T/iperf.json"
      iperf+=("$(awk -F'[:,]' '/"sum_received"/ {found=1} found && /"bits_per_second"/ {printf "%.1f\n", $2/8e6; exit}' "$T/iperf.json")")
      scripts/lab.sh client -- "$NASPERF" sender --to "$NAS_IP:$port" --size "$SIZE" --runs 1 --link-speed "$rate" \
        --no-progress --out "$T/lab-out-$mtu-$round" >"$T/lab-tx.log" 2>&1 || { cat "$T/lab-tx.log" >&2; exit 1; }
      read -r r p < <(awk -F, 'NR==1 {for (i=1;i<=NF;i++) {if ($i=="role") c=i; if ($i=="mb_per_s") m=i; if ($i=="line_rate_pct") l=i}; next}
        $c=="sender" {print $m, $l}' "$T/lab-out-$mtu-$round/transfers.csv")
      nas+=("$r"); pct+=("$p")
    done
    ceiling=$(grep -o 'TCP ceiling [0-9]*' "$T/lab-tx.log" | awk '{print $3}')
    local mi mn
    mi=$(median <<<"${iperf[*]}"); mn=$(median <<<"${nas[*]}")
    echo "| MTU $mtu | $mi | $mn | **$(ratio "$mn" "$mi")** | $(median <<<"${pct[*]}") | $ceiling |"
    kill "${PIDS[@]: -2}" 2>/dev/null || true
    wait "${PIDS[@]: -2}" 2>/dev/null || true
    rm -f "$T/lab.ports"
    scripts/lab.sh down >/dev/null
  done
  BENCH_LAB=""
  echo
  echo "machine: $(nproc) cores, $(uname -r), $(date -u +%Y-%m-%d)"
}

# Every transfer into a lab of its own (scripts/lab.sh up and shares, then down: a fresh
# ext4 export on a fresh loop device, a fresh nfs-ganesha and smbd; under a second each),
# since a lab's state carries from one tool to the next: after one nfs-cp into the cache
# export, the next NFS writer there ran at 150-300 MB/s instead of 800-1050, also after 6 s
# idle, while the tmpfs export showed no such fall (ganesha keeps nfs-cp's file open; its
# blocks stay taken). The order alternates per round (forward, then reversed). The same file
# from /dev/shm for every tool. nfs-cp's time is its whole run (mount included, a few ms),
# nasperf's its row's: first WRITE to the last answer (--sync none, no COMMIT: nfs-cp sends
# none); smbclient's its own "(N kb/s)" for the put, nasperf SMB's first WRITE to CLOSE.
# The export's directory mounted on the client through sshfs (FUSE; this kernel has no NFS or
# SMB client) from an sshd on the NAS: dd, and nasperf --transport path, into the mount. And
# the NAS's own disk with no network, on the NAS: dd, and nasperf --transport path into the
# same directory (issue 45: "network or disk?" in one table).
SHARE_TOOLS=(nfs-cp nfs smbclient smb1 smb2 smb4 sshfs-dd sshfs local-dd local)

# sshfs_run CMD...: CMD in the client's namespace with the export's directory mounted at
# $T/sshfs/mnt through sshfs from an sshd started on the NAS (the lab's `down` ends it).
sshfs_run() {
  local dir=$T/sshfs
  if [ ! -f "$dir/user" ]; then
    mkdir -p "$dir/mnt" /run/sshd
    ssh-keygen -q -t ed25519 -N '' -f "$dir/host" && ssh-keygen -q -t ed25519 -N '' -f "$dir/user"
    cp "$dir/user.pub" "$dir/authorized_keys"
  fi
  printf '%s\n' "Port 22" "ListenAddress $NAS_IP" "HostKey $dir/host" "AuthorizedKeysFile $dir/authorized_keys" \
    "PidFile $dir/sshd.pid" "StrictModes no" "UsePAM no" "PasswordAuthentication no" \
    "PermitRootLogin prohibit-password" "Subsystem sftp internal-sftp" "UseDNS no" >"$dir/sshd_config"
  scripts/lab.sh nas -- /usr/sbin/sshd -f "$dir/sshd_config" -E "$T/sshfs-sshd.log"
  scripts/lab.sh wait "$NAS_IP:22" >/dev/null
  echo "$NAS_IP $(cut -d' ' -f1,2 "$dir/host.pub")" >"$dir/known_hosts"
  # One shell in the client's namespace mounts, runs and unmounts (ip netns exec gives each
  # call a mount namespace of its own).
  # shellcheck disable=SC2016  # expanded by the inner shell
  scripts/lab.sh client -- bash -c 'mnt=$1 opts=$2 from=$3; shift 3
    sshfs -o "$opts" "$from" "$mnt" || exit 1
    "$@"; rc=$?
    fusermount -u "$mnt" || umount -l "$mnt"
    exit "$rc"' sshfs-run "$dir/mnt" \
    "IdentityFile=$dir/user,UserKnownHostsFile=$dir/known_hosts,StrictHostKeyChecking=yes,BatchMode=yes" \
    "root@$NAS_IP:$CACHE" "$@"
}

# share_once TOOL ROUND: one transfer in a fresh lab -> SHARE_MBS, SHARE_USED (the export's
# used KiB just before it).
share_once() {
  local tool=$1 round=$2 out=$T/share-$1-$2 t0 t1 put
  scripts/lab.sh up --mtu 9000 --rate "$share_rate" --disk-size "$share_disk" >"$T/shares-up.log"
  scripts/lab.sh shares >"$T/shares.log"
  # shellcheck disable=SC1090
  . "/run/nasperf-lab/$NASPERF_LAB/env"
  SHARE_USED=$(df -k --output=used "$CACHE" | tail -1 | tr -d ' ')
  # Memory the transfer can take without the VM's host faulting it in: this guest hands
  # free memory back to its host (virtio-balloon free page reporting, 2 MiB blocks) about
  # 2 s after it is freed, and the first touch of such a page costs a host fault. A fresh
  # page cache and tmpfs image landing on those pages made smbd's copies into the page
  # cache 6x dearer (120-300 MB/s against 900-1000, every first put into a fresh lab).
  # Three times the file (page cache, image, buffers), touched and freed just before.
  head -c $(( 3 * share_bytes )) /dev/zero >"$SHM/share-warm"
  rm -f "$SHM/share-warm"
  local cpu0 rep0
  cpu0=$(machine_cpu_ticks); rep0=$(reported_kib)
  local url="nfs://$NAS_IP$NFS_ROOT/cache"
  case $tool in
    nfs-cp)
      t0=$(date +%s%N)
      scripts/lab.sh client -- nfs-cp "$share_src" "$url/nfs-cp.bin?uid=0&gid=0&version=3&autoreconnect=0" >/dev/null
      t1=$(date +%s%N)
      SHARE_MBS=$(awk -v b="$share_bytes" -v ns=$(( t1 - t0 )) 'BEGIN {printf "%.1f", b / ns * 1000}') ;;
    nfs)
      scripts/lab.sh client -- "$NASPERF" sender --transport nfs --to "$url" --file "$share_src" --runs 1 --sync none \
        --no-progress --out "$out" >"$out.log" 2>&1 || { cat "$out.log" >&2; exit 1; }
      SHARE_MBS=$(row_mbs "$out") ;;
    smbclient)
      put=$(scripts/lab.sh client -- smbclient "//$NAS_IP/cache" -A "$SMB_CREDENTIALS" -m SMB3 \
        -c "put $share_src put.bin" 2>&1) || { echo "$put" >&2; exit 1; }
      # its "(N kb/s)" is KiB/s: the put, not the login
      SHARE_MBS=$(sed -n 's/.*(\([0-9.]*\) kb\/s).*/\1/p' <<<"$put" | head -1 | awk '{ printf "%.1f", $1 * 1024 / 1e6 }') ;;
    smb*)
      scripts/lab.sh client -- "$NASPERF" sender --transport smb --to "smb://$NAS_IP/cache" \
        --smb-credentials "$SMB_CREDENTIALS" --smb-channels "${tool#smb}" --file "$share_src" --runs 1 --no-progress \
        --out "$out" >"$out.log" 2>&1 || { cat "$out.log" >&2; exit 1; }
      SHARE_MBS=$(row_mbs "$out") ;;
    sshfs-dd)
      SHARE_MBS=$(sshfs_run dd if="$share_src" of="$T/sshfs/mnt/dd.bin" bs=1M conv=fsync 2>&1 |
        dd_mb_s) ;;
    sshfs)
      sshfs_run "$NASPERF" sender --transport path --to "$T/sshfs/mnt" --file "$share_src" --runs 1 --sync end \
        --no-progress --out "$out" >"$out.log" 2>&1 || { cat "$out.log" >&2; exit 1; }
      SHARE_MBS=$(row_mbs "$out") ;;
    local-dd)
      SHARE_MBS=$(scripts/lab.sh nas -- dd if="$share_src" of="$CACHE/dd.bin" bs=1M conv=fsync 2>&1 |
        dd_mb_s) ;;
    local)
      scripts/lab.sh nas -- "$NASPERF" sender --transport path --to "$CACHE" --file "$share_src" --runs 1 --sync end \
        --no-progress --out "$out" >"$out.log" 2>&1 || { cat "$out.log" >&2; exit 1; }
      SHARE_MBS=$(row_mbs "$out") ;;
  esac
  # The whole machine's CPU seconds per GB over the transfer, and the memory the VM reported
  # free to its host meanwhile (MiB): what a slow round spent its time on.
  SHARE_CPU=$(awk -v t=$(( $(machine_cpu_ticks) - cpu0 )) -v hz="$tick" -v b="$share_bytes" 'BEGIN {printf "%.2f", t / hz / (b / 1e9)}')
  SHARE_REPORTED=$(( ($(reported_kib) - rep0) / 1024 ))
  scripts/lab.sh down >/dev/null
}
machine_cpu_ticks() { awk '/^cpu / {print $2 + $3 + $4 + $7 + $8; exit}' /proc/stat; }
reported_kib() { cat /sys/module/page_reporting/parameters/reported_kib 2>/dev/null || echo 0; }

# spread VALUES: "min–max"
spread() { tr ' ' '\n' | grep . | sort -g | awk 'NR==1 {lo=$1} {hi=$1} END {if (lo == hi) printf "%s", lo; else printf "%s–%s", lo, hi}'; }
# round_ratios A B: each round's A over the same round's B, rounded to 2 places
round_ratios() { local -a a b; read -ra a <<<"$1"; read -ra b <<<"$2"; local i; for i in "${!a[@]}"; do ratio "${a[$i]}" "${b[$i]}"; printf ' '; done; }

bench_shares() {
  [ "$(id -u)" -eq 0 ] || { echo "bench: shares needs root" >&2; exit 1; }
  command -v nfs-cp >/dev/null || { echo "bench: no nfs-cp (package libnfs-utils)" >&2; exit 1; }
  command -v sshfs >/dev/null || { echo "bench: no sshfs (package sshfs)" >&2; exit 1; }
  local size=${SHARE_SIZE:-1GiB} round tool order used=() orders=()
  share_rate=${SHARE_RATE:-10gbit} share_src=$SHM/share-src.bin
  share_bytes=$(numfmt --from=iec "${size%iB}")
  share_disk="$(( share_bytes / 1048576 + 256 ))M"  # one file: each transfer has its own export
  BENCH_LAB=bench$$
  export NASPERF_LAB=$BENCH_LAB
  head -c "$share_bytes" /dev/urandom >"$share_src"
  declare -A share_got
  for round in $(seq "$ROUNDS"); do
    read -ra order <<<"$(in_turns "$round" "${SHARE_TOOLS[@]}")"
    orders+=("${order[*]}")
    for tool in "${order[@]}"; do
      echo "bench: shares round $round/$ROUNDS: $tool" >&2
      share_once "$tool" "$round"
      share_got[$tool]+="$SHARE_MBS "
      share_got[$tool-cpu]+="$SHARE_CPU "
      share_got[$tool-rep]+="$SHARE_REPORTED "
      used+=("$SHARE_USED")
    done
  done
  BENCH_LAB=""
  rm -f "$share_src"
  share_table "$size"
  echo "rounds (MB/s): nfs-cp [${share_got[nfs-cp]}] nasperf nfs [${share_got[nfs]}] smbclient [${share_got[smbclient]}] nasperf smb 1 channel [${share_got[smb1]}] 2 channels [${share_got[smb2]}] 4 channels [${share_got[smb4]}] dd into sshfs [${share_got[sshfs-dd]}] nasperf path into sshfs [${share_got[sshfs]}] dd on the NAS [${share_got[local-dd]}] nasperf path on the NAS [${share_got[local]}]"
  echo "the machine's CPU s/GB in each transfer: $(for tool in "${SHARE_TOOLS[@]}"; do printf '%s [%s] ' "$tool" "${share_got[$tool-cpu]}"; done)"
  echo "MiB the VM reported free to its host during each: $(for tool in "${SHARE_TOOLS[@]}"; do printf '%s [%s] ' "$tool" "${share_got[$tool-rep]}"; done)"
  echo "order: odd rounds ${orders[0]}; even rounds the reverse. The export's used space before each transfer: $(spread <<<"${used[*]}") KiB (an empty ext4)."
  echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -r), $(date -u +%Y-%m-%d)"
  echo
}

# share_table SIZE: the shares' table from share_got[] (bench_shares's): each tool's median and
# range, each ratio of medians with the range of the rounds' own ratios.
share_table() {
  sm() { median <<<"${share_got[$1]}" | awk '{printf "%.1f", $1}'; }
  row() { echo "| $1 | $(sm "$2") ($(spread <<<"${share_got[$2]}")) | ${3:+**$(ratio "$(sm "$2")" "$(sm "$3")")** ($(spread <<<"$(round_ratios "${share_got[$2]}" "${share_got[$3]}")")) vs $3} |"; }
  cat <<TABLE
| lab link $share_rate MTU 9000, $1 from /dev/shm into a RAM-backed ext4 export, each transfer in a fresh lab; median of $ROUNDS rounds | MB/s (range) | ratio of medians (rounds' range) |
|---|---:|---:|
$(row "NFSv3 to nfs-ganesha: libnfs's nfs-cp (whole run, mount included)" nfs-cp)
$(row "nasperf --transport nfs --sync none" nfs nfs-cp)
$(row "SMB3 to smbd (default signing and encryption): Samba's smbclient -c put (its own rate)" smbclient)
$(row "nasperf --transport smb (one connection, as one Explorer copy)" smb1 smbclient)
$(row "nasperf --transport smb --smb-channels 2" smb2 smbclient)
$(row "nasperf --transport smb --smb-channels 4" smb4 smbclient)
$(row "the export's directory mounted through sshfs (FUSE) on the client: dd bs=1M conv=fsync" sshfs-dd)
$(row "nasperf --transport path into that mount (--sync end)" sshfs sshfs-dd)
$(row "the NAS's own disk, no network: dd bs=1M conv=fsync into the export directory, on the NAS" local-dd)
$(row "nasperf --transport path into the same directory, on the NAS (--sync end)" local local-dd)

TABLE
}

# row_mbs DIR: the mb_per_s of a one-run --out DIR's first row
row_mbs() { awk -F, 'NR==1 {for (i=1;i<=NF;i++) if ($i=="mb_per_s") m=i; next} {print $m; exit}' "$1/transfers.csv"; }
median() { tr ' ' '\n' | grep '^[0-9.]' | sort -g | awk '{v[NR]=$1} END {print NR == 0 ? "—" : (NR%2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2}'; }
m() { median <<<"${results[$1]}"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (b + 0 > 0 && a ~ /^[0-9.]+$/) printf "%.2f", a / b; else printf "—"}'; }
# dd_mb_s: MB/s (10^6) from dd's closing line on stdin ("N bytes (...) copied, S s, ...").
dd_mb_s() { awk '/copied/ {printf "%.1f", $1 / $(NF-3) / 1e6}'; }
# in_turns ROUND KEY...: the keys in order on odd rounds, reversed on even ones, so no
# tool always follows the same one (what a VM's host or a lab still holds from it).
in_turns() {
  local round=$1 key reversed=()
  shift
  if [ $((round % 2)) -eq 1 ]; then echo "$@"; return; fi
  for key in "$@"; do reversed=("$key" "${reversed[@]}"); done
  echo "${reversed[@]}"
}

# nasperf over SSH next to OpenSSH's scp, same file, same sshd (figures: docs/PERFORMANCE.md, issue 5).
bench_ssh() {
  if [ "$(id -u)" -ne 0 ]; then echo "bench: the ssh mode needs root (it starts an sshd); skipped" >&2; return; fi
  unset SSH_AUTH_SOCK
  local dir=$T/ssh remote=$SHM/ssh-remote src=$SHM/ssh-src.bin port
  mkdir -p "$dir" "$remote" /run/sshd
  ssh-keygen -q -t ed25519 -N '' -f "$dir/host" && ssh-keygen -q -t ed25519 -N '' -f "$dir/user"
  cp "$dir/user.pub" "$dir/authorized_keys"
  port=$(( 20000 + RANDOM % 20000 ))
  while ss -ltn "sport = :$port" | grep -q LISTEN; do port=$(( 20000 + RANDOM % 20000 )); done
  printf '%s\n' "Port $port" "ListenAddress 127.0.0.1" "HostKey $dir/host" \
    "AuthorizedKeysFile $dir/authorized_keys" "PidFile $dir/sshd.pid" "StrictModes no" "UsePAM no" \
    "PasswordAuthentication no" "PermitRootLogin prohibit-password" "Subsystem sftp internal-sftp" \
    "SetEnv SHLVL=1" "UseDNS no" >"$dir/sshd_config"
  /usr/sbin/sshd -f "$dir/sshd_config" -D -e 2>"$T/sshd.log" &
  PIDS+=($!)
  wait_listen "$port"
  echo "[127.0.0.1]:$port $(cut -d' ' -f1,2 "$dir/host.pub")" >"$dir/known_hosts"
  : >"$dir/ssh_config"
  head -c "$ssh_bytes" /dev/urandom >"$src"

  nasperf_ssh() {  # transport -> MB/s (the sender row's figure: first byte to the answer)
    local name=$1 out=$T/out-ssh-$1-$RANDOM
    local log=$T/sender-ssh-$name.log
    if [ "$name" = native ]; then
      # shellcheck disable=SC2154  # shm_port: set by start_receiver (printf -v)
      "$NASPERF" sender --to 127.0.0.1:"$shm_port" --file "$src" --runs 1 --no-progress --out "$out" \
        >"$log" 2>&1 || { cat "$log" >&2; exit 1; }
    else
      "$NASPERF" sender --transport "$name" --to "root@127.0.0.1:$remote" --ssh-port "$port" \
        --identity "$dir/user" --known-hosts "$dir/known_hosts" --ssh-config "$dir/ssh_config" \
        --file "$src" --runs 1 --no-progress --out "$out" >"$log" 2>&1 || { cat "$log" >&2; exit 1; }
    fi
    awk -F, 'NR==1 {for (i=1;i<=NF;i++) {if ($i=="role") r=i; if ($i=="mb_per_s") m=i}; next} $r=="sender" {v=$m} END {print v}' "$out/transfers.csv"
  }
  openssh_scp() {  # [scp flags] -> MB/s over the whole command (connect and login included)
    local t0 t1
    t0=$(date +%s%N)
    scp -q "$@" -F "$dir/ssh_config" -i "$dir/user" -o UserKnownHostsFile="$dir/known_hosts" \
      -o StrictHostKeyChecking=yes -o BatchMode=yes -P "$port" "$src" "root@127.0.0.1:$remote/openssh.bin"
    t1=$(date +%s%N)
    cmp -s "$src" "$remote/openssh.bin" || { echo "bench: OpenSSH scp copy differs" >&2; exit 1; }
    rm -f "$remote/openssh.bin"
    awk -v b="$ssh_bytes" -v ns=$((t1 - t0)) 'BEGIN {printf "%.1f\n", b / ns * 1e3}'
  }
  declare -A ssh_results
  for round in $(seq "$ROUNDS"); do
    echo "bench: ssh round $round/$ROUNDS" >&2
    ssh_results[native]+="$(nasperf_ssh native) "
    ssh_results[sftp]+="$(nasperf_ssh sftp) "
    ssh_results[scp]+="$(nasperf_ssh scp) "
    ssh_results[openssh]+="$(openssh_scp) "
    ssh_results[openssh_O]+="$(openssh_scp -O) "
  done
  sm() { median <<<"${ssh_results[$1]}"; }
  local base
  base=$(sm openssh)
  cat <<TABLE
| loopback, one $SSH_SIZE file /dev/shm → /dev/shm, same sshd, median of $ROUNDS interleaved rounds | MB/s | vs OpenSSH scp |
|---|---:|---:|
| OpenSSH scp (SFTP protocol, the OpenSSH 9 default) | $base | 1.00 |
| OpenSSH scp -O (legacy scp protocol) | $(sm openssh_O) | $(ratio "$(sm openssh_O)" "$base") |
| nasperf --transport sftp | $(sm sftp) | **$(ratio "$(sm sftp)" "$base")** |
| nasperf --transport scp | $(sm scp) | $(ratio "$(sm scp)" "$base") |
| nasperf native (receiver agent, sync end) | $(sm native) | $(ratio "$(sm native)" "$base") |

rounds (MB/s): openssh-scp [${ssh_results[openssh]}] scp-O [${ssh_results[openssh_O]}] nasperf-sftp [${ssh_results[sftp]}] nasperf-scp [${ssh_results[scp]}] native [${ssh_results[native]}]
$(grep -o 'cipher [^)]*' "$T/sender-ssh-sftp.log" | head -1) for every SSH row (OpenSSH's default choice too). OpenSSH figures include connect and login; nasperf's run from first byte to the server's answer.
machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -r), $(date -u +%Y-%m-%d)

TABLE
  rm -f "$src"
}

# The NAS reading from its disk: nasperf's read next to fio and dd on the same file.
bench_reads() {
  command -v fio >/dev/null || NASPERF_WITH_FIO=1 scripts/install-deps.sh
  local dir=${READ_DIR:-build/bench-reads} size=${READ_SIZE:-2GiB} round
  mkdir -p "$dir"
  dir=$(realpath "$dir")
  local bytes file=$dir/nasperf-read-benchread-0.dat
  bytes=$(numfmt --from=iec "${size%iB}")
  start_receiver reads "$dir"
  # nasperf_read MODE CACHE -> the NAS agent's MB/s (first byte read to the client's answer)
  nasperf_read() {
    local out=$T/out-read-$1-$RANDOM
    # shellcheck disable=SC2154  # reads_port: set by start_receiver (printf -v)
    "$NASPERF" sender --to 127.0.0.1:"$reads_port" --direction read --size "$size" --read-mode "$1" --cache "$2" \
      --run-id benchread --cleanup never --runs 1 --no-progress --out "$out" >"$out.log" 2>&1 || { cat "$out.log" >&2; exit 1; }
    awk -F, 'NR==1 {for (i=1;i<=NF;i++) h[$i]=i; next} $h["role"]=="receiver" {printf "%.1f", $h["mb_per_s"]}' "$out/transfers.csv"
  }
  fio_read() {  # DIRECT(0|1) [--mem=shmhuge] -> MB/s
    fio_mb_s read --name=read --filename="$file" --rw=read --bs=1M --ioengine=psync --direct="$1" --invalidate=1 \
      --size="$bytes" "${@:2}"
  }
  reserve_fio_huge_pages
  dd_direct() { dd if="$file" of=/dev/null bs=1M iflag=direct 2>&1 | dd_mb_s; }
  local -A r
  # One tool's read: KEY into r. The first round's first read also lays the file out
  # (untimed); the order reverses every other round (in_turns).
  read_one() {
    case $1 in
      nd) r[nd]+="$(nasperf_read direct cold) " ;;
      fd) r[fd]+="$(fio_read 1) " ;;
      fh) r[fh]+="$(fio_read 1 --mem=shmhuge) " ;;
      dd) r[dd]+="$(dd_direct) " ;;
      nc) r[nc]+="$(nasperf_read buffered cold) " ;;
      fc) r[fc]+="$(fio_read 0) " ;;
    esac
  }
  local key
  for round in $(seq "$ROUNDS"); do
    echo "bench: reads round $round/$ROUNDS" >&2
    for key in $(in_turns "$round" nd fd fh dd nc fc); do read_one "$key"; done
  done
  local where
  where="$(df --output=source "$dir" | tail -1), $(stat -f -c %T "$dir")"
  rm -f "$file"
  rmdir "$dir" 2>/dev/null || true
  med() { median <<<"${r[$1]}"; }
  cat <<TABLE
| the NAS reading $size from $where, median of $ROUNDS interleaved rounds | MB/s | ratio |
|---|---:|---:|
| fio --rw=read --bs=1M --direct=1 (no network) | $(med fd) | |
| dd bs=1M iflag=direct (no network) | $(med dd) | |
| fio --direct=1 --mem=shmhuge, buffers in huge pages (no network; root) | $(med fh) | |
| nasperf --direction read --read-mode direct, loopback into discard | $(med nd) | **$(ratio "$(med nd)" "$(med fd)")** vs fio, **$(ratio "$(med nd)" "$(med fh)")** vs fio in huge pages |
| fio --direct=0, the file's pages dropped first (no network) | $(med fc) | |
| nasperf --direction read --cache cold, loopback into discard | $(med nc) | **$(ratio "$(med nc)" "$(med fc)")** vs fio |

rounds (MB/s): fio-direct [${r[fd]}] fio-direct-huge [${r[fh]:-}] dd-direct [${r[dd]}] nasperf-direct [${r[nd]}] fio-cold [${r[fc]}] nasperf-cold [${r[nc]}]
order: odd rounds nasperf-direct, fio-direct, fio-direct-huge, dd-direct, nasperf-cold, fio-cold; even rounds the reverse.
nasperf's figure is its NAS agent's row: first byte read from the disk to the client's answer; fio's and dd's are the disk alone.
machine: $(nproc) cores, $(uname -r), $(date -u +%Y-%m-%d)

TABLE
}

# Durable O_DIRECT writes (issue 48, root, not in `all`): ext4 on a loop device over a
# file on the checkout's own disk (DURABLE_DIR, default build/bench-durable), written
# DURABLE_SIZE at a time by nasperf --write-mode direct --sync end over loopback and
# with no network (--transport path into the mount), by fio
# appending (--rw=write --bs=1M --direct=1 --end_fsync=1 --fallocate=none, one job at
# queue depth 1, as a copy writes) and by dd oflag=direct conv=fsync, in turns (the order
# reversed every other round). The loop device's /sys/block/*/stat before and after each
# shows how the writes reached it: requests, their mean size, and the time it was busy.
bench_durable() {
  [ "$(id -u)" -eq 0 ] || { echo "bench: durable needs root (a loop device and a mount)" >&2; exit 1; }
  command -v fio >/dev/null || NASPERF_WITH_FIO=1 scripts/install-deps.sh
  local dir=${DURABLE_DIR:-build/bench-durable} size=${DURABLE_SIZE:-1GiB} round bytes image dev mnt
  bytes=$(numfmt --from=iec "${size%iB}")
  mkdir -p "$dir"
  image=$(realpath "$dir")/ext4.img
  truncate -s $((bytes * 3)) "$image"
  mkfs.ext4 -q -F "$image"
  # --direct-io: the loop device writes to its file with O_DIRECT, past this machine's
  # page cache, so each tool's writes reach the disk as it made them. Buffered, the
  # loop's own worker copied every byte into the page cache first and fsync wrote them
  # out: a race for the CPU on two cores (nasperf's network ends beside it), not a disk.
  dev=$(losetup --direct-io=on --find --show "$image")
  local loop_dio
  loop_dio=$(cat "/sys/block/${dev#/dev/}/loop/dio" 2>/dev/null || echo 0)
  mnt=$T/durable
  mkdir -p "$mnt"
  mount "$dev" "$mnt"
  DURABLE_DEV=$dev DURABLE_MNT=$mnt DURABLE_IMAGE_DIR=$dir
  start_receiver durable "$mnt"
  local stat=/sys/block/${dev#/dev/}/stat
  # measured CMD...: runs it, prints "MB/s writes mean_KiB busy_ms" from the device's
  # write counters; the command prints its own MB/s.
  measured() {
    local before after rate
    sync
    before=$(cat "$stat")
    rate=$("$@")
    after=$(cat "$stat")
    awk -v b="$before" -v a="$after" -v r="$rate" 'BEGIN {
      split(b, x, " "); split(a, y, " "); n = y[5] - x[5]; kib = (y[7] - x[7]) / 2
      printf "%s %d %.0f %.0f\n", r, n, n ? kib / n : 0, y[10] - x[10]}'
  }
  # nasperf_write ROLE ARGS...: one nasperf write of $size, O_DIRECT and durable at its end,
  # where ARGS say; prints ROLE's row's MB/s (over loopback the receiver's, whose row
  # runs to the file durable; with no network, --transport path, the sender's, the only one).
  nasperf_write() {
    local role=$1 out=$T/out-durable-$RANDOM
    shift
    "$NASPERF" sender "$@" --size "$size" --write-mode direct --sync end --runs 1 \
      --no-progress --out "$out" >"$out.log" 2>&1 || { cat "$out.log" >&2; exit 1; }
    awk -F, -v role="$role" 'NR==1 {for (i=1;i<=NF;i++) h[$i]=i; next} $h["role"]==role {printf "%.1f", $h["mb_per_s"]}' \
      "$out/transfers.csv"
  }
  fio_append() {  # [--mem=shmhuge] -> MB/s
    fio_mb_s write --name=append --filename="$mnt/fio.dat" --rw=write --bs=1M --ioengine=psync --direct=1 \
      --end_fsync=1 --fallocate=none --size="$bytes" "$@"
    rm -f "$mnt/fio.dat"
  }
  reserve_fio_huge_pages
  dd_direct_write() {
    dd if=/dev/zero of="$mnt/dd.dat" bs=1M count=$((bytes >> 20)) oflag=direct conv=fsync 2>&1 | dd_mb_s
    rm -f "$mnt/dd.dat"
  }
  local -A r
  local key
  for round in $(seq "$ROUNDS"); do
    echo "bench: durable round $round/$ROUNDS" >&2
    for key in $(in_turns "$round" n p f h d); do
      # shellcheck disable=SC2154  # durable_port: set by start_receiver (printf -v)
      case $key in
        n) r[n]+="$(measured nasperf_write receiver --to 127.0.0.1:"$durable_port")|" ;;
        p) r[p]+="$(measured nasperf_write sender --transport path --to "$mnt")|" ;;
        f) r[f]+="$(measured fio_append)|" ;;
        h) r[h]+="$(measured fio_append --mem=shmhuge)|" ;;
        d) r[d]+="$(measured dd_direct_write)|" ;;
      esac
    done
  done
  # col KEY N: field N of each round's figures, as a space-separated list
  col() { tr '|' '\n' <<<"${r[$1]}" | awk -v n="$2" 'NF {printf "%s ", $n}'; }
  dmed() { col "$1" "$2" | median; }
  cat <<TABLE
| durable: $size into ext4 on $dev (a file on $(df --output=source "$(dirname "$image")" | tail -1), $([ "$loop_dio" = 1 ] && echo "written O_DIRECT" || echo "written through the page cache: the file system refused O_DIRECT")), median of $ROUNDS interleaved rounds | MB/s | ratio | device writes | mean write KiB | device busy ms |
|---|---:|---:|---:|---:|---:|
| fio --rw=write --bs=1M --direct=1 --end_fsync=1 --fallocate=none (no network) | $(dmed f 1) | | $(dmed f 2) | $(dmed f 3) | $(dmed f 4) |
| fio, the same, --mem=shmhuge: buffers in huge pages (no network) | $(dmed h 1) | | $(dmed h 2) | $(dmed h 3) | $(dmed h 4) |
| dd bs=1M oflag=direct conv=fsync (no network) | $(dmed d 1) | $(ratio "$(dmed d 1)" "$(dmed f 1)") vs fio | $(dmed d 2) | $(dmed d 3) | $(dmed d 4) |
| nasperf --write-mode direct --sync end, loopback | $(dmed n 1) | **$(ratio "$(dmed n 1)" "$(dmed f 1)")** vs fio, **$(ratio "$(dmed n 1)" "$(dmed h 1)")** vs fio in huge pages | $(dmed n 2) | $(dmed n 3) | $(dmed n 4) |
| nasperf --transport path --write-mode direct --sync end (no network) | $(dmed p 1) | **$(ratio "$(dmed p 1)" "$(dmed f 1)")** vs fio, **$(ratio "$(dmed p 1)" "$(dmed h 1)")** vs fio in huge pages | $(dmed p 2) | $(dmed p 3) | $(dmed p 4) |

rounds (MB/s, device writes, mean KiB, busy ms): fio [${r[f]}] fio-huge [${r[h]}] dd [${r[d]}] nasperf [${r[n]}] nasperf-path [${r[p]}]
order: odd rounds nasperf, nasperf-path, fio, fio-huge, dd; even rounds the reverse.
nasperf's figure is its receiver's row: first byte to the file durable; fio's and dd's are the disk alone.
machine: $(nproc) cores, $(uname -r), $(date -u +%Y-%m-%d)

TABLE
}

# wants SECTION [in-all]: SECTION was named, or `all` was and SECTION is part of it.
wants() {
  local named
  for named in "${SECTIONS[@]}"; do
    [ "$named" = "$1" ] || { [ "$named" = all ] && [ "${2:-}" = in-all ]; } && return 0
  done
  return 1
}
if wants lab; then bench_lab; fi
if wants shares; then bench_shares; fi
if wants durable; then bench_durable; fi
if wants collector in-all; then bench_collector; fi
if wants ssh in-all; then bench_ssh; fi
if wants reads in-all; then bench_reads; fi
wants network in-all || exit 0
# Built on demand from a build tree; a static-only checkout prints "—" in its rows.
[ -x "$FLOOR" ] || { [ -d build ] && cmake --build build -j2 --target tcp_floor >/dev/null; } ||
  echo "bench: no $FLOOR (no build tree, or its build failed): the floor rows stay empty" >&2

declare -A results
short_pct=()
# record NAME "MB/s sender_cpu receiver_cpu": appends to results[NAME], [NAME_tx], [NAME_rx]
# (iperf3's fourth figure, its own sender CPU over the test's seconds alone, goes to [NAME_tx_own])
record() {
  local rate tx rx own
  read -r rate tx rx own <<<"$2"
  results[$1]+="$rate "; results[$1_tx]+="$tx "; results[$1_rx]+="$rx "; results[$1_tx_own]+="${own:+$own }"
}
for round in $(seq "$ROUNDS"); do
  echo "bench: round $round/$ROUNDS" >&2
  record iperf3 "$(run_iperf)"
  record discard "$(run_nasperf discard)"
  record discard4 "$(run_nasperf discard 4)"
  record iperf3_F "$(run_iperf -F "$SHM/iperf3.out")"
  got=$(stat -c %s "$SHM/iperf3.out"); rm -f "$SHM/iperf3.out"
  short_pct+=("$(awk -v g="$got" -v w="$size_bytes" 'BEGIN {printf "%.2f", 100 * (w - g) / w}')")
  record shm "$(run_nasperf shm)"
  read -r rate cpu < <(run_dd); results[dd]+="$rate "; results[dd_rx]+="$cpu "
  record floor "$(run_floor payload /dev/null)"
  record floor_constant "$(run_floor constant /dev/null)"
  record floor_shm "$(run_floor payload "$SHM/floor.out")"
done

gen=$(build/tests/pattern_rate 2>/dev/null || echo "pattern_mb_s=? xxh3_mb_s=?")
# goal TEXT VALUE OP LIMIT: "TEXT: met" or "not met" (OP: ge or le)
goal() { awk -v v="$2" -v l="$4" -v op="$3" -v t="$1" 'BEGIN {ok = op == "ge" ? v >= l : v <= l; printf "%s %s %s: %s", t, (op == "ge" ? ">=" : "<="), l, ok ? "met" : "**not met**"}'; }

cat <<TABLE
| loopback, $SIZE per transfer, median of $ROUNDS interleaved rounds | MB/s | ratio | sender CPU s/GB | receiver CPU s/GB |
|---|---:|---:|---:|---:|
| iperf3 -l 1M single stream | $(m iperf3) | | $(m iperf3_tx) | $(m iperf3_rx) |
| nasperf → discard target | $(m discard) | **$(ratio "$(m discard)" "$(m iperf3)")** vs iperf3 | $(m discard_tx) | $(m discard_rx) |
| nasperf → discard, 4 streams of $SIZE/4 (in total) | $(m discard4) | **$(ratio "$(m discard4)" "$(m discard)")** vs 1 stream | $(m discard4_tx) | $(m discard4_rx) |
| iperf3 -s -F /dev/shm file | $(m iperf3_F) | | $(m iperf3_F_tx) | $(m iperf3_F_rx) |
| nasperf → /dev/shm dir (sync end) | $(m shm) | **$(ratio "$(m shm)" "$(m iperf3_F)")** vs iperf3 -F, **$(ratio "$(m shm)" "$(m discard)")** vs discard | $(m shm_tx) | $(m shm_rx) |
| dd if=/dev/zero of=/dev/shm bs=1M, then rm (no network) | $(m dd) | | | $(m dd_rx) |
| floor: bare 1 MiB sends of nasperf's payload → bare splice into discard | $(m floor) | | $(m floor_tx) | $(m floor_rx) |
| floor: bare 1 MiB sends of one unchanging buffer (iperf3's way) → the same | $(m floor_constant) | | $(m floor_constant_tx) | $(m floor_constant_rx) |
| floor: bare sends of the payload → bare splice into a /dev/shm file, then rm | $(m floor_shm) | | $(m floor_shm_tx) | $(m floor_shm_rx) |

Goals (issue 16): $(goal "discard vs iperf3" "$(ratio "$(m discard)" "$(m iperf3)")" ge 1.1); $(goal "4 streams vs 1" "$(ratio "$(m discard4)" "$(m discard)")" ge 1.0);
$(goal "/dev/shm vs discard" "$(ratio "$(m shm)" "$(m discard)")" ge 0.8); $(goal "receiver CPU s/GB into /dev/shm" "$(m shm_rx)" le 0.5) (dd alone: $(m dd_rx)).
Issue 48: sender CPU/GB against iperf3's **$(ratio "$(m discard_tx)" "$(m iperf3_tx)")**, against the floor sending the same payload **$(ratio "$(m discard_tx)" "$(m floor_tx)")**, the floor's own against iperf3's $(ratio "$(m floor_tx)" "$(m iperf3_tx)"); receiver CPU/GB into /dev/shm against dd's **$(ratio "$(m shm_rx)" "$(m dd_rx)")**, against the floor receiver's **$(ratio "$(m shm_rx)" "$(m floor_shm_rx)")**, the floor's own against dd's $(ratio "$(m floor_shm_rx)" "$(m dd_rx)").
payload generator and XXH3 on one core: $gen (MB/s)
iperf3 -F files came out short by: ${short_pct[*]} % (nasperf checks every byte count and fails a short file).
rounds (MB/s): iperf3 [${results[iperf3]}] discard [${results[discard]}] discard-4 [${results[discard4]}] iperf3-F [${results[iperf3_F]}] shm [${results[shm]}] dd [${results[dd]}]
rounds (sender CPU s/GB): iperf3 [${results[iperf3_tx]}] nasperf [${results[discard_tx]}] floor [${results[floor_tx]}] floor, constant [${results[floor_constant_tx]}]
rounds (receiver CPU s/GB into /dev/shm): nasperf [${results[shm_rx]}] floor [${results[floor_shm_rx]}] dd [${results[dd_rx]}]
CPU columns: the senders' (nasperf's and iperf3's client) from the shell's \`times\`, whole processes with their start-up; nasperf's receiver from /proc/PID/stat over the run (file removal included); iperf3's server from its -J cpu_utilization_percent; dd's and the floor's ends from \`times\`.
iperf3's client by its own -J figure (the test's seconds alone, no start-up): [${results[iperf3_tx_own]}] s/GB, and with -F [${results[iperf3_F_tx_own]}].
machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -r), $(date -u +%Y-%m-%d)
TABLE
