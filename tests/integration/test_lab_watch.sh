#!/usr/bin/env bash
# shellcheck disable=SC2154  # NAME_PID: set by watch() below with printf -v
# nasperf watch (issue 27 item 4): copies made by other tools into directories on the
# lab's NAS, with scp through a real sshd and with Samba's smbclient through a real smbd,
# are one row each (role nas, transport observed) with MB/s within 10 % of the client's
# own figure. Over a link shaped to 500 Mbit/s into the RAM cache the verdict is network
# whenever the tool filled the link by its own figure, and client or server-cpu when it
# left it well short (at 1 Gbit/s scp's own encryption ran 110-120 MB/s here: the link was
# not always the limit, and the verdict rightly said client);
# into the array, throttled in the root blkio cgroup with its page cache limited (the
# cache cliff's recipe: sshd and smbd write through the page cache), it is disk.
source "$(dirname "$0")/lib.sh"

lab_up --mtu 1500 --rate 500mbit --array-rate 40MB --disk-size 1G --cache-cliff 16MiB
# shellcheck disable=SC2119  # lab_sshd's one argument (SETENV) is optional
lab_sshd
lab_shares
head -c 96M /dev/urandom >"$T/fast.bin"
head -c 64M /dev/urandom >"$T/slow.bin"

# watch NAME DIR: a watcher on the NAS over DIR, its rows in $T/NAME.
watch() {
  "$LAB_SH" nas -- "$NASPERF" watch "$2" --out "$T/$1" --link-speed 500mbit --interval 200ms --idle 2s >"$T/$1.log" 2>&1 &
  local pid=$!
  PIDS+=("$pid")
  printf -v "${1}_PID" '%s' "$pid"
  # shellcheck disable=SC2317  # called by wait_for
  watching() { grep -q "^watching " "$T/$1.log"; }
  wait_for "nasperf watch on $2" 20 watching "$1"
}
watch cache "$CACHE"
watch array "$ARRAY"

# copy TOOL SHARE FILE: one copy into SHARE (cache or array) by TOOL; its rate in $T/TOOL-SHARE.mbs.
copy() {
  local dir=$CACHE
  [ "$2" = array ] && dir=$ARRAY
  sync  # the copy before left nothing dirty: each starts with the page cache's room
  case $1 in
    scp) scp_mbs "$3" "root@$NAS_IP:$dir/$1.bin" >"$T/$1-$2.mbs" ;;
    smb) smbclient_mbs "$2" "$3" "$1.bin" >"$T/$1-$2.mbs" ;;
  esac
  [ -s "$T/$1-$2.mbs" ] || fail "$1 into $2 printed no rate of its own"
}
copy scp cache "$T/fast.bin"
copy smb cache "$T/fast.bin"
copy scp array "$T/slow.bin"
copy smb array "$T/slow.bin"

# Each watcher writes a copy's row when its file is closed: two rows each, then stop.
# shellcheck disable=SC2317  # called by wait_for
two_rows() { [ "$(grep -c '^copy [0-9]' "$T/$1.log")" -ge 2 ]; }
wait_for "the cache watcher's two rows" 30 two_rows cache
wait_for "the array watcher's two rows" 30 two_rows array
kill -INT "$cache_PID" "$array_PID"
wait "$cache_PID" || fail "watch (cache) exited $?: $(cat "$T/cache.log")"
wait "$array_PID" || fail "watch (array) exited $?: $(cat "$T/array.log")"
cat "$T/cache.log" "$T/array.log"

# row SHARE FILE COLUMN: that cell of the one row whose observed_file is FILE.
row() {
  python3 - "$T/$1/transfers.csv" "$2" "$3" <<'PY'
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["observed_file"] == sys.argv[2]]
if len(rows) != 1 or rows[0]["role"] != "nas" or rows[0]["transport"] != "observed":
    sys.exit(f"not one nas/observed row for {sys.argv[2]}: {rows}")
print(rows[0][sys.argv[3]])
PY
}
# check SHARE TOOL VERDICT: the row of TOOL's copy into SHARE against TOOL's own figure.
check() {
  local client got verdict
  client=$(cat "$T/$2-$1.mbs")
  got=$(row "$1" "$2.bin" mb_per_s) || fail "$2 into $1: $got"
  verdict=$(row "$1" "$2.bin" bottleneck)
  echo "$2 into $1: watch $got MB/s ($verdict), $2's own figure $client MB/s; $(row "$1" "$2.bin" observed_detail)"
  [ "$(row "$1" "$2.bin" status)" = ok ] || fail "$2 into $1: the row is not ok"
  within 10 "$got" "$client" || fail "$2 into $1: watch's $got MB/s is not within 10 % of $2's $client MB/s"
  if [ "$3" = network ]; then
    # The link is the limit only when the tool filled it, by its own figure against the
    # shaped rate's TCP goodput (1448 of each 1538 bytes at MTU 1500): from 90 % the verdict
    # is network; under 80 % the link was not full, and the NAS named the client or its
    # own CPU, never the link (soak under load: smbclient, short of CPU, at 45.6 MB/s of
    # 58.8, judged client). Between the two, either.
    local fill
    fill=$(awk -v c="$client" -v r="$RATE_MBPS" 'BEGIN { printf "%.2f", c / (r / 8 * 1448 / 1538) }')
    if awk -v f="$fill" 'BEGIN { exit !(f >= 0.9) }'; then
      [ "$verdict" = network ] || fail "$2 into $1 filled the link ($fill of its goodput): verdict '$verdict', expected network"
    elif awk -v f="$fill" 'BEGIN { exit !(f < 0.8) }'; then
      case $verdict in client|server-cpu) ;;
        *) fail "$2 into $1 left the link idle ($fill of its goodput): verdict '$verdict', expected client or server-cpu" ;;
      esac
    fi
    [ "$verdict" != network ] || cache_network=$((cache_network + 1))
  else
    [ "$verdict" = "$3" ] || fail "$2 into $1: verdict '$verdict', expected $3"
  fi
}
cache_network=0
check cache scp network
check cache smb network
echo "copies into the cache judged network: $cache_network of 2"
check array scp disk
check array smb disk
# Per interval too: the array copies' samples (a watch numbers its copies by iteration)
# name the device their rows name.
python3 - "$T/array" <<'PY' || fail "the array copies' samples do not name their device"
import collections, csv, sys
rows = {r["iteration"]: r for r in csv.DictReader(open(sys.argv[1] + "/transfers.csv"))}
named = collections.Counter()
for s in csv.DictReader(open(sys.argv[1] + "/samples.csv")):
    named[(s["iteration"], s["busiest_device"])] += 1
for tid, r in rows.items():
    per = {d: n for (t, d), n in named.items() if t == tid}
    print(r["observed_file"], "row:", r["busiest_device"], "samples:", per)
    if not r["busiest_device"] or per.get(r["busiest_device"], 0) * 2 < sum(per.values()):
        sys.exit(1)
PY
case $(row cache scp.bin peer) in sshd\[*) ;; *) fail "the scp copy's server is not sshd: $(row cache scp.bin peer)" ;; esac
case $(row cache smb.bin peer) in smbd\[*) ;; *) fail "the smb copy's server is not smbd: $(row cache smb.bin peer)" ;; esac
case $(row cache smb.bin share_protocol) in "smb SMB3_11 signing="*" (smbstatus)") ;;
  *) fail "the smb copy's row does not say what smbd negotiated: $(row cache smb.bin share_protocol)" ;; esac

# The same asked for from the client: an SMB loop with --observer, an agent on the NAS
# watching its target meanwhile; each copy also gets a row of role nas, in the loop's run.
# The loop asks for signing on every message: smbd's own word (smbstatus) on the NAS
# rows says whether it took (its default signs the session set-up only: "partial").
NASPERF_TOKEN=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
export NASPERF_TOKEN
lab_agent observer nas --target "$CACHE"
on_client "$NASPERF" sender --transport smb --smb-credentials "$SMB_CREDENTIALS" --to "smb://$NAS_IP/cache" \
  --smb-signing required --size 64MiB --runs 2 --observer "$NAS_IP" --accept-new-agent-key --link-speed 500mbit --out "$T/observed" \
  --no-progress >"$T/observed.log" 2>&1 || fail "sender --observer: $(tail -5 "$T/observed.log")"
grep -q "^observer $NAS_IP: 2 copies measured on the NAS" "$T/observed.log" || fail "no observer line: $(cat "$T/observed.log")"
# Each copy's NAS row is said where the loop runs, with smbd's word and the verdict's reason.
grep -q "verdicts: the client's side here; the NAS's side, copy by copy, from its observer below" "$T/observed.log" \
  || fail "the summary does not point to the NAS's rows: $(cat "$T/observed.log")"
[ "$(grep -cE '^  copy [12]  [0-9.]+ MB/s  \[smb SMB3_11 signing=AES-128-GMAC\(full\).*\]  [a-z-]+: ' "$T/observed.log")" = 2 ] \
  || fail "the NAS's rows are not said copy by copy: $(cat "$T/observed.log")"
python3 - "$T/observed/transfers.csv" <<'PY' || fail "the observed rows do not match the loop's"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
sender = [r for r in rows if r["role"] == "sender"]
nas = [r for r in rows if r["role"] == "nas"]
print("observed:", [(r["observed_file"], r["mb_per_s"], r["bottleneck"], r["peer"], r["share_protocol"]) for r in nas])
ok = len(nas) == 2 and all(r["status"] == "ok" and r["transport"] == "observed" and r["peer"].startswith("smbd[")
                           and r["run_id"] == sender[0]["run_id"] and int(r["bytes"]) == 64 << 20
                           and "signing=AES-128-GMAC(full)" in r["share_protocol"] for r in nas)
ok = ok and all("signing=required" in r["share_protocol"] for r in sender)
sys.exit(0 if ok else 1)
PY
echo "ok: scp and smbclient copies measured on the NAS, network over the 500 Mbit/s link, disk on the throttled array;" \
  "an SMB loop's copies observed through an agent"
