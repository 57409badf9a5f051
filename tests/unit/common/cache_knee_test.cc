// FindCacheKnee on made-up sample series: a page-cache cliff is found with its size
// and both rates; a steady write, jitter, a short stall, a slow start and a gentle
// slow-down are not knees; hostile series (time running backwards, NaN, too many
// samples) give none rather than a figure.
#include "common/cache_knee.h"

#include <cmath>
#include <random>

#include "gtest/gtest.h"

namespace nasperf {
namespace {

using Samples = google::protobuf::RepeatedPtrField<proto::Sample>;

// Appends `count` samples of `interval` s each at `mb_per_s`.
void Add(Samples& samples, int count, double mb_per_s, double interval = 0.1) {
  for (int i = 0; i < count; ++i) {
    const double t = samples.empty() ? 0 : samples.rbegin()->t_s();
    proto::Sample* s = samples.Add();
    s->set_t_s(t + interval);
    s->set_interval_s(interval);
    s->set_bytes(static_cast<uint64_t>(mb_per_s * 1e6 * interval));
  }
}

TEST(CacheKnee, APageCacheCliffGivesTheCachesSizeAndBothRates) {
  Samples s;
  Add(s, 3, 887);  // 266 MB into RAM in 0.3 s
  Add(s, 40, 57);  // then the throttled disk
  const std::optional<CacheKnee> knee = FindCacheKnee(s);
  ASSERT_TRUE(knee.has_value());
  EXPECT_NEAR(knee->burst_mb_per_s, 887, 1);
  EXPECT_NEAR(knee->sustained_mb_per_s, 57, 0.5);
  EXPECT_NEAR(static_cast<double>(knee->burst_bytes), 266.1e6, 0.2e6);
  EXPECT_NEAR(knee->knee_s, 0.3, 1e-9);
  EXPECT_EQ(DescribeKnee(*knee), "the NAS took 254 MiB at 887 MB/s, then its disks sustained 57 MB/s");
}

TEST(CacheKnee, ANoisyCliffIsStillFoundNearItsPlace) {
  std::mt19937 random(7);
  std::uniform_real_distribution<double> jitter(0.8, 1.2);
  Samples s;
  for (int i = 0; i < 20; ++i) Add(s, 1, 1200 * jitter(random));
  for (int i = 0; i < 60; ++i) Add(s, 1, 60 * jitter(random));
  const std::optional<CacheKnee> knee = FindCacheKnee(s);
  ASSERT_TRUE(knee.has_value());
  EXPECT_NEAR(knee->knee_s, 2.0, 0.2);
  EXPECT_NEAR(knee->sustained_mb_per_s, 60, 6);
  EXPECT_NEAR(knee->burst_mb_per_s, 1200, 120);
}

TEST(CacheKnee, SteadyAndJitteryWritesHaveNone) {
  Samples steady;
  Add(steady, 50, 60);
  EXPECT_FALSE(FindCacheKnee(steady).has_value());
  std::mt19937 random(11);
  std::uniform_real_distribution<double> jitter(0.5, 1.5);  // a busy link: +-50 %
  for (int round = 0; round < 20; ++round) {
    Samples noisy;
    for (int i = 0; i < 60; ++i) Add(noisy, 1, 117 * jitter(random));
    EXPECT_FALSE(FindCacheKnee(noisy).has_value()) << "round " << round;
  }
}

TEST(CacheKnee, AShortStallASlowStartAndAGentleSlowDownAreNotKnees) {
  Samples stall;  // two slow samples in a fast run: no drop that holds
  Add(stall, 20, 900);
  Add(stall, 2, 50);
  Add(stall, 20, 900);
  EXPECT_FALSE(FindCacheKnee(stall).has_value());
  Samples slow_start;  // slow then fast: TCP's start, not a cache
  Add(slow_start, 5, 100);
  Add(slow_start, 30, 1000);
  EXPECT_FALSE(FindCacheKnee(slow_start).has_value());
  Samples gentle;  // a disk 20 % slower on its inner tracks
  Add(gentle, 20, 200);
  Add(gentle, 20, 160);
  EXPECT_FALSE(FindCacheKnee(gentle).has_value());
  Samples blk_burst;  // blk-throttle lets a burst through: 66 then 60
  Add(blk_burst, 5, 66);
  Add(blk_burst, 40, 60);
  EXPECT_FALSE(FindCacheKnee(blk_burst).has_value());
}

TEST(CacheKnee, TooFewSamplesOnEitherSideGiveNone) {
  Samples short_burst;
  Add(short_burst, 2, 900);
  Add(short_burst, 40, 60);
  EXPECT_FALSE(FindCacheKnee(short_burst).has_value()) << "two samples are not a burst";
  Samples short_tail;
  Add(short_tail, 40, 900);
  Add(short_tail, 2, 60);
  EXPECT_FALSE(FindCacheKnee(short_tail).has_value());
}

TEST(CacheKnee, TrailingEmptySamplesAreTheEndNotASustainedRate) {
  Samples s;
  Add(s, 30, 500);
  Add(s, 10, 0);  // nothing more arrived (the sender had finished)
  EXPECT_FALSE(FindCacheKnee(s).has_value());
}

TEST(CacheKnee, HostileSeriesGiveNoFigure) {
  Samples backwards;
  Add(backwards, 5, 900);
  Add(backwards, 20, 60);
  backwards.Mutable(10)->set_t_s(0.05);  // time runs backwards: that sample is not used
  backwards.Mutable(12)->set_interval_s(NAN);
  const std::optional<CacheKnee> knee = FindCacheKnee(backwards);
  ASSERT_TRUE(knee.has_value());
  EXPECT_TRUE(std::isfinite(knee->burst_mb_per_s) && std::isfinite(knee->sustained_mb_per_s));
  Samples zero_time;
  for (int i = 0; i < 10; ++i) {
    proto::Sample* s = zero_time.Add();
    s->set_interval_s(0.1);
    s->set_bytes(1000000);
  }
  EXPECT_FALSE(FindCacheKnee(zero_time).has_value());
  Samples too_many;
  Add(too_many, 3, 900);
  Add(too_many, 100001, 60, 0.001);
  EXPECT_FALSE(FindCacheKnee(too_many).has_value());
}

}  // namespace
}  // namespace nasperf
