#include "measure/cache_knee.h"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "common/units.h"

namespace nasperf {
namespace {

constexpr size_t kMaxKneeSamples = 100000;

// The cumulative curve: point 0 is the first sample's start, point i the end of
// sample i. Megabytes and seconds since the start, so the sums below stay exact
// enough in a double.
struct Curve {
  std::vector<double> t, mb, rate;  // rate: sample i's MB/s, ending at point i + 1
};

std::optional<Curve> CurveOf(const google::protobuf::RepeatedPtrField<proto::Sample>& samples) {
  if (samples.size() > static_cast<int>(kMaxKneeSamples)) return std::nullopt;
  Curve c;
  double start = 0;
  for (const proto::Sample& s : samples) {
    if (!(s.interval_s() > 0) || !std::isfinite(s.interval_s()) || !std::isfinite(s.t_s())) continue;
    if (c.t.empty()) {
      start = s.t_s() - s.interval_s();
      c.t.push_back(0);
      c.mb.push_back(0);
    }
    if (!(s.t_s() - start > c.t.back())) continue;  // time runs forward, or the sample is not used
    const double mb = s.bytes() / 1e6;
    c.t.push_back(s.t_s() - start);
    c.mb.push_back(c.mb.back() + mb);
    c.rate.push_back(mb / s.interval_s());
  }
  // Trailing empty samples are the end of the data, not a rate the disks held.
  while (!c.rate.empty() && c.rate.back() == 0) {
    c.rate.pop_back();
    c.t.pop_back();
    c.mb.pop_back();
  }
  return c;
}

// Prefix sums that give the squared error of a line through two curve points over
// the points between them in O(1).
class SegmentError {
 public:
  explicit SegmentError(const Curve& c) : c_(c), sums_(c.t.size() + 1) {
    for (size_t i = 0; i < c.t.size(); ++i) {
      const double t = c.t[i], y = c.mb[i];
      const Sums& p = sums_[i];
      sums_[i + 1] = {p.n + 1, p.t + t, p.y + y, p.tt + t * t, p.ty + t * y, p.yy + y * y};
    }
  }
  // Of points a..b (inclusive) against the line through points a and b.
  double Between(size_t a, size_t b) const {
    const double dt = c_.t[b] - c_.t[a];
    if (dt <= 0) return 0;
    const double r = (c_.mb[b] - c_.mb[a]) / dt, t0 = c_.t[a], y0 = c_.mb[a];
    const Sums s = Range(a, b);
    // sum over the range of ((y - y0) - r (t - t0))^2, expanded
    const double dd = s.yy - 2 * y0 * s.y + s.n * y0 * y0;
    const double du = s.ty - t0 * s.y - y0 * s.t + s.n * y0 * t0;
    const double uu = s.tt - 2 * t0 * s.t + s.n * t0 * t0;
    return std::max(0.0, dd - 2 * r * du + r * r * uu);
  }

 private:
  struct Sums {
    double n = 0, t = 0, y = 0, tt = 0, ty = 0, yy = 0;
  };
  Sums Range(size_t a, size_t b) const {
    const Sums& hi = sums_[b + 1];
    const Sums& lo = sums_[a];
    return {hi.n - lo.n, hi.t - lo.t, hi.y - lo.y, hi.tt - lo.tt, hi.ty - lo.ty, hi.yy - lo.yy};
  }
  const Curve& c_;
  std::vector<Sums> sums_;
};

// Of samples [from, to): how many lie on the side of `mid` given, and what share of
// their time. By time, since a writer the kernel pauses in bursts yields long slow
// samples and short fast ones between them (a 292 ms sample at 53 MB/s, then one of
// 8 ms at 153): counted alike, the catch-ups would outvote the stalls.
struct Side {
  size_t count = 0;
  double time_share = 0;
};
Side OnSide(const Curve& c, size_t from, size_t to, double mid, bool above) {
  Side side;
  double on = 0, all = 0;
  for (size_t i = from; i < to; ++i) {
    const double dt = c.t[i + 1] - c.t[i];
    all += dt;
    if (above ? c.rate[i] >= mid : c.rate[i] <= mid) {
      ++side.count;
      on += dt;
    }
  }
  side.time_share = all > 0 ? on / all : 0;
  return side;
}

}  // namespace

std::optional<CacheKnee> FindCacheKnee(const google::protobuf::RepeatedPtrField<proto::Sample>& samples,
                                       const KneeRules& rules) {
  const std::optional<Curve> curve = CurveOf(samples);
  if (!curve) return std::nullopt;
  const Curve& c = *curve;
  const size_t n = c.rate.size(), min = static_cast<size_t>(std::max(1, rules.min_samples));
  if (n < 2 * min) return std::nullopt;
  const SegmentError error(c);
  const double one_line = error.Between(0, n);
  if (!(one_line > 0)) return std::nullopt;
  // Every split that fits well enough, best fit first; only a drop that holds can be the
  // knee. (The best fit alone may sit at the data's ragged end instead: a few slow last
  // samples while the final bytes trickle in.)
  std::vector<std::pair<double, size_t>> splits;  // error, k samples before the knee
  for (size_t k = min; k + min <= n; ++k) {
    const double e = error.Between(0, k) + error.Between(k, n);
    if (e <= rules.max_fit_error_share * one_line) splits.emplace_back(e, k);
  }
  std::sort(splits.begin(), splits.end());
  // Of the drops that hold, those whose fit is about as good as the best one's are all
  // candidates; the knee is the one whose two sides keep to their rates best. (After
  // the kernel's dirty throttling first bites, the writer can relapse to near the link's
  // rate for a second: a split after that relapse fits as well as the real one, with a
  // burst that is a third slow samples.)
  std::optional<CacheKnee> knee;
  double best_error = 0, best_consistency = 0;
  for (const auto& [e, k] : splits) {
    if (knee.has_value() && e > best_error * rules.near_fit_factor) break;
    const double burst = c.mb[k] / c.t[k];
    const double sustained = (c.mb[n] - c.mb[k]) / (c.t[n] - c.t[k]);
    const double mid = (burst + sustained) / 2;
    const Side fast = OnSide(c, 0, k, mid, true), slow = OnSide(c, k, n, mid, false);
    const double consistency = std::min(fast.time_share, slow.time_share);
    if (sustained > rules.max_sustained_share * burst || fast.count < min || slow.count < min ||
        consistency < rules.min_consistent_share) {
      continue;
    }
    if (!knee.has_value()) best_error = e;
    if (!knee.has_value() || consistency > best_consistency) {
      knee = CacheKnee{burst, static_cast<uint64_t>(std::llround(c.mb[k] * 1e6)), sustained, c.t[k]};
      best_consistency = consistency;
    }
  }
  return knee;
}

std::optional<CacheKnee> KneeOfRow(const proto::TransferReport& row) {
  if (!row.has_burst_mb_per_s() || !row.has_burst_bytes() || !row.has_sustained_mb_per_s()) return std::nullopt;
  // The burst runs from the first byte, so its bytes over its rate is where the knee was.
  const double knee_s =
      row.burst_mb_per_s() > 0 ? static_cast<double>(row.burst_bytes()) / 1e6 / row.burst_mb_per_s() : 0;
  return CacheKnee{row.burst_mb_per_s(), row.burst_bytes(), row.sustained_mb_per_s(), knee_s};
}

std::string DescribeKnee(const CacheKnee& knee) {
  return absl::StrFormat("the NAS took %s at %.0f MB/s, then its disks sustained %.0f MB/s",
                         FormatSize(knee.burst_bytes), knee.burst_mb_per_s, knee.sustained_mb_per_s);
}

}  // namespace nasperf
