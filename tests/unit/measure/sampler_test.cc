#include "measure/sampler.h"

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
  s.Finish(5 * kSecond + 6 * kSecond / 10);
  ASSERT_EQ(s.samples().size(), 2u);
  EXPECT_EQ(s.samples()[0].bytes, 10u);
  EXPECT_NEAR(s.samples()[0].interval_s, 5.0, 1e-6);
  EXPECT_EQ(s.samples()[1].bytes, 10u);
}

// The issue-18 spike: a throttled array's last 10 ms held 13.6 MB drained from
// buffers and plotted as 1328 MB/s. A last interval under half the length joins the
// one before it: every byte stays, and no rate comes from a sliver of time.
TEST(IntervalSampler, ALastSliverJoinsTheSampleBeforeIt) {
  IntervalSampler s(1.0, 0);
  s.Add(150'000'000, kSecond);      // closes [0, 1 s]
  s.Add(150'000'000, 2 * kSecond);  // closes [1, 2 s]
  s.Add(13'600'000, 2 * kSecond + kSecond / 100);
  s.Finish(2 * kSecond + kSecond / 100);
  ASSERT_EQ(s.samples().size(), 2u);
  const IntervalSample& last = s.samples()[1];
  EXPECT_EQ(last.bytes, 163'600'000u);
  EXPECT_NEAR(last.interval_s, 1.01, 1e-9);
  EXPECT_NEAR(last.t_s, 2.01, 1e-9);
  EXPECT_LT(static_cast<double>(last.bytes) / last.interval_s / 1e6, 170.0);
}

TEST(IntervalSampler, AShortTransferKeepsItsOnlySample) {
  IntervalSampler s(1.0, 0);
  s.Add(1000, kSecond / 100);
  s.Finish(kSecond / 100);
  ASSERT_EQ(s.samples().size(), 1u) << "nothing before it to join";
  EXPECT_EQ(s.samples()[0].bytes, 1000u);
}

TEST(IntervalSampler, DisabledRecordsNothing) {
  IntervalSampler s(0, 0);
  s.Add(10, kSecond * 3);
  s.Finish(kSecond * 4);
  EXPECT_TRUE(s.samples().empty());
}

TEST(IntervalSampler, ALongTransferKeepsItsTimelineAtACoarserGrain) {
  IntervalSampler s(0.01, 0);
  const int64_t step = kSecond / 100;
  const int64_t intervals = 3 * static_cast<int64_t>(IntervalSampler::kMaxSamples);
  for (int64_t i = 1; i <= intervals; ++i) s.Add(1000, i * step);
  s.Finish(intervals * step + 1);
  EXPECT_LE(s.samples().size(), IntervalSampler::kMaxSamples);
  EXPECT_GT(s.samples().size(), IntervalSampler::kMaxSamples / 4);
  uint64_t bytes = 0;
  double covered = 0;
  for (const IntervalSample& sample : s.samples()) {
    bytes += sample.bytes;
    covered += sample.interval_s;
  }
  EXPECT_EQ(bytes, static_cast<uint64_t>(intervals) * 1000);
  EXPECT_NEAR(covered, static_cast<double>(intervals * step + 1) / kSecond, 1e-6);
  EXPECT_NEAR(s.samples().back().t_s, static_cast<double>(intervals * step + 1) / kSecond, 1e-9);
}

}  // namespace
}  // namespace nasperf
