// The sizes of a many-files workload (common/file_set.h): the forms --file-size takes,
// their refusals, and that a range is drawn log-uniformly, within its bounds, the same
// on every call.
#include "common/file_set.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "gtest/gtest.h"

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

}  // namespace
}  // namespace nasperf
