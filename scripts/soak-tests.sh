#!/usr/bin/env bash
# A stress check of the test suite itself (not part of CI): builds once, then runs
# the whole ctest suite N times, optionally while a CPU hog keeps every core busy,
# and prints every test that ever failed with how often. A test that fails here on
# a busy machine depends on timing and needs fixing, not a retry. ctest runs in
# parallel as in scripts/test.sh; after each round the run's leftovers are ended.
#   scripts/soak-tests.sh [-n N] [--load] [--asan] [-- CTEST_ARGS...]
#   e.g. issue 43's soak: scripts/soak-tests.sh -n 1 --load -- -L integration -LE package --repeat until-fail:3
#     -n N     rounds (default 3)
#     --load   one busy-looping process per core for the whole soak
#     --asan   also run the sanitizer build's tests each round (as scripts/test.sh does)
# Exit status: 0 when no test failed in any round, 1 otherwise, 2 on usage errors.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

rounds=3
load=0
asan=0
ctest_args=()
while [ $# -gt 0 ]; do
  case $1 in
    -n) rounds=${2:?-n needs a number}; shift 2 ;;
    --load) load=1; shift ;;
    --asan) asan=1; shift ;;
    --) shift; ctest_args=("$@"); break ;;
    -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
    *) echo "soak-tests.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
case $rounds in ''|*[!0-9]*|0) echo "soak-tests.sh: -n wants a positive number, got '$rounds'" >&2; exit 2 ;; esac

jobs=${NASPERF_JOBS:-2}
NASPERF_WITH_BROWSER=1 scripts/install-deps.sh || exit 1
if command -v ccache >/dev/null; then
  export CMAKE_CXX_COMPILER_LAUNCHER=ccache CMAKE_C_COMPILER_LAUNCHER=ccache
  export CCACHE_BASEDIR=$PWD CCACHE_NOHASHDIR=1
fi
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null && cmake --build build -j"$jobs" || exit 1
if [ "$asan" = 1 ]; then
  cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DNASPERF_SANITIZE=ON -DNASPERF_IT_TIMEOUT=600 >/dev/null &&
    cmake --build build-asan -j"$jobs" || exit 1
fi

hogs=()
stop_hogs() {
  [ ${#hogs[@]} -gt 0 ] && kill "${hogs[@]}" 2>/dev/null
  wait "${hogs[@]}" 2>/dev/null
  hogs=()
}
trap 'stop_hogs' EXIT
trap 'exit 130' INT TERM
if [ "$load" = 1 ]; then
  for _ in $(seq "$(nproc)"); do
    (while :; do :; done) &
    hogs+=($!)
  done
  echo "soak-tests.sh: ${#hogs[@]} CPU hogs running (pids ${hogs[*]})"
fi

log=$(mktemp -d /tmp/nasperf-soak.XXXXXX)
failures="$log/failures"
: >"$failures"
# run_round TREE LABEL: one ctest pass; appends the failed tests to $failures.
run_round() {
  local tree=$1 label=$2 out
  out="$log/$label.log"
  rm -f "$tree/Testing/Temporary/LastTestsFailed.log"
  if [ "$tree" = build-asan ]; then
    (cd "$tree" && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
       ctest --output-on-failure --timeout 600 -j"${NASPERF_CTEST_JOBS:-$jobs}" -L 'unit|fault' "${ctest_args[@]}") >"$out" 2>&1
  else
    (cd "$tree" && ctest --output-on-failure --timeout 600 -j"${NASPERF_CTEST_JOBS:-$jobs}" "${ctest_args[@]}") >"$out" 2>&1
  fi
  local rc=$?
  scripts/leftovers.sh "$NASPERF_SUITE_RUN" >>"$out" 2>&1 || echo "leftovers after $label" >>"$failures"
  grep -E 'tests passed|Total Test time' "$out" | sed "s/^/  $label: /"
  if [ -f "$tree/Testing/Temporary/LastTestsFailed.log" ]; then
    sed 's/^[0-9]*://' "$tree/Testing/Temporary/LastTestsFailed.log" | sed "s/$/ ($tree)/" >>"$failures"
  elif [ "$rc" -ne 0 ]; then
    echo "ctest itself failed, exit $rc ($tree)" >>"$failures"
  fi
}

# Marked after the hogs started: scripts/leftovers.sh ends what carries the mark.
NASPERF_SUITE_RUN=soak-$(date +%s)-$$
export NASPERF_SUITE_RUN
start=$(date +%s)
for round in $(seq "$rounds"); do
  echo "== round $round of $rounds ($(date +%T))"
  run_round build "round$round"
  [ "$asan" = 1 ] && run_round build-asan "round$round-asan"
done
stop_hogs

echo
echo "== soak: $rounds rounds$([ "$load" = 1 ] && echo ' under CPU load') in $(($(date +%s) - start)) s; logs in $log"
if [ ! -s "$failures" ]; then
  echo "no test failed in any round"
  exit 0
fi
printf '  %-6s %s\n' "times" "test"
sort "$failures" | uniq -c | sort -rn | while read -r count name; do
  printf '  %-6s %s\n' "$count" "$name"
done
exit 1
