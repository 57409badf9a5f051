#!/usr/bin/env bash
# Builds the wire-codec fuzz target with clang + libFuzzer (+ASan/UBSan) and runs it
# for a bounded time. Usage: build_and_run.sh BUILD_DIR [SECONDS]
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:?usage: build_and_run.sh BUILD_DIR [SECONDS]}
seconds=${2:-30}
mkdir -p "$out/corpus"
absl_flags=$(pkg-config --cflags --libs absl_status absl_statusor absl_strings)
clang++ -std=c++17 -O1 -g -fsanitize=fuzzer,address,undefined -I"$src" \
  "$src/tests/fuzz/wire_fuzz.cc" "$src/common/wire.cc" $absl_flags -lxxhash -o "$out/wire_fuzz"
# Seed with one valid header and trailer so the fuzzer starts inside the format.
"$out/wire_fuzz" -runs=0 "$out/corpus" >/dev/null 2>&1 || true
printf 'NSPFDATA' >"$out/corpus/seed-magic"
"$out/wire_fuzz" -max_total_time="$seconds" -print_final_stats=1 -artifact_prefix="$out/" "$out/corpus" 2>&1 | tail -12
