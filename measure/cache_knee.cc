#include "measure/cache_knee.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/stats.h"
#include "common/units.h"

namespace nasperf {
namespace {

constexpr size_t kMaxKneeSamples = 100000;
constexpr int kMaxKneeRounds = 8;
// Sawtooth windows: a rate above kHighShare or below kLowShare of the sustained one
// is a phase of its own; in between, a window that straddles two phases.
constexpr double kHighShare = 1.33, kLowShare = 0.75;

// The cumulative curve from the first byte: point 0 is the start of the first sample
// that moved any, point i the end of the i-th sample from there. Megabytes and seconds,
// so the sums stay exact enough in a double.
struct Curve {
  std::vector<double> t, mb, rate;  // rate: sample i's MB/s, ending at point i + 1
  size_t Samples() const { return rate.size(); }
  double Tail(size_t k) const { return (mb.back() - mb[k]) / (t.back() - t[k]); }  // MB/s from point k on
  double TimeAt(double megabytes) const {  // when the curve first reached `megabytes`
    const size_t i = std::lower_bound(mb.begin(), mb.end(), megabytes) - mb.begin();
    if (i == 0) return 0;
    if (i >= mb.size()) return t.back();
    return t[i - 1] + (megabytes - mb[i - 1]) / rate[i - 1];
  }
  double MbAt(double x) const {  // interpolated within the sample that holds x
    const size_t i = std::upper_bound(t.begin(), t.end(), x) - t.begin();
    if (i == 0) return 0;
    if (i >= t.size()) return mb.back();
    return mb[i - 1] + rate[i - 1] * (x - t[i - 1]);
  }
};

Curve CurveOf(const google::protobuf::RepeatedPtrField<proto::Sample>& samples) {
  Curve c;
  if (samples.size() > static_cast<int>(kMaxKneeSamples)) return c;
  double start = 0;
  for (const proto::Sample& s : samples) {
    if (!(s.interval_s() > 0) || !std::isfinite(s.interval_s()) || !std::isfinite(s.t_s())) continue;
    if (c.t.empty()) {
      if (s.bytes() == 0) continue;  // before the first byte: first_byte_s says that time
      start = s.t_s() - s.interval_s();
      c.t.push_back(0);
      c.mb.push_back(0);
    }
    if (!(s.t_s() - start > c.t.back())) continue;  // time runs forward, or the sample is not used
    const double mb = s.bytes() / 1e6;
    c.t.push_back(s.t_s() - start);
    c.mb.push_back(c.mb.back() + mb);
    c.rate.push_back(mb / (c.t.back() - c.t[c.t.size() - 2]));
  }
  // Trailing empty samples are the end of the data, not a rate the disks held.
  while (!c.rate.empty() && c.rate.back() == 0) {
    c.rate.pop_back();
    c.t.pop_back();
    c.mb.pop_back();
  }
  return c;
}

double MedianInterval(const Curve& c) {
  std::vector<double> intervals;
  for (size_t i = 0; i < c.Samples(); ++i) intervals.push_back(c.t[i + 1] - c.t[i]);
  return intervals.empty() ? 0 : Summarize(std::move(intervals)).median;
}

// Bytes taken beyond `rate` by point i: what a cache held, if the disks wrote at that rate.
double Excess(const Curve& c, size_t i, double rate) { return c.mb[i] - rate * c.t[i]; }

// The excess over `rate` at every point, each the mean over a quarter of a second (at
// least one sample) on either side: the kernel's pauses of up to 200 ms make the raw
// curve run a few samples ahead of the disks and fall back.
std::vector<double> SmoothedExcess(const Curve& c, double rate) {
  const size_t points = c.t.size();
  const double interval = MedianInterval(c);
  const size_t reach = interval > 0 ? std::max<size_t>(1, static_cast<size_t>(std::lround(0.25 / interval))) : 1;
  std::vector<double> smoothed(points);
  for (size_t i = 0; i < points; ++i) {
    const size_t from = i > reach ? i - reach : 0, to = std::min(points - 1, i + reach);
    double sum = 0;
    for (size_t j = from; j <= to; ++j) sum += Excess(c, j, rate);
    smoothed[i] = sum / static_cast<double>(to - from + 1);
  }
  return smoothed;
}

// Where the rate fell to the disks' for good, searched among the points after `from`
// (0: the whole transfer). With S the mean rate from a point to the end, the excess over
// S (counted from `from`) rises while a cache fills (a ramp too) and then never climbs
// much higher: stalls dip it, catch-up bursts restore it, a sawtooth waves under its
// crests. So the point is the first whose excess is within `tolerance` of the highest
// (smoothed) excess at or after it, found from half-way between `from` and the end and
// refined a few rounds, S recomputed from each new point.
size_t PlateauStart(const Curve& c, size_t from, double tolerance) {
  const size_t n = c.Samples();
  size_t k = std::upper_bound(c.t.begin(), c.t.end(), (c.t[from] + c.t[n]) / 2) - c.t.begin() - 1;
  k = std::clamp<size_t>(k, from + 1, n - 1);
  for (int round = 0; round < kMaxKneeRounds; ++round) {
    const double rate = c.Tail(k), base = Excess(c, from, rate);
    std::vector<double> highest_after = SmoothedExcess(c, rate);
    for (size_t i = highest_after.size() - 1; i-- > from;) {
      highest_after[i] = std::max(highest_after[i], highest_after[i + 1]);
    }
    size_t next = from + 1;
    while (next < n - 1 && !(highest_after[next] - base > 0 &&
                             Excess(c, next, rate) - base >= (highest_after[next] - base) * (1 - tolerance))) {
      ++next;
    }
    if (next == k) break;
    k = next;
  }
  return k;
}

// The tolerance can leave a point inside the cache's gulp or its ramp: it moves on while
// the next half second (two samples at least) still ran well above the disks' pace, or
// still added much to what the cache took (a ramp broken by the kernel's pauses).
size_t PastTheRamp(const Curve& c, size_t k, const KneeRules& rules) {
  const double window = std::max(0.5, 2 * MedianInterval(c));
  for (; k + 1 < c.Samples(); ++k) {
    const double rate = c.Tail(k), now = Excess(c, k, rate);
    const double ahead = (c.MbAt(c.t[k] + window) - c.mb[k]) / window;
    if (!(ahead >= rules.ramp_rate_share * rate ||
          (now > 0 && (ahead - rate) * window >= rules.ramp_gain_share * now))) {
      break;
    }
  }
  return k;
}

// The knee: the first plateau of the excess, past its ramp (`first`: where the cache's
// gulp ended); then, as long as the time after it still ran clearly faster in its first
// half than in its second (the kernel's dirty throttling can let a writer run a fifth
// over the disks for seconds while the last of the cache fills), the plateau of that
// time, found more tightly.
struct KneeSearch {
  size_t first = 0, k = 0;
};
KneeSearch LocateKnee(const Curve& c, const KneeRules& rules) {
  const size_t n = c.Samples();
  const size_t first = PastTheRamp(c, PlateauStart(c, 0, rules.plateau_share), rules);
  size_t k = first;
  for (int step = 0; step < kMaxKneeRounds && k + 1 < n; ++step) {
    const double mid = (c.t[k] + c.t[n]) / 2;
    const double early = (c.MbAt(mid) - c.mb[k]) / (mid - c.t[k]), late = (c.mb[n] - c.MbAt(mid)) / (c.t[n] - mid);
    if (!(early > (1 + rules.tail_drop_share) * late)) break;
    const size_t later = PastTheRamp(c, PlateauStart(c, k, rules.tail_plateau_share), rules);
    // A ragged end (the last slow samples before the data stopped) halves the time slower
    // too: the knee keeps a share of the time after the gulp behind it.
    if (later <= k || c.t[n] - c.t[later] < rules.min_tail_share * (c.t[n] - c.t[first])) break;
    k = later;
  }
  return {first, k};
}

// Spells after point `from` below rules.stall_share of `reference`, each with the idle
// part of the samples on either side (a sample half at the rate is half idle).
Stalls StallsOf(const Curve& c, size_t from, double reference, const KneeRules& rules) {
  Stalls stalls;
  if (!(reference > 0)) return stalls;
  const double floor = rules.stall_share * reference;
  const auto idle_part = [&](size_t i) {
    return (c.t[i + 1] - c.t[i]) * std::clamp(1 - c.rate[i] / reference, 0.0, 1.0);
  };
  for (size_t i = from; i < c.Samples();) {
    if (c.rate[i] >= floor) {
      ++i;
      continue;
    }
    size_t end = i;
    while (end < c.Samples() && c.rate[end] < floor) ++end;
    double spell = c.t[end] - c.t[i];
    if (i > from) spell += idle_part(i - 1);
    if (end < c.Samples()) spell += idle_part(end);
    if (spell >= rules.min_stall_s) {
      ++stalls.count;
      stalls.longest_s = std::max(stalls.longest_s, spell);
    }
    i = end;
  }
  return stalls;
}

// After the knee, windows of a second (or two samples) alternate between phases above
// and below the sustained rate, two of each at least, as a txg-paced pool's writes do,
// and a third of the windows at least lie clearly in one (the others straddle two);
// pauses of a second or more are then part of it, unless there was just one.
bool IsSawtooth(const Curve& c, size_t k, double sustained, const Stalls& stalls) {
  const double window = std::max(1.0, 2 * MedianInterval(c));
  const int windows = static_cast<int>((c.t.back() - c.t[k]) / window);
  if (windows < 6 || stalls.count == 1) return false;
  int high_runs = 0, low_runs = 0, labelled = 0, last = 0;
  for (int w = 0; w < windows; ++w) {
    const double from = c.t[k] + w * window;
    const double rate = (c.MbAt(from + window) - c.MbAt(from)) / window;
    const int label = rate > kHighShare * sustained ? 1 : rate < kLowShare * sustained ? -1 : 0;
    if (label == 0) continue;
    ++labelled;
    if (label != last) (label > 0 ? high_runs : low_runs)++;
    last = label;
  }
  return high_runs >= 2 && low_runs >= 2 && 3 * labelled >= windows;
}

// The ramp: of the time before the knee, how much went at under half the cache's gulp.
bool HasRamp(const Curve& c, size_t k, double gulp) {
  double slow = 0;
  for (size_t i = 0; i < k; ++i) {
    if (c.rate[i] < gulp / 2) slow += c.t[i + 1] - c.t[i];
  }
  return slow >= 0.5 && slow >= 0.25 * c.t[k];
}

// What the cache held at point k: the bytes taken by then less what the disks wrote at
// `sustained` since they began, which is once the cache was half full (Linux starts its
// background writeback at half the dirty limit by default; a pool starts a txg's sync
// before it is full too). Counting the disks from the first byte instead understated a
// 128 MiB page cache filled at 10 Gb/s, writeback at 120 MB/s, by a fifth.
double Absorbed(const Curve& c, size_t k, double sustained) {
  double held = Excess(c, k, sustained);
  for (int round = 0; round < 2 && held > 0; ++round) {
    const double half_full_s = c.TimeAt(held / 2);
    held = c.mb[k] - sustained * (c.t[k] - std::min(half_full_s, c.t[k]));
  }
  return held;
}

CacheShape ShapeOf(const Curve& c, size_t k, double gulp, double sustained, const KneeRules& rules) {
  const Stalls stalls = StallsOf(c, k, sustained, rules);
  if (IsSawtooth(c, k, sustained, stalls)) return CacheShape::kSawtooth;
  if (stalls.count > 0) return CacheShape::kStalls;
  return HasRamp(c, k, gulp) ? CacheShape::kRamp : CacheShape::kCliff;
}

}  // namespace

std::optional<CacheKnee> FindCacheKnee(const google::protobuf::RepeatedPtrField<proto::Sample>& samples,
                                       const KneeRules& rules) {
  const Curve c = CurveOf(samples);
  const size_t n = c.Samples();
  const size_t min_burst = static_cast<size_t>(std::max(1, rules.min_burst_samples));
  const size_t min_sustained = static_cast<size_t>(std::max(1, rules.min_sustained_samples));
  if (n < min_burst + min_sustained) return std::nullopt;
  const auto [first, k] = LocateKnee(c, rules);
  const double sustained = c.Tail(k);
  if (k < min_burst || n - k < min_sustained || !(sustained > 0)) return std::nullopt;
  const double burst = c.mb[k] / c.t[k];
  const double absorbed = Absorbed(c, k, sustained);
  // The cache's gulp, before any ramp, was clearly faster than the disks.
  const double gulp = std::max(burst, c.mb[first] / c.t[first]);
  if (sustained > rules.max_sustained_share * gulp || absorbed < rules.min_burst_seconds * sustained) {
    return std::nullopt;
  }
  // The drop holds: most of the time after the knee went at the disks' pace rather than
  // the cache's (by time: a catch-up burst after a stall is a short fast sample after long
  // slow ones). Not how far the curve runs ahead of the sustained line: a sawtooth's fast
  // phases run ahead by as much as a small cache holds, and come back.
  const double mid = (gulp + sustained) / 2;
  size_t slow = 0;
  double slow_s = 0;
  for (size_t i = k; i < n; ++i) {
    if (c.rate[i] <= mid) {
      ++slow;
      slow_s += c.t[i + 1] - c.t[i];
    }
  }
  if (slow < min_sustained || slow_s < rules.min_slow_share * (c.t[n] - c.t[k])) return std::nullopt;
  return CacheKnee{burst, static_cast<uint64_t>(std::llround(absorbed * 1e6)), sustained, c.t[k],
                   ShapeOf(c, k, gulp, sustained, rules)};
}

Stalls FindStalls(const google::protobuf::RepeatedPtrField<proto::Sample>& samples, double reference_mb_per_s,
                  const KneeRules& rules) {
  return StallsOf(CurveOf(samples), 0, reference_mb_per_s, rules);
}

void AddCacheFigures(proto::TransferReport& row) {
  const Curve c = CurveOf(row.samples());
  if (c.Samples() == 0) return;
  double reference = c.mb.back() / c.t.back();
  if (const std::optional<CacheKnee> knee = FindCacheKnee(row.samples())) {
    row.set_burst_mb_per_s(knee->burst_mb_per_s);
    row.set_burst_bytes(knee->burst_bytes);
    row.set_sustained_mb_per_s(knee->sustained_mb_per_s);
    row.set_cache_shape(Name(knee->shape));
    row.set_knee_s(knee->knee_s);
    reference = knee->sustained_mb_per_s;
  }
  const Stalls stalls = StallsOf(c, 0, reference, KneeRules{});
  row.set_stall_count(stalls.count);
  row.set_longest_stall_s(stalls.longest_s);
}

std::optional<CacheKnee> KneeOfRow(const proto::TransferReport& row) {
  if (!row.has_burst_mb_per_s() || !row.has_burst_bytes() || !row.has_sustained_mb_per_s()) return std::nullopt;
  // Rows from before knee_s: the burst's bytes at its rate.
  const double knee_s = row.has_knee_s()           ? row.knee_s()
                        : row.burst_mb_per_s() > 0 ? static_cast<double>(row.burst_bytes()) / 1e6 / row.burst_mb_per_s()
                                                   : 0;
  const CacheShape shape = ParseOr<CacheShape>(row.cache_shape(), CacheShape::kCliff).value_or(CacheShape::kCliff);
  return CacheKnee{row.burst_mb_per_s(), row.burst_bytes(), row.sustained_mb_per_s(), knee_s, shape};
}

void ClearCacheKnee(proto::TransferReport& row) {
  row.clear_burst_mb_per_s();
  row.clear_burst_bytes();
  row.clear_sustained_mb_per_s();
  row.clear_cache_shape();
  row.clear_knee_s();
}

std::string DescribeKnee(const CacheKnee& knee) {
  return absl::StrFormat("the NAS took %s at %.0f MB/s, then its disks sustained %.0f MB/s (%s)",
                         FormatSize(knee.burst_bytes), knee.burst_mb_per_s, knee.sustained_mb_per_s, Name(knee.shape));
}

std::string DescribeStalls(const proto::TransferReport& row) {
  if (row.stall_count() == 0) return "";
  return absl::StrFormat("its longest stall %.1f s (%d stall%s of %.0f s or more)", row.longest_stall_s(),
                         row.stall_count(), row.stall_count() == 1 ? "" : "s", KneeRules{}.min_stall_s);
}

}  // namespace nasperf
