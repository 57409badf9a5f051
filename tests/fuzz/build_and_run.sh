#!/usr/bin/env bash
# Builds the fuzz targets with clang + libFuzzer (+ASan/UBSan) and runs each for a
# bounded time: the wire codec for SECONDS, the report's CSV-to-HTML path for
# NASPERF_FUZZ_REPORT_SECONDS (default 20), peer messages (a receiver's replies, a
# collector's requests) for NASPERF_FUZZ_PEER_SECONDS each (default 20).
# Usage: build_and_run.sh BUILD_DIR [SECONDS]
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:?usage: build_and_run.sh BUILD_DIR [SECONDS]}
seconds=${2:-30}
mkdir -p "$out/corpus"
# The generated proto: peer messages below, and the report reader, which reads cells
# into a TransferReport through the column table (wire/columns.h).
gen=$out/gen
mkdir -p "$gen"
protoc -I"$src" --cpp_out="$gen" --grpc_out="$gen" --plugin=protoc-gen-grpc="$(command -v grpc_cpp_plugin)" \
  "$src/proto/nasperf.proto"
# pkg-config's flags, one word each (assigned first, so a missing module stops the script).
modules=(grpc++ protobuf absl_status absl_statusor absl_strings absl_str_format absl_synchronization absl_time
  absl_flat_hash_map openssl libxxhash)
cflags=$(pkg-config --cflags "${modules[@]}")
libs=$(pkg-config --libs "${modules[@]}")
# UBSan findings must stop the fuzzer even when run without test.sh's UBSAN_OPTIONS.
sanitize="-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined"
limits=(-rss_limit_mb=4096)

# Each target's sources; a source shared by several (the generated proto, common/, wire/, measure/) is
# compiled once, and the compiles run NASPERF_JOBS (default 2) at a time.
wire_sources=("$src"/tests/fuzz/wire_fuzz.cc "$src"/wire/wire.cc)
report_sources=("$src"/tests/fuzz/report_fuzz.cc "$src"/report/{table,statistics,analysis,html,run_intake}.cc
  "$gen"/proto/nasperf.pb.cc
  "$src"/common/{csv,stats,fd,clock,policy,units,json}.cc "$src"/wire/columns.cc
  "$src"/measure/{verdict,intake,cache_knee}.cc)
peer_sources=("$gen"/proto/nasperf.{pb,grpc.pb}.cc
  "$src"/common/{policy,csv,units,fd,log,clock,token}.cc "$src"/wire/{validate,columns,wire,tls,grpc_auth}.cc)
reply_sources=("$src"/tests/fuzz/reply_fuzz.cc "$src"/wire/receiver_client.cc "${peer_sources[@]}")
collector_sources=("$src"/tests/fuzz/collector_fuzz.cc "$src"/collector/csv_sink.cc "${peer_sources[@]}")
mkdir -p "$out/obj"
# object SOURCE: the object file SOURCE compiles to (its path, / turned to _).
object() {
  local rel=${1#"$out"/}
  rel=${rel#"$src"/}
  echo "$out/obj/${rel//\//_}.o"
}
compile() {  # SOURCE
  # shellcheck disable=SC2086 # the flags are words
  clang++ -std=c++17 -O1 -g $sanitize -I"$src" -I"$gen" $cflags -c "$1" -o "$(object "$1")"
}
export -f object compile
export src out gen cflags sanitize
# shellcheck disable=SC2016 # $1 is the inner bash's
printf '%s\0' "${wire_sources[@]}" "${report_sources[@]}" "${reply_sources[@]}" "${collector_sources[@]}" |
  sort -zu | xargs -0 -n 1 -P "${NASPERF_JOBS:-2}" bash -c 'compile "$1"' _
# link TARGET SOURCE...: the fuzzer TARGET from the objects of SOURCE...
link() {
  local target=$1 f objects=()
  shift
  for f in "$@"; do objects+=("$(object "$f")"); done
  # shellcheck disable=SC2086 # the flags are words
  clang++ $sanitize "${objects[@]}" $libs -o "$out/$target"
}
link wire_fuzz "${wire_sources[@]}"
link report_fuzz "${report_sources[@]}"
link reply_fuzz "${reply_sources[@]}"
link collector_fuzz "${collector_sources[@]}"

# Seed with the header's magic so the fuzzer starts inside the format.
"$out/wire_fuzz" -runs=0 "$out/corpus" >/dev/null 2>&1 || true
printf 'NSPFDATA' >"$out/corpus/seed-magic"
printf 'NSPFSEND' >"$out/corpus/seed-footer"
"$out/wire_fuzz" "${limits[@]}" -max_total_time="$seconds" -print_final_stats=1 -artifact_prefix="$out/" "$out/corpus" 2>&1 | tail -12

# report: arbitrary CSV text through parse, summary, compare and HTML rendering.
mkdir -p "$out/report-corpus"
printf 'label,iteration,role,mb_per_s,status,started_at,stream,run_id,host\nx,1,receiver,100,ok,,0,r,h\ny,1,receiver,130,ok,,0,r,h\n' \
  >"$out/report-corpus/seed"
# Figures at and past the limits, and non-finite ones: all must parse or fail by line.
printf 'label,iteration,role,mb_per_s,status,started_at,stream,run_id,host\nx,1,receiver,1e15,ok,,0,r,h\nx,2,receiver,9.99e14,ok,,0,r,h\ny,1,receiver,1e308,ok,,0,r,h\ny,2,receiver,inf,ok,,0,r,h\nz,1,receiver,nan,ok,,0,r,h\n' \
  >"$out/report-corpus/seed-extremes"
"$out/report_fuzz" "${limits[@]}" -max_total_time="${NASPERF_FUZZ_REPORT_SECONDS:-20}" -print_final_stats=1 \
  -artifact_prefix="$out/report-" "$out/report-corpus" 2>&1 | tail -12

# Peer messages: a hostile receiver's replies to the sender's real ReceiverClient over
# loopback gRPC, and a token holder's reports through the collector's check to CSV.
for target in reply collector; do
  mkdir -p "$out/$target-corpus"
  "$out/${target}_fuzz" "${limits[@]}" -max_total_time="${NASPERF_FUZZ_PEER_SECONDS:-20}" -print_final_stats=1 \
    -artifact_prefix="$out/$target-" "$out/$target-corpus" 2>&1 | tail -12
done
