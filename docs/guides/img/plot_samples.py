#!/usr/bin/env python3
"""Draws one run's receiver samples as a small SVG for the guides (docs/guides/verdicts.md):
MB/s in 0.25 s bins over seconds since the first byte (the samples themselves swing with
the kernel's pauses), a dashed line at the row's knee and a dotted one at its sustained rate.

  plot_samples.py RUN_DIR TITLE > picture.svg     (RUN_DIR: a sender's --out, one transfer)
"""
import csv
import sys

W, H, LEFT, BOTTOM, TOP, RIGHT = 640, 220, 48, 28, 22, 12


def main(run_dir, title):
    with open(f"{run_dir}/transfers.csv", newline="") as f:
        row = next(r for r in csv.DictReader(f) if r["role"] == "receiver")
    with open(f"{run_dir}/samples.csv", newline="") as f:
        samples = [(float(s["t_s"]), float(s["mb_per_s"])) for s in csv.DictReader(f) if s["role"] == "receiver"]
    first = next((i for i, (_, rate) in enumerate(samples) if rate > 0), 0)
    t0 = samples[first - 1][0] if first else 0  # the first sample that took any began there
    BIN = 0.25
    bins = {}
    previous = t0
    for t, rate in samples[first:]:
        # a sample's bytes spread over its interval, into the bins it covers
        start, end = previous - t0, t - t0
        previous = t
        x = start
        while x < end:
            b = int(x / BIN + 1e-9)
            step = min(end, (b + 1) * BIN) - x
            bins[b] = bins.get(b, 0.0) + rate * step
            x += step
    points = [((b + 0.5) * BIN, mb / BIN) for b, mb in sorted(bins.items())]
    t_hi = max(t for t, _ in points)
    y_hi = max(rate for _, rate in points) * 1.05
    x = lambda t: LEFT + (W - LEFT - RIGHT) * t / t_hi
    y = lambda rate: H - BOTTOM - (H - BOTTOM - TOP) * rate / y_hi
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="11">',
           f'<rect width="{W}" height="{H}" fill="white"/>',
           f'<text x="{LEFT}" y="14">{title}</text>',
           f'<line x1="{LEFT}" y1="{H - BOTTOM}" x2="{W - RIGHT}" y2="{H - BOTTOM}" stroke="black"/>',
           f'<line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{H - BOTTOM}" stroke="black"/>',
           f'<text x="{W - RIGHT}" y="{H - 8}" text-anchor="end">{t_hi:.0f} s</text>',
           f'<text x="{LEFT - 4}" y="{TOP + 8}" text-anchor="end">{y_hi:.0f}</text>',
           f'<text x="{LEFT - 4}" y="{H - BOTTOM}" text-anchor="end">0</text>',
           f'<text x="4" y="{(TOP + H - BOTTOM) / 2}">MB/s</text>']
    coords = " ".join(f"{x(t):.1f},{y(rate):.1f}" for t, rate in points)
    out.append(f'<polyline fill="none" stroke="#1f77b4" stroke-width="1.2" points="{coords}"/>')
    if row["sustained_mb_per_s"]:
        burst, sustained = float(row["burst_mb_per_s"]), float(row["sustained_mb_per_s"])
        knee = float(row["knee_s"]) if row.get("knee_s") else float(row["burst_bytes"]) / 1e6 / (burst - sustained)
        out.append(f'<line x1="{x(knee):.1f}" x2="{x(knee):.1f}" y1="{TOP}" y2="{H - BOTTOM}" stroke="#d62728" '
                   'stroke-dasharray="4 3"/>')
        out.append(f'<line x1="{x(knee):.1f}" x2="{W - RIGHT}" y1="{y(sustained):.1f}" y2="{y(sustained):.1f}" '
                   'stroke="#d62728" stroke-dasharray="1 2"/>')
        out.append(f'<text x="{x(knee) + 4:.1f}" y="{TOP + 10}" fill="#d62728">{row["cache_shape"]}: '
                   f'{float(row["burst_bytes"]) / 2**20:.0f} MiB absorbed, {sustained:.0f} MB/s sustained'
                   + (f', longest stall {float(row["longest_stall_s"]):.1f} s' if row["stall_count"] not in ("", "0")
                      else "") + '</text>')
    out.append("</svg>")
    print("\n".join(out))


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
