#!/usr/bin/env bash
# The self-contained binary for NAS systems that cannot load Debian's libraries
# (Unraid, Synology DSM, QNAP, TrueNAS): dist/nasperf-VERSION-linux-ARCH, linked
# statically from Debian's static archives (CMake option NASPERF_STATIC), stripped.
# Copy that one file to the NAS; nothing else is needed there. Also, around it: the
# container image for NAS systems that run Docker (dist/nasperf-VERSION.oci.tar) and
# a Debian package with the agent as a systemd service for Debian, Ubuntu and
# Proxmox hosts (dist/nasperf_VERSION_amd64.deb, from scripts/deb/): that one holds the
# dynamic binary, which has SMB (libsmbclient has no static archive), and depends on
# the libraries it loads.
#   scripts/package.sh              builds it (installs missing packages first)
#   NASPERF_AARCH64=1 scripts/package.sh
#                                   also dist/nasperf-VERSION-linux-aarch64 (cross-built;
#                                   adds the arm64 architecture and its -dev packages;
#                                   scripts/test.sh sets it: a test runs it under qemu)
#   NASPERF_STATIC_BUILD_DIR=DIR    build tree (default build-static)
#   NASPERF_DEB_BINARY=FILE         the dynamic binary for the .deb (default: a Release
#                                   build in build-release; scripts/test.sh passes its own)
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${NASPERF_JOBS:-2}
build=${NASPERF_STATIC_BUILD_DIR:-build-static}

NASPERF_WITH_AARCH64=${NASPERF_AARCH64:-0} scripts/install-deps.sh
version=$(sed -n 's/^project(nasperf VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
mkdir -p dist

# build_static TREE OUT STRIP FILE_PATTERN [CMAKE_ARGS...]: one static binary, stripped.
build_static() {
  local tree=$1 out=$2 strip=$3 pattern=$4
  shift 4
  echo "package: building $out in $tree (first time: about 2 minutes on 2 cores)"
  cmake -S . -B "$tree" -G Ninja -DCMAKE_BUILD_TYPE=Release -DNASPERF_STATIC=ON "$@" >/dev/null
  # glibc warns that a static getaddrinfo/getpwnam would need its shared NSS modules at
  # run time; glibc 2.36 has files and dns built in, which the chroot test proves.
  cmake --build "$tree" -j"$jobs" --target nasperf 2>&1 \
    | grep -vE "in statically linked applications requires at runtime|: in function \`" || true
  [ -x "$tree/nasperf" ] || { echo "package: the static link of $out failed (see above)" >&2; exit 1; }
  # libnfs.a's own libnfs_zdr_array trusts a server's array lengths: every call must reach
  # transport/nfs.cc's checked one (ld --wrap, transport/CMakeLists.txt), none libnfs's.
  local calls
  calls=$("${strip%strip}objdump" -d --no-show-raw-insn "$tree/nasperf" |
    grep -oE '\s(call|jmp|bl|b)\s+[0-9a-f]+ <(__wrap_)?libnfs_zdr_array>' | grep -oE '<[^>]*>' | sort | uniq -c | tr -s ' \n' ' ' || true)
  [[ $calls == *"<__wrap_libnfs_zdr_array>"* && $calls != *" <libnfs_zdr_array>"* ]] ||
    { echo "package: $tree/nasperf calls libnfs's unchecked libnfs_zdr_array (no --wrap, or no objdump?): $calls" >&2; exit 1; }
  "$strip" -o "$out" "$tree/nasperf"
  file "$out" | grep -qE "$pattern" || { echo "package: $out is not $pattern: $(file -b "$out")" >&2; exit 1; }
  echo "package: $out ($(( $(stat -c %s "$out") / 1024 / 1024 )) MiB, statically linked, stripped)"
}

out=dist/nasperf-$version-linux-$(uname -m)
build_static "$build" "$out" strip "statically linked"
"$out" --version
if [ "${NASPERF_AARCH64:-0}" = 1 ]; then
  arm=dist/nasperf-$version-linux-aarch64
  build_static "${build}-aarch64" "$arm" aarch64-linux-gnu-strip "ARM aarch64.*statically linked" \
    -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake
  qemu-aarch64-static "$arm" --version
fi

[ "$(uname -m)" = x86_64 ] || exit 0
scripts/oci-image.py "$out" "$version" "dist/nasperf-$version.oci.tar"

# The .deb: the dynamic binary (SMB is in it), the service, its settings; Depends from
# the libraries it loads, as dpkg-shlibdeps finds them.
deb_binary=${NASPERF_DEB_BINARY:-}
if [ -z "$deb_binary" ]; then
  echo "package: building the dynamic binary for the .deb in build-release"
  cmake -S . -B build-release -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build build-release -j"$jobs" --target nasperf
  deb_binary="build-release/nasperf"
fi
"$deb_binary" --version | grep -q dynamic || { echo "package: $deb_binary is not a dynamic build" >&2; exit 1; }
root=$(mktemp -d)
chmod 0755 "$root"  # the package's ./ entry: never make / private
trap 'rm -rf "$root"' EXIT
install -d -m0755 "$root/usr/bin"
strip -o "$root/usr/bin/nasperf" "$deb_binary"
chmod 0755 "$root/usr/bin/nasperf"
shlibs=$(mktemp -d)
mkdir "$shlibs/debian"
printf 'Source: nasperf\n\nPackage: nasperf\nArchitecture: amd64\n' >"$shlibs/debian/control"
depends=$(cd "$shlibs" && { dpkg-shlibdeps -O -e "$root/usr/bin/nasperf" 2>"$shlibs/err" || cat "$shlibs/err" >&2; } |
  sed -n 's/^shlibs:Depends=//p')
rm -rf "$shlibs"
[ -n "$depends" ] || { echo "package: dpkg-shlibdeps found no Depends for $deb_binary" >&2; exit 1; }
install -D -m0644 scripts/deb/nasperf-agent.service "$root/lib/systemd/system/nasperf-agent.service"
install -D -m0644 scripts/deb/agent.toml "$root/etc/nasperf/agent.toml"
# The README with the pages it links (docs/: guides, reference, design), so its relative
# links still resolve under /usr/share/doc/nasperf.
install -D -m0644 README.md "$root/usr/share/doc/nasperf/README.md"
install -D -m0644 SECURITY.md "$root/usr/share/doc/nasperf/SECURITY.md"
find docs -type f \( -name '*.md' -o -name '*.png' \) -print0 | sort -z \
  | while IFS= read -r -d '' f; do install -D -m0644 "$f" "$root/usr/share/doc/nasperf/$f"; done
install -d -m0755 "$root/srv/nasperf" "$root/DEBIAN"
install -m0755 scripts/deb/postinst scripts/deb/prerm "$root/DEBIAN/"
echo /etc/nasperf/agent.toml >"$root/DEBIAN/conffiles"
cat >"$root/DEBIAN/control" <<CONTROL
Package: nasperf
Version: $version
Architecture: amd64
Maintainer: nasperf developers <nasperf@invalid>
Section: net
Priority: optional
Installed-Size: $(du -sk "$root" | cut -f1)
Depends: $depends
Description: how fast a NAS really takes data over the network
 A receiver agent writes incoming test streams straight into a NAS's array or
 pool; a sender pushes files in repeated timed runs; both ends' timings land in
 one CSV with a verdict on the bottleneck (network, disk, source); also SMB,
 NFS, scp and sftp copies measured the same way. The nasperf-agent service is
 installed but not enabled.
CONTROL
dpkg-deb --root-owner-group -Zxz --build "$root" "dist/nasperf_${version}_amd64.deb" >/dev/null
echo "package: dist/nasperf_${version}_amd64.deb ($(( $(stat -c %s "dist/nasperf_${version}_amd64.deb") / 1024 / 1024 )) MiB)"
