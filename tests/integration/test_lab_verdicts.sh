# The bottleneck verdict in the namespace lab (DESIGN.md section 4): a throttled
# "array" (cgroup blkio, 60 MB/s, O_DIRECT writes) behind a 10 Gb/s link is judged
# `disk` at about the throttle's rate; a discard target behind a 400 Mb/s link is
# judged `network`, on both roles.
source "$(dirname "$0")/lib.sh"

lab_up --mtu 9000 --rate 10gbit --array-rate 60MB --disk-size 1G  # small images fit in RAM
lab_receiver array --target "$ARRAY" --min-free 0
on_client "$NASPERF" sender --to "$NAS_IP:$array_PORT" --size 192MiB --runs 2 --write-mode direct \
  --out "$T/array" --no-progress >"$T/array-tx.log" 2>&1 || fail "sender to the array failed: $(tail -5 "$T/array-tx.log")"
csv=$T/array/transfers.csv
for role in sender receiver; do
  csv_role_all "$csv" $role status ok
  csv_role_all "$csv" $role bottleneck disk
done
for rate in $(csv_role_col "$csv" receiver mb_per_s); do
  awk -v r="$rate" 'BEGIN { exit !(r > 60 * 0.75 && r < 60 * 1.1) }' \
    || fail "array wrote $rate MB/s durable, the throttle is 60 MB/s"
done

"$LAB_SH" shape 400mbit >>"$T/lab.log"
lab_receiver discard --target discard
on_client "$NASPERF" sender --to "$NAS_IP:$discard_PORT" --size 48MiB --runs 2 --link-speed 400mbit \
  --out "$T/slow" --no-progress >"$T/slow-tx.log" 2>&1 || fail "sender over the slow link failed: $(tail -5 "$T/slow-tx.log")"
for role in sender receiver; do
  csv_role_all "$T/slow/transfers.csv" $role status ok
  csv_role_all "$T/slow/transfers.csv" $role bottleneck network
done
echo "ok: throttled array -> disk at $(csv_role_col "$csv" receiver mb_per_s | tr '\n' ' ')MB/s; slow link -> network"
