# The verdict matrix for scp and sftp (issue 17): over SSH only the sender's own side
# can be told apart, so a --file whose disk reads slower than SSH carries (a loop
# disk throttled to 40 MB/s for reads) is named `source` on the row, at about that
# rate, with the source wait that shows it; the same file from the page cache is not.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/ssh_lib.sh"
need_root "cgroup blkio throttle and a loop file system"

start_sshd
trust_sshd
slow_source 96 40000000
within() { awk -v p="$1" -v v="$2" -v l="$3" 'BEGIN { exit !(v >= l * (1 - p / 100) && v <= l * (1 + p / 100)) }'; }

for transport in sftp scp; do
  drop_source_cache
  in_slow_source "$NASPERF" sender --transport "$transport" --to "root@127.0.0.1:$T/remote" --ssh-port "$SSHD_PORT" \
    --identity "$IDENTITY" --known-hosts "$KNOWN_HOSTS" --ssh-config "$CLIENT_DIR/ssh_config" --no-progress \
    --file "$SOURCE_FILE" --runs 1 --sync none --out "$T/$transport" >"$T/$transport.log" 2>&1 \
    || fail "$transport from the slow source failed: $(tail -5 "$T/$transport.log")"
  csv=$T/$transport/transfers.csv
  csv_role_all "$csv" sender status ok
  csv_role_all "$csv" sender bottleneck source
  rate=$(csv_role_col "$csv" sender mb_per_s)
  within 10 "$rate" 40 || fail "$transport: the source read at 40 MB/s, the row says $rate MB/s"
  echo "$transport: $rate MB/s, source wait $(csv_role_col "$csv" sender source_wait_pct) %"
done

# From the page cache the source is no longer the limit.
cat "$SOURCE_FILE" >/dev/null
ssh_sender sftp --file "$SOURCE_FILE" --runs 1 --sync none --out "$T/cached" >"$T/cached.log" 2>&1 \
  || fail "sftp from the cached source failed: $(tail -5 "$T/cached.log")"
[ "$(csv_role_col "$T/cached/transfers.csv" sender bottleneck)" != source ] || fail "a cached source was called the limit"
echo "ok: a slow source over scp and sftp is named source at about its rate; cached, it is not"
