// The agent's observations (lab/observations.h): what a peer may name (a directory under
// the target, nothing else), a copy made meanwhile coming back as a row when the run
// stops it, and the limits.
#include "lab/observations.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lab/agent.h"
#include "temp_dir.h"

namespace nasperf {
namespace {

using ::testing::HasSubstr;

class ObservationsTest : public TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    ASSERT_EQ(mkdir((dir_ + "/share").c_str(), 0755), 0);
    ASSERT_EQ(symlink("/etc", (dir_ + "/elsewhere").c_str()), 0);
  }
};

TEST_F(ObservationsTest, APeerNamesADirectoryUnderTheTargetAndNothingElse) {
  Observations none("");
  EXPECT_THAT(std::string(none.Start({}).status().message()), HasSubstr("no target directory"));
  Observations discard("discard");
  EXPECT_FALSE(discard.Start({}).ok());
  Observations o(dir_);
  for (const char* bad : {"../x", "/etc", "share/../..", "share//x", ".", "elsewhere", "missing"}) {
    proto::ObserveRequest r;
    r.set_subdir(bad);
    EXPECT_FALSE(o.Start(r).ok()) << bad;
  }
  proto::ObserveRequest r;
  r.set_subdir("share");
  auto started = o.Start(r);
  ASSERT_TRUE(started.ok()) << started.status();
  EXPECT_EQ(started->dir(), dir_ + "/share");
}

TEST_F(ObservationsTest, ACopyMadeMeanwhileIsARowWhenTheRunStopsIt) {
  Observations o(dir_);
  proto::ObserveRequest r;
  r.set_label("smb-loop");
  r.set_run_id("run-1");
  r.set_interval_s(0.1);
  auto started = o.Start(r);
  ASSERT_TRUE(started.ok()) << started.status();
  // Written and left open: the run's stop says the copy is whole.
  const int fd = open((dir_ + "/copy.bin").c_str(), O_WRONLY | O_CREAT, 0644);
  ASSERT_GE(fd, 0);
  const std::string mib(1 << 20, 'x');
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(write(fd, mib.data(), mib.size()), static_cast<ssize_t>(mib.size()));
    absl::SleepFor(absl::Milliseconds(100));  // paces the writer: a copy that takes a while
  }
  proto::JobState reply;
  ASSERT_TRUE(o.Stop(started->observation_id(), 0, 1 << 20, &reply).ok());
  close(fd);
  ASSERT_EQ(reply.reports_size(), 1) << "the copy was seen";
  const proto::TransferReport& row = reply.reports(0);
  EXPECT_EQ(row.role(), "nas");
  EXPECT_EQ(row.label(), "smb-loop");
  EXPECT_EQ(row.run_id(), "run-1");
  EXPECT_EQ(row.status(), "ok");
  EXPECT_EQ(row.bytes(), 3u << 20);
  EXPECT_THAT(row.observed_detail(), HasSubstr("ended: the observing run ended"));
  // Handed over: forgotten.
  EXPECT_TRUE(absl::IsNotFound(o.Stop(started->observation_id(), 0, 1 << 20, &reply)));
}

TEST_F(ObservationsTest, AtMostFourAtOnce) {
  Observations o(dir_);
  std::vector<std::string> ids;
  for (size_t i = 0; i < kMaxObservations; ++i) {
    auto started = o.Start({});
    ASSERT_TRUE(started.ok());
    ids.push_back(started->observation_id());
  }
  auto refused = o.Start({});
  ASSERT_FALSE(refused.ok());
  EXPECT_TRUE(absl::IsResourceExhausted(refused.status()));
  proto::JobState reply;
  ASSERT_TRUE(o.Stop(ids[0], 0, 1 << 20, &reply).ok());
  EXPECT_TRUE(o.Start({}).ok()) << "a stopped one frees its slot";
  EXPECT_TRUE(absl::IsNotFound(o.Stop("observe-999", 0, 1 << 20, &reply)));
  o.Shutdown();
}

}  // namespace
}  // namespace nasperf
