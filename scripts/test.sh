#!/usr/bin/env bash
# The whole test suite, as CI runs it: installs what is missing, builds, runs ctest
# (unit + integration with real processes; the root-only tests need root), then
# builds again with AddressSanitizer + UBSan and runs the tests there, then fuzzes
# the wire codec for a bounded time. Non-zero on any failure.
#   NASPERF_QUICK=1 scripts/test.sh   skips the sanitizer build and the fuzzer.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${NASPERF_JOBS:-2}

# chromium too: the HTML report test opens the report in a real (headless) browser.
NASPERF_WITH_BROWSER=1 scripts/install-deps.sh
[ "$(id -u)" -eq 0 ] || echo "test.sh: not root: the loop-device, mount and namespace tests will be skipped"

echo "== build (RelWithDebInfo)"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$jobs"
echo "== ctest"
(cd build && ctest --output-on-failure --timeout 600)

if [ "${NASPERF_QUICK:-0}" != 1 ]; then
  echo "== build with AddressSanitizer + UBSan"
  cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DNASPERF_SANITIZE=ON >/dev/null
  cmake --build build-asan -j"$jobs"
  echo "== ctest under ASan/UBSan (unit tests and the fault-injection integration tests)"
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
  (cd build-asan && ctest --output-on-failure --timeout 600 -L 'unit|integration' \
     -E 'integration\.(large_file_verify|sender_killed|demo)')
  echo "== fuzz the wire codec (bounded)"
  tests/fuzz/build_and_run.sh build-fuzz "${NASPERF_FUZZ_SECONDS:-30}"
fi
echo "test.sh: all passed"
