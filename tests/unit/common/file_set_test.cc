// The sizes of a many-files workload (common/file_set.h): the forms --file-size takes,
// their refusals, and that a range is drawn log-uniformly, within its bounds, the same
// on every call.
#include "common/file_set.h"

#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <vector>

#include "gtest/gtest.h"
#include "temp_dir.h"

namespace nasperf {
namespace {

TEST(FileSizeDist, TakesAFixedSizeARangeAndPresets) {
  auto fixed = ParseFileSizeDist("1MiB");
  ASSERT_TRUE(fixed.ok()) << fixed.status();
  EXPECT_EQ(fixed->min_bytes, uint64_t{1} << 20);
  EXPECT_EQ(fixed->max_bytes, fixed->min_bytes);
  auto range = ParseFileSizeDist("4KiB-64KiB");
  ASSERT_TRUE(range.ok()) << range.status();
  EXPECT_EQ(range->min_bytes, 4096u);
  EXPECT_EQ(range->max_bytes, 65536u);
  auto photos = ParseFileSizeDist("photos");
  ASSERT_TRUE(photos.ok());
  EXPECT_EQ(photos->min_bytes, uint64_t{2} << 20);
  EXPECT_EQ(photos->max_bytes, uint64_t{20} << 20);
  EXPECT_TRUE(ParseFileSizeDist("source-tree").ok());
}

TEST(FileSizeDist, RefusesWhatIsNoSizeInOneLine) {
  for (const char* bad : {"", "0", "64KiB-4KiB", "4KiB-4KiB", "1-2-3", "lots", "128GiB", "-4KiB"}) {
    auto dist = ParseFileSizeDist(bad);
    EXPECT_FALSE(dist.ok()) << bad;
    if (!dist.ok()) EXPECT_EQ(std::string(dist.status().message()).find('\n'), std::string::npos) << bad;
  }
}

TEST(FileSetSizes, ARangeIsLogUniformWithinItsBoundsAndRepeatable) {
  auto dist = ParseFileSizeDist("1KiB-1MiB");
  ASSERT_TRUE(dist.ok());
  const std::vector<uint64_t> sizes = FileSetSizes(*dist, 20000, 7);
  ASSERT_EQ(sizes.size(), 20000u);
  EXPECT_EQ(sizes, FileSetSizes(*dist, 20000, 7));
  EXPECT_NE(sizes, FileSetSizes(*dist, 20000, 8));
  int below_32k = 0;
  for (uint64_t size : sizes) {
    EXPECT_GE(size, 1024u);
    EXPECT_LE(size, uint64_t{1} << 20);
    below_32k += size < 32768;
  }
  // Log-uniform over 2^10..2^20: half the files under the geometric mean 2^15 (a
  // uniform draw would put 3 % there).
  EXPECT_NEAR(below_32k / 20000.0, 0.5, 0.02);
  const std::vector<uint64_t> fixed = FileSetSizes(*ParseFileSizeDist("4KiB"), 3, 1);
  EXPECT_EQ(fixed, (std::vector<uint64_t>{4096, 4096, 4096}));
}

using WalkTreeTest = TempDirTest;

// --tree: every regular file with bytes, in path order (a directory's names sorted,
// depth first), nothing followed or opened but directories; bounded in depth.
TEST_F(WalkTreeTest, ListsRegularFilesInPathOrderWithoutFollowingAnything) {
  std::filesystem::create_directories(dir_ + "/m/z");
  std::ofstream(dir_ + "/m/z/f") << "12345";
  std::ofstream(dir_ + "/m/a") << "1";
  std::ofstream(dir_ + "/b") << "12";
  std::ofstream(dir_ + "/zz") << "123";
  std::ofstream(dir_ + "/m/empty");
  ASSERT_EQ(::mkfifo((dir_ + "/fifo").c_str(), 0600), 0);
  std::filesystem::create_directory_symlink("/", dir_ + "/m/root");  // not walked into
  auto tree = WalkTree(dir_);
  ASSERT_TRUE(tree.ok()) << tree.status();
  std::vector<std::string> paths;
  std::vector<uint64_t> sizes;
  for (const TreeFile& file : tree->files) paths.push_back(file.path), sizes.push_back(file.size);
  EXPECT_EQ(paths, (std::vector<std::string>{"b", "m/a", "m/z/f", "zz"}));
  EXPECT_EQ(sizes, (std::vector<uint64_t>{2, 1, 5, 3}));
  EXPECT_EQ(tree->empty_files, 1u);
  EXPECT_EQ(tree->other_entries, 2u);

  std::string deep = dir_ + "/deep";
  for (int level = 0; level <= kMaxTreeDepth + 1; ++level) deep += "/d";
  std::filesystem::create_directories(deep);
  auto too_deep = WalkTree(dir_);
  ASSERT_FALSE(too_deep.ok());
  EXPECT_NE(std::string(too_deep.status().message()).find("levels deep"), std::string::npos) << too_deep.status();
  EXPECT_FALSE(WalkTree(dir_ + "/b").ok()) << "a file is no tree";
}

}  // namespace
}  // namespace nasperf
