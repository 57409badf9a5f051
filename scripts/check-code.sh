#!/usr/bin/env bash
# The code's shape, as scripts/test.sh checks it (seconds, no build):
#   - every tracked C++ file is formatted as .clang-format says (fix: clang-format -i FILE);
#   - no function is longer than MAX_LINES (80) lines, first line to closing brace, as
#     universal-ctags finds them (split it: a helper per step, a function per mode);
#   - no folder includes a header of a folder above it in LAYERS (docs/DESIGN.md §2), and
#     sender/ and receiver/ include nothing of each other.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
MAX_LINES=${MAX_LINES:-80}
for tool in clang-format ctags; do
  command -v "$tool" >/dev/null || { echo "check-code: $tool is not installed (scripts/install-deps.sh installs it)" >&2; exit 1; }
done
mapfile -t files < <(git ls-files -- '*.cc' '*.h')
rc=0

unformatted=$(clang-format --dry-run "${files[@]}" 2>&1 | grep -o '^[^:[:space:]]*:[0-9]*:[0-9]*: warning: code should be clang-formatted' | cut -d: -f1 | sort -u)
if [ -n "$unformatted" ]; then
  echo "$unformatted"
  echo "check-code: $(grep -c . <<<"$unformatted") file(s) (above) not formatted as .clang-format says: clang-format -i them" >&2
  rc=1
fi

long=$(printf '%s\n' "${files[@]}" | ctags --languages=C++ --kinds-C++=f --fields=+ne --output-format=u-ctags -f - -L - 2>/dev/null |
  awk -F'\t' -v max="$MAX_LINES" '{
    line = ""; end = ""
    for (i = 4; i <= NF; i++) { if ($i ~ /^line:/) line = substr($i, 6); if ($i ~ /^end:/) end = substr($i, 5) }
    if (line != "" && end != "" && end - line + 1 > max) print $2 ":" line ": " $1 " is " end - line + 1 " lines"
  }' | sort)
if [ -n "$long" ]; then
  echo "$long"
  echo "check-code: $(grep -c . <<<"$long") function(s) (above) longer than $MAX_LINES lines: split them" >&2
  rc=1
fi
# The folders, lowest first: each may include only its own and lower folders' headers.
LAYERS=(common wire measure datapath ssh transport receiver sender report collector watch lab cli)
declare -A rank
for i in "${!LAYERS[@]}"; do rank[${LAYERS[$i]}]=$i; done
upward=$(for f in "${files[@]}"; do
  from=${f%%/*}
  [ -n "${rank[$from]:-}" ] || continue
  grep -oE '^#include "[a-z_]+/' "$f" | sed 's/^#include "//; s|/$||' | sort -u | while read -r to; do
    if [ -z "${rank[$to]:-}" ] || [ "$to" = "$from" ]; then continue; fi
    if [ "${rank[$to]}" -gt "${rank[$from]}" ] || [ "$from/$to" = sender/receiver ] || [ "$from/$to" = receiver/sender ]; then
      echo "$f: includes $to/ (above $from/ in the layers, or the other role)"
    fi
  done
done)
if [ -n "$upward" ]; then
  echo "$upward"
  echo "check-code: $(grep -c . <<<"$upward") include(s) (above) point up the layers: ${LAYERS[*]}" >&2
  rc=1
fi
[ "$rc" -eq 0 ] && echo "check-code: ${#files[@]} C++ files formatted, no function over $MAX_LINES lines, no include up the layers"
exit "$rc"
