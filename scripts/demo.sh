#!/usr/bin/env bash
# Installs what is missing, builds, and runs `nasperf demo`: a receiver and a sender
# on loopback, a few timed runs into a temporary target, the per-transfer table,
# and the CSV paths. Extra arguments go to `nasperf demo` (e.g. --size 1GiB).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
[ -x build/nasperf ] || echo "demo: first build: about 4 minutes on 2 cores (the progress counter below)"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
# Ninja's [done/total] counter on one line, so a first build is not minutes of silence.
cmake --build build -j"${NASPERF_JOBS:-2}" | awk '/^\[[0-9]+\/[0-9]+\]/ { printf "\rdemo: building %s", $1; fflush(); next } { print }'
echo
exec build/nasperf demo "$@"
