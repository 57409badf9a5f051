#!/usr/bin/env bash
# The self-contained binary for NAS systems that cannot load Debian's libraries
# (Unraid, Synology DSM, QNAP, TrueNAS): dist/nasperf-VERSION-linux-ARCH, linked
# statically from Debian's static archives (CMake option NASPERF_STATIC), stripped.
# Copy that one file to the NAS; nothing else is needed there. Also the container
# image of it for NAS systems that run Docker: dist/nasperf-VERSION.oci.tar.
#   scripts/package.sh              builds it (installs missing packages first)
#   NASPERF_STATIC_BUILD_DIR=DIR    build tree (default build-static)
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${NASPERF_JOBS:-2}
build=${NASPERF_STATIC_BUILD_DIR:-build-static}

scripts/install-deps.sh
echo "package: building the static binary in $build (first time: about 2 minutes on 2 cores)"
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DNASPERF_STATIC=ON >/dev/null
# glibc warns that a static getaddrinfo/getpwnam would need its shared NSS modules at
# run time; glibc 2.36 has files and dns built in, which the chroot test proves.
cmake --build "$build" -j"$jobs" --target nasperf 2>&1 \
  | grep -vE "in statically linked applications requires at runtime|: in function \`" || true
[ -x "$build/nasperf" ] || { echo "package: the static link failed (see above)" >&2; exit 1; }

version=$(sed -n 's/^project(nasperf VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
out=dist/nasperf-$version-linux-$(uname -m)
mkdir -p dist
strip -o "$out" "$build/nasperf"
file "$out" | grep -q "statically linked" || { echo "package: $out is not statically linked" >&2; exit 1; }
echo "package: $out ($(( $(stat -c %s "$out") / 1024 / 1024 )) MiB, statically linked, stripped)"
"$out" --version
[ "$(uname -m)" = x86_64 ] && scripts/oci-image.py "$out" "$version" "dist/nasperf-$version.oci.tar"
exit 0
