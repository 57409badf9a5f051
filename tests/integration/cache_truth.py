#!/usr/bin/env python3
"""Ground truths for test_lab_cache_cliff.sh, from a run's receiver row and the test's
own logs, on the NAS's clock (the receiver's started_at is the same machine's).

  cache_truth.py dirty TRANSFERS_CSV MEMINFO_LOG
      Dirty + Writeback in /proc/meminfo (the kernel's dirty limit counts both) as the
      cache levels off at the row's knee (started_at + first_byte_s + knee_s), less the
      log's first reading (the machine's own, before the run): the median of the lines in
      the half second after the knee. Not the one line nearest it: a 128 MiB cache fills
      in a tenth of a second at 10 Gb/s, the knee is known to a 25 ms sample, and the
      kernel's balancing dips the level by a sixth for one reading in eight (a CI run's
      nearest line read 85 MB in a plateau of 103).
  cache_truth.py throttle TRANSFERS_CSV SWITCH_LOG
      The throttle's time-weighted rate (MB/s) from the row's knee to its end, from a log
      of "EPOCH RATE_MB_PER_S" lines, one per switch.
Prints the figure; exits 1 with a line on stderr when the row has no knee.
"""
import csv
import datetime
import statistics
import sys


def receiver_row(path):
    with open(path, newline="") as f:
        rows = [r for r in csv.DictReader(f) if r["role"] == "receiver"]
    if len(rows) != 1:
        sys.exit(f"cache_truth: {len(rows)} receiver rows in {path}, expected 1")
    return rows[0]


def knee_and_end(row):
    """Epoch seconds of the row's knee and of its end."""
    if not row["sustained_mb_per_s"]:
        sys.exit("cache_truth: the row has no knee")
    start = datetime.datetime.strptime(row["started_at"], "%Y-%m-%dT%H:%M:%S.%fZ")
    start = start.replace(tzinfo=datetime.timezone.utc).timestamp()
    knee = start + float(row["first_byte_s"] or 0) + float(row["knee_s"])
    return knee, start + float(row["duration_s"])  # with --sync none, its end is the last byte's


def lines(path):
    with open(path) as f:
        return [line.split() for line in f if len(line.split()) >= 2]


def dirty_at_knee(row, log):
    knee, _ = knee_and_end(row)
    after = [int(l[1]) + int(l[2]) for l in lines(log) if 0 <= float(l[0]) - knee <= 0.5]
    if not after:
        sys.exit(f"cache_truth: no /proc/meminfo reading in the half second after the knee at {knee:.3f}")
    before = lines(log)[0]
    print(int(statistics.median(after) - int(before[1]) - int(before[2])) * 1024)


def throttle_mean(row, log):
    knee, end = knee_and_end(row)
    switches = [(float(l[0]), float(l[1])) for l in lines(log)]
    total = 0.0
    for i, (at, rate) in enumerate(switches):
        until = switches[i + 1][0] if i + 1 < len(switches) else end
        span = min(until, end) - max(at, knee)
        if span > 0:
            total += span * rate
    if switches[0][0] > knee:
        sys.exit(f"cache_truth: the first switch at {switches[0][0]:.3f} came after the knee at {knee:.3f}")
    print(f"{total / (end - knee):.2f}")


if __name__ == "__main__":
    if len(sys.argv) != 4 or sys.argv[1] not in ("dirty", "throttle"):
        sys.exit(__doc__)
    figure = dirty_at_knee if sys.argv[1] == "dirty" else throttle_mean
    figure(receiver_row(sys.argv[2]), sys.argv[3])
