// The statistics behind `nasperf compare`, against hand-computed small samples and
// against SciPy's reference values (testdata/statistics_reference.inc names the version).
#include "report/statistics.h"

#include <cmath>
#include <vector>

#include "common/stats.h"
#include "gtest/gtest.h"

namespace nasperf {
namespace {

#include "tests/unit/report/testdata/statistics_reference.inc"

TEST(MannWhitney, HandComputedSeparatedSamples) {
  // 3 vs 3 fully separated: U = 0; only 2 of the C(6,3) = 20 orderings are as extreme.
  MannWhitneyResult r = MannWhitneyU({1, 2, 3}, {4, 5, 6});
  EXPECT_TRUE(r.exact);
  EXPECT_DOUBLE_EQ(r.u, 0);
  EXPECT_DOUBLE_EQ(r.p, 0.1);
  EXPECT_DOUBLE_EQ(r.smallest_possible_p, 0.1);
}

TEST(MannWhitney, HandComputedExactDistribution) {
  // n1 = n2 = 2: the 6 orderings give U = 0,1,2,2,3,4.
  EXPECT_DOUBLE_EQ(MannWhitneyExactCdf(2, 2, 0), 1.0 / 6);
  EXPECT_DOUBLE_EQ(MannWhitneyExactCdf(2, 2, 1), 2.0 / 6);
  EXPECT_DOUBLE_EQ(MannWhitneyExactCdf(2, 2, 2), 4.0 / 6);
  EXPECT_DOUBLE_EQ(MannWhitneyExactCdf(2, 2, 4), 1.0);
  // x = {1, 3}, y = {2}: U = 1 is the middle of {0, 1, 2}: p is capped at 1.
  MannWhitneyResult r = MannWhitneyU({1, 3}, {2});
  EXPECT_DOUBLE_EQ(r.u, 1);
  EXPECT_DOUBLE_EQ(r.p, 1);
}

TEST(MannWhitney, HandComputedTiesUseTheNormalApproximation) {
  // x = {1, 2}, y = {2, 3}: midranks 1, 2.5, 2.5, 4 -> R1 = 3.5, U = 0.5.
  // Variance = 2*2/12 * (5 - (8 - 2)/(4*3)) = 1.5; z = (3.5 - 2 - 0.5)/sqrt(1.5).
  MannWhitneyResult r = MannWhitneyU({1, 2}, {2, 3});
  EXPECT_FALSE(r.exact);
  EXPECT_DOUBLE_EQ(r.u, 0.5);
  EXPECT_NEAR(r.p, std::erfc(1 / std::sqrt(1.5) / std::sqrt(2.0)), 1e-12);
}

TEST(MannWhitney, AllValuesEqualSaysNothing) {
  MannWhitneyResult r = MannWhitneyU({5, 5, 5}, {5, 5, 5});
  EXPECT_DOUBLE_EQ(r.p, 1);
}

TEST(MannWhitney, MatchesScipy) {
  for (const MannWhitneyReference& ref : kMannWhitneyReference) {
    SCOPED_TRACE(ref.name);
    MannWhitneyResult r = MannWhitneyU(ref.x, ref.y);
    EXPECT_EQ(r.exact, ref.exact);
    EXPECT_DOUBLE_EQ(r.u, ref.u);
    EXPECT_NEAR(r.p, ref.p, 1e-12 + 1e-9 * ref.p);
  }
}

TEST(MannKendall, HandComputedRisingSequence) {
  // 1..5: all 10 pairs rise, S = 10; Var = 5*4*15/18; z = (S - 1)/sqrt(Var).
  TrendResult t = MannKendall({1, 2, 3, 4, 5});
  EXPECT_DOUBLE_EQ(t.s, 10);
  double z = 9 / std::sqrt(5.0 * 4 * 15 / 18);
  EXPECT_NEAR(t.z, z, 1e-12);
  EXPECT_NEAR(t.p, std::erfc(z / std::sqrt(2.0)), 1e-12);
  EXPECT_DOUBLE_EQ(t.sen_slope, 1);
}

TEST(MannKendall, HandComputedTies) {
  // {2, 2, 1}: pairs (2,2)=0, (2,1)=-1, (2,1)=-1 -> S = -2; ties {2 x 2}:
  // Var = (3*2*11 - 2*1*9)/18 = 48/18; z = (S + 1)/sqrt(Var).
  TrendResult t = MannKendall({2, 2, 1});
  EXPECT_DOUBLE_EQ(t.s, -2);
  EXPECT_NEAR(t.z, -1 / std::sqrt(48.0 / 18), 1e-12);
  // Slopes 0, -0.5, -1: median -0.5.
  EXPECT_DOUBLE_EQ(t.sen_slope, -0.5);
}

TEST(MannKendall, MatchesScipyKendallTauAndTheilSen) {
  for (const TrendReference& ref : kTrendReference) {
    SCOPED_TRACE(ref.name);
    TrendResult t = MannKendall(ref.values);
    double n = static_cast<double>(ref.values.size());
    EXPECT_NEAR(t.s, ref.tau * n * (n - 1) / 2, 1e-9);
    EXPECT_NEAR(t.sen_slope, ref.sen_slope, 1e-9 * std::fabs(ref.sen_slope) + 1e-12);
  }
}

TEST(MannKendall, LongSeriesFallBackToTheLeastSquaresSlope) {
  std::vector<double> line;
  for (int i = 0; i < 3001; ++i) line.push_back(100 + 2.0 * i + (i % 2 == 0 ? 0.5 : -0.5));
  TrendResult t = MannKendall(line);
  EXPECT_NEAR(t.sen_slope, 2, 1e-3);
  EXPECT_LT(t.p, 1e-10);
}

TEST(MannKendall, TooShortSaysNothing) {
  TrendResult t = MannKendall({3, 1});
  EXPECT_DOUBLE_EQ(t.p, 1);
}

TEST(Percentile, MatchesNumpy) {
  for (const PercentileReference& ref : kPercentileReference) {
    std::vector<double> sorted = ref.values;
    std::sort(sorted.begin(), sorted.end());
    EXPECT_NEAR(PercentileSorted(sorted, ref.q), ref.expected, 1e-9);
  }
}

TEST(Bootstrap, ConstantSamplesGiveAPointInterval) {
  MedianDifference d = BootstrapMedianDifference({100, 100, 100}, {130, 130, 130, 130});
  EXPECT_NEAR(d.percent, 30, 1e-9);
  EXPECT_NEAR(d.ci_low, 30, 1e-9);
  EXPECT_NEAR(d.ci_high, 30, 1e-9);
}

TEST(Bootstrap, SeededAndReproducible) {
  std::vector<double> x = {400, 410, 395, 405, 399}, y = {520, 534, 515, 529, 512};
  MedianDifference a = BootstrapMedianDifference(x, y);
  MedianDifference b = BootstrapMedianDifference(x, y);
  EXPECT_EQ(a.ci_low, b.ci_low);
  EXPECT_EQ(a.ci_high, b.ci_high);
  // Medians 400 and 520: +30%. Resampled medians stay within each sample's range.
  EXPECT_NEAR(a.percent, 30, 1e-9);
  EXPECT_LE(a.ci_low, a.percent);
  EXPECT_GE(a.ci_high, a.percent);
  EXPECT_GE(a.ci_low, (512.0 / 410 - 1) * 100 - 1e-9);
  EXPECT_LE(a.ci_high, (534.0 / 395 - 1) * 100 + 1e-9);
  MedianDifference other_seed = BootstrapMedianDifference(x, y, 10000, 7);
  EXPECT_NEAR(other_seed.ci_low, a.ci_low, 3);
}

}  // namespace
}  // namespace nasperf
