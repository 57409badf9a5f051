# The verdict matrix (DESIGN.md section 6, README "Reading the verdicts"): the limit is
# put in each place in turn in the namespace lab, and nasperf must name that place,
# on both rows, at about the rate that was set:
#   the NAS's disk   - a throttled "array" (cgroup blkio writes, 60 MB/s, O_DIRECT)
#                      behind a 10 Gb/s link                      -> disk
#   the sender's     - a --file on a loop disk whose reads are throttled (40 MB/s)
#   source disk        behind a 10 Gb/s link into a discard target -> source
#   the link         - tc tbf at 400 Mb/s into a discard target     -> network
# (each end's CPU joins the matrix with the cpu verdict.)
source "$(dirname "$0")/lib.sh"

# within PCT VALUE LIMIT: VALUE is within PCT percent of LIMIT.
within() { awk -v p="$1" -v v="$2" -v l="$3" 'BEGIN { exit !(v >= l * (1 - p / 100) && v <= l * (1 + p / 100)) }'; }

lab_up --mtu 9000 --rate 10gbit --array-rate 60MB --disk-size 1G  # small images fit in RAM

# --- the NAS's disk
lab_receiver array --target "$ARRAY" --min-free 0
on_client "$NASPERF" sender --to "$NAS_IP:$array_PORT" --size 192MiB --runs 2 --write-mode direct \
  --out "$T/array" --no-progress >"$T/array-tx.log" 2>&1 || fail "sender to the array failed: $(tail -5 "$T/array-tx.log")"
csv=$T/array/transfers.csv
for role in sender receiver; do
  csv_role_all "$csv" $role status ok
  csv_role_all "$csv" $role bottleneck disk
done
for rate in $(csv_role_col "$csv" receiver mb_per_s); do
  within 10 "$rate" 60 || fail "array wrote $rate MB/s durable, the throttle is 60 MB/s"
done
disk_rates=$(csv_role_col "$csv" receiver mb_per_s | tr '\n' ' ')

# --- the sender's source disk
slow_source 160 40000000
lab_receiver discard --target discard
in_slow_source "$LAB_SH" client -- "$NASPERF" sender --to "$NAS_IP:$discard_PORT" --file "$SOURCE_FILE" --runs 1 \
  --link-speed 10gbit --out "$T/from-source" --no-progress >"$T/source-tx.log" 2>&1 \
  || fail "sender from the slow source failed: $(tail -5 "$T/source-tx.log")"
csv=$T/from-source/transfers.csv
for role in sender receiver; do
  csv_role_all "$csv" $role status ok
  csv_role_all "$csv" $role bottleneck source
done
source_rate=$(csv_role_col "$csv" sender mb_per_s)
within 10 "$source_rate" 40 || fail "the source read at 40 MB/s, the sender says $source_rate MB/s"
wait_pct=$(csv_role_col "$csv" sender source_wait_pct)
awk -v w="$wait_pct" 'BEGIN { exit !(w > 50) }' || fail "the sender waited $wait_pct % on a source that set the pace"
grep -q "the source may set the pace" "$T/source-tx.log" || fail "no warning before the run: $(head -8 "$T/source-tx.log")"
grep -q "source: the sender's own disk or file system" "$T/source-tx.log" || fail "the summary does not say what source means"
# The same file from the page cache is not the limit any more, and no warning is given.
"$LAB_SH" client -- cat "$SOURCE_FILE" >/dev/null
on_client "$NASPERF" sender --to "$NAS_IP:$discard_PORT" --file "$SOURCE_FILE" --runs 1 --link-speed 10gbit \
  --out "$T/cached" --no-progress >"$T/cached-tx.log" 2>&1 || fail "sender from the cached source failed"
csv_role_all "$T/cached/transfers.csv" sender status ok
[ "$(csv_role_col "$T/cached/transfers.csv" sender bottleneck)" != source ] || fail "a cached source was called the limit"
! grep -q "may set the pace" "$T/cached-tx.log" || fail "a warning for a cached source"

# --- the link
"$LAB_SH" shape 400mbit >>"$T/lab.log"
on_client "$NASPERF" sender --to "$NAS_IP:$discard_PORT" --size 48MiB --runs 2 --link-speed 400mbit \
  --out "$T/slow" --no-progress >"$T/slow-tx.log" 2>&1 || fail "sender over the slow link failed: $(tail -5 "$T/slow-tx.log")"
csv=$T/slow/transfers.csv
for role in sender receiver; do
  csv_role_all "$csv" $role status ok
  csv_role_all "$csv" $role bottleneck network
done
for pct in $(csv_role_col "$csv" receiver line_rate_pct); do
  within 10 "$pct" 100 || fail "the link carried $pct % of its TCP ceiling at 400 Mb/s"
done
echo "ok: array -> disk at ${disk_rates}MB/s; slow source -> source at $source_rate MB/s (waited $wait_pct %);" \
  "slow link -> network at $(csv_role_col "$csv" receiver line_rate_pct | tr '\n' ' ')% of its ceiling"
