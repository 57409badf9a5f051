// File and socket helpers that stand between nasperf and hostile input:
// ReadFullBy's one deadline for a header that trickles in, and ReplaceFile never
// writing through a symlink planted beside its target, OpenBeneath reaching no file
// through a link or "..", whichever way it walks.
#include "common/fd.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/status/status.h"
#include "common/clock.h"
#include "gtest/gtest.h"

namespace nasperf {
namespace {

class SocketPair : public testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds_), 0); }
  void TearDown() override {
    ::close(fds_[0]);
    ::close(fds_[1]);
  }
  int fds_[2];
};

TEST_F(SocketPair, ReadFullByGetsEverythingThatComesInTime) {
  ASSERT_EQ(::write(fds_[1], "abc", 3), 3);
  ASSERT_EQ(::write(fds_[1], "defg", 4), 4);
  char buffer[7];
  auto got = ReadFullBy(fds_[0], buffer, sizeof buffer, MonoNanos() + 10'000'000'000, "read header");
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, 7u);
  EXPECT_EQ(std::string(buffer, 7), "abcdefg");
}

TEST_F(SocketPair, ReadFullByEndsAtTheDeadlineNotAtTheNextByte) {
  ASSERT_EQ(::write(fds_[1], "abc", 3), 3);  // then nothing more, ever
  char buffer[16];
  auto got = ReadFullBy(fds_[0], buffer, sizeof buffer, MonoNanos() + 50'000'000, "read header");
  ASSERT_FALSE(got.ok());
  EXPECT_TRUE(absl::IsDeadlineExceeded(got.status())) << got.status();
  EXPECT_NE(got.status().message().find("3 of 16 bytes"), std::string::npos) << got.status();
}

TEST_F(SocketPair, ReadFullByReportsAnEarlyEnd) {
  ASSERT_EQ(::write(fds_[1], "ab", 2), 2);
  ::shutdown(fds_[1], SHUT_WR);
  char buffer[16];
  auto got = ReadFullBy(fds_[0], buffer, sizeof buffer, MonoNanos() + 10'000'000'000, "read header");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*got, 2u);
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(ReplaceFile, NeverWritesThroughASymlinkBesideTheTarget) {
  std::string dir = std::filesystem::temp_directory_path() / "nasperf-replace-XXXXXX";
  ASSERT_NE(mkdtemp(dir.data()), nullptr);
  const std::string victim = dir + "/victim", path = dir + "/ports";
  std::ofstream(victim) << "precious";
  // The names the old code used for its temporary file, pointing at the victim.
  std::filesystem::create_symlink(victim, path + ".tmp");
  std::filesystem::create_symlink(victim, dir + "/.ports.tmp");
  ASSERT_TRUE(ReplaceFile(path, "control=1\n", 0644, true).ok());
  EXPECT_EQ(Slurp(victim), "precious");
  EXPECT_EQ(Slurp(path), "control=1\n");
  struct stat st;
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);
  ASSERT_TRUE(ReplaceFile(path, "secret", 0600, false).ok());
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  int leftovers = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    leftovers += entry.path().filename().string().find(".tmp-") != std::string::npos;
  }
  EXPECT_EQ(leftovers, 0);
  EXPECT_FALSE(ReplaceFile(dir + "/no/such/dir/file", "x", 0644, false).ok());
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace nasperf

namespace nasperf {
namespace {

TEST(AppendLines, HeaderOnceThenRowsAndNeverThroughASymlink) {
  std::string dir = std::string(::testing::TempDir()) + "/append-XXXXXX";
  ASSERT_NE(mkdtemp(dir.data()), nullptr);
  const std::string path = dir + "/runs.csv";
  ASSERT_TRUE(AppendLines(path, "h\n", "1\n").ok());
  ASSERT_TRUE(AppendLines(path, "h\n", "2\n").ok());
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), "h\n1\n2\n");
  const std::string link = dir + "/link.csv";
  ASSERT_EQ(::symlink(path.c_str(), link.c_str()), 0);
  EXPECT_FALSE(AppendLines(link, "h\n", "3\n").ok());
  EXPECT_FALSE(AppendLines(dir + "/missing/runs.csv", "h\n", "1\n").ok());
  ::unlink(link.c_str());
  ::unlink(path.c_str());
  ::rmdir(dir.c_str());
}

class Beneath : public testing::TestWithParam<BeneathWalk> {
 protected:
  void SetUp() override {
    root_ = std::string(::testing::TempDir()) + "/beneath-XXXXXX";
    ASSERT_NE(mkdtemp(root_.data()), nullptr);
    std::filesystem::create_directories(root_ + "/allowed/sub");
    std::filesystem::create_directories(root_ + "/private");
    std::ofstream(root_ + "/allowed/sub/data") << "allowed";
    std::ofstream(root_ + "/private/secret") << "secret";
    std::filesystem::create_symlink(root_ + "/private/secret", root_ + "/allowed/link-out");
    std::filesystem::create_directory_symlink(root_ + "/private", root_ + "/allowed/dir-out");
    ASSERT_EQ(::mkfifo((root_ + "/allowed/fifo").c_str(), 0600), 0);
    dir_ = Fd(::open((root_ + "/allowed").c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    ASSERT_TRUE(dir_.valid());
  }
  void TearDown() override { std::filesystem::remove_all(root_); }
  std::string Read(const Fd& fd) {
    char buffer[64];
    ssize_t n = ::pread(fd.get(), buffer, sizeof buffer, 0);
    return n < 0 ? "" : std::string(buffer, static_cast<size_t>(n));
  }
  std::string root_;
  Fd dir_;
};

TEST_P(Beneath, OpensARegularFileAndKeepsItWhenTheNameIsSwappedForALink) {
  auto fd = OpenBeneath(dir_.get(), "sub/./data", GetParam());
  ASSERT_TRUE(fd.ok()) << fd.status();
  std::filesystem::remove(root_ + "/allowed/sub/data");
  std::filesystem::create_symlink(root_ + "/private/secret", root_ + "/allowed/sub/data");
  EXPECT_EQ(Read(*fd), "allowed");
  EXPECT_FALSE(OpenBeneath(dir_.get(), "sub/data", GetParam()).ok()) << "the swapped-in link was followed";
}

TEST_P(Beneath, RefusesLinksDotDotAbsolutePathsAndAnythingButARegularFile) {
  for (const char* path : {"link-out", "dir-out/secret", "../private/secret", "sub/../../private/secret", "/etc/passwd",
                           "", "sub", "fifo", "no-such-file"}) {
    auto fd = OpenBeneath(dir_.get(), path, GetParam());
    EXPECT_FALSE(fd.ok()) << path << " was opened";
  }
}

// The directory walk (nasperf watch's subdirectories, an observation's subdir): a real
// directory opens, a link to one anywhere on the way or at the end does not, nor a file.
TEST_P(Beneath, OpensADirectoryButNoLinkToOneNorAFile) {
  auto sub = OpenDirectoryBeneath(dir_.get(), "sub", GetParam());
  ASSERT_TRUE(sub.ok()) << sub.status();
  struct stat st {};
  ASSERT_EQ(::fstatat(sub->get(), "data", &st, AT_SYMLINK_NOFOLLOW), 0);
  std::filesystem::create_directory_symlink(root_ + "/private", root_ + "/allowed/sub/deeper-out");
  for (const char* path : {"dir-out", "sub/deeper-out", "link-out", "sub/data", "fifo", "..", "/tmp", "no-such"}) {
    EXPECT_FALSE(OpenDirectoryBeneath(dir_.get(), path, GetParam()).ok()) << path << " was opened";
  }
}

INSTANTIATE_TEST_SUITE_P(BothWalks, Beneath, testing::Values(BeneathWalk::kAuto, BeneathWalk::kComponents));

}  // namespace
}  // namespace nasperf
