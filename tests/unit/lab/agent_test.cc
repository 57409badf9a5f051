// WaitJob's paging: a finished job's rows come back in pages that each fit the
// message limit, read the way the lab controller reads them (first_report = rows so
// far), and put back together they are every row once, in order. Then a job's
// transport and source checks, and the agent's limits on a real agent.
#include "lab/agent.h"
#include "transport/nfs.h"

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

// A job's transport and login come from a peer: everything is checked, and one
// error names what is wrong.
proto::SenderJob SftpJob() {
  proto::SenderJob job;
  job.set_transport("sftp");
  job.set_ssh_user("root");
  job.set_ssh_host("198.18.1.10");
  job.set_ssh_port(2222);
  job.set_ssh_dir("/mnt/cache");
  job.set_ssh_identity("/root/.ssh/id_ed25519");
  return job;
}

TEST(SetJobTransport, AnSftpJobBecomesAnSshLogin) {
  RunOptions o;
  ASSERT_TRUE(SetJobTransport(SftpJob(), o).ok());
  EXPECT_EQ(o.transport, "sftp");
  EXPECT_EQ(o.ssh.to.user, "root");
  EXPECT_EQ(o.ssh.to.host, "198.18.1.10");
  EXPECT_EQ(o.ssh.to.dir, "/mnt/cache");
  EXPECT_EQ(o.ssh.port, 2222);
  EXPECT_EQ(o.ssh.identity, "/root/.ssh/id_ed25519");
  EXPECT_FALSE(o.ssh.accept_new_host_key);
  EXPECT_FALSE(o.ssh.prompt);
  EXPECT_TRUE(o.ssh.config_file.empty());

  proto::SenderJob native;
  native.set_to("10.0.0.2:7600");
  RunOptions n;
  ASSERT_TRUE(SetJobTransport(native, n).ok()) << "an unset transport is the default, with an agent";
  EXPECT_EQ(n.to.port, 7600);
}

// A job SetJobTransport refuses as invalid, with `want` in its one line.
void ExpectRefused(const proto::SenderJob& job, const std::string& want) {
  RunOptions o;
  absl::Status s = SetJobTransport(job, o);
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << want << ": " << s;
  EXPECT_NE(std::string(s.message()).find(want), std::string::npos) << s;
}

TEST(SetJobTransport, HostileLoginsAreRefused) {
  const auto refused = ExpectRefused;
  proto::SenderJob job = SftpJob();
  job.set_transport("smb");
  refused(job, "smb");
  job = SftpJob();
  job.set_ssh_host(std::string(256, 'a'));
  refused(job, "ssh_host is longer than 255 bytes");
  job = SftpJob();
  job.set_ssh_user("-oProxyCommand=x");
  refused(job, "ssh_user starts with -");
  job = SftpJob();
  job.set_ssh_dir("/a b");
  refused(job, "ssh_dir has a space or a control character");
  job = SftpJob();
  job.set_ssh_dir("relative");
  refused(job, "an absolute ssh_dir");
  job = SftpJob();
  job.set_ssh_port(70000);
  refused(job, "ssh_port 0..65535");
  job = SftpJob();
  job.set_ssh_known_hosts("known_hosts");
  refused(job, "must be absolute paths on the agent's host");
  job = SftpJob();
  job.set_to("10.0.0.2:7600");
  refused(job, "needs an SSH login and no `to`");
  job = SftpJob();
  job.set_transport("native");
  job.set_to("10.0.0.2:7600");
  refused(job, "takes no SSH login");
}

// A job may not name a directory of the agent's own host (`transport = "path"`, issue
// 45): a token holder would pick where the root agent writes. Refused until lab plans
// take it with an allow-list.
TEST(SetJobTransport, AMountedDirectoryJobIsRefused) {
  proto::SenderJob job;
  job.set_transport("path");
  job.set_to("/etc");
  RunOptions o;
  absl::Status s = SetJobTransport(job, o);
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  EXPECT_TRUE(o.share.url.empty());
}

TEST(SetJobTransport, AShareJobBecomesAUrlAndALoginFile) {
  proto::SenderJob job;
  job.set_transport("smb");
  job.set_to("smb://root@198.18.1.10/cache");
  job.set_share_credentials("/root/.smbcred");
  RunOptions o;
  ASSERT_TRUE(SetJobTransport(job, o).ok());
  EXPECT_EQ(o.share.url, "smb://root@198.18.1.10/cache");
  EXPECT_EQ(o.share.smb_credentials, "/root/.smbcred");

  const auto refused = ExpectRefused;
  proto::SenderJob bad = job;
  bad.set_to("smb://nas/x/../etc");
  refused(bad, "are not allowed");
  bad = job;
  bad.set_share_credentials("relative");
  refused(bad, "absolute path");
  bad = job;
  bad.set_share_credentials("/a\nb");
  refused(bad, "control character");
  bad = job;
  bad.set_ssh_host("nas");
  refused(bad, "takes no SSH login");
  bad = job;
  bad.set_transport("nfs");
  bad.set_to("nfs://nas/export");
  refused(bad, "nfs takes no share_credentials");
  bad = SftpJob();
  bad.set_share_credentials("/root/c");
  refused(bad, "sftp takes no share_credentials");
}

// Issue 42, row 9: AUTH_SYS carries whatever ids the client says, so a job's nfs://
// URL may not pick them (the CLI's own --to keeps ?uid=&gid=: ParseNfsUrl takes them).
TEST(SetJobTransport, AnNfsJobCarriesTheAgentsOwnIds) {
  proto::SenderJob job;
  job.set_transport("nfs");
  job.set_to("nfs://198.18.1.10/srv/array");
  RunOptions o;
  ASSERT_TRUE(SetJobTransport(job, o).ok());
  EXPECT_EQ(o.share.url, "nfs://198.18.1.10/srv/array");
  for (const char* to :
       {"nfs://nas/srv/array?uid=1000&gid=100", "nfs://nas/srv/array?uid=0", "nfs://nas/srv/array?version=3&gid=0"}) {
    job.set_to(to);
    absl::Status s = SetJobTransport(job, o);
    EXPECT_TRUE(absl::IsPermissionDenied(s)) << to << ": " << s;
    EXPECT_NE(std::string(s.message()).find("an agent takes no uid= or gid= in a job's nfs:// URL"), std::string::npos)
        << s;
  }
  EXPECT_TRUE(ParseNfsUrl("nfs://nas/srv/array?uid=1000&gid=100").ok());  // the sender's own --to
}

// --allow-source: one refusal line whatever lies outside (no existence oracle), the
// directory named as given or as its realpath, and a descriptor that still reads the
// checked file after its name is swapped for a link to a secret.
TEST(OpenAllowedSource, OpensOnceBeneathTheDirectoryAndRefusesEverythingElseAlike) {
  std::string root = std::string(::testing::TempDir()) + "/allowed-XXXXXX";
  ASSERT_NE(mkdtemp(root.data()), nullptr);
  std::filesystem::create_directories(root + "/real/sub");
  std::filesystem::create_directory_symlink(root + "/real", root + "/share");
  std::ofstream(root + "/real/sub/data.bin") << "checked";
  std::ofstream(root + "/secret") << "secret";
  auto dir = OpenAllowedDirectory(root + "/share/");
  ASSERT_TRUE(dir.ok()) << dir.status();
  const std::vector<AllowedDirectory> allowed = {*dir};

  for (const std::string& name : {root + "/share/sub/data.bin", dir->canonical + "/sub/data.bin"}) {
    auto source = OpenAllowedSource(name, allowed);
    ASSERT_TRUE(source.ok()) << name << ": " << source.status();
    EXPECT_EQ(source->size, 7u);
  }
  auto source = OpenAllowedSource(root + "/share/sub/data.bin", allowed);
  ASSERT_TRUE(source.ok());
  std::filesystem::remove(root + "/real/sub/data.bin");
  std::filesystem::create_symlink(root + "/secret", root + "/real/sub/data.bin");
  char buffer[16];
  ASSERT_EQ(::pread(source->fd->get(), buffer, sizeof buffer, 0), 7);
  EXPECT_EQ(std::string(buffer, 7), "checked");

  for (const std::string& name : {root + "/share/sub/data.bin", root + "/secret", root + "/share/../secret",
                                  "/etc/ssl/../../" + root + "/share/sub/x", "/etc/nonexistent/../../" + root + "/x",
                                  root + "/share/no-such-file", std::string("relative/data.bin")}) {
    auto refused = OpenAllowedSource(name, allowed);
    ASSERT_FALSE(refused.ok()) << name;
    EXPECT_EQ(refused.status().message(), name + " is not a file under this agent's --allow-source directories");
  }
  std::filesystem::remove_all(root);
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
    job.set_to(absl::StrCat("127.0.0.1:", receiver_->control_port()));
    job.set_streams(streams);
    job.set_size(1 << 20);
    job.set_pattern("zero");
    job.set_run_id("agent-limits");
    job.set_label("limits");
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
