#!/usr/bin/env bash
# shellcheck disable=SC2154  # NAME_PID, NAME_PORT...: set by lib.sh's start_*, lab_* and cpu_group with printf -v
# TLS with the user's own certificate (--tls-cert/--tls-key, clients --tls-ca)
# instead of the generated, pinned ones: a self-signed certificate for
# 127.0.0.1/localhost. The collector refuses a plaintext client and takes reports
# from a client that trusts the certificate. A sender trusting the certificate runs
# against the receiver and reports to the collector; a --plaintext sender fails
# against that receiver with a one-line error and a non-zero exit.
source "$(dirname "$0")/lib.sh"
[ -x "$COLLECTOR_CLIENT" ] || skip "no collector_client given"
command -v openssl >/dev/null || skip "no openssl"

cert=$T/cert.pem
key=$T/key.pem
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
  -keyout "$key" -out "$cert" -subj "/CN=localhost" \
  -addext "subjectAltName=IP:127.0.0.1,DNS:localhost" >"$T/openssl.log" 2>&1 \
  || fail "openssl: $(cat "$T/openssl.log")"

start_collector col --tls-cert "$cert" --tls-key "$key"
addr=127.0.0.1:$col_PORT
csv=$T/col/transfers.csv

"$COLLECTOR_CLIENT" "$addr" "$NASPERF_TOKEN" unreachable --plaintext >"$T/cc.log" 2>&1 \
  || fail "a plaintext client was not refused by the TLS collector: $(cat "$T/cc.log")"
[ "$(($(wc -l <"$csv") - 1))" -eq 0 ] || fail "a plaintext report landed: $(cat "$csv")"
"$COLLECTOR_CLIENT" "$addr" "$NASPERF_TOKEN" twice --tls-ca "$cert" >"$T/cc.log" 2>&1 \
  || fail "a TLS client trusting the cert: $(cat "$T/cc.log")"
[ "$(($(wc -l <"$csv") - 1))" -eq 1 ] || fail "expected 1 row from the TLS client: $(cat "$csv")"

mkdir -p "$T/target"
start_receiver rx --target "$T/target" --min-free off --tls-cert "$cert" --tls-key "$key" \
  --collector "$addr" --tls-ca "$cert"
"$NASPERF" sender --to 127.0.0.1:"$rx_PORT" --size 16MiB --runs 1 --tls-ca "$cert" --collector "$addr" \
  --out "$T/local" --no-progress >"$T/sender.log" 2>&1 || fail "TLS sender failed: $(tail -5 "$T/sender.log")"
grep -q "every report delivered to collector" "$T/sender.log" \
  || fail "sender did not deliver to the TLS collector: $(tail -3 "$T/sender.log")"
data_rows() { [ "$(($(wc -l <"$csv") - 1))" -ge "$1" ]; }
wait_for "the transfer's 2 rows in the TLS collector's CSV" 20 data_rows 3
[ "$(($(wc -l <"$csv") - 1))" -eq 3 ] || fail "expected 3 rows: $(cat "$csv")"
run=$(sed -n 's/^run \([^:]*\):.*/\1/p' "$T/sender.log")
[ -n "$run" ] || fail "no run id in the sender's output"
statuses=$(paste -d'|' <(csv_col "$csv" run_id) <(csv_col "$csv" role) <(csv_col "$csv" status) \
  | grep "^$run|" | cut -d'|' -f2,3 | sort | tr '\n' ' ')
[ "$statuses" = "receiver|ok sender|ok " ] || fail "run $run rows: '$statuses', want a receiver and a sender row, ok: $(cat "$csv")"

rc=0
"$NASPERF" sender --to 127.0.0.1:"$rx_PORT" --size 1MiB --runs 1 --out "$T/plain" --no-progress --plaintext \
  >"$T/plain.out" 2>"$T/plain.err" || rc=$?
[ "$rc" -ne 0 ] || fail "a --plaintext sender succeeded against a TLS receiver"
grep -v -e '--plaintext: the token crosses' "$T/plain.err" >"$T/plain.err1" || true
mv "$T/plain.err1" "$T/plain.err"
[ "$(grep -c . "$T/plain.err")" -eq 1 ] || fail "expected a one-line error, got: $(cat "$T/plain.err")"
grep -q '^nasperf sender: ' "$T/plain.err" || fail "error line: $(cat "$T/plain.err")"
alive "$rx_PID" || fail "receiver died after a plaintext connection"
alive "$col_PID" || fail "collector died"
echo "ok: TLS collector refuses plaintext, takes TLS; TLS sender ok; plaintext sender: $(cat "$T/plain.err")"
