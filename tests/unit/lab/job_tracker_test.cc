// The lab's job tracker against fake agents, without processes: every planned stream
// ends with a sender row however its agent behaves (refuses, reports, dies mid-run,
// forgets the job), the barrier is released once for all jobs at one instant, and an
// interrupted run's lost rows say "aborted".
#include "lab/job_tracker.h"

#include <deque>
#include <map>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace nasperf {
namespace {

using ::testing::ElementsAre;

proto::TransferReport Row(const proto::SenderJob& job, int stream, const std::string& role, double mb_per_s) {
  proto::TransferReport r;
  r.set_run_id(job.spec().run_id());
  r.set_stream(stream);
  r.set_role(role);
  r.set_status("ok");
  r.set_mb_per_s(mb_per_s);
  return r;
}

// Answers as scripted: each WaitJob call takes the next answer; when the script
// runs out, the job is done with one ok sender and receiver row per stream.
class FakeAgent : public AgentConnection {
 public:
  absl::Status start_status = absl::OkStatus();
  std::deque<absl::StatusOr<proto::JobState>> answers;
  std::vector<proto::SenderJob> started;
  std::map<std::string, int64_t> released;  // job id → start_at
  int aborts = 0;
  bool never_ready = false;  // the barrier never fills
  int barrier_polls = 0;

  absl::Status StartSender(const proto::SenderJob& job) override {
    if (!start_status.ok()) return start_status;
    started.push_back(job);
    return absl::OkStatus();
  }
  absl::Status Go(const std::string& job_id, int64_t start_at) override {
    released[job_id] = start_at;
    return absl::OkStatus();
  }
  absl::StatusOr<proto::JobState> WaitJob(const std::string& job_id, bool until_ready, double) override {
    if (!answers.empty()) {
      auto answer = answers.front();
      answers.pop_front();
      return answer;
    }
    const proto::SenderJob& job = Job(job_id);
    proto::JobState state;
    state.set_streams(job.spec().streams());
    state.set_ready(never_ready ? 0 : job.spec().streams());
    if (until_ready && released.count(job_id) == 0) {
      ++barrier_polls;
      return state;
    }
    state.set_done(true);
    for (int s = 0; s < job.spec().streams(); ++s) {
      *state.add_reports() = Row(job, job.first_stream() + s, "sender", 100);
      *state.add_reports() = Row(job, job.first_stream() + s, "receiver", 90);
    }
    state.set_total_reports(state.reports_size());
    return state;
  }
  absl::Status Abort(const std::string&) override {
    ++aborts;
    return absl::OkStatus();
  }
  absl::StatusOr<proto::CheckPathReply> CheckPath(const proto::CheckPathRequest&) override {
    return absl::UnimplementedError("not used");
  }

 private:
  const proto::SenderJob& Job(const std::string& id) {
    for (const auto& job : started) {
      if (job.job_id() == id) return job;
    }
    ADD_FAILURE() << "WaitJob for a job never started: " << id;
    return started.front();
  }
};

class JobTrackerTest : public ::testing::Test {
 protected:
  LabJob Job(FakeAgent* agent, const std::string& id, int first_stream, int streams) {
    transfers_.push_back(std::make_unique<PlanTransfer>());
    PlanTransfer& t = *transfers_.back();
    t.from = "client";
    t.to = "nas";
    t.streams = streams;
    LabJob job;
    job.transfer = &t;
    job.agent = agent;
    job.job.set_job_id(id);
    job.job.mutable_spec()->set_run_id("run1");
    job.job.mutable_spec()->set_label("cache");
    job.job.set_iteration(2);
    job.job.set_host_name("client");
    job.job.mutable_spec()->set_to("10.0.0.2:7600");
    job.job.mutable_spec()->set_write_mode("buffered");
    job.job.set_first_stream(first_stream);
    job.job.mutable_spec()->set_streams(streams);
    return job;
  }
  JobTrackerOptions Fast() {
    JobTrackerOptions o;
    o.retry_pause = absl::Milliseconds(1);
    o.wait_per_call = absl::ZeroDuration();
    o.ready_timeout = absl::Seconds(5);
    return o;
  }
  std::vector<int> Streams(const std::vector<proto::TransferReport>& rows, const std::string& role) {
    std::vector<int> streams;
    for (const auto& r : rows) {
      if (r.role() == role) streams.push_back(r.stream());
    }
    return streams;
  }
  std::vector<std::unique_ptr<PlanTransfer>> transfers_;
};

TEST_F(JobTrackerTest, JobsThatFinishBringTheirAgentsRowsAndAreReleasedTogether) {
  FakeAgent a, b;
  std::vector<LabJob> jobs;
  jobs.push_back(Job(&a, "run1-2-t1", 0, 2));
  jobs.push_back(Job(&b, "run1-2-t2", 2, 1));
  jobs = RunJobs(std::move(jobs), Fast());
  EXPECT_THAT(Streams(jobs[0].agent_rows, "sender"), ElementsAre(0, 1));
  EXPECT_THAT(Streams(jobs[1].agent_rows, "receiver"), ElementsAre(2));
  EXPECT_TRUE(jobs[0].lost_rows.empty());
  EXPECT_TRUE(jobs[1].lost_rows.empty());
  ASSERT_EQ(a.released.size(), 1u);
  ASSERT_EQ(b.released.size(), 1u);
  EXPECT_EQ(a.released.begin()->second, b.released.begin()->second) << "one instant for every job";
}

TEST_F(JobTrackerTest, ARefusedStartGetsAFailedRowPerStreamAndIsNeverReleased) {
  FakeAgent a;
  a.start_status = absl::UnavailableError("host client: agent unreachable");
  std::vector<LabJob> jobs;
  jobs.push_back(Job(&a, "run1-2-t1", 4, 3));
  jobs = RunJobs(std::move(jobs), Fast());
  EXPECT_TRUE(a.released.empty());
  ASSERT_THAT(Streams(jobs[0].lost_rows, "sender"), ElementsAre(4, 5, 6));
  const proto::TransferReport& row = jobs[0].lost_rows[0];
  EXPECT_EQ(row.status(), "failed");
  EXPECT_EQ(row.error(), "host client: agent unreachable");
  EXPECT_EQ(row.run_id(), "run1");
  EXPECT_EQ(row.label(), "cache");
  EXPECT_EQ(row.iteration(), 2);
  EXPECT_EQ(row.host(), "client");
  EXPECT_EQ(row.peer(), "10.0.0.2:7600");
  EXPECT_EQ(row.transport(), "native");
  EXPECT_EQ(row.write_mode(), "buffered");
}

// A job over SSH has no receiver address: its lost row names the job's transport
// and the login's host and port.
TEST(LostRowTest, NamesTheJobsTransportAndLogin) {
  proto::SenderJob job;
  job.mutable_spec()->set_transport("sftp");
  job.mutable_spec()->set_to("root@198.18.1.10:2222:/mnt/cache");
  proto::TransferReport row = LostRow(job, 3, "failed", "agent unreachable");
  EXPECT_EQ(row.transport(), "sftp");
  EXPECT_EQ(row.peer(), "198.18.1.10:2222");
  job.mutable_spec()->set_to("198.18.1.10:/mnt/cache");
  EXPECT_EQ(LostRow(job, 3, "failed", "").peer(), "198.18.1.10");
  job.mutable_spec()->set_transport("nfs");
  job.mutable_spec()->set_to("nfs://198.18.1.11/srv/array");
  EXPECT_EQ(LostRow(job, 3, "failed", "").peer(), "198.18.1.11") << "a share's peer is its host";
  EXPECT_EQ(LostRow(proto::SenderJob(), 0, "failed", "").transport(), "native") << "an unset word is the default";
}

TEST_F(JobTrackerTest, AnAgentThatStopsAnsweringMidRunLosesOnlyTheStreamsItDidNotReport) {
  FakeAgent a;
  proto::JobState ready;
  ready.set_streams(2);
  ready.set_ready(2);
  a.answers.push_back(ready);  // the barrier
  for (int i = 0; i < 3; ++i) a.answers.push_back(absl::UnavailableError("connection refused"));
  std::vector<LabJob> jobs;
  jobs.push_back(Job(&a, "run1-2-t1", 0, 2));
  jobs = RunJobs(std::move(jobs), Fast());
  EXPECT_EQ(a.released.size(), 1u);
  EXPECT_TRUE(jobs[0].agent_rows.empty());
  ASSERT_THAT(Streams(jobs[0].lost_rows, "sender"), ElementsAre(0, 1));
  EXPECT_EQ(jobs[0].lost_rows[0].status(), "failed");
  EXPECT_THAT(jobs[0].lost_rows[0].error(),
              ::testing::HasSubstr("agent stopped answering mid-run: connection refused"));
}

TEST_F(JobTrackerTest, TwoFailedCallsInARowAreNotYetDeath) {
  FakeAgent a;
  a.answers.push_back(absl::UnavailableError("blip"));
  a.answers.push_back(absl::UnavailableError("blip"));
  std::vector<LabJob> jobs;
  jobs.push_back(Job(&a, "run1-2-t1", 0, 1));
  jobs = RunJobs(std::move(jobs), Fast());
  EXPECT_TRUE(jobs[0].lost_rows.empty());
  EXPECT_THAT(Streams(jobs[0].agent_rows, "sender"), ElementsAre(0));
}

TEST_F(JobTrackerTest, AJobTheAgentForgotIsLostAtOnce) {
  FakeAgent a;
  proto::JobState ready;
  ready.set_streams(1);
  ready.set_ready(1);
  a.answers.push_back(ready);
  a.answers.push_back(absl::NotFoundError("no such job"));
  std::vector<LabJob> jobs;
  jobs.push_back(Job(&a, "run1-2-t1", 0, 1));
  jobs = RunJobs(std::move(jobs), Fast());
  ASSERT_EQ(jobs[0].lost_rows.size(), 1u);
  EXPECT_TRUE(a.answers.empty());
}

TEST_F(JobTrackerTest, AJobThatEndedWithAnErrorKeepsItsRowsAndLosesTheRest) {
  FakeAgent a;
  proto::JobState done;
  done.set_done(true);
  done.set_streams(2);
  done.set_error("receiver refused: not enough free space");
  proto::SenderJob job_for_row;
  job_for_row.mutable_spec()->set_run_id("run1");
  *done.add_reports() = Row(job_for_row, 0, "sender", 50);
  done.set_total_reports(1);
  a.answers.push_back(done);
  std::vector<LabJob> jobs;
  jobs.push_back(Job(&a, "run1-2-t1", 0, 2));
  jobs = RunJobs(std::move(jobs), Fast());
  EXPECT_TRUE(a.released.empty()) << "a job done before the barrier is not released";
  EXPECT_THAT(Streams(jobs[0].agent_rows, "sender"), ElementsAre(0));
  ASSERT_THAT(Streams(jobs[0].lost_rows, "sender"), ElementsAre(1));
  EXPECT_EQ(jobs[0].lost_rows[0].error(), "receiver refused: not enough free space");
}

TEST_F(JobTrackerTest, AnInterruptedRunsLostRowsSayAborted) {
  FakeAgent a;
  proto::JobState ready;
  ready.set_streams(1);
  ready.set_ready(1);
  a.answers.push_back(ready);
  a.answers.push_back(absl::NotFoundError("aborted and forgotten"));
  JobTrackerOptions o = Fast();
  int polls = 0;
  o.interrupted = [&polls] { return ++polls > 1; };  // Ctrl-C after the barrier
  std::vector<LabJob> jobs;
  jobs.push_back(Job(&a, "run1-2-t1", 0, 1));
  jobs = RunJobs(std::move(jobs), o);
  ASSERT_EQ(jobs[0].lost_rows.size(), 1u);
  EXPECT_EQ(jobs[0].lost_rows[0].status(), "aborted");
}

TEST_F(JobTrackerTest, AStreamThatNeverGetsReadyIsReleasedAfterTheTimeout) {
  FakeAgent a;
  a.never_ready = true;
  JobTrackerOptions o = Fast();
  o.ready_timeout = absl::Milliseconds(50);
  std::vector<LabJob> jobs;
  jobs.push_back(Job(&a, "run1-2-t1", 0, 1));
  jobs = RunJobs(std::move(jobs), o);
  EXPECT_EQ(a.released.size(), 1u);
  EXPECT_GE(a.barrier_polls, 1);
  EXPECT_THAT(Streams(jobs[0].agent_rows, "sender"), ElementsAre(0));
}

}  // namespace
}  // namespace nasperf
