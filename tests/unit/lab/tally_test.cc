// The lab tally from rows alone: per-transfer sums, the NAS's intake from its receiver
// rows, completeness, start skew from first bytes, and totals that leave warm-ups out
// of the intake figures.
#include "lab/tally.h"

#include "gtest/gtest.h"

namespace nasperf {
namespace {

proto::TransferReport Row(const std::string& role, const std::string& status, double mb_per_s,
                          int64_t first_byte_ns = -1) {
  proto::TransferReport r;
  r.set_role(role);
  r.set_status(status);
  r.set_mb_per_s(mb_per_s);
  r.set_started_at_unix_ns(1'000'000'000);
  if (first_byte_ns >= 0) r.set_first_byte_s(static_cast<double>(first_byte_ns) / 1e9);
  if (status != "ok") r.set_error("disk full");
  return r;
}

// A receiver row moving `mb_per_s` for `seconds` from `start_s`, one sample a second.
proto::TransferReport Received(double start_s, double mb_per_s, int seconds) {
  proto::TransferReport r = Row("receiver", "ok", mb_per_s);
  r.set_started_at_unix_ns(1'764'669'600'000'000'000 + static_cast<int64_t>(start_s * 1e9));
  r.set_first_byte_s(0);
  r.set_duration_s(seconds);
  r.set_bytes(static_cast<uint64_t>(mb_per_s * 1e6) * seconds);
  for (int k = 1; k <= seconds; ++k) {
    proto::Sample* s = r.add_samples();
    s->set_t_s(k);
    s->set_bytes(static_cast<uint64_t>(mb_per_s * 1e6));
    s->set_interval_s(1);
  }
  return r;
}

class TallyTest : public ::testing::Test {
 protected:
  LabJob Job(const std::string& from, const std::string& to, int streams) {
    transfers_.push_back(std::make_unique<PlanTransfer>());
    transfers_.back()->from = from;
    transfers_.back()->to = to;
    transfers_.back()->streams = streams;
    LabJob job;
    job.transfer = transfers_.back().get();
    return job;
  }
  std::vector<std::unique_ptr<PlanTransfer>> transfers_;
};

TEST_F(TallyTest, TheAggregateIsTheSumOfAReceiversConcurrentTransfers) {
  std::vector<LabJob> jobs = {Job("c1", "nas", 1), Job("c2", "nas", 2), Job("c3", "other", 1)};
  jobs[0].agent_rows = {Row("sender", "ok", 100, 1'000'000), Row("receiver", "ok", 95)};
  jobs[1].agent_rows = {Row("sender", "ok", 60, 3'500'000), Row("sender", "ok", 40, 2'000'000),
                        Row("receiver", "ok", 50), Row("receiver", "ok", 35)};
  jobs[2].agent_rows = {Row("sender", "ok", 10), Row("receiver", "ok", 9)};
  RunTally run = TallyRun(jobs);
  ASSERT_EQ(run.transfers.size(), 3u);
  EXPECT_DOUBLE_EQ(run.transfers[1].send_mb_per_s, 100);
  EXPECT_DOUBLE_EQ(run.transfers[1].durable_mb_per_s, 85);
  ASSERT_EQ(run.receivers.size(), 2u);
  EXPECT_EQ(run.receivers[0].name, "nas");
  EXPECT_EQ(run.receivers[0].transfers, 2);
  EXPECT_DOUBLE_EQ(run.receivers[0].send_mb_per_s, 200);
  EXPECT_DOUBLE_EQ(run.receivers[0].durable_mb_per_s, 180);
  EXPECT_TRUE(run.receivers[0].complete);
  EXPECT_EQ(run.sender_rows, 4);
  EXPECT_EQ(run.failed, 0);
  ASSERT_TRUE(run.start_skew_ms.has_value());
  EXPECT_DOUBLE_EQ(*run.start_skew_ms, 2.5) << "first bytes at 1, 2 and 3.5 ms; c3 reported none";
}

TEST_F(TallyTest, AFailedStreamMakesItsTransferAndReceiverIncompleteButItsOkStreamsCount) {
  std::vector<LabJob> jobs = {Job("c1", "nas", 2)};
  jobs[0].agent_rows = {Row("sender", "ok", 70), Row("receiver", "ok", 65)};
  jobs[0].lost_rows = {Row("sender", "aborted", 0)};
  RunTally run = TallyRun(jobs);
  EXPECT_FALSE(run.transfers[0].ok);
  EXPECT_EQ(run.transfers[0].error, "aborted: disk full");
  EXPECT_DOUBLE_EQ(run.transfers[0].send_mb_per_s, 70);
  EXPECT_FALSE(run.receivers[0].complete);
  EXPECT_EQ(run.failed, 1);
  EXPECT_EQ(run.aborted, 1);
  EXPECT_FALSE(run.start_skew_ms.has_value());
}

TEST_F(TallyTest, AMissingReceiverRowMakesTheAggregateIncomplete) {
  std::vector<LabJob> jobs = {Job("c1", "nas", 2)};
  jobs[0].agent_rows = {Row("sender", "ok", 70), Row("sender", "ok", 70), Row("receiver", "ok", 65)};
  RunTally run = TallyRun(jobs);
  EXPECT_TRUE(run.transfers[0].ok);
  EXPECT_FALSE(run.receivers[0].complete);
}

// Over SSH no agent takes the bytes: no receiver rows are due, so ok sender rows
// alone make a complete aggregate, and there is no durable figure.
TEST_F(TallyTest, AnSshTransferIsCompleteWithSenderRowsAlone) {
  std::vector<LabJob> jobs = {Job("c1", "root@nas:/x", 2)};
  transfers_.back()->transport = "sftp";
  jobs[0].agent_rows = {Row("sender", "ok", 50, 1'000'000), Row("sender", "ok", 30, 1'200'000)};
  RunTally run = TallyRun(jobs);
  ASSERT_EQ(run.receivers.size(), 1u);
  EXPECT_TRUE(run.receivers[0].complete);
  EXPECT_FALSE(run.receivers[0].durable);
  EXPECT_DOUBLE_EQ(run.receivers[0].send_mb_per_s, 80);
}

TEST_F(TallyTest, TotalsCountEveryRunButAggregateOnlyCompleteTimedRuns) {
  std::vector<LabJob> good = {Job("c1", "nas", 1)};
  good[0].agent_rows = {Row("sender", "ok", 100, 1), Received(0, 90, 2)};
  std::vector<LabJob> broken = {Job("c1", "nas", 1)};
  broken[0].lost_rows = {Row("sender", "failed", 0)};
  LabTotals totals;
  totals.Add(TallyRun(good), /*warmup=*/true);
  totals.Add(TallyRun(good), /*warmup=*/false);
  totals.Add(TallyRun(broken), /*warmup=*/false);
  EXPECT_EQ(totals.sender_rows, 3);
  EXPECT_EQ(totals.failed, 1);
  ASSERT_EQ(totals.all_mb_per_s["nas"].size(), 1u);
  EXPECT_DOUBLE_EQ(totals.all_mb_per_s["nas"][0], 90);
  ASSERT_EQ(totals.while_all_mb_per_s["nas"].size(), 1u);
}

// The two clients: 1000 MB/s for 1 s and 100 MB/s for 10 s. Their rates add
// up to 1100, but the NAS took 2 GB in 10 s; it ran at 1100 only while both ran.
TEST_F(TallyTest, TheNasIntakeComesFromItsRowsNotFromTheSumOfRates) {
  std::vector<LabJob> jobs = {Job("c1", "nas", 1), Job("c2", "nas", 1)};
  jobs[0].agent_rows = {Row("sender", "ok", 1000, 1'000'000), Received(0, 1000, 1)};
  jobs[1].agent_rows = {Row("sender", "ok", 100, 1'000'000), Received(0, 100, 10)};
  RunTally run = TallyRun(jobs);
  ASSERT_EQ(run.receivers.size(), 1u);
  EXPECT_DOUBLE_EQ(run.receivers[0].send_mb_per_s, 1100) << "the sum, kept under its meaning for lab-runs.csv";
  ASSERT_TRUE(run.receivers[0].intake.has_value());
  EXPECT_DOUBLE_EQ(run.receivers[0].intake->all_mb_per_s, 200);
  EXPECT_DOUBLE_EQ(run.receivers[0].intake->while_all_mb_per_s, 1100);
  EXPECT_DOUBLE_EQ(run.receivers[0].intake->window_s, 1);
  EXPECT_TRUE(run.receivers[0].received.empty());
}

TEST_F(TallyTest, TheShortestOkTransferSetsTheNextInterval) {
  std::vector<LabJob> jobs = {Job("c1", "nas", 1), Job("c2", "nas", 1)};
  proto::TransferReport fast = Row("sender", "ok", 100), slow = Row("sender", "ok", 10);
  fast.set_duration_s(0.3);
  slow.set_duration_s(3);
  proto::TransferReport failed = Row("sender", "failed", 0);
  failed.set_duration_s(0.01);
  jobs[0].agent_rows = {fast, slow};
  jobs[1].agent_rows = {failed};
  RunTally run = TallyRun(jobs);
  ASSERT_TRUE(run.shortest_s.has_value());
  EXPECT_DOUBLE_EQ(*run.shortest_s, 0.3);
}

}  // namespace
}  // namespace nasperf
