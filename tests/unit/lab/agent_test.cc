// WaitJob's paging: a finished job's rows come back in pages that each fit the
// message limit, read the way the lab controller reads them (first_report = rows so
// far), and put back together they are every row once, in order. Then the agent's
// limits on a real agent (a job's checks: tests/unit/transport/run_spec_test.cc).
#include "lab/agent.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/clock.h"
#include "common/policy.h"
#include "gtest/gtest.h"
#include "lab/agent_client.h"
#include "receiver/receiver.h"

namespace nasperf {
namespace {

std::vector<proto::TransferReport> Rows(int n, size_t label_bytes) {
  std::vector<proto::TransferReport> rows(n);
  for (int i = 0; i < n; ++i) {
    rows[i].set_iteration(i + 1);
    rows[i].set_label(std::string(label_bytes, 'x'));
  }
  return rows;
}

TEST(PageOfRows, PagesFitTheLimitAndReassembleEveryRowInOrder) {
  const auto rows = Rows(10, 1000);
  const size_t limit = 3 * rows[0].ByteSizeLong();
  std::vector<proto::TransferReport> got;
  int pages = 0;
  bool done = false;
  while (!done && pages < 20) {
    proto::JobState page;
    done = PageOfRows(rows, static_cast<uint32_t>(got.size()), limit, &page);
    ++pages;
    EXPECT_EQ(page.total_reports(), 10u);
    ASSERT_GT(page.reports_size(), 0);
    EXPECT_LE(page.ByteSizeLong(), limit + 64) << "page " << pages;
    for (const auto& r : page.reports()) got.push_back(r);
  }
  ASSERT_TRUE(done);
  EXPECT_EQ(pages, 4);  // 3 + 3 + 3 + 1
  ASSERT_EQ(got.size(), rows.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i].iteration(), static_cast<int>(i + 1));
}

TEST(PageOfRows, ARowLargerThanAPageStillTravelsAlone) {
  const auto rows = Rows(2, 5000);
  proto::JobState page;
  EXPECT_FALSE(PageOfRows(rows, 0, 100, &page));
  EXPECT_EQ(page.reports_size(), 1);
}

TEST(PageOfRows, AFirstRowPastTheEndIsAnEmptyLastPage) {
  const auto rows = Rows(2, 10);
  proto::JobState page;
  EXPECT_TRUE(PageOfRows(rows, 99, 1000, &page));
  EXPECT_EQ(page.reports_size(), 0);
  EXPECT_EQ(page.total_reports(), 2u);
}

// The limits on a real agent over loopback gRPC (plaintext, sending to its own
// discard receiver), with its times shortened: a job past the limits is refused, a
// Go far ahead is refused, a job never released is aborted, and a finished job
// nobody reads is forgotten. The counting itself: agent_limits_test.cc.
class AgentLimitsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    AgentOptions agent;
    agent.token = "token";
    agent.spool_root = std::string(::testing::TempDir()) + "/agent-limits-spool";
    agent.limits.max_jobs = 2;
    agent.limits.max_streams = 2;
    agent.limits.wait_for_go = absl::Seconds(1);
    agent.limits.unread_lifetime = absl::Seconds(1);
    service_ = AgentService::Create(agent);
    ReceiverOptions options;
    options.target = "discard";
    options.listen = {"127.0.0.1", 0};
    options.token = "token";
    options.min_free = 0;
    options.tls.plaintext = true;
    options.extra_services.push_back(service_->service());
    auto receiver = Receiver::Start(options);
    ASSERT_TRUE(receiver.ok()) << receiver.status();
    receiver_ = std::move(*receiver);
    PlanHost host;
    host.name = "agent";
    host.agent = {"127.0.0.1", receiver_->control_port()};
    agent_ = ConnectAgent(host, "token", nullptr, "");
  }
  void TearDown() override {
    service_->Shutdown();
    if (receiver_) receiver_->Shutdown();
  }

  proto::SenderJob Job(const std::string& id, int streams) const {
    proto::SenderJob job;
    job.set_job_id(id);
    proto::RunSpec& spec = *job.mutable_spec();
    spec.set_to(absl::StrCat("127.0.0.1:", receiver_->control_port()));
    spec.set_streams(streams);
    spec.set_size(1 << 20);
    spec.set_pattern("zero");
    spec.set_run_id("agent-limits");
    spec.set_label("limits");
    job.set_iteration(1);
    return job;
  }
  // Polls StartSender while the agent is full, 20 s at most.
  absl::Status StartWhenRoom(const proto::SenderJob& job) {
    absl::Status s;
    for (absl::Time end = absl::Now() + absl::Seconds(20); absl::Now() < end;) {
      s = agent_->StartSender(job);
      if (!absl::IsResourceExhausted(s)) return s;
      absl::SleepFor(absl::Milliseconds(50));
    }
    return s;
  }

  std::unique_ptr<AgentService> service_;
  std::unique_ptr<Receiver> receiver_;
  std::unique_ptr<AgentConnection> agent_;
};

// A job from a controller older than RunSpec carries none: refused in one line, and
// a job's run is checked as a peer's (run_spec_test.cc has every check).
TEST_F(AgentLimitsTest, AJobWithNoSpecOrABadOneIsRefused) {
  proto::SenderJob job = Job("no-spec", 1);
  job.clear_spec();
  absl::Status refused = agent_->StartSender(job);
  EXPECT_TRUE(absl::IsInvalidArgument(refused)) << refused;
  EXPECT_NE(std::string(refused.message()).find("give a size or a file"), std::string::npos) << refused;
  job = Job("bad-window", 1);
  job.mutable_spec()->set_window_bytes(1);
  refused = agent_->StartSender(job);
  EXPECT_TRUE(absl::IsInvalidArgument(refused)) << refused;
  EXPECT_NE(std::string(refused.message()).find("window_bytes: must be 0 or between"), std::string::npos) << refused;
}

// A job into a directory of the agent's own host (a mounted directory's), from an
// agent started without --allow-path: refused by StartSender and CheckPath alike, in
// one line naming the flag, and nothing is made there.
TEST_F(AgentLimitsTest, AJobIntoALocalDirectoryNeedsAllowPath) {
  const std::string dir = std::string(::testing::TempDir());
  proto::SenderJob job = Job("local-dir", 1);
  job.mutable_spec()->set_transport("path");
  job.mutable_spec()->set_to(dir);
  absl::Status refused = agent_->StartSender(job);
  EXPECT_TRUE(absl::IsPermissionDenied(refused)) << refused;
  EXPECT_NE(std::string(refused.message())
                .find("to: this agent writes in no directory of its own host; start it "
                      "with --allow-path DIR"),
            std::string::npos)
      << refused;
  proto::CheckPathRequest check;
  check.set_local_dir(dir);
  auto checked = agent_->CheckPath(check);
  ASSERT_FALSE(checked.ok());
  EXPECT_NE(std::string(checked.status().message()).find("--allow-path"), std::string::npos) << checked.status();
}

TEST_F(AgentLimitsTest, RefusesPastItsLimitsAbortsAJobNeverReleasedAndForgetsUnreadRows) {
  ASSERT_TRUE(agent_->StartSender(Job("read-never", 2)).ok());
  auto ready = agent_->WaitJob("read-never", /*until_ready=*/true, 10);
  ASSERT_TRUE(ready.ok()) << ready.status();
  ASSERT_EQ(ready->ready(), 2);
  absl::Status full = agent_->StartSender(Job("one-stream-more", 1));
  EXPECT_TRUE(absl::IsResourceExhausted(full)) << full;
  absl::Status far = agent_->Go("read-never", WallNanos() + 3'600'000'000'000);
  EXPECT_TRUE(absl::IsInvalidArgument(far)) << far;
  EXPECT_NE(std::string(far.message()).find("the start instant is 3600.0 s from now"), std::string::npos) << far;
  ASSERT_TRUE(agent_->Go("read-never", WallNanos()).ok());

  // Its streams end, so a new job fits; that one is never released and is aborted.
  ASSERT_TRUE(StartWhenRoom(Job("held", 2)).ok());
  absl::StatusOr<proto::JobState> held;
  for (int i = 0; i < 10 && !(held.ok() && held->done()); ++i) held = agent_->WaitJob("held", false, 2);
  ASSERT_TRUE(held.ok()) << held.status();
  ASSERT_TRUE(held->done()) << "a job never released still runs";
  ASSERT_EQ(held->reports_size(), 2);
  EXPECT_EQ(held->reports(0).status(), "aborted");

  // The first job's rows were never read: forgotten after unread_lifetime, so its id
  // is free again (asked without WaitJob, which would read them).
  absl::Status reused;
  for (absl::Time end = absl::Now() + absl::Seconds(10); absl::Now() < end;) {
    reused = agent_->StartSender(Job("read-never", 1));
    if (!absl::IsAlreadyExists(reused)) break;
    absl::SleepFor(absl::Milliseconds(100));
  }
  EXPECT_TRUE(reused.ok()) << reused;
}

}  // namespace
}  // namespace nasperf
