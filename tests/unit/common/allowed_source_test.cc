// --allow-source (common/allowed_source.h): the local policy on a peer's file names.
#include "common/allowed_source.h"

#include <stdlib.h>
#include <unistd.h>

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

}  // namespace
}  // namespace nasperf
