// Summary statistics of a sample of throughputs: count, median, mean, sample
// standard deviation, min, max and linear-interpolated percentiles (the R-7 / NumPy
// default). Pure functions on copies; thread-safe.
#ifndef NASPERF_COMMON_STATS_H_
#define NASPERF_COMMON_STATS_H_

#include <cstddef>
#include <vector>

namespace nasperf {

struct Summary {
  size_t n = 0;
  double median = 0;
  double mean = 0;
  double stddev = 0;  // sample (n - 1); 0 when n < 2
  double min = 0;
  double max = 0;
  double p5 = 0;
  double p95 = 0;
};

Summary Summarize(std::vector<double> values);

// q in [0, 1]; values must be sorted ascending and non-empty.
double PercentileSorted(const std::vector<double>& sorted, double q);

}  // namespace nasperf

#endif  // NASPERF_COMMON_STATS_H_
