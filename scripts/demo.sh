#!/usr/bin/env bash
# Installs what is missing, builds, and runs `nasperf demo`: a receiver and a sender
# on loopback, a few timed runs into a temporary target, the per-transfer table,
# and the CSV paths. Extra arguments go to `nasperf demo` (e.g. --size 1GiB).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"${NASPERF_JOBS:-2}" >/dev/null
exec build/nasperf demo "$@"
