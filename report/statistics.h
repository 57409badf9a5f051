// The statistics behind `nasperf compare`: a Mann-Whitney U test, a seeded bootstrap
// confidence interval for the difference of two medians in percent, and the
// Mann-Kendall trend test (with Sen's slope) for runs that drift with iteration
// order. Pure functions; thread-safe.
#ifndef NASPERF_REPORT_STATISTICS_H_
#define NASPERF_REPORT_STATISTICS_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace nasperf {

struct MannWhitneyResult {
  double u = 0;                    // U of the first sample: pairs (x, y) with x > y, ties count 1/2
  double p = 1;                    // two-sided
  bool exact = false;              // exact distribution (no ties, small samples) or normal approximation
  double smallest_possible_p = 0;  // the best p these sample sizes could ever give
};

// Exact when neither sample has ties across the two and n1 + n2 <= kExactLimit;
// otherwise the normal approximation with tie correction and continuity correction
// (what scipy.stats.mannwhitneyu computes with method="exact" / "asymptotic").
inline constexpr size_t kMannWhitneyExactLimit = 40;
MannWhitneyResult MannWhitneyU(const std::vector<double>& x, const std::vector<double>& y);

// P(U <= u) under the null for samples of sizes n1, n2 without ties.
double MannWhitneyExactCdf(size_t n1, size_t n2, double u);

struct MedianDifference {
  double percent = 0;  // (median(y) / median(x) - 1) * 100
  double ci_low = 0;   // 95% percentile bootstrap interval of the same
  double ci_high = 0;
};

// Resamples x and y independently with replacement `resamples` times; the seed
// makes the interval reproducible run to run and machine to machine (mt19937_64
// is fully specified by the standard; the index mapping is ours).
MedianDifference BootstrapMedianDifference(const std::vector<double>& x, const std::vector<double>& y,
                                           int resamples = 10000, uint64_t seed = 20261202);

struct TrendResult {
  double s = 0;  // Mann-Kendall S
  double z = 0;
  double p = 1;          // two-sided, normal approximation with tie correction
  double sen_slope = 0;  // median of pairwise slopes, units per step
};

// Values in the order they were taken (iteration order). Needs n >= 3 to mean anything.
TrendResult MannKendall(const std::vector<double>& values_in_order);

// Two-sided p of a standard normal z.
double NormalTwoSidedP(double z);

}  // namespace nasperf

#endif  // NASPERF_REPORT_STATISTICS_H_
