#include "common/stats.h"

#include "gtest/gtest.h"

namespace nasperf {
namespace {

TEST(Summarize, HandComputedSample) {
  // 2, 4, 4, 4, 5, 5, 7, 9: mean 5, sample variance 32/7.
  Summary s = Summarize({9, 4, 2, 4, 5, 7, 4, 5});
  EXPECT_EQ(s.n, 8u);
  EXPECT_DOUBLE_EQ(s.mean, 5.0);
  EXPECT_DOUBLE_EQ(s.median, 4.5);
  EXPECT_DOUBLE_EQ(s.min, 2);
  EXPECT_DOUBLE_EQ(s.max, 9);
  EXPECT_NEAR(s.stddev, 2.138089935299395, 1e-12);
  // NumPy's default (linear): p5 at position 0.35 -> 2 + 0.35*2; p95 at 6.65 -> 7 + 0.65*2.
  EXPECT_NEAR(s.p5, 2.7, 1e-12);
  EXPECT_NEAR(s.p95, 8.3, 1e-12);
}

TEST(Summarize, SmallSamples) {
  EXPECT_EQ(Summarize({}).n, 0u);
  Summary one = Summarize({1234.5});
  EXPECT_EQ(one.n, 1u);
  EXPECT_DOUBLE_EQ(one.median, 1234.5);
  EXPECT_DOUBLE_EQ(one.stddev, 0);
  Summary odd = Summarize({3, 1, 2});
  EXPECT_DOUBLE_EQ(odd.median, 2);
  EXPECT_DOUBLE_EQ(odd.stddev, 1);
}

}  // namespace
}  // namespace nasperf
