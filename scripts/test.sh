#!/usr/bin/env bash
# The whole test suite, as CI runs it: installs what is missing, runs shellcheck over
# every shell script and scripts/check-code.sh over the C++ (format, function length;
# seconds, so a slip there shows at once), builds, runs ctest
# (unit + integration with real processes; the root-only tests need root; before it,
# scripts/package.sh builds the static binary one of them runs in a chroot), then
# builds again with AddressSanitizer + UBSan and runs the tests there, then fuzzes
# the wire codec and the report path for a bounded time.
# A failing stage does not stop the later ones (a flaky test must not hide a
# sanitizer finding): every stage runs, a table of results and times closes the
# run, and the exit status is non-zero if any stage failed.
#   scripts/test.sh --quick           the developer's inner loop: the build, then only the
#                                     `unit` and `smoke` tiers (docs/guides/testing.md).
#   NASPERF_QUICK=1 scripts/test.sh   skips the sanitizer build and the fuzzer.
#   NASPERF_BUILD_DIR=DIR             build tree for the first stages (default build).
#   NASPERF_JOBS=N                    compile jobs and ctest -j (default 2; NASPERF_CTEST_JOBS
#                                     sets ctest's alone).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
quick_tier=0
case ${1:-} in
  --quick) quick_tier=1 ;;
  "") ;;
  *) echo "test.sh: unknown argument '$1' (the only one is --quick)" >&2; exit 2 ;;
esac
jobs=${NASPERF_JOBS:-2}
build=${NASPERF_BUILD_DIR:-build}

# chromium too: the HTML report test opens the report in a real (headless) browser.
if ! NASPERF_WITH_BROWSER=1 scripts/install-deps.sh; then
  echo "test.sh: installing the build and test packages failed (see above)" >&2
  exit 1
fi
[ "$(id -u)" -eq 0 ] || echo "test.sh: not root: the loop-device, mount and namespace tests will be skipped"

# Every process this run starts carries NASPERF_SUITE_RUN (inherited): the last stage
# ends those, and only those (scripts/leftovers.sh), so a NAS's own agent or someone
# else's benchmark on this machine survives the suite.
NASPERF_SUITE_RUN=$(date +%s)-$$-$RANDOM
export NASPERF_SUITE_RUN
# ccache, where installed, compiles each content once: a second clone or a rebuild of
# the same sources reuses the objects (paths relative to this tree, so any clone hits).
if command -v ccache >/dev/null; then
  export CMAKE_CXX_COMPILER_LAUNCHER=ccache CMAKE_C_COMPILER_LAUNCHER=ccache
  export CCACHE_BASEDIR=$PWD CCACHE_NOHASHDIR=1
fi

stages=()
results=()
failed=0
# stage NAME COMMAND...: runs the command, records pass/fail and its time.
stage() {
  local name=$1 start rc
  shift
  echo "== $name"
  start=$(date +%s)
  "$@"
  rc=$?
  stages+=("$name")
  if [ "$rc" -eq 0 ]; then
    results+=("passed  $(($(date +%s) - start)) s")
  else
    results+=("FAILED  $(($(date +%s) - start)) s (exit $rc)")
    failed=1
  fi
  return "$rc"
}
# skipped NAME WHY: a stage that cannot run because an earlier one failed.
skipped() {
  stages+=("$1")
  results+=("skipped ($2)")
  failed=1
}

build_tree() {  # DIR CMAKE_ARGS...
  local dir=$1
  shift
  cmake -S . -B "$dir" -G Ninja "$@" >/dev/null && cmake --build "$dir" -j"$jobs"
}
failed_ctest_dirs=()
run_ctest() {  # DIR CTEST_ARGS...
  local dir=$1 rc
  shift
  # In parallel: only the rate and package tiers run alone (RUN_SERIAL), and the
  # longest tests start first (COST in tests/integration/CMakeLists.txt, then ctest's
  # own measured costs in DIR/Testing/Temporary).
  (cd "$dir" && ctest --output-on-failure --timeout 600 -j"${NASPERF_CTEST_JOBS:-$jobs}" "$@")
  rc=$?
  [ "$rc" -eq 0 ] || failed_ctest_dirs+=("$dir")
  return "$rc"
}
# failed_tests_digest DIR: each failed test of the last ctest run in DIR with its
# "FAIL:" lines and the last lines of its output (a test may dump its logs after the
# FAIL), so the close of a long log (often all a CI page keeps) still says what failed and why.
failed_tests_digest() {
  local dir=$1 list=$1/Testing/Temporary/LastTestsFailed.log log=$1/Testing/Temporary/LastTest.log
  [ -s "$list" ] || return 0
  echo "== failed in $dir (the last lines of each; the whole output is above)"
  awk -F: 'NR == FNR { failed[substr($0, index($0, ":") + 1)] = 1; next }
    /^[0-9]+\/[0-9]+ Test: / { name = $0; sub(/^[0-9]+\/[0-9]+ Test: /, "", name); n = 0; inside = 0; why = ""; next }
    /^Output:$/ { inside = 1; getline; next }
    /^<end of output>$/ { inside = 0; if (name in failed) { tail[name] = why; for (i = (n > 12 ? n - 11 : 1); i <= n; i++) tail[name] = tail[name] "    " substr(line[i], 1, 240) "\n" } next }
    inside && /^FAIL: / { why = why "    " substr($0, 1, 240) "\n" }
    inside { line[++n] = $0 }
    END { for (t in failed) printf "  %s\n%s", t, (t in tail ? tail[t] : "    (no output logged)\n") }' "$list" "$log"
}

# shell_files: the shell scripts in the tree: every tracked *.sh, .ci/run, and the
# files under scripts/ with no extension whose first line is a sh, bash or dash shebang.
shell_files() {
  local f first
  while IFS= read -r f; do
    case $f in
      *.sh | .ci/run) echo "$f" ;;
      scripts/*)
        [[ ${f##*/} != *.* && -f $f ]] || continue
        first=""
        read -r first <"$f" || true
        if [[ $first =~ ^'#!'.*[/[:space:]](ba|da)?sh([[:space:]]|$) ]]; then echo "$f"; fi
        ;;
    esac
  done < <(git ls-files -- '*.sh' .ci/run scripts)
}
# run_shellcheck: shellcheck (settings in .shellcheckrc) over shell_files, a few
# files per process, $jobs at a time (each test script makes it read lib.sh again).
run_shellcheck() {
  local files out rc=0
  if ! command -v shellcheck >/dev/null; then
    echo "test.sh: shellcheck is not installed (scripts/install-deps.sh installs it)" >&2
    return 1
  fi
  mapfile -t files < <(shell_files)
  out=$(printf '%s\0' "${files[@]}" | xargs -0 -n 4 -P "$jobs" shellcheck -f gcc 2>&1) || rc=$?
  if [ "$rc" -eq 0 ]; then
    echo "shellcheck: ${#files[@]} shell files, no findings"
    return 0
  fi
  sort -t: -k1,1 -k2,2n <<<"$out"
  echo "test.sh: shellcheck: $(grep -c . <<<"$out") finding(s) (above) in the ${#files[@]} shell files: fix each, or disable it on its line with the reason" >&2
  return 1
}
stage "shellcheck" run_shellcheck
stage "code shape (scripts/check-code.sh: clang-format, functions <= 80 lines)" scripts/check-code.sh

if [ "$quick_tier" = 1 ]; then
  if stage "build (RelWithDebInfo)" build_tree "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo; then
    stage "ctest: unit and smoke tiers" run_ctest "$build" -L 'unit|smoke'
  else
    skipped "ctest: unit and smoke tiers" "the build failed"
  fi
elif stage "build (RelWithDebInfo)" build_tree "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo; then
  # The self-contained binaries for NAS systems: integration.static_binary runs the
  # native one in a chroot, integration.static_binary_aarch64 the ARM one under qemu.
  NASPERF_AARCH64=${NASPERF_AARCH64:-1} NASPERF_DEB_BINARY=$build/nasperf \
    stage "static binaries and the .deb (scripts/package.sh)" scripts/package.sh
  stage "ctest" run_ctest "$build"
else
  skipped "ctest" "the build failed"
fi

if [ "${NASPERF_QUICK:-0}" != 1 ] && [ "$quick_tier" = 0 ]; then
  # Line tables (-g1) are all a sanitizer report needs, and compile faster than -g.
  if stage "build with AddressSanitizer + UBSan" build_tree build-asan -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-g1 \
    -DNASPERF_SANITIZE=ON -DNASPERF_IT_TIMEOUT=600; then
    # The unit tests and the `fault` tier (tests/integration/CMakeLists.txt); the long
    # data-volume runs, the packages and the rate checks stay in the plain build.
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 LSAN_OPTIONS="suppressions=$PWD/tests/lsan.supp:print_suppressions=0" \
      UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
      stage "ctest under ASan/UBSan" run_ctest build-asan -L 'unit|fault'
  else
    skipped "ctest under ASan/UBSan" "the sanitizer build failed"
  fi
  stage "fuzz (bounded)" tests/fuzz/build_and_run.sh build-fuzz "${NASPERF_FUZZ_SECONDS:-30}"
fi

stage "no process left behind" scripts/leftovers.sh "$NASPERF_SUITE_RUN"

echo
echo "== test.sh stages"
for i in "${!stages[@]}"; do
  printf '  %-40s %s\n' "${stages[$i]}" "${results[$i]}"
done
for dir in "${failed_ctest_dirs[@]}"; do failed_tests_digest "$dir"; done
if [ "$failed" -ne 0 ]; then
  echo "test.sh: FAILED (see the stages above)"
  exit 1
fi
echo "test.sh: all passed"
