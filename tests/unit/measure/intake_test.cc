#include "measure/intake.h"

#include <algorithm>
#include <limits>
#include <random>
#include <set>

#include "gtest/gtest.h"

namespace nasperf {
namespace {

constexpr int64_t kT0 = 1764000000LL * 1000000000LL;

// A transfer moving `mb_per_s` evenly for `seconds`, sampled every `interval_s`.
IntakeTransfer Even(double start_s, double mb_per_s, double seconds, double interval_s) {
  IntakeTransfer t;
  t.first_byte_ns = kT0 + static_cast<int64_t>(start_s * 1e9);
  t.duration_s = seconds;
  t.bytes = mb_per_s * 1e6 * seconds;
  for (double at = interval_s; at < seconds + 1e-9; at += interval_s) {
    t.samples.push_back({std::min(at, seconds), mb_per_s * 1e6 * (std::min(at, seconds) - (at - interval_s))});
  }
  return t;
}

TEST(IntakeTest, TheIssuesTwoClientsGiveTheNasFiguresNotTheSumOfRates) {
  // 1000 MB/s for 1 s and 100 MB/s for 10 s: the NAS took 2 GB in 10 s.
  auto f = ComputeIntake({Even(0, 1000, 1, 1), Even(0, 100, 10, 1)});
  ASSERT_TRUE(f.has_value());
  EXPECT_DOUBLE_EQ(f->bytes, 2e9);
  EXPECT_DOUBLE_EQ(f->span_s, 10);
  EXPECT_DOUBLE_EQ(f->all_mb_per_s, 200);
  ASSERT_TRUE(f->overlapped);
  EXPECT_DOUBLE_EQ(f->window_s, 1);
  EXPECT_DOUBLE_EQ(f->while_all_mb_per_s, 1100);
  EXPECT_DOUBLE_EQ(f->step_s, 1);
  ASSERT_EQ(f->timeline_mb_per_s.size(), 10u);
  EXPECT_DOUBLE_EQ(f->timeline_mb_per_s[0], 1100);
  EXPECT_DOUBLE_EQ(f->timeline_mb_per_s[9], 100);
  EXPECT_DOUBLE_EQ(f->peak_mb_per_s, 1100);
  EXPECT_DOUBLE_EQ(f->median_mb_per_s, 100);
  EXPECT_DOUBLE_EQ(f->sum_of_rates_mb_per_s, 1100);
  EXPECT_EQ(f->coarse, 1u);  // the 1 s client has one sample: its own average
  EXPECT_EQ(f->unsampled, 0u);
}

TEST(IntakeTest, StaggeredStartsCountTheSpanFromTheFirstByte) {
  // Two 100 MB/s clients, the second 2 s later: 4 s of span, 1 s of overlap.
  auto f = ComputeIntake({Even(0, 100, 3, 0.5), Even(2, 100, 2, 0.5)});
  ASSERT_TRUE(f.has_value());
  EXPECT_DOUBLE_EQ(f->span_s, 4);
  EXPECT_DOUBLE_EQ(f->all_mb_per_s, 500e6 / 4 / 1e6);
  EXPECT_NEAR(f->window_s, 1, 1e-9);
  EXPECT_NEAR(f->while_all_mb_per_s, 200, 1e-6);
  EXPECT_NEAR(f->peak_mb_per_s, 200, 1e-6);
}

TEST(IntakeTest, TransfersThatNeverAllRanTogetherHaveNoWindow) {
  auto f = ComputeIntake({Even(0, 100, 1, 0.25), Even(2, 100, 1, 0.25)});
  ASSERT_TRUE(f.has_value());
  EXPECT_FALSE(f->overlapped);
  EXPECT_EQ(f->window_bytes, 0);
  EXPECT_DOUBLE_EQ(f->all_mb_per_s, 200e6 / 3 / 1e6);
  // The gap is in the timeline, as it was at the NAS.
  EXPECT_EQ(f->timeline_mb_per_s[5], 0);
}

TEST(IntakeTest, EqualClientsTogetherGiveOneFigureThreeWays) {
  auto f = ComputeIntake({Even(0, 300, 5, 0.5), Even(0, 300, 5, 0.5), Even(0, 300, 5, 0.5)});
  ASSERT_TRUE(f.has_value());
  EXPECT_NEAR(f->all_mb_per_s, 900, 1e-6);
  EXPECT_NEAR(f->while_all_mb_per_s, 900, 1e-6);
  EXPECT_NEAR(f->peak_mb_per_s, 900, 1e-6);
  EXPECT_NEAR(f->median_mb_per_s, 900, 1e-6);
  EXPECT_TRUE(f->TimelineIsCurve());
}

TEST(IntakeTest, ALabOfShortTransfersDrawsNoCurve) {
  // 16 clients of 0.3 s each with a 1 s interval: one sample apiece, their own average.
  std::vector<IntakeTransfer> transfers;
  for (int i = 0; i < 16; ++i) {
    IntakeTransfer t = Even(0.001 * i, 440, 0.3, 1);
    ASSERT_EQ(t.samples.size(), 0u);
    t.samples.push_back({0.3, t.bytes});
    transfers.push_back(t);
  }
  auto f = ComputeIntake(transfers);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->coarse, 16u);
  EXPECT_FALSE(f->TimelineIsCurve());
  EXPECT_EQ(f->timeline_mb_per_s.size(), 1u);
  EXPECT_NEAR(f->peak_mb_per_s, f->all_mb_per_s, 1e-9);
}

TEST(IntakeTest, ATransferWithoutSamplesIsTakenAsEvenOverItsTime) {
  IntakeTransfer t = Even(0, 100, 4, 1);
  t.samples.clear();
  IntakeTransfer cut = Even(0, 100, 4, 1);
  cut.samples.resize(2);  // a samples file cut short: its sums no longer match the row
  auto f = ComputeIntake({t, cut});
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->unsampled, 2u);
  EXPECT_NEAR(f->while_all_mb_per_s, 200, 1e-6);
}

TEST(IntakeTest, NothingOrNoTimeGivesNoFigures) {
  EXPECT_FALSE(ComputeIntake({}).has_value());
  IntakeTransfer t;
  t.first_byte_ns = kT0;
  EXPECT_FALSE(ComputeIntake({t}).has_value());
}

// The NAS's intake as the samples describe it, at its finest: the summed rate between
// every two consecutive piece edges. No figure may exceed its largest value.
double FinestPeak(const std::vector<IntakeTransfer>& transfers, int64_t first_ns) {
  std::set<double> edges;
  for (const IntakeTransfer& t : transfers) {
    const double o = static_cast<double>(t.first_byte_ns - first_ns) / 1e9;
    edges.insert(o);
    for (const IntakeSample& s : t.samples) edges.insert(o + s.t_s);
  }
  double peak = 0;
  for (auto it = edges.begin(); std::next(it) != edges.end(); ++it) {
    const double lo = *it, hi = *std::next(it), mid = (lo + hi) / 2;
    double rate = 0;
    for (const IntakeTransfer& t : transfers) {
      const double o = static_cast<double>(t.first_byte_ns - first_ns) / 1e9;
      double previous = 0;
      for (const IntakeSample& s : t.samples) {
        if (mid > o + previous && mid < o + s.t_s) rate += s.bytes / (s.t_s - previous) / 1e6;
        previous = s.t_s;
      }
    }
    peak = std::max(peak, rate);
  }
  return peak;
}

TEST(IntakeTest, NoFigureEverExceedsWhatTheNasTookOverAnyInterval) {
  std::mt19937_64 random(30);
  for (int round = 0; round < 200; ++round) {
    std::vector<IntakeTransfer> transfers;
    const int n = 1 + static_cast<int>(random() % 16);
    for (int i = 0; i < n; ++i) {
      std::uniform_real_distribution<double> start(0, 2), rate(10, 1200), length(0.05, 6), interval(0.1, 1);
      IntakeTransfer t = Even(start(random), rate(random), length(random), interval(random));
      // Uneven intervals: a cliff in the middle of each transfer.
      for (size_t k = t.samples.size() / 2; k < t.samples.size(); ++k) t.samples[k].bytes /= 3;
      t.bytes = 0;
      for (const IntakeSample& s : t.samples) t.bytes += s.bytes;
      if (t.samples.empty()) continue;
      t.duration_s = t.samples.back().t_s;
      transfers.push_back(t);
    }
    if (transfers.empty()) continue;
    auto f = ComputeIntake(transfers);
    ASSERT_TRUE(f.has_value());
    const double finest = FinestPeak(transfers, f->first_ns);
    double timeline_bytes = 0;
    for (size_t k = 0; k < f->timeline_mb_per_s.size(); ++k) {
      timeline_bytes += f->timeline_mb_per_s[k] * f->timeline_len_s[k] * 1e6;
    }
    EXPECT_NEAR(timeline_bytes, f->bytes, 1e-6 * f->bytes) << "round " << round;
    // The span's average is a weighted mean of the grid's steps.
    EXPECT_LE(f->all_mb_per_s, f->peak_mb_per_s * (1 + 1e-9)) << "round " << round;
    EXPECT_LE(f->peak_mb_per_s, finest * (1 + 1e-9)) << "round " << round;
    if (f->overlapped) {
      EXPECT_LE(f->while_all_mb_per_s, finest * (1 + 1e-9)) << "round " << round;
      EXPECT_LE(f->window_bytes, f->bytes * (1 + 1e-9));
    }
    EXPECT_LE(f->timeline_mb_per_s.size(), kMaxTimelinePoints + 1);
    // The stacked chart's bands add up to the timeline, step by step.
    ASSERT_EQ(f->timeline_by_transfer_mb_per_s.size(), transfers.size()) << "round " << round;
    for (size_t k = 0; k < f->timeline_mb_per_s.size(); ++k) {
      double stacked = 0;
      for (const std::vector<double>& band : f->timeline_by_transfer_mb_per_s) stacked += band[k];
      EXPECT_NEAR(stacked, f->timeline_mb_per_s[k], 1e-9 * f->peak_mb_per_s) << "round " << round << " step " << k;
    }
  }
}

TEST(IntakeTest, EachBandIsOneTransfersPartOfTheIntake) {
  // 1000 MB/s for 1 s and 100 MB/s for 10 s: the first band is 1000 in step 0 and then
  // nothing; the second 100 throughout.
  auto f = ComputeIntake({Even(0, 1000, 1, 1), Even(0, 100, 10, 1)});
  ASSERT_TRUE(f.has_value());
  ASSERT_EQ(f->timeline_by_transfer_mb_per_s.size(), 2u);
  const std::vector<double> fast = f->timeline_by_transfer_mb_per_s[0], slow = f->timeline_by_transfer_mb_per_s[1];
  ASSERT_EQ(fast.size(), 10u);
  EXPECT_DOUBLE_EQ(fast[0], 1000);
  for (size_t k = 1; k < fast.size(); ++k) EXPECT_EQ(fast[k], 0) << k;
  for (double v : slow) EXPECT_DOUBLE_EQ(v, 100);
}

TEST(IntakeTest, PastTheBandLimitOnlyTheTotalIsKept) {
  std::vector<IntakeTransfer> many;
  for (size_t i = 0; i <= kMaxStackedTransfers; ++i) many.push_back(Even(0, 10, 2, 0.5));
  auto f = ComputeIntake(many);
  ASSERT_TRUE(f.has_value());
  EXPECT_TRUE(f->timeline_by_transfer_mb_per_s.empty());
  EXPECT_NEAR(f->peak_mb_per_s, 10.0 * static_cast<double>(many.size()), 1e-6);
}

TEST(IntakeTest, ARowRoundsAsItsCsvCellsDo) {
  proto::TransferReport row;
  row.set_status("ok");
  row.set_started_at_unix_ns(kT0 + 123456789);  // the CSV keeps .123
  row.set_first_byte_s(0.0012344);              // and 0.001234
  row.set_duration_s(2.5);
  row.set_bytes(1000);
  auto* s = row.add_samples();
  s->set_t_s(1.00049);
  s->set_bytes(400);
  s = row.add_samples();
  s->set_t_s(2.4);
  s->set_bytes(600);
  auto t = IntakeFromRow(row);
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->first_byte_ns, kT0 + 123000000 + 1234000);
  EXPECT_DOUBLE_EQ(t->duration_s, 2.5);
  ASSERT_EQ(t->samples.size(), 2u);
  EXPECT_DOUBLE_EQ(t->samples[0].t_s, 1.0);
  row.set_status("failed");
  EXPECT_FALSE(IntakeFromRow(row).has_value());
  row.set_status("ok");
  row.clear_duration_s();
  EXPECT_FALSE(IntakeFromRow(row).has_value());
}

TEST(IntakeTest, TimesPastWhatNanosecondsHoldGiveNoTransfer) {
  proto::TransferReport row;  // a hostile agent's row passes CheckReport's 1e12 s bound
  row.set_status("ok");
  row.set_started_at_unix_ns(kT0);
  row.set_first_byte_s(1e12);
  row.set_duration_s(1);
  row.set_bytes(1000);
  EXPECT_FALSE(IntakeFromRow(row).has_value()) << "1e21 ns would overflow";
  row.set_first_byte_s(0.5);
  row.set_started_at_unix_ns(std::numeric_limits<int64_t>::max() - 1);
  EXPECT_FALSE(IntakeFromRow(row).has_value()) << "a start near int64's end overflows with any offset";
  row.set_started_at_unix_ns(kT0);
  EXPECT_TRUE(IntakeFromRow(row).has_value());
}

}  // namespace
}  // namespace nasperf
