// nasperf watch on a real directory with real inotify: a copy written in steps is one
// row with its bytes and samples; a file truncated, replaced or removed mid-copy, the
// watched directory vanishing, 10,000 small files and a directory it may not read give
// rows or a line, never a
// crash; the verdict rules and the /proc parsers on captured lines.
#include "watch/copy_watcher.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "temp_dir.h"
#include "watch/server_process.h"

namespace nasperf {
namespace {

using ::testing::HasSubstr;

class RowSink : public ReportSink {
 public:
  absl::Status Submit(const proto::TransferReport& report) override {
    absl::MutexLock lock(&mu_);
    rows_.push_back(report);
    return absl::OkStatus();
  }
  // Waits (at most 20 s) until n rows arrived; the rows so far.
  std::vector<proto::TransferReport> WaitFor(size_t n) {
    absl::MutexLock lock(&mu_);
    auto enough = [&] { return rows_.size() >= n; };
    mu_.AwaitWithTimeout(absl::Condition(&enough), absl::Seconds(20));
    return rows_;
  }

 private:
  absl::Mutex mu_;
  std::vector<proto::TransferReport> rows_;
};

// A watcher on a fresh directory, in a thread, until Stop.
class WatchTest : public TempDirTest {
 protected:
  void TearDown() override {
    Stop();
    TempDirTest::TearDown();
  }
  void Start() {
    WatchOptions o;
    o.dir = dir_;
    o.interval_s = 0.1;
    o.idle_s = 0.5;
    o.min_bytes = 1 << 20;
    o.stop = &stop_;
    o.before_look = before_look_;
    o.line = [this](const std::string& line) {
      absl::MutexLock lock(&mu_);
      lines_.push_back(line);
      if (line.rfind("watching ", 0) == 0) ready_ = true;
    };
    options_ = o;
    thread_ = std::thread([this] { result_ = RunWatch(options_, sink_); });
    absl::MutexLock lock(&mu_);
    ASSERT_TRUE(mu_.AwaitWithTimeout(absl::Condition(&ready_), absl::Seconds(20)));
  }
  void Stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  std::string Lines() {
    absl::MutexLock lock(&mu_);
    std::string all;
    for (const std::string& l : lines_) absl::StrAppend(&all, l, "\n");
    return all;
  }
  // Writes `steps` MiB into FILE, one a step, `pause` apart; leaves it open when asked.
  int WriteSteps(const std::string& file, int steps, absl::Duration pause, bool close_it = true) {
    const int fd = open(file.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    EXPECT_GE(fd, 0);
    std::string mib(1 << 20, 'x');
    for (int i = 0; i < steps; ++i) {
      EXPECT_EQ(write(fd, mib.data(), mib.size()), static_cast<ssize_t>(mib.size()));
      absl::SleepFor(pause);  // paces the writer: a copy that takes a while
    }
    if (close_it) close(fd);
    return fd;
  }

  std::atomic<bool> stop_{false};
  std::function<void()> before_look_;  // set before Start; one that refers to a test's locals needs Stop() in it
  RowSink sink_;
  WatchOptions options_;
  absl::StatusOr<WatchSummary> result_ = absl::UnknownError("not run");
  std::thread thread_;
  absl::Mutex mu_;
  bool ready_ = false;
  std::vector<std::string> lines_;
};

TEST_F(WatchTest, ACopyInStepsIsOneRowWithItsBytesAndSamples) {
  Start();
  ASSERT_EQ(mkdir((dir_ + "/sub").c_str(), 0755), 0);
  WriteSteps(dir_ + "/sub/a.bin", 6, absl::Milliseconds(60));
  const std::vector<proto::TransferReport> rows = sink_.WaitFor(1);
  ASSERT_EQ(rows.size(), 1u) << Lines();
  const proto::TransferReport& r = rows[0];
  EXPECT_EQ(r.role(), "nas");
  EXPECT_EQ(r.transport(), "observed");
  EXPECT_EQ(r.observed_file(), "sub/a.bin");
  EXPECT_EQ(r.status(), "ok");
  EXPECT_EQ(r.bytes(), 6u << 20);
  EXPECT_GT(r.duration_s(), 0.2);  // five pauses of 60 ms between six writes
  EXPECT_THAT(r.observed_detail(), HasSubstr("ended: closed"));
  uint64_t sampled = 0;
  for (const proto::Sample& s : r.samples()) sampled += s.bytes();
  EXPECT_EQ(sampled, r.bytes());
  EXPECT_GE(r.samples_size(), 2);
  // The writer is this test, the watcher's own process: never named as the server.
  EXPECT_EQ(r.peer(), "");
  EXPECT_GT(r.duration_s(), 0.25) << "five 60 ms pauses, timed from the file's creation";
  Stop();
  ASSERT_TRUE(result_.ok()) << result_.status();
  EXPECT_EQ(result_->rows, 1);
}

// A client that creates its file and waits before writing (a lab's barrier, a prompt):
// the wait is not the copy's. Timed from the first write, and the row says so.
TEST_F(WatchTest, AFileCreatedLongBeforeItsFirstWriteIsTimedFromTheWrite) {
  Start();
  const std::string file = dir_ + "/late.bin";
  const int fd = open(file.c_str(), O_WRONLY | O_CREAT, 0644);
  ASSERT_GE(fd, 0);
  const int64_t created_ns = absl::ToUnixNanos(absl::Now());  // at or after the file's birth
  // The client's wait, shorter than the watch's idle end (0.5 s): the case under test,
  // not a synchronization.
  absl::SleepFor(absl::Milliseconds(400));
  WriteSteps(file, 4, absl::Milliseconds(60));
  close(fd);
  const std::vector<proto::TransferReport> rows = sink_.WaitFor(1);
  ASSERT_EQ(rows.size(), 1u) << Lines();
  EXPECT_EQ(rows[0].bytes(), 4u << 20);
  EXPECT_THAT(rows[0].observed_detail(), HasSubstr("before its first write: timed from the first write"));
  // Events, not speed: the copy began after the file was made (timed from creation, it
  // would begin at the file's birth, before this test's clock reading).
  EXPECT_GT(rows[0].started_at_unix_ns(), created_ns) << "the wait before the first write is not the copy's";
}

TEST_F(WatchTest, ACopyThatStopsGrowingEndsAfterTheIdleTime) {
  Start();
  const int fd = WriteSteps(dir_ + "/nfs-like.bin", 3, absl::Milliseconds(30), /*close_it=*/false);
  const std::vector<proto::TransferReport> rows = sink_.WaitFor(1);
  close(fd);
  ASSERT_EQ(rows.size(), 1u) << Lines();
  EXPECT_THAT(rows[0].observed_detail(), HasSubstr("ended: not grown for"));
  EXPECT_EQ(rows[0].bytes(), 3u << 20);
}

TEST_F(WatchTest, TruncatedReplacedAndRemovedMidCopyAreAbortedRows) {
  Start();
  const std::string a = dir_ + "/a.bin", b = dir_ + "/b.bin", c = dir_ + "/c.bin";
  int fd = WriteSteps(a, 2, absl::Milliseconds(150), /*close_it=*/false);
  ASSERT_EQ(ftruncate(fd, 0), 0);
  close(fd);
  fd = WriteSteps(b, 2, absl::Milliseconds(150), /*close_it=*/false);
  const std::string other = dir_ + "/other";
  WriteSteps(other, 0, absl::ZeroDuration());
  ASSERT_EQ(rename(other.c_str(), b.c_str()), 0);
  close(fd);
  fd = WriteSteps(c, 2, absl::Milliseconds(150), /*close_it=*/false);
  ASSERT_EQ(unlink(c.c_str()), 0);
  close(fd);
  const std::vector<proto::TransferReport> rows = sink_.WaitFor(3);
  ASSERT_EQ(rows.size(), 3u) << Lines();
  for (const proto::TransferReport& r : rows) {
    EXPECT_EQ(r.status(), "aborted") << r.observed_file();
    EXPECT_EQ(r.bottleneck(), "") << "no verdict on a copy that did not finish";
  }
  EXPECT_THAT(rows[0].error(), HasSubstr("a.bin shrank mid-copy, from 2097152 to 0 bytes"));
  EXPECT_THAT(rows[1].error(), HasSubstr("b.bin was replaced by another file mid-copy"));
  EXPECT_THAT(rows[2].error(), HasSubstr("c.bin was removed mid-copy"));
}

// A loop's cleanup right after its close (under load the window is wide): the file
// closed and removed after a look read the queue and before it looks at the file. The
// close came first, so the copy is whole, not "removed mid-copy".
TEST_F(WatchTest, ACopyClosedThenRemovedBeforeALookIsWhole) {
  const std::string file = dir_ + "/cleaned.bin";
  std::atomic<int> fd{-1};
  std::atomic<bool> armed{false};
  before_look_ = [&] {
    if (!armed.exchange(false)) return;
    close(fd.load());
    unlink(file.c_str());
  };
  Start();
  fd = WriteSteps(file, 2, absl::Milliseconds(60), /*close_it=*/false);
  armed = true;
  const std::vector<proto::TransferReport> rows = sink_.WaitFor(1);
  ASSERT_EQ(rows.size(), 1u) << Lines();
  EXPECT_EQ(rows[0].status(), "ok") << rows[0].error();
  EXPECT_THAT(rows[0].observed_detail(), HasSubstr("ended: closed"));
  EXPECT_EQ(rows[0].bytes(), 2u << 20);
  EXPECT_FALSE(armed) << "the look never ran the close and the removal";
  Stop();  // the hook refers to this test's locals: no look may run once they are gone
}

TEST_F(WatchTest, TenThousandSmallFilesAreCountedNotRowed) {
  Start();
  for (int i = 0; i < 10000; ++i) {
    FILE* f = std::fopen(absl::StrCat(dir_, "/small", i).c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs("a small file\n", f);
    std::fclose(f);
  }
  WriteSteps(dir_ + "/big.bin", 2, absl::Milliseconds(100));  // rowed after the small ones
  const std::vector<proto::TransferReport> rows = sink_.WaitFor(1);
  // A watch slow enough for the kernel's event queue to overflow (an ASan build) may
  // lose big.bin's events: then it says so. Rows or a clear line, never a crash.
  const bool said_lost = Lines().find("events were lost") != std::string::npos;
  if (!said_lost) {
    ASSERT_EQ(rows.size(), 1u) << Lines();
    EXPECT_EQ(rows[0].observed_file(), "big.bin");
    EXPECT_EQ(rows[0].bytes(), 2u << 20);
  }
  for (const proto::TransferReport& r : rows) EXPECT_EQ(r.observed_file(), "big.bin") << "no small file is rowed";
  Stop();
  ASSERT_TRUE(result_.ok());
  // A queue overflow is said on a line and loses some: never more than were made.
  EXPECT_LE(result_->small, 10000);
  EXPECT_GE(result_->small, 1) << Lines();
}

// Each watched directory is held by a descriptor (so a name swapped for a link is never
// followed), which also keeps the kernel from saying the directory was removed: the watch
// lets go of a directory removed or moved out itself, else they pile up to its limit.
int OpenFds() {
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator("/proc/self/fd")) n += e.path().empty() ? 0 : 1;
  return n;
}

TEST_F(WatchTest, DirectoriesRemovedOrMovedOutAreLetGo) {
  const std::string out = dir_ + ".out";
  ASSERT_EQ(mkdir(out.c_str(), 0755), 0);
  for (int i = 0; i < 100; ++i) ASSERT_EQ(mkdir(absl::StrCat(dir_, "/d", i).c_str(), 0755), 0);
  ASSERT_EQ(mkdir((dir_ + "/d0/below").c_str(), 0755), 0);
  Start();
  const int held = OpenFds();
  for (int i = 0; i < 50; ++i) ASSERT_EQ(rmdir(absl::StrCat(dir_, "/d", i, i == 0 ? "/below" : "").c_str()), 0);
  ASSERT_EQ(rmdir((dir_ + "/d0").c_str()), 0);
  for (int i = 50; i < 100; ++i) {
    ASSERT_EQ(rename(absl::StrCat(dir_, "/d", i).c_str(), absl::StrCat(out, "/d", i).c_str()), 0);
  }
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (OpenFds() > held - 100 && absl::Now() < deadline) absl::SleepFor(absl::Milliseconds(20));
  EXPECT_LE(OpenFds(), held - 100) << "descriptors of directories no longer under DIR still held";
  ASSERT_EQ(mkdir((dir_ + "/new").c_str(), 0755), 0);
  WriteSteps(dir_ + "/new/a.bin", 3, absl::Milliseconds(60));
  const std::vector<proto::TransferReport> rows = sink_.WaitFor(1);
  ASSERT_EQ(rows.size(), 1u) << Lines();
  EXPECT_EQ(rows[0].observed_file(), "new/a.bin");
  std::filesystem::remove_all(out);
}

// A directory moved in brought files that were there already: none is a copy, and a
// user flipping it in and out costs no look at each (issue 42's flip test, under ASan).
TEST_F(WatchTest, ADirectoryMovedInBringsNoCopiesButItsNewWritesAreSeen) {
  const std::string away = dir_ + ".away";
  ASSERT_EQ(mkdir(away.c_str(), 0755), 0);
  for (int i = 0; i < 20; ++i) WriteSteps(absl::StrCat(away, "/old", i, ".bin"), 1, absl::ZeroDuration());
  Start();
  ASSERT_EQ(rename(away.c_str(), (dir_ + "/in").c_str()), 0);
  WriteSteps(dir_ + "/in/new.bin", 3, absl::Milliseconds(60));
  const std::vector<proto::TransferReport> rows = sink_.WaitFor(1);
  Stop();
  ASSERT_EQ(rows.size(), 1u) << Lines();
  EXPECT_EQ(rows[0].observed_file(), "in/new.bin");
  ASSERT_TRUE(result_.ok());
  EXPECT_EQ(result_->rows, 1) << Lines();
  EXPECT_EQ(result_->small, 0) << "files moved in with their directory were counted as copies";
}

TEST_F(WatchTest, AVanishingDirectoryAbortsTheCopyAndSaysSo) {
  Start();
  const int fd = WriteSteps(dir_ + "/a.bin", 2, absl::Milliseconds(150), /*close_it=*/false);
  ASSERT_EQ(std::system(absl::StrCat("rm -rf ", dir_).c_str()), 0);
  const std::vector<proto::TransferReport> rows = sink_.WaitFor(1);
  close(fd);
  thread_.join();
  ASSERT_EQ(rows.size(), 1u) << Lines();
  EXPECT_EQ(rows[0].status(), "aborted");
  ASSERT_FALSE(result_.ok());
  EXPECT_THAT(std::string(result_.status().message()), HasSubstr("vanished: nothing left to watch"));
}

TEST(WatchStart, ADirectoryThatIsNotThereOrNotADirectoryIsOneLine) {
  RowSink sink;
  WatchOptions o;
  o.dir = "/nonexistent/nasperf-watch";
  auto missing = RunWatch(o, sink);
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(std::string(missing.status().message()), HasSubstr("/nonexistent/nasperf-watch"));
  o.dir = "/proc/self/status";
  auto file = RunWatch(o, sink);
  ASSERT_FALSE(file.ok());
  EXPECT_THAT(std::string(file.status().message()), HasSubstr("is not a directory"));
}

// nasperf runs as root on a NAS, but a watch started as another user meets directories
// it may not read: one error naming the directory.
TEST(WatchStart, ADirectoryItMayNotReadIsOneLine) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root (to become another user)";
  char name[] = "/tmp/nasperf-private-XXXXXX";
  ASSERT_NE(mkdtemp(name), nullptr);
  ASSERT_EQ(chmod(name, 0700), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (setgid(65534) != 0 || setuid(65534) != 0) _exit(3);
    RowSink sink;
    WatchOptions o;
    o.dir = absl::StrCat(name, "/sub");
    auto r = RunWatch(o, sink);
    const bool said = !r.ok() && std::string(r.status().message()).find(name) != std::string::npos &&
                      absl::IsPermissionDenied(r.status());
    _exit(said ? 0 : 4);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  rmdir(name);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "3: could not become nobody; 4: not a permission error naming the directory";
}

TEST(ObservedVerdict, NamesThePartThatWasBusyInItsOrder) {
  std::string why;
  EXPECT_EQ(ObservedVerdict({97, 10, 0, 0}, &why), "network");
  EXPECT_THAT(why, HasSubstr("the NIC took 97 % of the link"));
  EXPECT_EQ(ObservedVerdict({60, 99, 0, 0}, &why), "server-cpu");
  EXPECT_EQ(ObservedVerdict({60, 10, 61, 4}, &why), "disk");
  EXPECT_EQ(ObservedVerdict({60, 10, 0, 95}, &why), "disk");
  EXPECT_THAT(why, HasSubstr("busiest disk under the directory was 95 % busy"));
  EXPECT_EQ(ObservedVerdict({60, 10, 5, 10}, &why), "client");
  // Work that hops between threads: none busy all the time, but one always on a CPU.
  EXPECT_EQ(ObservedVerdict({30, 55, 0, 5, 0, 85}, &why), "server-cpu");
  EXPECT_THAT(why, HasSubstr("on or queued for a CPU at 85 % of the looks"));
  EXPECT_EQ(ObservedVerdict({30, 55, 0, 5, 0, 60}, &why), "client");
  // A nearly full link and a busy server: the one nearer its ceiling (CI: ganesha's thread
  // at 91 % kept a 1 Gb/s link 95 % full, at the other copies' rate).
  EXPECT_EQ(ObservedVerdict({94.8, 91.1, 0, 5}, &why), "network");
  EXPECT_THAT(why, HasSubstr("nearer its ceiling than the serving process's CPU (91 %)"));
  EXPECT_EQ(ObservedVerdict({91, 99, 0, 5}, &why), "server-cpu");
  EXPECT_EQ(ObservedVerdict({85, 91, 0, 5}, &why), "server-cpu") << "a link under 90 % is not nearly full";
  EXPECT_EQ(ObservedVerdict({92, 20, 0, 5, 0, 88}, &why), "network");
  // A nearly full link and every other part idle is the link, not the client (CI: smbd's
  // copy at NIC 94 % of the link, smbclient's own figure 96 % of the goodput, judged client).
  EXPECT_EQ(ObservedVerdict({94, 32, 0, 1, 0, 62}, &why), "network");
  EXPECT_THAT(why, HasSubstr("no other part of the NAS was busy"));
  EXPECT_EQ(ObservedVerdict({89, 32, 0, 1, 0, 62}, &why), "client");
  // Into a tmpfs a wait in the kernel is a lock or memory (two smbds writing one file on a
  // loaded CPU: blocked at 21 % of looks), not a disk: the NAS's parts were not the limit.
  EXPECT_EQ(ObservedVerdict({70, 37, 21, -1, 0, 61}, &why), "disk");
  EXPECT_EQ(ObservedVerdict({70, 37, 21, -1, 0, 61, -1, true}, &why), "client");
  EXPECT_THAT(why, HasSubstr("in memory (tmpfs): no disk"));
  // A server never seen might have been the limit: no client verdict without it.
  EXPECT_EQ(ObservedVerdict({60, -1, -1, 10}, &why), "");
  EXPECT_THAT(why, HasSubstr("no verdict"));
}

TEST(ServerProcess, ParsesThreadStateAndSchedstat) {
  EXPECT_EQ(ParseThreadState("1234 (smbd: client [1) D 1 2 3"), 'D');
  EXPECT_EQ(ParseThreadState("1234 (a) b) S 1"), 'S');
  EXPECT_EQ(ParseThreadState("1234 (no end"), 0);
  EXPECT_EQ(ParseThreadState("1234 (x)"), 0);
  EXPECT_EQ(ParseSchedstatDemand("1000 250 7\n"), 1250);
  EXPECT_EQ(ParseSchedstatDemand("-5 3 1"), std::nullopt);
  EXPECT_EQ(ParseSchedstatDemand("12"), std::nullopt);
  EXPECT_EQ(ParseSchedstatDemand("4611686018427387904 4611686018427387904 1"), std::nullopt);
}

TEST(ServerProcess, ReadsWhetherADescriptorWrites) {
  EXPECT_TRUE(FdInfoWrites("pos:\t0\nflags:\t0100001\nmnt_id:\t25\n"));  // O_WRONLY | O_LARGEFILE
  EXPECT_TRUE(FdInfoWrites("pos:\t0\nflags:\t02100002\n"));              // O_RDWR
  EXPECT_FALSE(FdInfoWrites("pos:\t0\nflags:\t0104000\n"));              // O_RDONLY | O_NONBLOCK
  EXPECT_FALSE(FdInfoWrites("pos:\t0\n"));
  EXPECT_FALSE(FdInfoWrites("flags:\tnot-octal\n"));
}

// A server in a mount namespace of its own (nfs-ganesha, a container's smbd) holds the
// file under the path where it bound the share: found by device and inode.
TEST(ServerProcess, FindsAWriterThatSeesTheFileUnderAnotherDirectory) {
  char root[] = "/tmp/nasperf-bind-XXXXXX";
  ASSERT_NE(mkdtemp(root), nullptr);
  const std::string theirs = std::string(root) + "/theirs", ours = std::string(root) + "/ours";
  ASSERT_EQ(mkdir(theirs.c_str(), 0700), 0);
  ASSERT_EQ(mkdir(ours.c_str(), 0700), 0);
  const int fd = open((theirs + "/copy.bin").c_str(), O_WRONLY | O_CREAT, 0600);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(link((theirs + "/copy.bin").c_str(), (ours + "/copy.bin").c_str()), 0);  // the same inode
  ASSERT_EQ(link((theirs + "/copy.bin").c_str(), (ours + "/other.bin").c_str()), 0);
  std::optional<Writer> w = FindWriter(ours + "/copy.bin");
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->pids, std::vector<int>{getpid()});
  EXPECT_FALSE(FindWriter(ours + "/other.bin").has_value()) << "only a link with the file's own name is looked at";
  close(fd);
  std::filesystem::remove_all(root);
}

TEST(ServerProcess, FindsThisProcessByTheFileItHoldsOpen) {
  char name[] = "/tmp/nasperf-writer-XXXXXX";
  const int fd = mkstemp(name);
  ASSERT_GE(fd, 0);
  std::optional<Writer> w = FindWriter(name);
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->pids, std::vector<int>{getpid()});
  EXPECT_FALSE(w->kernel_nfsd);
  ServerProcess server(*w);
  server.Look(1'000'000'000);
  server.Look(2'000'000'000);
  EXPECT_EQ(server.Figures().looks, 2);
  EXPECT_EQ(server.Figures().name, absl::StrCat(w->comm, "[", getpid(), "]"));
  EXPECT_FALSE(FindWriter(name, "/proc", getpid()).has_value()) << "the watcher never names itself";
  const int reader = open(name, O_RDONLY);
  close(fd);
  EXPECT_FALSE(FindWriter(name).has_value()) << "a reader is not the copy's writer";
  close(reader);
  unlink(name);
  EXPECT_FALSE(FindWriter(name).has_value());
}

// A client writing one file over several connections (SMB channels) meets one smbd per
// connection: every process of the first's name holding it open to write is watched.
TEST(ServerProcess, FindsEveryProcessWritingTheFile) {
  char name[] = "/tmp/nasperf-writers-XXXXXX";
  const int fd = mkstemp(name);
  ASSERT_GE(fd, 0);
  int opened[2], release[2];
  ASSERT_EQ(pipe(opened), 0);
  ASSERT_EQ(pipe(release), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {  // a second writer of the same name (comm), as a second smbd is
    close(opened[0]);
    close(release[1]);
    const int own = open(name, O_WRONLY);
    char byte = own >= 0 ? 'y' : 'n';
    (void)!write(opened[1], &byte, 1);
    (void)!read(release[0], &byte, 1);  // until the parent closes its end
    _exit(0);
  }
  close(opened[1]);
  close(release[0]);
  struct Reaper {  // the child never outlives the test, even when an assertion ends it early
    pid_t pid;
    ~Reaper() {
      if (pid <= 0) return;
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
  } reaper{child};
  char byte = 0;
  ASSERT_EQ(read(opened[0], &byte, 1), 1);
  ASSERT_EQ(byte, 'y');
  std::optional<Writer> w = FindWriter(name);
  ASSERT_TRUE(w.has_value());
  std::vector<int> pids = w->pids;
  std::sort(pids.begin(), pids.end());
  EXPECT_EQ(pids, (std::vector<int>{std::min<int>(getpid(), child), std::max<int>(getpid(), child)}));
  EXPECT_EQ(ServerProcess(*w).Figures().name, absl::StrCat(w->comm, "[", w->pids[0], "+", w->pids[1], "]"));
  close(release[1]);
  ASSERT_EQ(waitpid(child, nullptr, 0), child);
  reaper.pid = 0;
  EXPECT_EQ(FindWriter(name)->pids, std::vector<int>{getpid()}) << "the second writer has gone";
  close(opened[0]);
  close(fd);
  unlink(name);
}

// A server in a container or a service with a CPU limit: its cgroup's quota, found
// through /proc/PID/cgroup, and the share of periods it was throttled in.
TEST(ServerProcess, ReadsTheThrottlingOfItsCgroupsCpuQuota) {
  char root[] = "/tmp/nasperf-cg-XXXXXX";
  ASSERT_NE(mkdtemp(root), nullptr);
  const std::string base = root, proc = base + "/proc", cg = base + "/cg";
  auto write = [&](const std::string& path, const std::string& text) {
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    std::ofstream(path) << text;
  };
  write(cg + "/cpu/docker/abc/cpu.stat", "nr_periods 100\nnr_throttled 10\nthrottled_time 5\n");
  // The parsers' own cases: tests/unit/measure/cpu_quota_test.cc.

  write(proc + "/300/cgroup", "4:cpu,cpuacct:/docker/abc\n");
  write(proc + "/300/task/300/stat", "300 (smbd) R 1 0 0 0 -1 4194560");
  write(proc + "/300/task/300/schedstat", "0 0 1\n");
  ServerProcess server(Writer{{300}, "smbd", false}, proc, cg);
  server.Look(1'000'000'000);
  write(cg + "/cpu/docker/abc/cpu.stat", "nr_periods 110\nnr_throttled 19\n");  // 9 of 10 throttled
  server.Look(2'000'000'000);
  EXPECT_NEAR(server.Figures().quota_throttled_pct, 90, 1e-9);
  EXPECT_NEAR(server.Figures().running_pct, 100, 1e-9);
  std::string why;
  EXPECT_EQ(ObservedVerdict({30, 20, 0, 5, 0, 50, 90}, &why), "server-cpu");
  EXPECT_THAT(why, HasSubstr("CPU quota"));
  std::filesystem::remove_all(base);
}

// /proc/fs/nfs/exports as a kernel 6.1 prints it, with a blank in a path (\040).
constexpr char kExports[] =
    "# Version 1.1\n"
    "# Path Client(Flags) # IPs\n"
    "/srv/pool\t192.168.1.0/24(rw,root_squash,sync,wdelay,no_subtree_check,uuid=1:2:3:4,sec=1)\n"
    "/srv/with\\040blank\t*(ro,root_squash,sync,wdelay,sec=1)\n";

TEST(KernelNfsd, ReadsTheExportsAndTellsAKernelThread) {
  EXPECT_EQ(ParseNfsExports(kExports), (std::vector<std::string>{"/srv/pool", "/srv/with blank"}));
  EXPECT_TRUE(ParseNfsExports("").empty());
  EXPECT_TRUE(ParseNfsExports("srv/relative\t*(rw)\n\\bad").empty());
  // An nfsd thread's stat (flags 0x208040: PF_KTHREAD) and a shell's (0x400100).
  EXPECT_TRUE(StatIsKernelThread("812 (nfsd) S 2 0 0 0 -1 2129984 0 0 0 0 0 97 0 0 20 0 1 0 420"));
  EXPECT_FALSE(StatIsKernelThread("900 (nfsd) S 1 900 900 0 -1 4194560 120 0 0 0 1 0 0 0 20 0 1 0 500"));
  EXPECT_FALSE(StatIsKernelThread("900 (x) S 1"));
  EXPECT_FALSE(StatIsKernelThread("no paren"));
}

// A kernel NFS server holds no file open: the watch finds its nfsd threads through the
// exports instead, never a process that merely calls itself nfsd, and figures them.
TEST(KernelNfsd, FoundByTheExportsAndFiguredAcrossItsThreads) {
  char root[] = "/tmp/nasperf-proc-XXXXXX";
  ASSERT_NE(mkdtemp(root), nullptr);
  const std::string proc = root;
  auto write = [&](const std::string& rel, const std::string& text) {
    std::filesystem::create_directories(std::filesystem::path(proc + "/" + rel).parent_path());
    std::ofstream(proc + "/" + rel) << text;
  };
  write("fs/nfs/exports", kExports);
  auto thread = [&](int pid, const std::string& comm, unsigned flags, int64_t on_cpu_ns) {
    write(absl::StrCat(pid, "/comm"), comm + "\n");
    write(absl::StrCat(pid, "/stat"), absl::StrCat(pid, " (", comm, ") S 2 0 0 0 -1 ", flags, " 0 0"));
    write(absl::StrCat(pid, "/task/", pid, "/stat"), absl::StrCat(pid, " (", comm, ") S 2 0 0 0 -1 ", flags));
    write(absl::StrCat(pid, "/task/", pid, "/schedstat"), absl::StrCat(on_cpu_ns, " 0 10\n"));
  };
  thread(100, "nfsd", 2129984, 0);
  thread(101, "nfsd", 2129984, 0);
  thread(200, "nfsd", 4194560, 0);  // a user process named nfsd: not the kernel's server
  EXPECT_FALSE(FindKernelNfsd("/srv/other/file", proc).has_value()) << "not under an export";
  EXPECT_FALSE(FindKernelNfsd("/srv/poolside/file", proc).has_value()) << "a prefix is not a parent";
  std::optional<Writer> nfsd = FindKernelNfsd("/srv/pool/media/big.bin", proc);
  ASSERT_TRUE(nfsd.has_value());
  EXPECT_TRUE(nfsd->kernel_nfsd);
  std::vector<int> pids = nfsd->pids;
  std::sort(pids.begin(), pids.end());
  EXPECT_EQ(pids, (std::vector<int>{100, 101}));

  ServerProcess server(*nfsd, proc);
  server.Look(1'000'000'000);
  write("101/task/101/schedstat", "950000000 0 10\n");  // 95 % of the next second on a CPU
  write("100/task/100/schedstat", "100000000 0 10\n");
  server.Look(2'000'000'000);
  const ServerFigures f = server.Figures();
  EXPECT_EQ(f.name, "nfsd (kernel, 2 threads)");
  EXPECT_TRUE(f.kernel_nfsd);
  EXPECT_NEAR(f.busiest_thread_pct, 95, 1e-9);
  EXPECT_EQ(f.looks, 2);
  // The looks after the copy's last write (the watch waiting to be sure it ended) add
  // idle time that is not the copy's: they count for the blocked share, not the CPU's.
  server.Look(3'000'000'000);
  EXPECT_NEAR(server.Figures(/*end_ns=*/1'500'000'000).busiest_thread_pct, 95, 1e-9);
  EXPECT_EQ(server.Figures(1'500'000'000).looks, 2);
  EXPECT_NEAR(server.Figures().busiest_thread_pct, 95.0 / 2, 1e-9);  // to the last look: an idle second more
  EXPECT_EQ(server.Figures().looks, 3);
  std::filesystem::remove_all(proc);
}

}  // namespace
}  // namespace nasperf
