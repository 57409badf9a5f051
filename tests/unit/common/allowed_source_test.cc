// --allow-source and --allow-path (common/allowed_source.h): the local policy on a
// peer's file names and on the directories its jobs may write in.
#include "common/allowed_source.h"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace nasperf {
namespace {

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

// --allow-path: a job's directory is the allowed one or beneath it, reached without
// ".." and through no symlink, and never a file; without --allow-path, nothing.
TEST(OpenAllowedPath, OpensTheDirectoryBeneathAndRefusesEverythingElse) {
  std::string root = std::string(::testing::TempDir()) + "/allowed-path-XXXXXX";
  ASSERT_NE(mkdtemp(root.data()), nullptr);
  std::filesystem::create_directories(root + "/bench/sub");
  std::filesystem::create_directories(root + "/outside");
  std::filesystem::create_directory_symlink(root + "/outside", root + "/bench/escape");
  std::ofstream(root + "/bench/file") << "x";

  auto none = OpenAllowedPath(root + "/bench", {});
  ASSERT_FALSE(none.ok());
  EXPECT_NE(std::string(none.status().message()).find("start it with --allow-path DIR"), std::string::npos)
      << none.status();

  auto dir = OpenAllowedDirectory(root + "/bench");
  ASSERT_TRUE(dir.ok()) << dir.status();
  const std::vector<AllowedDirectory> allowed = {*dir};
  for (const std::string& ok : {root + "/bench", root + "/bench/", root + "/bench/sub", dir->canonical + "/sub"}) {
    auto path = OpenAllowedPath(ok, allowed);
    ASSERT_TRUE(path.ok()) << ok << ": " << path.status();
    EXPECT_EQ(path->path, ok);
    // The descriptor is the directory's: a file made beneath it lands there.
    Fd made(::openat(path->fd->get(), "probe", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
    ASSERT_TRUE(made.valid()) << ok << ": " << std::strerror(errno);
    ::unlinkat(path->fd->get(), "probe", 0);
  }
  for (const std::string& bad :
       {root + "/outside", root + "/bench/../outside", root + "/bench/escape", root + "/bench/escape/",
        root + "/bench/file", root + "/bench/missing", root + "/benchmark", std::string("/"),
        // a NUL would make the job's name mean "sub" to openat; a control character, a line to a console
        root + std::string("/bench/sub\0x", 12), root + "/bench/sub\x1b[2J"}) {
    auto path = OpenAllowedPath(bad, allowed);
    ASSERT_FALSE(path.ok()) << bad << " was let through";
    EXPECT_EQ(path.status().code(), absl::StatusCode::kPermissionDenied) << path.status();
    EXPECT_NE(std::string(path.status().message()).find("--allow-path"), std::string::npos) << path.status();
    EXPECT_EQ(std::string(path.status().message()).find('\x1b'), std::string::npos) << "echoed raw";
  }
  EXPECT_TRUE(std::filesystem::is_empty(root + "/outside"));
  std::filesystem::remove_all(root);
}

}  // namespace
}  // namespace nasperf
