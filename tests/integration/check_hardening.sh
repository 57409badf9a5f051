#!/usr/bin/env bash
# The nasperf binary carries every hardening the build promises: PIE, full RELRO
# with immediate binding, the strong stack protector, stack-clash protection, and
# _FORTIFY_SOURCE checks where the build optimizes. Usage: check_hardening.sh NASPERF CONFIG
set -euo pipefail
bin=${1:?usage: check_hardening.sh NASPERF CONFIG}
config=${2:-}
command -v readelf >/dev/null || { echo "SKIP: readelf (binutils) is not installed"; exit 77; }
problems=()
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
# Into files first: grep -q closing a pipe early would fail readelf under pipefail.
readelf -hlW "$bin" >"$T/headers"
readelf -dW "$bin" >"$T/dynamic"
readelf -W --dyn-syms "$bin" >"$T/symbols"

grep -q 'Type:.*DYN' "$T/headers" || problems+=("not a position-independent executable (ELF type is not DYN)")
grep -q GNU_RELRO "$T/headers" || problems+=("no GNU_RELRO segment (-z relro)")
grep -qE 'BIND_NOW|FLAGS_1.*NOW' "$T/dynamic" || problems+=("no immediate binding (-z now): RELRO is only partial")
grep -q '__stack_chk_fail' "$T/symbols" || problems+=("no stack protector (__stack_chk_fail is never called)")
if [ "$config" != Debug ]; then
  grep -qE '__[a-z_]+_chk(@| |$)' "$T/symbols" || problems+=("no _FORTIFY_SOURCE checks (__*_chk functions) in an optimized build")
fi
# The compiler records its flags with the debug info; stack-clash protection
# leaves no other mark in the binary. Only nasperf's own units count (C++17): a
# sanitizer runtime linked in brings producers of its own.
readelf -p .debug_str "$bin" >"$T/strings" 2>/dev/null || true
grep -o 'GNU C++17[^]]*' "$T/strings" | sort -u >"$T/producers" || true
producer=$(head -1 "$T/producers")
if [ -n "$producer" ]; then
  for flag in -fstack-protector-strong -fstack-clash-protection; do
    missing=$(grep -v -c -- "$flag" "$T/producers" || true)
    [ "$missing" -eq 0 ] || problems+=("$missing compile unit(s) without $flag (e.g. $(grep -v -m1 -- "$flag" "$T/producers"))")
  done
else
  echo "note: no debug info to read the compiler flags from; stack-clash protection not checked"
fi

if [ ${#problems[@]} -gt 0 ]; then
  (IFS=';'; echo "FAIL: $bin is not hardened: ${problems[*]}" >&2)
  exit 1
fi
echo "ok: $bin is PIE, full RELRO + BIND_NOW, stack protector$([ "$config" != Debug ] && echo ', FORTIFY')${producer:+, stack-clash protection}"
