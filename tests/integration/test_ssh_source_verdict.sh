#!/usr/bin/env bash
# The verdict matrix for scp and sftp (issue 17): over SSH only the sender's own side
# can be told apart, so a --file whose disk reads slower than SSH carries (a loop
# disk throttled to 40 MB/s for reads) is named `source` on the row, at the rate that
# disk gives (measured by dd through the same throttle in this run), with the source
# wait that shows it; the same file from the page cache is not.
# The sender's page cache is held below the file's size, so every run of the loop
# reads the disk again (as a file larger than RAM would). The first transfer of an SSH
# session is slower on its own (sshd grows its buffers: issue 25): run 1 says so in its
# notes and the summary, and the rates are taken from the runs after it.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/ssh_lib.sh"
need_root "cgroup blkio throttle and a loop file system"

start_sshd
trust_sshd
slow_source 96 40000000
source_cache_limit 48
truth=$(source_truth_mbs)
echo "the source reads at $truth MB/s (dd, throttle 40 MB/s)"
within() { awk -v p="$1" -v v="$2" -v l="$3" 'BEGIN { exit !(v >= l * (1 - p / 100) && v <= l * (1 + p / 100)) }'; }
# after_first CSV COLUMN: the sender rows' column for iterations 2 and on.
after_first() { paste -d' ' <(csv_role_col "$1" sender iteration) <(csv_role_col "$1" sender "$2") | awk '$1 > 1 { print $2 }'; }

for transport in sftp scp; do
  drop_source_cache
  in_slow_source "$NASPERF" sender --transport "$transport" --to "root@127.0.0.1:$T/remote" --ssh-port "$SSHD_PORT" \
    --identity "$IDENTITY" --known-hosts "$KNOWN_HOSTS" --ssh-config "$CLIENT_DIR/ssh_config" --no-progress \
    --file "$SOURCE_FILE" --runs 3 --sync none --out "$T/$transport" >"$T/$transport.log" 2>&1 \
    || fail "$transport from the slow source failed: $(tail -5 "$T/$transport.log")"
  csv=$T/$transport/transfers.csv
  csv_role_all "$csv" sender status ok
  [ "$(after_first "$csv" bottleneck | sort -u)" = source ] \
    || fail "$transport: runs 2-3 from the slow source said $(after_first "$csv" bottleneck | tr '\n' ' ')"
  for rate in $(after_first "$csv" mb_per_s); do
    within 10 "$rate" "$truth" || fail "$transport: the source reads at $truth MB/s, a run after the first says $rate MB/s"
  done
  # Run 1 is the session's first transfer, and says so; the others do not.
  paste -d'|' <(csv_role_col "$csv" sender iteration) <(csv_role_col "$csv" sender notes) | while IFS='|' read -r it notes; do
    case "$it:$notes" in
      1:*start-up*) ;;
      1:*) fail "$transport: run 1 does not say it paid the session's start-up: '$notes'" ;;
      *start-up*) fail "$transport: run $it claims the session's start-up" ;;
    esac
  done
  grep -q "start-up: 1 of these paid the SSH session's start-up" "$T/$transport.log" \
    || fail "$transport: the summary does not name the start-up run: $(tail -8 "$T/$transport.log")"
  echo "$transport: $(csv_role_col "$csv" sender mb_per_s | tr '\n' ' ')MB/s (run 1 start-up), source wait" \
    "$(csv_role_col "$csv" sender source_wait_pct | tr '\n' ' ')%"
done

# From the page cache the source is no longer the limit.
cat "$SOURCE_FILE" >/dev/null
ssh_sender sftp --file "$SOURCE_FILE" --runs 1 --sync none --out "$T/cached" >"$T/cached.log" 2>&1 \
  || fail "sftp from the cached source failed: $(tail -5 "$T/cached.log")"
[ "$(csv_role_col "$T/cached/transfers.csv" sender bottleneck)" != source ] || fail "a cached source was called the limit"
echo "ok: a slow source over scp and sftp is named source at its measured rate ($truth MB/s) after the start-up run; cached, it is not"
