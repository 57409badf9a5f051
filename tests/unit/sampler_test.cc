#include "common/sampler.h"

#include "gtest/gtest.h"

namespace nasperf {
namespace {

constexpr int64_t kSecond = 1000000000;

TEST(IntervalSampler, ClosesAtBoundariesWithRealLengths) {
  IntervalSampler s(1.0, 0);
  s.Add(100, kSecond / 2);
  s.Add(100, kSecond + kSecond / 10);  // crosses 1 s: closes [0, 1.1]
  s.Add(50, kSecond + kSecond / 2);
  s.Finish(kSecond + kSecond * 7 / 10);
  ASSERT_EQ(s.samples().size(), 2u);
  EXPECT_EQ(s.samples()[0].bytes, 200u);
  EXPECT_DOUBLE_EQ(s.samples()[0].t_s, 1.1);
  EXPECT_DOUBLE_EQ(s.samples()[0].interval_s, 1.1);
  EXPECT_EQ(s.samples()[1].bytes, 50u);
  EXPECT_NEAR(s.samples()[1].interval_s, 0.6, 1e-9);
}

TEST(IntervalSampler, AStallBecomesOneLongSample) {
  IntervalSampler s(1.0, 0);
  s.Add(10, 5 * kSecond + 1);
  s.Add(10, 5 * kSecond + 2);  // next boundary is 6 s, not 2 s
  s.Finish(5 * kSecond + 3);
  ASSERT_EQ(s.samples().size(), 2u);
  EXPECT_EQ(s.samples()[0].bytes, 10u);
  EXPECT_EQ(s.samples()[1].bytes, 10u);
}

TEST(IntervalSampler, DisabledRecordsNothing) {
  IntervalSampler s(0, 0);
  s.Add(10, kSecond * 3);
  s.Finish(kSecond * 4);
  EXPECT_TRUE(s.samples().empty());
}

}  // namespace
}  // namespace nasperf
