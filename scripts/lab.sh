#!/usr/bin/env bash
# A NAS lab on one machine (root): network namespaces for a client, a router hop
# and a NAS, veth links with chosen MTUs, tc shaping to a chosen rate (with optional
# netem delay/loss), and two targets on the NAS side: a fast "cache" (loop-mounted
# ext4) and a slow "array" (loop-mounted ext4 under cgroup v1 blkio
# throttle on reads and writes; write with --write-mode direct). Addresses come from 198.18.0.0/15,
# the range reserved for benchmarking.
#
#   scripts/lab.sh up [--mtu 9000] [--hop-mtu N | --switch-mtu N] [--rate 10gbit] [--delay 2ms]
#                     [--loss 0.1%] [--array-rate 150MB] [--disk-size 4G] [--clients N]
#                     [--cache-cliff 256MiB] [--mirror]
#   scripts/lab.sh status | down
# --cache-cliff DIRTY: a NAS whose page cache takes about DIRTY bytes of writes to the
# array fast, then the array's rate: the array's own dirty limit (its bdi's max_bytes
# and min_bytes with strict_limit; other devices keep theirs), and its device throttled for
# writes in the *root* blkio cgroup too, since writeback runs there (a child cgroup's
# throttle slows only O_DIRECT writes from inside it). down undoes both.
# --mirror: a third target, "mirror": a btrfs raid1 of a fast member (its image beside
# the others) and a slow one whose image sits on ext4 on a base loop device throttled for
# writes to --array-rate in the root blkio cgroup, so the slow member's own requests take
# long and its busy % shows it, as a slow disk's would (a throttle on the member itself
# holds requests before it: it never looks busy). Its member names are in the env file.
#   scripts/lab.sh shape RATE         change the link rate of a lab that is up
#   scripts/lab.sh nas -- CMD...      run CMD on the NAS (in its namespace and cgroup)
#   scripts/lab.sh client -- CMD...   run CMD on the client (the first one with --clients)
#   scripts/lab.sh clientK -- CMD...  run CMD on client K (with --clients N, K = 1..N)
#   scripts/lab.sh hop -- CMD...      run CMD on the hop, which reaches every client and the NAS
#                                     (where a `nasperf lab` controller goes)
#   scripts/lab.sh wait ADDR:PORT...  wait (at most 20 s) until each answers TCP from the hop
#                                     (receivers and agents started in the background)
#   scripts/lab.sh shares             a real Samba (smbd) and NFSv3 server (nfs-ganesha with its
#                                     own rpcbind) on the NAS, sharing the cache, the array and
#                                     "fast" (a tmpfs: no disk) as smb://root@NAS/cache|array|fast
#                                     and nfs://NAS/srv/nasperf-lab/LAB/cache|array|fast
#                                     (SMB's credentials file is in the lab's state); down stops them
# Inside the lab, `nasperf` is this checkout's build/nasperf when there is one (it
# comes first on PATH), so commands read the same as on a real NAS.
#
# client 198.18.0.11 (eth0) -- (toclient) 198.18.0.1 hop 198.18.1.1 (tonas) -- (eth0) 198.18.1.10 nas
# The hop forwards like a router: with --hop-mtu below --mtu it answers too-big
# packets with ICMP "fragmentation needed", as a router between two jumbo segments
# with a standard-MTU link would. With --switch-mtu the hop's port toward the client
# drops bigger frames without a word, as a switch port left at 1500 does. The shaper sits on the client's eth0 (its NIC rate).
# With --clients N (N > 1) the clients client1..N (198.18.0.11..) sit on a bridge in
# the hop (a switch with the router's 198.18.0.1 on it), each shaped to --rate.
# NASPERF_LAB=NAME runs a second lab beside the first (tests use their own names).
set -euo pipefail

LAB=${NASPERF_LAB:-nplab}
STATE=/run/nasperf-lab/$LAB      # mount points and the state file
IMAGES_ROOT=/var/tmp/nasperf-lab  # sparse disk images when RAM is short (not /run: a small tmpfs)
CLIENT_NS=$LAB-client HOP_NS=$LAB-hop NAS_NS=$LAB-nas
CLIENT_IP=198.18.0.11 NAS_IP=198.18.1.10
CGROUP=/sys/fs/cgroup/blkio/nasperf-lab-$LAB

die() { echo "lab.sh: $*" >&2; exit 1; }
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
need_root() { [ "$(id -u)" -eq 0 ] || die "needs root (network namespaces, tc, loop devices, cgroups)"; }
is_up() { [ -f "$STATE/env" ]; }
# attach_loop FLAGS... FILE: losetup -f under one machine-wide lock, since two labs (ctest
# -j runs them side by side) may otherwise both be handed the same free loop device.
attach_loop() { mkdir -p /run/lock && flock /run/lock/nasperf-loop.lock losetup -f --show "$@"; }

# "150MB", "150MiB", "1.5GB" or plain bytes per second -> bytes per second.
bytes_per_s() {
  awk -v s="$1" 'BEGIN {
    n = s + 0; u = s; sub(/^[0-9.]+/, "", u); sub(/\/s$/, "", u)
    m["" ] = 1; m["B"] = 1; m["K"] = 1e3; m["KB"] = 1e3; m["M"] = 1e6; m["MB"] = 1e6; m["G"] = 1e9; m["GB"] = 1e9
    m["KiB"] = 1024; m["MiB"] = 1048576; m["GiB"] = 1073741824
    if (!(u in m) || n <= 0) exit 1
    printf "%d\n", n * m[u] }' || die "cannot read the rate \"$1\" (e.g. 150MB, 100MiB)"
}

# tc rate ("10gbit", "500mbit") -> bits per second, for the shaper's burst.
bits_per_s() {
  awk -v s="$1" 'BEGIN {
    n = s + 0; u = tolower(s); sub(/^[0-9.]+/, "", u)
    m["bit"] = 1; m["kbit"] = 1e3; m["mbit"] = 1e6; m["gbit"] = 1e9
    if (!(u in m) || n <= 0) exit 1
    printf "%d\n", n * m[u] }' || die "cannot read the link rate \"$1\" (e.g. 10gbit, 2500mbit)"
}

# shaper add|change RATE: the NICs' rate, each client's and the NAS's, so data runs at
# RATE both ways (writes to the NAS, reads from it). A burst of 1 ms at the rate (at
# least 256 KiB) keeps 64 KiB GSO packets whole; the queue absorbs 20 ms.
shaper() {
  local rate_bits burst ns
  rate_bits=$(bits_per_s "$2")
  burst=$(( rate_bits / 8 / 1000 ))
  [ "$burst" -ge 262144 ] || burst=262144
  for ns in $(client_namespaces) "$NAS_NS"; do
    ip netns exec "$ns" tc qdisc "$1" dev eth0 root tbf rate "$2" burst "$burst" latency 20ms
  done
}

# The client namespaces of this lab: $LAB-client, or $LAB-client1..N with --clients.
client_namespaces() {
  ip netns list | awk -v lab="$LAB" '{ print $1 }' | grep -E "^$LAB-client[0-9]*\$" | sort -V || true
}

# shape RATE: a new link rate without tearing the lab down.
shape() {
  [ $# -eq 1 ] || die "usage: scripts/lab.sh shape RATE (e.g. 1gbit)"
  is_up || die "lab $LAB is down (scripts/lab.sh up first)"
  shaper change "$1"
  sed -i -e "s/^RATE=.*/RATE=$1/" -e "s/^RATE_MBPS=.*/RATE_MBPS=$(( $(bits_per_s "$1") / 1000000 ))/" "$STATE/env"
  echo "lab $LAB: link $1"
}

up() {
  local mtu=9000 hop_mtu="" switch_mtu="" rate=10gbit delay="" loss="" array_rate=150MB disk_size=4G clients=1 cliff=""
  local mirror=""
  while [ $# -gt 0 ]; do
    case $1 in
      --mtu) mtu=$2; shift 2 ;;
      --hop-mtu) hop_mtu=$2; shift 2 ;;
      --switch-mtu) switch_mtu=$2; shift 2 ;;
      --rate) rate=$2; shift 2 ;;
      --delay) delay=$2; shift 2 ;;
      --loss) loss=$2; shift 2 ;;
      --array-rate) array_rate=$2; shift 2 ;;
      --disk-size) disk_size=$2; shift 2 ;;
      --clients) clients=$2; shift 2 ;;
      --cache-cliff) cliff=$2; shift 2 ;;
      --mirror) mirror=1; shift ;;
      *) die "unknown option $1 (see the top of scripts/lab.sh)" ;;
    esac
  done
  if ! [[ "$clients" =~ ^[0-9]+$ ]] || [ "$clients" -lt 1 ] || [ "$clients" -gt 50 ]; then
    die "--clients $clients is not between 1 and 50"
  fi
  hop_mtu=${hop_mtu:-$mtu}
  switch_mtu=${switch_mtu:-$mtu}
  for m in "$mtu" "$hop_mtu" "$switch_mtu"; do
    if ! [[ "$m" =~ ^[0-9]+$ ]] || [ "$m" -lt 1280 ] || [ "$m" -gt 65535 ]; then
      die "MTU $m is not between 1280 and 65535"
    fi
  done
  local rate_bits array_bps cliff_b=""
  rate_bits=$(bits_per_s "$rate")
  array_bps=$(bytes_per_s "$array_rate")
  [ -n "$cliff" ] && cliff_b=$(cliff_bytes "$cliff")
  is_up && die "lab $LAB is already up (scripts/lab.sh down first)"
  # RAM-backed images when /dev/shm has room for both: the "cache" then behaves like
  # NVMe instead of like this machine's own disk, and the array's limit is the throttle.
  local need_kb shm_kb images=$IMAGES_ROOT/$LAB
  need_kb=$(( $(numfmt --from=iec "$disk_size") * 2 / 1024 ))
  shm_kb=$(df -k --output=avail /dev/shm 2>/dev/null | tail -1 || echo 0)
  [ "${shm_kb:-0}" -gt $(( need_kb + 1048576 )) ] && images=/dev/shm/nasperf-lab-$LAB
  if [ -n "$delay$loss" ] && [ -r /proc/config.gz ] && ! zcat /proc/config.gz | grep -q '^CONFIG_NET_SCH_NETEM=[ym]'; then
    die "--delay and --loss need the netem qdisc, which this kernel lacks (CONFIG_NET_SCH_NETEM)"
  fi
  [ -d /sys/fs/cgroup/blkio ] || die "no cgroup v1 blkio hierarchy at /sys/fs/cgroup/blkio (the slow array needs it)"
  if [ -n "$mirror" ]; then
    command -v mkfs.btrfs >/dev/null || die "--mirror needs mkfs.btrfs (btrfs-progs; scripts/install-deps.sh installs it)"
    grep -qw btrfs /proc/filesystems || modprobe btrfs 2>/dev/null || die "--mirror needs btrfs, which this kernel lacks"
  fi
  mkdir -p "$STATE" "$images"
  echo "$images" >"$STATE/images"
  trap 'echo "lab.sh: set-up failed, tearing down" >&2; down >/dev/null 2>&1 || true' ERR

  local client_ips=$CLIENT_IP
  if [ "$clients" -eq 1 ]; then
    for ns in "$CLIENT_NS" "$HOP_NS" "$NAS_NS"; do ip netns add "$ns"; ip -n "$ns" link set lo up; done
    ip link add eth0 netns "$CLIENT_NS" mtu "$mtu" type veth peer name toclient netns "$HOP_NS" mtu "$switch_mtu"
    ip -n "$CLIENT_NS" addr add "$CLIENT_IP/24" dev eth0
    ip -n "$HOP_NS" addr add 198.18.0.1/24 dev toclient
    ip -n "$CLIENT_NS" link set eth0 up
    ip -n "$HOP_NS" link set toclient up
    ip -n "$CLIENT_NS" route add default via 198.18.0.1
  else
    # A switch (bridge) in the hop namespace, the router's client-side address on it.
    for ns in "$HOP_NS" "$NAS_NS"; do ip netns add "$ns"; ip -n "$ns" link set lo up; done
    ip -n "$HOP_NS" link add br0 mtu "$switch_mtu" type bridge
    ip -n "$HOP_NS" addr add 198.18.0.1/24 dev br0
    ip -n "$HOP_NS" link set br0 up
    client_ips=""
    local i ns ip
    for i in $(seq "$clients"); do
      ns=$LAB-client$i ip=198.18.0.$((10 + i))
      ip netns add "$ns"; ip -n "$ns" link set lo up
      ip link add eth0 netns "$ns" mtu "$mtu" type veth peer name "toclient$i" netns "$HOP_NS" mtu "$switch_mtu"
      ip -n "$HOP_NS" link set "toclient$i" master br0
      ip -n "$ns" addr add "$ip/24" dev eth0
      ip -n "$ns" link set eth0 up
      ip -n "$HOP_NS" link set "toclient$i" up
      ip -n "$ns" route add default via 198.18.0.1
      client_ips="$client_ips${client_ips:+ }$ip"
    done
  fi
  ip link add eth0 netns "$NAS_NS" mtu "$mtu" type veth peer name tonas netns "$HOP_NS" mtu "$hop_mtu"
  ip -n "$HOP_NS" addr add 198.18.1.1/24 dev tonas
  ip -n "$NAS_NS" addr add "$NAS_IP/24" dev eth0
  ip -n "$HOP_NS" link set tonas up
  ip -n "$NAS_NS" link set eth0 up
  ip -n "$NAS_NS" route add default via 198.18.1.1
  ip netns exec "$HOP_NS" sysctl -qw net.ipv4.ip_forward=1

  shaper add "$rate"
  if [ -n "$delay$loss" ]; then
    ip netns exec "$HOP_NS" tc qdisc add dev tonas root netem limit 100000 \
      ${delay:+delay "$delay"} ${loss:+loss "$loss"}
  fi

  local img
  for disk in cache array; do
    img=$images/$disk.img
    truncate -s "$disk_size" "$img"
    mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$img"
    # direct I/O on the backing file: no second copy of the data in the page cache
    attach_loop --direct-io=on "$img" >"$STATE/$disk.dev" 2>/dev/null \
      || attach_loop "$img" >"$STATE/$disk.dev"
    mkdir -p "$STATE/$disk"
    # discard: deleted test files give their blocks back to the sparse image
    mount -o discard "$(cat "$STATE/$disk.dev")" "$STATE/$disk"
  done
  mkdir -p "$CGROUP"
  local majmin
  majmin=$(lsblk -dno MAJ:MIN "$(cat "$STATE/array.dev")" | tr -d ' ')
  echo "$majmin $array_bps" >"$CGROUP/blkio.throttle.write_bps_device"
  # A slow array reads slowly too (reads from the NAS, cold: sender --direction read).
  echo "$majmin $array_bps" >"$CGROUP/blkio.throttle.read_bps_device"
  [ -n "$cliff" ] && cache_cliff "$cliff_b" "$majmin" "$array_bps"
  [ -n "$mirror" ] && make_mirror "$images" "$array_bps" "$disk_size"

  cat >"$STATE/env" <<EOF
LAB=$LAB
MTU=$mtu
HOP_MTU=$hop_mtu
SWITCH_MTU=$switch_mtu
RATE=$rate
RATE_MBPS=$((rate_bits / 1000000))
DELAY=$delay
LOSS=$loss
ARRAY_BPS=$array_bps
CLIENT_IP=$CLIENT_IP
CLIENTS=$clients
CLIENT_IPS="$client_ips"
NAS_IP=$NAS_IP
CACHE=$STATE/cache
ARRAY=$STATE/array
EOF
  [ -n "$mirror" ] && cat "$STATE/mirror.env" >>"$STATE/env"
  trap - ERR
  local who="client $CLIENT_IP"
  [ "$clients" -gt 1 ] && who="clients ${client_ips// /, } (switch)"
  echo "lab $LAB up: $who -- hop -- nas $NAS_IP, MTU $mtu (switch $switch_mtu, hop $hop_mtu), link $rate${delay:+, delay $delay}${loss:+, loss $loss}"
  echo "  cache: $STATE/cache (ext4 on $(cat "$STATE/cache.dev"), image in $images)"
  echo "  array: $STATE/array (ext4 on $(cat "$STATE/array.dev"), reads and writes throttled to $array_rate/s; use --write-mode direct)"
  [ -n "$cliff" ] && echo "  cache cliff: the array's page cache takes about $cliff of writes, then writeback runs at $array_rate/s"
  if [ -n "$mirror" ]; then
    # shellcheck disable=SC1091
    . "$STATE/mirror.env"
    echo "  mirror: $STATE/mirror (btrfs raid1: $MIRROR_FAST fast, $MIRROR_SLOW slow at $array_rate/s for writes; use --write-mode direct)"
  fi
  echo "next (nasperf in the lab is $([ -x "$REPO/build/nasperf" ] && echo "$REPO/build/nasperf" || echo "the one on PATH")):"
  echo "  scripts/lab.sh nas -- nasperf receiver --target $STATE/cache --listen $NAS_IP:7600 >receiver.log 2>&1 &"
  echo "  scripts/lab.sh wait $NAS_IP:7600"
  echo "  scripts/lab.sh client -- nasperf sender --to $NAS_IP:7600 --size 1GiB --runs 5 --link-speed $rate --accept-new-agent-key"
}

# make_mirror IMAGES BPS SIZE: $STATE/mirror, a btrfs raid1 of a fast and a slow member of
# SIZE each (the top of this file). What down undoes is in $STATE/mirror.*.
make_mirror() {
  local base fast slow majmin
  truncate -s "$3" "$1/mirror-fast.img"
  truncate -s $(( $(numfmt --from=iec "$3") + 268435456 )) "$1/mirror-base.img"
  mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$1/mirror-base.img"  # no zeroing behind the throttle later
  base=$(attach_loop --direct-io=on "$1/mirror-base.img")
  echo "$base" >"$STATE/mirror.base"
  mkdir -p "$STATE/mirror-base"
  mount "$base" "$STATE/mirror-base"
  truncate -s "$3" "$STATE/mirror-base/slow.img"
  # Direct I/O on the backing files: the members' requests wait for the devices below.
  slow=$(attach_loop --direct-io=on "$STATE/mirror-base/slow.img")
  fast=$(attach_loop --direct-io=on "$1/mirror-fast.img")
  echo "$fast $slow" >"$STATE/mirror.members"
  mkfs.btrfs -q -f -d raid1 -m raid1 "$fast" "$slow" >/dev/null
  mkdir -p "$STATE/mirror"
  mount -t btrfs "$fast" "$STATE/mirror"
  majmin=$(lsblk -dno MAJ:MIN "$base" | tr -d ' ')
  echo "$majmin" >"$STATE/mirror.throttle"
  # In the root group for writeback, and in the NAS's own for what its commands write
  # (a loop device's requests are charged to the group that issued them).
  echo "$majmin $2" >/sys/fs/cgroup/blkio/blkio.throttle.write_bps_device
  echo "$majmin $2" >"$CGROUP/blkio.throttle.write_bps_device"
  printf 'MIRROR=%s\nMIRROR_FAST=%s\nMIRROR_SLOW=%s\n' "$STATE/mirror" "${fast#/dev/}" "${slow#/dev/}" >"$STATE/mirror.env"
}

# Undoes make_mirror in the reverse order; each step may be missing (a failed up).
undo_mirror() {
  local fast slow
  if [ -f "$STATE/mirror.throttle" ]; then
    echo "$(cat "$STATE/mirror.throttle") 0" >/sys/fs/cgroup/blkio/blkio.throttle.write_bps_device 2>/dev/null || true
  fi
  if mountpoint -q "$STATE/mirror" 2>/dev/null; then umount "$STATE/mirror" 2>/dev/null || umount -l "$STATE/mirror" || true; fi
  if [ -f "$STATE/mirror.members" ]; then
    read -r fast slow <"$STATE/mirror.members"
    losetup -d "$fast" 2>/dev/null || true
    losetup -d "$slow" 2>/dev/null || true
  fi
  if mountpoint -q "$STATE/mirror-base" 2>/dev/null; then
    umount "$STATE/mirror-base" 2>/dev/null || umount -l "$STATE/mirror-base" || true
  fi
  if [ -f "$STATE/mirror.base" ]; then losetup -d "$(cat "$STATE/mirror.base")" 2>/dev/null || true; fi
  rm -f "$STATE"/mirror.*
}

# cliff_bytes SIZE: --cache-cliff's size in bytes, checked before anything is set up.
cliff_bytes() {
  local dirty
  dirty=$(bytes_per_s "$1")  # a size in the same words as a rate
  [ "$dirty" -ge 16777216 ] || die "--cache-cliff $1 is under 16 MiB"
  echo "$dirty"
}

# cache_cliff BYTES MAJ:MIN BPS: the device's page cache takes BYTES of writes,
# writeback goes at BPS. What it replaces is kept in $STATE/cliff for down.
cache_cliff() {
  local bdi=/sys/class/bdi/$2
  if ! [ -w "$bdi/max_bytes" ] || ! [ -w "$bdi/strict_limit" ]; then
    # not die: the ERR trap tears down what up has made so far
    echo "lab.sh: --cache-cliff needs a per-device dirty limit ($bdi/max_bytes, Linux 6.2 or later)" >&2
    return 1
  fi
  echo "$2 $(cat "$bdi/strict_limit") $(cat "$bdi/max_ratio") $(cat "$bdi/min_ratio")" >"$STATE/cliff"
  echo 1 >"$bdi/strict_limit"
  echo "$1" >"$bdi/max_bytes"
  # And as its floor: the kernel otherwise sizes a device's share of the dirty limit by its
  # part of the machine's recent writeback, so the cliff would follow what other disks
  # (a build, earlier tests) wrote before. The floor is 7/8 of the ceiling because the
  # kernel stores both as shares of the machine's dirty limit, which moves with free
  # memory: a floor equal to the ceiling, converted a moment later, can come out above
  # it, and the kernel refuses that with EINVAL (a CI run under a parallel build did).
  local floor=$(($1 * 7 / 8))
  if ! echo "$floor" >"$bdi/min_bytes"; then
    echo "lab.sh: --cache-cliff: the kernel refused a dirty floor of $floor bytes on $2 (other devices' min_ratio: $(cat /sys/class/bdi/*/min_ratio | paste -sd+ -))" >&2
    return 1
  fi
  echo "$2 $3" >/sys/fs/cgroup/blkio/blkio.throttle.write_bps_device
}

# Puts back what cache_cliff changed (a loop device keeps its bdi settings when it is
# reused) and lifts the root throttle.
undo_cache_cliff() {
  [ -f "$STATE/cliff" ] || return 0
  local majmin strict ratio min_ratio
  read -r majmin strict ratio min_ratio <"$STATE/cliff"
  echo "$majmin 0" >/sys/fs/cgroup/blkio/blkio.throttle.write_bps_device 2>/dev/null || true
  echo "${min_ratio:-0}" >"/sys/class/bdi/$majmin/min_ratio" 2>/dev/null || true  # before max: min <= max
  echo "$ratio" >"/sys/class/bdi/$majmin/max_ratio" 2>/dev/null || true
  echo "$strict" >"/sys/class/bdi/$majmin/strict_limit" 2>/dev/null || true
  rm -f "$STATE/cliff"
}

down() {
  local ns pid dev namespaces
  namespaces="$(client_namespaces) $HOP_NS $NAS_NS"
  for ns in $namespaces; do
    if ip netns list | grep -qw "^$ns"; then
      for pid in $(ip netns pids "$ns" 2>/dev/null); do kill "$pid" 2>/dev/null || true; done
    fi
  done
  # Processes get a moment to finish (a receiver removes its files on SIGTERM).
  for _ in $(seq 50); do
    local left=0
    for ns in $namespaces; do
      ip netns list | grep -qw "^$ns" && [ -n "$(ip netns pids "$ns" 2>/dev/null)" ] && left=1
    done
    [ $left -eq 0 ] && break
    sleep 0.1
  done
  for ns in $namespaces; do
    for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -9 "$pid" 2>/dev/null || true; done
    ip netns del "$ns" 2>/dev/null || true
  done
  undo_cache_cliff
  undo_mirror
  for disk in cache array fast; do
    # Lazy: a busy mount must not stop the rest of the teardown.
    if mountpoint -q "$STATE/$disk" 2>/dev/null; then umount "$STATE/$disk" 2>/dev/null || umount -l "$STATE/$disk" || true; fi
    if [ -f "$STATE/$disk.dev" ]; then
      dev=$(cat "$STATE/$disk.dev")
      losetup -d "$dev" 2>/dev/null || true
    fi
  done
  if [ -d "$CGROUP" ]; then
    while read -r pid; do kill -9 "$pid" 2>/dev/null || true; done < <(cat "$CGROUP/cgroup.procs" 2>/dev/null)
    rmdir "$CGROUP" 2>/dev/null || true
  fi
  [ -f "$STATE/images" ] && rm -rf "$(cat "$STATE/images")"
  # The shares' bind points (the binds went with nfs-ganesha's mount namespace).
  rm -rf "/srv/nasperf-lab/$LAB"
  rmdir /srv/nasperf-lab 2>/dev/null || true
  rm -rf "$STATE"
  echo "lab $LAB down"
}

status() {
  is_up || { echo "lab $LAB is down"; return 1; }
  # shellcheck disable=SC1091
  . "$STATE/env"
  # shellcheck disable=SC2153  # SWITCH_MTU, HOP_MTU, RATE: from $STATE/env (up writes it)
  echo "lab $LAB up: MTU $MTU (switch $SWITCH_MTU, hop $HOP_MTU), link $RATE${DELAY:+, delay $DELAY}${LOSS:+, loss $LOSS}"
  local first_client
  first_client=$(client_namespaces | head -1)
  echo "  client $CLIENT_IP: $(ip -n "$first_client" -o link show eth0 | grep -o 'mtu [0-9]*')${CLIENTS:+ ($CLIENTS clients: $CLIENT_IPS)}"
  echo "  nas    $NAS_IP: $(ip -n "$NAS_NS" -o link show eth0 | grep -o 'mtu [0-9]*')"
  echo "  shaper: $(ip netns exec "$first_client" tc qdisc show dev eth0 | head -1)"
  df -h --output=target,size,avail "$CACHE" "$ARRAY" | sed 's/^/  /'
  echo "  array throttle: $(cat "$CGROUP/blkio.throttle.write_bps_device") (bytes/s)"
}

run_in() {
  local where=$1; shift
  [ "${1:-}" = "--" ] && shift
  [ $# -gt 0 ] || die "$where: give a command after --"
  is_up || die "lab $LAB is down (scripts/lab.sh up first)"
  [ -x "$REPO/build/nasperf" ] && export PATH="$REPO/build:$PATH"
  [ "$where" = hop ] && exec ip netns exec "$HOP_NS" "$@"
  local ns=$LAB-$where
  if [ "$where" = nas ]; then
    # Into the throttle's cgroup first, so the array's limit applies to CMD.
    echo $$ >"$CGROUP/cgroup.procs"
    ns=$NAS_NS
  elif [ "$where" = client ]; then
    ns=$(client_namespaces | head -1)
  elif ! ip netns list | grep -qE "^$ns( |\$)"; then
    die "no $where in lab $LAB (scripts/lab.sh up --clients N makes client1..N)"
  fi
  # ip netns exec remounts /sys for the namespace, without the cgroup tree: the CPU
  # controller is mounted again there (in CMD's own mount namespace), so a watch on the
  # NAS sees a server's CPU quota, and a sender or receiver its own, as on a real host.
  # shellcheck disable=SC2016  # expanded by the inner shell
  exec ip netns exec "$ns" sh -c 'cpu=$(sed -n "s/^[0-9]*:\([^:]*\bcpu\b[^:]*\):.*/\1/p" /proc/self/cgroup | head -1)
    if [ -n "$cpu" ] && [ ! -e /sys/fs/cgroup/cpu ] && mount -t tmpfs -o mode=755 cgroup /sys/fs/cgroup 2>/dev/null; then
      mkdir -p "/sys/fs/cgroup/$cpu" && mount -t cgroup -o "$cpu" cgroup "/sys/fs/cgroup/$cpu" 2>/dev/null || true
      [ "$cpu" = cpu ] || ln -s "$cpu" /sys/fs/cgroup/cpu
    fi
    exec "$@"' sh "$@"
}

# wait ADDR:PORT...: each answers a TCP connect from the hop, or an error after 20 s.
wait_ports() {
  [ $# -gt 0 ] || die "wait: give ADDR:PORT..."
  is_up || die "lab $LAB is down (scripts/lab.sh up first)"
  local where
  for where in "$@"; do
    for _ in $(seq 200); do
      ip netns exec "$HOP_NS" bash -c "exec 3<>/dev/tcp/${where%:*}/${where##*:}" 2>/dev/null && continue 2
      sleep 0.1
    done
    die "nothing answers on $where after 20 s (see its log)"
  done
}

# A throwaway smbd: its own directories, password database and log, all in $1;
# shares the cache and the array as "cache" and "array" to root.
smb_conf() {
  local dir=$1
  cat <<EOF
[global]
  server role = standalone server
  interfaces = $NAS_IP
  bind interfaces only = yes
  disable netbios = yes
  smb ports = 445
  lock directory = $dir/lock
  state directory = $dir/state
  cache directory = $dir/cache
  private dir = $dir/private
  pid directory = $dir/pid
  ncalrpc dir = $dir/ncalrpc
  log file = $dir/log.%m
  passdb backend = tdbsam:$dir/private/passdb.tdb
  map to guest = never
  load printers = no
  printing = bsd
  printcap name = /dev/null
[cache]
  path = $STATE/cache
  read only = no
[fast]
  path = $STATE/fast
  read only = no
[array]
  path = $STATE/array
  read only = no
EOF
}

# nfs-ganesha serving NFSv3 only (Debian's libnfs 4.0 encodes NFSv4 writes wrongly):
# the cache and the array, bound under $1, since its namespace gets a private /run.
ganesha_conf() {
  local root=$1 id=0 disk
  cat <<EOF
NFS_CORE_PARAM {
  Protocols = 3;
  Enable_NLM = false;
  Enable_RQUOTA = false;
  Enable_UDP = false;
  Plugins_Dir = "/usr/lib/x86_64-linux-gnu/ganesha";
}
NFSv4 { Graceless = true; RecoveryRoot = "$root/conf/recovery"; }
EOF
  for disk in cache array fast; do
    id=$((id + 1))
    echo "EXPORT { Export_Id = $id; Path = \"$root/$disk\"; Pseudo = \"/$disk\"; Protocols = 3; Access_Type = RW;"
    echo "  Squash = No_Root_Squash; SecType = sys; FSAL { Name = VFS; } }"
  done
}

start_smbd() {
  local dir=$STATE/smb password
  mkdir -p "$dir"/{lock,state,cache,private,pid,ncalrpc}
  chmod 700 "$dir"
  smb_conf "$dir" >"$dir/smb.conf"
  password=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
  printf '%s\n%s\n' "$password" "$password" | smbpasswd -c "$dir/smb.conf" -s -a root >/dev/null
  (umask 077; printf 'username=root\npassword=%s\n' "$password" >"$dir/credentials")
  # setsid: smbd's exit signals its process group, which would be ours.
  (run_in nas setsid smbd -F --no-process-group --debug-stdout -s "$dir/smb.conf") >"$dir/smbd.log" 2>&1 &
  wait_ports "$NAS_IP:445"
}

start_ganesha() {
  local root=/srv/nasperf-lab/$LAB conf=$STATE/nfs
  mkdir -p "$root"/{cache,array,fast,conf} "$conf/recovery"
  ganesha_conf "$root" >"$conf/ganesha.conf"
  # A mount namespace of its own: the binds, and a /run for an rpcbind socket that
  # another lab's rpcbind does not share ($STATE, under /run, is bound out first).
  cat >"$conf/start.sh" <<EOF
set -e
mount --make-rprivate /
mount --bind "$STATE/cache" "$root/cache"
mount --bind "$STATE/array" "$root/array"
mount --bind "$STATE/fast" "$root/fast"
mount --bind "$conf" "$root/conf"
mount -t tmpfs tmpfs /run
mkdir -p /run/rpcbind /run/ganesha
rpcbind -w -f &
for _ in \$(seq 100); do [ -S /run/rpcbind.sock ] && break; sleep 0.05; done
exec ganesha.nfsd -F -f "$root/conf/ganesha.conf" -L "$root/conf/ganesha.log" -p /run/ganesha/pid
EOF
  (run_in nas setsid unshare -m bash "$conf/start.sh") >"$conf/start.log" 2>&1 &
  wait_ports "$NAS_IP:2049"
  for _ in $(seq 100); do  # MOUNT registers with rpcbind after the NFS port opens
    ip netns exec "$NAS_NS" rpcinfo -p 127.0.0.1 2>/dev/null | grep -q mountd && return 0
    sleep 0.1
  done
  die "nfs-ganesha did not register its mount service (see $conf/ganesha.log)"
}

# stop_shares: the file servers on the NAS (when `shares` failed half-way).
stop_shares() {
  local pid
  for pid in $(ip netns pids "$NAS_NS" 2>/dev/null); do
    case $(cat "/proc/$pid/comm" 2>/dev/null) in
      smbd* | rpcbind | ganesha.nfsd) kill -9 "$pid" 2>/dev/null || true ;;
    esac
  done
}

# shares: the NAS's file servers, for SMB and NFS transfers and for copies to observe.
shares() {
  is_up || die "lab $LAB is down (scripts/lab.sh up first)"
  [ -f "$STATE/shares" ] && die "the shares of lab $LAB are already up"
  local tool
  for tool in smbd smbpasswd ganesha.nfsd rpcbind rpcinfo; do
    command -v "$tool" >/dev/null || die "no $tool: scripts/install-deps.sh installs Samba and nfs-ganesha"
  done
  # shellcheck disable=SC1091
  . "$STATE/env"
  # Half a set of servers is worse than none: one that failed takes the other down,
  # so `shares` can be run again.
  trap 'stop_shares' EXIT
  # "fast": a tmpfs, no disk at all, for copies the link alone must hold; RAM only as
  # filled (nfs-ganesha keeps removed files open a while: their pages stay taken).
  mkdir -p "$STATE/fast"
  mountpoint -q "$STATE/fast" || mount -t tmpfs -o size=4G,mode=0755 nasperf-lab-fast "$STATE/fast"
  start_smbd
  start_ganesha
  trap - EXIT
  cat >>"$STATE/env" <<EOF
SMB_CREDENTIALS=$STATE/smb/credentials
NFS_ROOT=/srv/nasperf-lab/$LAB
FAST=$STATE/fast
EOF
  touch "$STATE/shares"
  echo "lab $LAB shares up on $NAS_IP:"
  echo "  smb://root@$NAS_IP/cache, /array and /fast (a tmpfs; credentials: $STATE/smb/credentials), e.g."
  echo "    scripts/lab.sh client -- smbclient //$NAS_IP/cache -A $STATE/smb/credentials -m SMB3 -c 'put FILE NAME'"
  echo "  nfs://$NAS_IP/srv/nasperf-lab/$LAB/cache, .../array and .../fast (NFSv3), e.g."
  echo "    scripts/lab.sh client -- nfs-cp FILE 'nfs://$NAS_IP/srv/nasperf-lab/$LAB/cache/NAME?uid=0&gid=0&version=3&autoreconnect=0'"
}

command=${1:-}
[ $# -gt 0 ] && shift
case $command in
  up) need_root; up "$@" ;;
  down) need_root; down ;;
  status) need_root; status ;;
  shape) need_root; shape "$@" ;;
  nas|client|client[0-9]*|hop) need_root; run_in "$command" "$@" ;;
  wait) need_root; wait_ports "$@" ;;
  shares) need_root; shares ;;
  *) echo "usage: scripts/lab.sh up [options] | down | status | shape RATE | wait ADDR:PORT... | shares | nas|client|clientK|hop -- CMD" >&2; exit 2 ;;
esac
