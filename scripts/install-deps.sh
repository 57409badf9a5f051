#!/usr/bin/env bash
# Installs the Debian 12 packages nasperf needs to build, test and bench.
# Idempotent: asks apt only for what is missing; uses sudo when not root.
#   NASPERF_WITH_AARCH64=1  also the cross compiler, the :arm64 static archives and
#                           qemu-user-static (adds the arm64 architecture to dpkg)
#   NASPERF_WITH_FIO=1      also fio (scripts/bench.sh reads compares against it)
set -euo pipefail

packages=(
  build-essential cmake pkg-config ninja-build
  protobuf-compiler libprotobuf-dev protobuf-compiler-grpc libgrpc++-dev
  libabsl-dev libssh-dev libssl-dev libgtest-dev libgmock-dev
  libcli11-dev libxxhash-dev libtomlplusplus-dev
  libre2-dev libc-ares-dev zlib1g-dev file podman runc
  clang libclang-rt-14-dev
  openssh-server openssh-client iperf3 iproute2 e2fsprogs btrfs-progs util-linux procps python3 binutils dpkg-dev tcpdump
  shellcheck clang-format universal-ctags ccache
  samba smbclient nfs-ganesha nfs-ganesha-vfs rpcbind libnfs-utils libsmbclient-dev libnfs-dev sshfs
  libboost-dev prometheus
)
[ "${NASPERF_WITH_BROWSER:-0}" = 1 ] && packages+=(chromium)
[ "${NASPERF_WITH_FIO:-0}" = 1 ] && packages+=(fio)
if [ "${NASPERF_WITH_AARCH64:-0}" = 1 ]; then
  packages+=(g++-aarch64-linux-gnu qemu-user-static)
  for p in libgrpc++-dev libgrpc-dev libprotobuf-dev libabsl-dev libssh-dev libssl-dev libxxhash-dev \
           libc-ares-dev libre2-dev zlib1g-dev libtomlplusplus-dev libnfs-dev; do
    packages+=("$p:arm64")
  done
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "install-deps: installing ${missing[*]}"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
# Wait for another apt (a second checkout's test run) instead of failing on its lock.
lock=(-o DPkg::Lock::Timeout=600)
if [[ " ${missing[*]}" == *":arm64"* ]] && ! dpkg --print-foreign-architectures | grep -qx arm64; then
  $sudo dpkg --add-architecture arm64
fi
$sudo apt-get "${lock[@]}" update -qq
$sudo apt-get "${lock[@]}" install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
