#include "report/statistics.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <random>

#include "common/stats.h"

namespace nasperf {

double NormalTwoSidedP(double z) { return std::min(1.0, std::erfc(std::fabs(z) / std::sqrt(2.0))); }

namespace {

// counts[u] = number of arrangements of n1 x's and n2 y's whose U equals u, by the
// recurrence f(n1, n2, u) = f(n1 - 1, n2, u - n2) + f(n1, n2 - 1, u). Doubles hold
// the counts exactly far past any n the exact test is used for (C(40, 20) < 2^53).
std::vector<double> ExactUCounts(size_t n1, size_t n2) {
  const size_t max_u = n1 * n2;
  // table[i][j] for the current row; iterate over i (x's placed), j (y's placed).
  std::vector<std::vector<std::vector<double>>> f(n1 + 1, std::vector<std::vector<double>>(n2 + 1));
  for (size_t i = 0; i <= n1; ++i) {
    for (size_t j = 0; j <= n2; ++j) {
      std::vector<double>& cell = f[i][j];
      cell.assign(i * j + 1, 0.0);
      if (i == 0 || j == 0) {
        cell[0] = 1;
        continue;
      }
      // The largest value is an x (it beats all j y's) or a y.
      const std::vector<double>& x_last = f[i - 1][j];
      const std::vector<double>& y_last = f[i][j - 1];
      for (size_t u = 0; u < x_last.size(); ++u) cell[u + j] += x_last[u];
      for (size_t u = 0; u < y_last.size(); ++u) cell[u] += y_last[u];
    }
  }
  std::vector<double> counts = f[n1][n2];
  counts.resize(max_u + 1, 0.0);
  return counts;
}

double Choose(size_t n, size_t k) {
  double c = 1;
  for (size_t i = 1; i <= k; ++i) c = c * static_cast<double>(n - k + i) / static_cast<double>(i);
  return c;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return PercentileSorted(v, 0.5);
}

}  // namespace

double MannWhitneyExactCdf(size_t n1, size_t n2, double u) {
  std::vector<double> counts = ExactUCounts(n1, n2);
  double total = 0, below = 0;
  for (size_t k = 0; k < counts.size(); ++k) {
    total += counts[k];
    if (static_cast<double>(k) <= u + 1e-9) below += counts[k];
  }
  return below / total;
}

MannWhitneyResult MannWhitneyU(const std::vector<double>& x, const std::vector<double>& y) {
  MannWhitneyResult r;
  const size_t n1 = x.size(), n2 = y.size();
  if (n1 == 0 || n2 == 0) return r;
  // Midranks of the pooled sample.
  std::vector<std::pair<double, int>> pooled;
  for (double v : x) pooled.push_back({v, 0});
  for (double v : y) pooled.push_back({v, 1});
  std::sort(pooled.begin(), pooled.end());
  const size_t n = pooled.size();
  double rank_sum_x = 0, tie_term = 0;
  bool ties = false;
  for (size_t i = 0; i < n;) {
    size_t j = i;
    while (j + 1 < n && pooled[j + 1].first == pooled[i].first) ++j;
    double t = static_cast<double>(j - i + 1);
    double midrank = (static_cast<double>(i) + static_cast<double>(j)) / 2.0 + 1.0;
    for (size_t k = i; k <= j; ++k) {
      if (pooled[k].second == 0) rank_sum_x += midrank;
    }
    if (t > 1) {
      ties = true;
      tie_term += t * t * t - t;
    }
    i = j + 1;
  }
  const double d1 = static_cast<double>(n1), d2 = static_cast<double>(n2);
  r.u = rank_sum_x - d1 * (d1 + 1) / 2.0;
  const double u_big = std::max(r.u, d1 * d2 - r.u);
  r.smallest_possible_p = std::min(1.0, 2.0 / Choose(n1 + n2, n1));
  if (!ties && n1 + n2 <= kMannWhitneyExactLimit) {
    r.exact = true;
    // P(U >= u_big) = P(U <= n1*n2 - u_big) by symmetry; two-sided doubles it.
    r.p = std::min(1.0, 2.0 * MannWhitneyExactCdf(n1, n2, d1 * d2 - u_big));
    return r;
  }
  const double dn = d1 + d2;
  const double mean = d1 * d2 / 2.0;
  const double variance = d1 * d2 / 12.0 * ((dn + 1) - tie_term / (dn * (dn - 1)));
  if (variance <= 0) {  // every value equal: nothing to tell apart
    r.p = 1;
    return r;
  }
  const double z = (u_big - mean - 0.5) / std::sqrt(variance);
  r.p = std::min(1.0, 2.0 * 0.5 * std::erfc(z / std::sqrt(2.0)));
  return r;
}

MedianDifference BootstrapMedianDifference(const std::vector<double>& x, const std::vector<double>& y, int resamples,
                                           uint64_t seed) {
  MedianDifference d;
  if (x.empty() || y.empty()) return d;
  auto percent = [](double base, double other) { return base == 0 ? 0.0 : (other / base - 1.0) * 100.0; };
  d.percent = percent(Median(x), Median(y));
  std::mt19937_64 rng(seed);
  // Index in [0, n): the top 53 bits scaled, so the mapping is ours, not the library's.
  auto pick = [&rng](size_t n) {
    return static_cast<size_t>(static_cast<double>(rng() >> 11) * 0x1.0p-53 * static_cast<double>(n));
  };
  std::vector<double> diffs;
  diffs.reserve(static_cast<size_t>(resamples));
  std::vector<double> xs(x.size()), ys(y.size());
  for (int b = 0; b < resamples; ++b) {
    for (double& v : xs) v = x[pick(x.size())];
    for (double& v : ys) v = y[pick(y.size())];
    diffs.push_back(percent(Median(xs), Median(ys)));
  }
  std::sort(diffs.begin(), diffs.end());
  d.ci_low = PercentileSorted(diffs, 0.025);
  d.ci_high = PercentileSorted(diffs, 0.975);
  return d;
}

TrendResult MannKendall(const std::vector<double>& v) {
  TrendResult r;
  const size_t n = v.size();
  if (n < 3) return r;
  // Sen's slope keeps every pairwise slope: n(n-1)/2 doubles. Past kMaxSenSamples
  // values (far more runs than a NAS test makes) that would be hundreds of MB, so the
  // least-squares slope stands in.
  constexpr size_t kMaxSenSamples = 3000;
  const bool sen = n <= kMaxSenSamples;
  std::vector<double> slopes;
  if (sen) slopes.reserve(n * (n - 1) / 2);
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = i + 1; j < n; ++j) {
      double diff = v[j] - v[i];
      r.s += diff > 0 ? 1 : (diff < 0 ? -1 : 0);
      if (sen) slopes.push_back(diff / static_cast<double>(j - i));
    }
  }
  std::map<double, int> groups;
  for (double x : v) ++groups[x];
  const double dn = static_cast<double>(n);
  double variance = dn * (dn - 1) * (2 * dn + 5);
  for (const auto& [value, t] : groups) variance -= static_cast<double>(t) * (t - 1) * (2.0 * t + 5);
  variance /= 18.0;
  if (variance > 0) {
    if (r.s > 0) r.z = (r.s - 1) / std::sqrt(variance);
    if (r.s < 0) r.z = (r.s + 1) / std::sqrt(variance);
  }
  r.p = NormalTwoSidedP(r.z);
  if (sen) {
    std::sort(slopes.begin(), slopes.end());
    r.sen_slope = PercentileSorted(slopes, 0.5);
  } else {
    double mean_x = (dn - 1) / 2, mean_y = 0, sxy = 0, sxx = 0;
    for (double x : v) mean_y += x / dn;
    for (size_t i = 0; i < n; ++i) {
      double dx = static_cast<double>(i) - mean_x;
      sxy += dx * (v[i] - mean_y);
      sxx += dx * dx;
    }
    r.sen_slope = sxy / sxx;
  }
  return r;
}

}  // namespace nasperf
