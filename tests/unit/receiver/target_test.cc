#include "receiver/target.h"

#include <errno.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

#include "gtest/gtest.h"

namespace nasperf {
namespace {

std::string TempDir(const char* base = "/var/tmp") {
  std::string pattern = std::string(base) + "/nasperf-target-XXXXXX";
  char* made = mkdtemp(pattern.data());
  return made ? std::string(made) : std::string();
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(Target, CreatesOnlyNewFilesAndNeverFollowsSymlinks) {
  std::string dir = TempDir();
  ASSERT_FALSE(dir.empty());
  std::string outside = dir + "-outside";
  { std::ofstream(outside) << "precious"; }
  ASSERT_EQ(symlink(outside.c_str(), (dir + "/nasperf-r-1-0.dat").c_str()), 0);

  auto target = Target::Open(dir);
  ASSERT_TRUE(target.ok()) << target.status();
  std::string name;
  auto writer = (*target)->Create("nasperf-r-1-0.dat", WriteMode::kBuffered, SyncPolicy{}, &name);
  ASSERT_TRUE(writer.ok()) << writer.status();
  EXPECT_EQ(name, "nasperf-r-1-0.1.dat");
  std::string data = "hello";
  ASSERT_TRUE((*writer)->Write(reinterpret_cast<const uint8_t*>(data.data()), data.size(), true).ok());
  ASSERT_TRUE((*writer)->Finish().ok());
  EXPECT_EQ(ReadAll(outside), "precious");
  EXPECT_EQ(ReadAll(dir + "/" + name), "hello");

  for (const char* bad : {"../escape.dat", "a/b.dat", ".hidden", ""}) {
    std::string ignored;
    EXPECT_FALSE((*target)->Create(bad, WriteMode::kBuffered, SyncPolicy{}, &ignored).ok()) << bad;
  }
  ASSERT_TRUE((*target)->Remove(name).ok());
  EXPECT_NE(access((dir + "/" + name).c_str(), F_OK), 0);
  std::filesystem::remove_all(dir);
  std::filesystem::remove_all(outside);
}

TEST(Target, DirectWritesAnOddLengthExactly) {
  std::string dir = TempDir();
  auto target = Target::Open(dir);
  ASSERT_TRUE(target.ok()) << target.status();
  if (!(*target)->Supports(WriteMode::kDirect)) GTEST_SKIP() << "no O_DIRECT on /var/tmp here";
  std::string name;
  auto writer = (*target)->Create("odd.dat", WriteMode::kDirect, SyncPolicy{}, &name);
  ASSERT_TRUE(writer.ok()) << writer.status();
  const size_t length = 3 * 4096 + 100;
  uint8_t* block = static_cast<uint8_t*>(std::aligned_alloc(4096, 4 * 4096));
  for (size_t i = 0; i < length; ++i) block[i] = static_cast<uint8_t>(i * 13);
  ASSERT_TRUE((*writer)->Write(block, length, true).ok());
  ASSERT_TRUE((*writer)->Finish().ok());
  std::string written = ReadAll(dir + "/" + name);
  ASSERT_EQ(written.size(), length);
  EXPECT_EQ(std::memcmp(written.data(), block, length), 0);
  std::free(block);
  std::filesystem::remove_all(dir);
}

TEST(Target, RamfsRefusesDirectWithAClearReason) {
  // tmpfs takes O_DIRECT since Linux 6.6; ramfs still refuses it at open.
  if (geteuid() != 0) GTEST_SKIP() << "needs root to mount a ramfs";
  std::string dir = TempDir();
  ASSERT_EQ(mount("ramfs", dir.c_str(), "ramfs", 0, nullptr), 0) << strerror(errno);
  // Unmounted however the test ends: a failed ASSERT returns early.
  std::unique_ptr<const std::string, void (*)(const std::string*)> unmount(&dir, [](const std::string* d) {
    umount2(d->c_str(), MNT_DETACH);
    std::filesystem::remove_all(*d);
  });
  auto target = Target::Open(dir);
  ASSERT_TRUE(target.ok()) << target.status();
  EXPECT_TRUE((*target)->Supports(WriteMode::kBuffered));
  EXPECT_FALSE((*target)->Supports(WriteMode::kDirect));
  EXPECT_NE((*target)->Unsupported(WriteMode::kDirect).find("O_DIRECT"), std::string::npos);
  target->reset();
}

TEST(Target, MissingDirectoryNamesThePath) {
  auto target = Target::Open("/nonexistent/nasperf");
  ASSERT_FALSE(target.ok());
  EXPECT_NE(target.status().message().find("/nonexistent/nasperf"), std::string::npos);
}

TEST(Target, DiscardNeedsNoDirectory) {
  auto target = Target::Open("discard");
  ASSERT_TRUE(target.ok());
  EXPECT_TRUE((*target)->discard());
  EXPECT_EQ(*(*target)->FreeBytes(), 0u);
}

}  // namespace
}  // namespace nasperf
