#!/usr/bin/env bash
# Issue 13: the container image built from nothing (scripts/oci-image.py, by
# scripts/package.sh) loads into podman, runs `nasperf` as a non-root user by
# default, and a receiver run from it with --network host and a bind-mounted target
# takes a sender's transfers from the host: ok rows on both ends, the files in the
# target, the TLS key in the config volume.
source "$(dirname "$0")/lib.sh"
need_root "podman and bind mounts"
command -v podman >/dev/null || skip "no podman (scripts/install-deps.sh installs it)"
command -v runc >/dev/null || skip "no runc (scripts/install-deps.sh installs it)"
src=$(cd "$(dirname "$0")/../.." && pwd)
image=$(newest "$src"/dist/nasperf-*.oci.tar)
[ -n "$image" ] || skip "no dist/nasperf-*.oci.tar: run scripts/package.sh first (test.sh does)"

# Storage of its own, and settings this host needs: crun refuses hybrid cgroup v1/v2
# hosts and the sandbox refuses podman's default rlimits, so runc, cgroupfs, none.
cat >"$T/containers.conf" <<CONF
[containers]
default_ulimits = []
[engine]
cgroup_manager = "cgroupfs"
CONF
export CONTAINERS_CONF=$T/containers.conf
pod() { podman --root "$T/storage" --runroot "$T/run" --storage-driver vfs "$@"; }
CLEANUPS+=("podman --root '$T/storage' --runroot '$T/run' --storage-driver vfs rm -af -t 0 >/dev/null 2>&1")

pod load -i "$image" >"$T/load.log" 2>&1 || fail "podman load refused the image: $(tail -3 "$T/load.log")"
ref=$(sed -n 's/^Loaded image: //p' "$T/load.log")
[ -n "$ref" ] || fail "podman load named no image: $(cat "$T/load.log")"
[ "$(pod image inspect -f '{{.Config.User}}' "$ref")" = "65532:65532" ] || fail "the image does not run as a non-root user"
pod run --runtime runc --rm "$ref" --version | grep -q static || fail "the entrypoint is not the static nasperf"

mkdir -p "$T/target" "$T/config"
chown 65532:65532 "$T/target" "$T/config"
free_port
pod run --runtime runc -d --name nasperf-rx --network host -e NASPERF_TOKEN \
  -v "$T/target:/data" -v "$T/config:/home/nasperf/.config/nasperf" \
  "$ref" receiver --target /data --min-free 0 --listen "127.0.0.1:$port" >"$T/run.log" 2>&1 \
  || fail "the receiver container did not start: $(cat "$T/run.log")"
listening() { pod logs nasperf-rx 2>&1 | grep -q "control port $port"; }
wait_for "the receiver in the container to listen" 20 listening
[ "$(pod top nasperf-rx user | tail -1 | tr -d ' ')" = nasperf ] || fail "the receiver runs as $(pod top nasperf-rx user | tail -1)"

"$NASPERF" sender --to "127.0.0.1:$port" --size 16MiB --runs 2 --cleanup never --out "$T/out" --no-progress \
  --accept-new-agent-key >"$T/tx.log" 2>&1 || fail "sender to the container failed: $(tail -5 "$T/tx.log")"
[ "$(csv_col "$T/out/transfers.csv" status | sort | uniq -c | tr -s ' ')" = " 4 ok" ] || fail "not 4 ok rows"
[ "$(find "$T/target" -name 'nasperf-*.dat' -size 16M | wc -l)" -eq 2 ] || fail "the target holds: $(ls -la "$T/target")"
[ -s "$T/config/tls.pem" ] || fail "the TLS key is not in the config volume"
pod stop -t 5 nasperf-rx >/dev/null
echo "ok: $(basename "$image") loads, runs as 65532, a receiver in it took 2 transfers into a bind-mounted target"
