#!/usr/bin/env bash
# Issue 31: the collector's HTTP side with real parts. A loop of 6 copies over a shaped
# 400 Mbit/s lab link reports to a collector on the NAS serving --http on its loopback
# over TLS (--http-tls, with the collector's --tls-cert) with a bearer token; the Debian
# prometheus server scrapes it every second with that token and that certificate, and
# headless Chromium loads the live page. Asserted: PromQL gives the bytes the
# CSV holds at the end, and the median of the live rate it scraped within 10 % of the
# median of the rows' MB/s (both measured here, on this link); the page's chart grows
# while the loop runs and lists the finished rows after; the HTTP side refuses a wrong
# token while the collector keeps collecting.
source "$(dirname "$0")/lib.sh"
command -v prometheus >/dev/null || skip "prometheus is not installed (scripts/install-deps.sh installs it)"
chromium=$(command -v chromium || command -v chromium-browser || true)
[ -n "$chromium" ] || skip "chromium is not installed (scripts/test.sh installs it: NASPERF_WITH_BROWSER=1)"

lab_up --mtu 1500 --rate 400mbit --disk-size 1G
NASPERF_TOKEN=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
export NASPERF_TOKEN
lab_agent rx nas --target "$CACHE" --min-free off
head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$T/http.token"
chmod 600 "$T/http.token"
# The HTTPS certificate: the name Prometheus and curl check is "nasperf".
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj /CN=nasperf \
  -addext subjectAltName=DNS:nasperf -keyout "$T/http.key" -out "$T/http.crt" >"$T/openssl.log" 2>&1 ||
  fail "openssl: $(cat "$T/openssl.log")"
HTTP=127.0.0.1:7701  # the NAS namespace's own loopback: ours alone
"$LAB_SH" nas -- "$NASPERF" collector --out "$T/out" --listen "$NAS_IP:7700" --http "$HTTP" \
  --http-tls --tls-cert "$T/http.crt" --tls-key "$T/http.key" --http-token-file "$T/http.token" \
  --port-file "$T/collector.port" >"$T/collector.log" 2>&1 &
PIDS+=("$!")
wait_port_file "the collector" "$T/collector.port" "$!" "$T/collector.log"
grep -q "^http_port=7701$" "$T/collector.port" || fail "no http_port in the port file: $(cat "$T/collector.port")"

cat >"$T/prometheus.yml" <<YML
global:
  scrape_interval: 1s
  scrape_timeout: 900ms
scrape_configs:
  - job_name: nasperf
    scheme: https
    tls_config:
      ca_file: $T/http.crt
      server_name: nasperf
    authorization:
      credentials_file: $T/http.token
    static_configs:
      - targets: ["$HTTP"]
YML
"$LAB_SH" nas -- prometheus --config.file="$T/prometheus.yml" --storage.tsdb.path="$T/prom" \
  --web.listen-address=127.0.0.1:19090 >"$T/prometheus.log" 2>&1 &
PIDS+=("$!")
# query PROMQL: the first value of an instant query through the HTTP API ("" when none).
query() {
  "$LAB_SH" nas -- curl -sf --max-time 5 "http://127.0.0.1:19090/api/v1/query" --data-urlencode "query=$1" |
    python3 -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else "")'
}
# shellcheck disable=SC2317  # called by wait_for
target_up() { [ "$(query 'up{job="nasperf"}' 2>/dev/null)" = 1 ]; }
wait_for "prometheus to scrape the collector with its token" 60 target_up

# The page in headless Chromium, the token in the address's fragment; prints the DOM.
page() {
  local profile; profile=$(mktemp -d "$T/profile.XXXXXX")
  "$LAB_SH" nas -- timeout -k 5 60 "$chromium" --headless --no-sandbox --disable-gpu --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync --user-data-dir="$profile" \
    --ignore-certificate-errors --virtual-time-budget=3000 --dump-dom "https://$HTTP/#token=$(cat "$T/http.token")" \
    2>>"$T/chromium.log"
}
points() { sed -n 's/.*id="loops" data-points="\([0-9]*\)".*/\1/p' <<<"$1"; }

on_client "$NASPERF" sender --to "$NAS_IP" --accept-new-agent-key --size 64MiB --runs 6 --label live --collector "$NAS_IP:7700" \
  --no-progress >"$T/sender.log" 2>&1 &
sender=$!
https() { "$LAB_SH" nas -- curl -s --cacert "$T/http.crt" --connect-to "nasperf:7701:$HTTP" "$@"; }
# shellcheck disable=SC2317  # called by wait_for
running() { https -f -H "Authorization: Bearer $(cat "$T/http.token")" "https://nasperf:7701/metrics" |
  grep -q '^nasperf_loop_copy{'; }
wait_for "the loop's first live update" 30 running
page >"$T/page1.html" || fail "chromium: $(tail -3 "$T/chromium.log")"
first=$(cat "$T/page1.html")
p1=$(points "$first") p2=${p1:-0}
# Loads of the page until its chart has more points than the first load's (about two
# a second arrive while the loop runs), at most 20.
for _ in $(seq 20); do
  page >"$T/page2.html" || fail "chromium: $(tail -3 "$T/chromium.log")"
  p2=$(points "$(cat "$T/page2.html")")
  [ "${p2:-0}" -gt "${p1:-0}" ] && break
done
wait "$sender" || fail "sender: $(tail -5 "$T/sender.log")"
echo "live page: $p1 points, then $p2"
if [ "${p1:-0}" -eq 0 ] || [ "${p2:-0}" -le "${p1:-0}" ]; then
  fail "the chart did not grow while the loop ran: $p1, then $p2"
fi
grep -q 'copy [1-6] of 6' <<<"$first" || fail "the page does not say which copy: $first"

csv=$T/out/transfers.csv
want=$(csv_role_col "$csv" sender bytes | awk '{ s += $1 } END { printf "%d", s }')
# shellcheck disable=SC2317  # called by wait_for
all_bytes() { [ "$(query 'sum(nasperf_transfer_bytes_total{role="sender",label="live"})')" = "$want" ]; }
wait_for "prometheus to hold the CSV's $want bytes" 30 all_bytes
rows=$(csv_role_col "$csv" sender mb_per_s | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
live=$(query 'max(quantile_over_time(0.5, nasperf_current_bytes_per_second{role="sender",label="live"}[5m])) / 1e6')
echo "median live rate scraped by prometheus: $live MB/s; median of the rows: $rows MB/s"
if [ -z "$live" ] || ! within 10 "$live" "$rows"; then
  fail "live median $live MB/s is not within 10 % of the rows' $rows MB/s"
fi

# Every query of the example Grafana dashboard runs and finds series (the loop is over:
# its live gauges and the knee may be gone, each of the others is there).
dashboard=$(dirname "$LAB_SH")/../examples/grafana-dashboard.json
python3 - "$dashboard" >"$T/queries.txt" <<'PY' || fail "cannot read $dashboard"
import json, sys
for p in json.load(open(sys.argv[1]))["panels"]:
    for t in p["targets"]:
        print(t["expr"].replace("$__range", "5m"))
PY
while IFS= read -r expr; do
  result=$("$LAB_SH" nas -- curl -sf --max-time 5 "http://127.0.0.1:19090/api/v1/query" --data-urlencode "query=$expr") ||
    fail "prometheus refused the dashboard's query: $expr"
  case $expr in
    *current_bytes*|*loop_*|*sustained*) ;;
    *) grep -q '"result":\[{' <<<"$result" || fail "the dashboard's query finds nothing: $expr: $result" ;;
  esac
done <"$T/queries.txt"
echo "dashboard: $(wc -l <"$T/queries.txt") queries run"

after=$(page) || fail "chromium: $(tail -3 "$T/chromium.log")"
finished=$(grep -o '<tr><td>' <<<"$after" | wc -l)
echo "finished rows on the page: $finished"
[ "$finished" -ge 12 ] || fail "the page lists $finished finished rows, want the 6 sender and 6 receiver rows"

# A wrong token is refused; the collector goes on collecting.
code=$(https -o /dev/null -w '%{http_code}' -H "Authorization: Bearer wrong" "https://nasperf:7701/metrics")
[ "$code" = 401 ] || fail "a wrong token got HTTP $code"
on_client "$NASPERF" sender --to "$NAS_IP" --size 1MiB --runs 1 --label after --collector "$NAS_IP:7700" \
  --no-progress >"$T/after.log" 2>&1 || fail "sender after: $(tail -3 "$T/after.log")"
grep -q ',after,' "$csv" || fail "the collector stopped collecting"
echo "ok: prometheus scraped the bytes and the live rate, the page grew and listed the rows"
