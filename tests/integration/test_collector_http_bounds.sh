#!/usr/bin/env bash
# shellcheck disable=SC2154  # NAME_PID, NAME_PORT...: set by lib.sh's start_* with printf -v
# Issue 42 rows 4, 5 and 8 (SECURITY.md, "The collector's HTTP side"), live on loopback
# with curl. A collector serving --http with a bearer token, started on a ~90 MiB
# transfers.csv:
# - row 4: 20 idle kept-alive connections without the token and two floods of tokenless
#   requests leave a Prometheus-style scrape with the token 10 answers out of 10;
# - row 5: /report reads only the store's tail: the collector's peak RSS (VmHWM) grows by
#   less than a third of the file's size (the whole file parsed takes several times its
#   size), the page says it shows the last N rows, and /metrics answers meanwhile (that
#   it never waits for /report is shown by ordering in HttpServer.ADeferredPath...);
# - row 8: a Host that is not loopback gets 421; every HTML reply has a strict
#   Content-Security-Policy and nosniff; the live page still runs under its policy
#   (headless Chromium, when installed).
source "$(dirname "$0")/lib.sh"
[ -x "$COLLECTOR_CLIENT" ] || skip "no collector_client given"
command -v curl >/dev/null || skip "curl is not installed"
# Under ASan, freed memory waits in a quarantine and would count as the collector's.
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=1:thread_local_quarantine_size_kb=64
hwm_mib() { awk '/^VmHWM:/ { print int($2 / 1024) }' "/proc/$1/status"; }

# One real row, then ~90 MiB of rows like it, each with a run of its own.
start_collector seed
"$COLLECTOR_CLIENT" 127.0.0.1:"$seed_PORT" "$NASPERF_TOKEN" twice >"$T/cc.log" 2>&1 ||
  fail "a small report: $(cat "$T/cc.log")"
stop_pids "$seed_PID"
mkdir -p "$T/col"
head -1 "$T/seed/transfers.csv" >"$T/col/transfers.csv"
row=$(sed -n 2p "$T/seed/transfers.csv")
rows=$(((96 << 20) / (${#row} + 1)))
awk -v rest="${row#*,}" -v n="$rows" 'BEGIN { for (i = 0; i < n; i++) printf "old-%d,%s\n", i, rest }' \
  >>"$T/col/transfers.csv"
file_mib=$(($(stat -c %s "$T/col/transfers.csv") >> 20))

head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$T/http.token"
chmod 600 "$T/http.token"
token=$(cat "$T/http.token")
# The collector reads every row's key before it listens: ~1 s here, ~10 s under ASan,
# and twice that when the machine is busy.
LISTEN_SECONDS=120 start_collector col --http 127.0.0.1:0 --http-token-file "$T/http.token"
http_port=$(sed -n 's/^http_port=//p' "$T/col.port")
[ -n "$http_port" ] || fail "no http_port in the port file: $(cat "$T/col.port")"
url=http://127.0.0.1:$http_port
# scrape: the HTTP status of one /metrics with the token (000: no answer within 10 s).
scrape() { curl -s -o /dev/null -w '%{http_code}' --max-time 10 -H "Authorization: Bearer $token" "$url/metrics" || true; }
problems=()

# Row 8: the Host check and the policy.
code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 10 -H "Host: rebound.example:$http_port" "$url/")
[ "$code" = 421 ] || problems+=("a request for Host rebound.example got $code, not 421")
code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 10 -H "Host: localhost:$http_port" "$url/")
[ "$code" = 200 ] || problems+=("a request for Host localhost got $code, not 200")
curl -s -D "$T/page.headers" -o "$T/page.html" --max-time 10 "$url/"
grep -qi "^Content-Security-Policy: default-src 'none'; script-src 'sha256-" "$T/page.headers" ||
  problems+=("the live page has no strict Content-Security-Policy: $(tr -d '\r' <"$T/page.headers" | tr '\n' '|')")
grep -qi '^X-Content-Type-Options: nosniff' "$T/page.headers" || problems+=("the live page has no nosniff")

# Row 5: /report on the ~90 MiB store, /metrics meanwhile.
base=$(hwm_mib "$col_PID")
curl -s -D "$T/report.headers" -o "$T/report.html" --max-time 30 -H "Authorization: Bearer $token" \
  "$url/report" &
report=$!
metrics_code=$(scrape)
wait "$report" || problems+=("curl /report failed")
[ "$metrics_code" = 200 ] || problems+=("/metrics while /report was asked: $metrics_code")
grep -q "this report shows only the last [0-9]* transfer rows" "$T/report.html" ||
  problems+=("/report does not say it shows the last rows: $(head -c 300 "$T/report.html" 2>/dev/null || true)")
grep -qi "^Content-Security-Policy: default-src 'none'" "$T/report.headers" ||
  problems+=("/report has no Content-Security-Policy")
grep -q "<script" "$T/report.html" && problems+=("/report has a script")
peak=$(hwm_mib "$col_PID")
[ $((peak - base)) -lt $((file_mib / 3)) ] ||
  problems+=("/report on a $file_mib MiB store took the peak RSS from $base to $peak MiB (bound: +$((file_mib / 3)))")

# Row 4: idle kept-alive connections without the token, and two floods of tokenless
# requests (each a few hundred on kept-alive connections), while a scrape asks 10 times.
# A server that closed one at once must not end this shell (SIGPIPE) or the test (set -e).
trap '' PIPE
idle=()
for _ in $(seq 20); do
  exec {fd}<>"/dev/tcp/127.0.0.1/$http_port"
  { printf 'GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n' >&"$fd"; } 2>/dev/null || true
  idle+=("$fd")
done
floods=()
for _ in 1 2; do
  curl -s --max-time 30 "$url/?[1-300]" >/dev/null 2>&1 &
  floods+=("$!")
  PIDS+=("$!")
done
answered=0
for _ in $(seq 10); do [ "$(scrape)" = 200 ] && answered=$((answered + 1)); done
[ "$answered" -eq 10 ] || problems+=("$answered of 10 scrapes with the token answered during a tokenless flood")
for fd in "${idle[@]}"; do exec {fd}>&-; done
# The browser below loads the page as a user would, after the floods (each ends within 30 s):
# under ASan a flood still running held the page's load past the browser's budget.
for pid in "${floods[@]}"; do wait "$pid" || true; done

# The live page under its policy: its script runs and fills in the status.
chromium=$(command -v chromium || command -v chromium-browser || true)
if [ -n "$chromium" ]; then
  timeout -k 5 60 "$chromium" --headless --no-sandbox --disable-gpu --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync --user-data-dir="$T/profile" \
    --virtual-time-budget=3000 --dump-dom "$url/#token=$token" >"$T/dom.html" 2>>"$T/chromium.log" ||
    problems+=("chromium: $(tail -3 "$T/chromium.log" 2>/dev/null || true)")
  grep -q 'id="status">reports stored' "$T/dom.html" ||
    problems+=("the live page's script did not run under its policy: $(stat -c '%s bytes of DOM' "$T/dom.html"), $(grep -o 'id="status">[^<]*' "$T/dom.html" || echo 'no status element')")
fi
alive "$col_PID" || problems+=("the collector died")
[ "${#problems[@]}" -eq 0 ] || fail "$(printf '%s; ' "${problems[@]}")"
echo "ok: $file_mib MiB store, /report peak RSS $base -> $peak MiB; 10/10 scrapes during the flood; Host and CSP checked"
