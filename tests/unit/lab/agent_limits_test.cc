// What an agent holds at most (issue 29, row 5): live jobs and their streams are
// counted before anything is made, a job never released by Go is cancelled, finished
// jobs nobody reads are forgotten, and Go's instant must be near. The ledger is
// driven with a fake clock; the agent calls it the same way under its lock.
#include "lab/agent_limits.h"

#include <algorithm>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace nasperf {
namespace {

const absl::Time kT0 = absl::FromUnixSeconds(1'800'000'000);

bool Has(const std::vector<std::string>& ids, const std::string& id) {
  return std::find(ids.begin(), ids.end(), id) != ids.end();
}

TEST(JobLedger, AJobPastTheJobLimitIsRefusedAndRecordsNothing) {
  AgentLimits limits;
  limits.max_jobs = 3;
  JobLedger ledger(limits);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(ledger.Admit("j" + std::to_string(i), 1, kT0).ok());
  absl::Status refused = ledger.Admit("j3", 1, kT0);
  EXPECT_TRUE(absl::IsResourceExhausted(refused)) << refused;
  EXPECT_NE(std::string(refused.message()).find("runs 3 jobs, its limit"), std::string::npos) << refused;
  EXPECT_EQ(ledger.live_jobs(), 3);
  EXPECT_EQ(ledger.live_streams(), 3);
  // A job that ends frees its place; the refused id was never recorded.
  ledger.Finished("j0", kT0);
  EXPECT_TRUE(ledger.Admit("j3", 1, kT0).ok());
  EXPECT_TRUE(absl::IsAlreadyExists(ledger.Admit("j3", 1, kT0)));
}

TEST(JobLedger, StreamsCountAcrossJobsAndOneLargestJobFitsAlone) {
  JobLedger ledger{AgentLimits{}};
  ASSERT_TRUE(ledger.Admit("whole", kMaxStreams, kT0).ok()) << "a single job of the largest legal size";
  absl::Status refused = ledger.Admit("one-more", 1, kT0);
  EXPECT_TRUE(absl::IsResourceExhausted(refused)) << refused;
  EXPECT_NE(std::string(refused.message()).find("hold 64 streams and job one-more asks for 1; the limit is 64"),
            std::string::npos)
      << refused;
  ledger.Finished("whole", kT0);
  EXPECT_EQ(ledger.live_streams(), 0);
  EXPECT_TRUE(ledger.Admit("a", 40, kT0).ok());
  EXPECT_TRUE(absl::IsResourceExhausted(ledger.Admit("b", 25, kT0)));
  EXPECT_TRUE(ledger.Admit("c", 24, kT0).ok());
}

TEST(JobLedger, AJobNeverReleasedIsCancelledAfterTheWaitForGo) {
  AgentLimits limits;
  limits.wait_for_go = absl::Minutes(5);
  JobLedger ledger(limits);
  ASSERT_TRUE(ledger.Admit("held", 4, kT0).ok());
  ASSERT_TRUE(ledger.Admit("released", 4, kT0).ok());
  ledger.Released("released");
  EXPECT_TRUE(ledger.Sweep(kT0 + absl::Minutes(5)).cancel.empty());
  JobLedger::Due due = ledger.Sweep(kT0 + absl::Minutes(5) + absl::Seconds(1));
  EXPECT_EQ(due.cancel, std::vector<std::string>{"held"});
  // Cancelled, it still counts until its streams have ended.
  EXPECT_EQ(ledger.live_streams(), 8);
  ledger.Finished("held", kT0 + absl::Minutes(6));
  EXPECT_TRUE(ledger.Sweep(kT0 + absl::Minutes(6)).cancel.empty());
  EXPECT_EQ(ledger.live_streams(), 4);
}

TEST(JobLedger, UnreadJobsAreForgottenAfterTheirLifetime) {
  AgentLimits limits;
  limits.unread_lifetime = absl::Minutes(10);
  JobLedger ledger(limits);
  ASSERT_TRUE(ledger.Admit("unread", 1, kT0).ok());
  ASSERT_TRUE(ledger.Admit("running", 1, kT0).ok());
  ledger.Finished("unread", kT0);
  EXPECT_TRUE(ledger.Sweep(kT0 + absl::Minutes(10)).forget.empty());
  const absl::Time later = kT0 + absl::Minutes(10) + absl::Seconds(1);
  EXPECT_EQ(ledger.Sweep(later).forget, std::vector<std::string>{"unread"});
  ledger.Remove("unread");
  EXPECT_EQ(ledger.unread_jobs(), 0);
  EXPECT_EQ(ledger.live_jobs(), 1);
  EXPECT_TRUE(ledger.Sweep(later + absl::Hours(1)).forget.empty()) << "a running job is never forgotten";
}

TEST(JobLedger, PastTheUnreadBoundTheOldestAreForgottenFirst) {
  AgentLimits limits;
  limits.max_unread = 3;
  JobLedger ledger(limits);
  for (int i = 0; i < 5; ++i) {
    const std::string id = "j" + std::to_string(i);
    ASSERT_TRUE(ledger.Admit(id, 1, kT0).ok());
    ledger.Finished(id, kT0 + absl::Seconds(i));
  }
  EXPECT_EQ(ledger.unread_jobs(), 5);
  EXPECT_EQ(ledger.live_jobs(), 0);
  JobLedger::Due due = ledger.Sweep(kT0 + absl::Seconds(5));
  EXPECT_EQ(due.forget.size(), 2u);
  EXPECT_TRUE(Has(due.forget, "j0") && Has(due.forget, "j1"));
}

TEST(CheckGoInstant, OnlyAStartNearNowIsTaken) {
  AgentLimits limits;
  const absl::Time now = kT0;
  EXPECT_TRUE(CheckGoInstant(now, now, limits).ok());
  EXPECT_TRUE(CheckGoInstant(now + absl::Seconds(60), now, limits).ok()) << "a plan's longest start_delay";
  EXPECT_TRUE(CheckGoInstant(now - absl::Seconds(5), now, limits).ok()) << "a late Go starts at once";
  absl::Status far = CheckGoInstant(now + absl::Hours(1), now, limits);
  EXPECT_TRUE(absl::IsInvalidArgument(far)) << far;
  EXPECT_EQ(far.message(), "the start instant is 3600.0 s from now on this host; it must be between -10 s and +65 s");
  EXPECT_TRUE(absl::IsInvalidArgument(CheckGoInstant(now - absl::Minutes(1), now, limits)));
  EXPECT_TRUE(absl::IsInvalidArgument(CheckGoInstant(absl::FromUnixNanos(INT64_MAX), now, limits)));
  EXPECT_TRUE(absl::IsInvalidArgument(CheckGoInstant(absl::FromUnixNanos(1), now, limits)));
}

}  // namespace
}  // namespace nasperf
