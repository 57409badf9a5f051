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
  cache_truth.py poll DIR STOP_FILE LOG
      Appends "EPOCH BYTES" to LOG every 10 ms (at most 6000 times): the size of the
      largest nasperf-*.dat in DIR, until STOP_FILE exists. os.stat, not a forked stat(1),
      so a busy machine blurs each reading's time by a system call, not a process start.
  cache_truth.py stall TRANSFERS_CSV POLL_LOG
      Bounds on the longest stall, as "LO HI", from the file's growth over the 100 ms
      before each reading: LO the longest run of readings under a twentieth of the row's
      sustained rate (the file stood, but for a few pages the throttle let through), HI
      the run under half of it around that (as the file crawls in before a hard stop),
      widened by a reading and a window. nasperf's stall is a spell under a tenth, so it
      lies between the two.
Prints the figure; exits 1 with a line on stderr when the row has no knee.
"""
import csv
import datetime
import glob
import os
import statistics
import sys
import time


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


def poll(directory, stop, log):
    with open(log, "a") as out:
        for _ in range(6000):
            if os.path.exists(stop):
                return
            sizes = []
            for path in glob.glob(os.path.join(directory, "nasperf-*.dat")):
                try:
                    sizes.append(os.stat(path).st_size)
                except FileNotFoundError:
                    pass  # renamed into place between the glob and the stat
            out.write(f"{time.time():.6f} {max(sizes, default=0)}\n")
            out.flush()
            time.sleep(0.01)


def longest_stall(row, log):
    readings = [(float(l[0]), int(l[1])) for l in lines(log)]
    rate = float(row["sustained_mb_per_s"] or 0) or float(row["bytes"]) / 1e6 / float(row["duration_s"])
    # Each reading's growth over the 100 ms before it, in shares of the sustained rate.
    shares = []
    back = 0
    for t, size in readings:
        while readings[back + 1][0] <= t - 0.1:
            back += 1
        start_t, start_size = readings[back]
        shares.append((size - start_size) / (rate * 1e6 * (t - start_t)) if t - start_t >= 0.1 else None)

    def spans(under):
        """(first, last) of each run of readings whose 100 ms grew under `under`."""
        runs, first = [], None
        for k, share in enumerate(shares + [None]):
            if share is not None and share < under:
                first = k if first is None else first
            elif first is not None:
                runs.append((first, k - 1))
                first = None
        return runs

    still = max(spans(0.05), key=lambda r: readings[r[1]][0] - readings[r[0]][0], default=None)
    if still is None:
        sys.exit("cache_truth: the file never stood still")
    lo = readings[still[1]][0] - readings[still[0]][0]
    crawl = next(r for r in spans(0.5) if r[0] <= still[0] and still[1] <= r[1])
    hi = readings[min(crawl[1] + 1, len(readings) - 1)][0] - readings[max(crawl[0] - 1, 0)][0] + 0.1
    print(f"{lo:.3f} {hi:.3f}")


if __name__ == "__main__":
    modes = {"dirty": 4, "throttle": 4, "poll": 5, "stall": 4}
    if len(sys.argv) < 2 or modes.get(sys.argv[1]) != len(sys.argv):
        sys.exit(__doc__)
    if sys.argv[1] == "poll":
        poll(*sys.argv[2:])
    elif sys.argv[1] == "stall":
        longest_stall(receiver_row(sys.argv[2]), sys.argv[3])
    else:
        figure = dirty_at_knee if sys.argv[1] == "dirty" else throttle_mean
        figure(receiver_row(sys.argv[2]), sys.argv[3])
