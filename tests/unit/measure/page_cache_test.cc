// The page-cache controls a cold or warm read relies on, against the real kernel: a
// file just written is cached, dropping its pages makes it cold, reading it through
// makes it warm again. On /var/tmp (a disk file system: tmpfs pages cannot be dropped).
#include "measure/page_cache.h"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <string>

#include "common/fd.h"
#include "gtest/gtest.h"

namespace nasperf {
namespace {

TEST(PageCache, DropMakesAFileColdAndReadThroughWarmsIt) {
  std::string path = "/var/tmp/nasperf-cache-XXXXXX";
  Fd fd(::mkstemp(path.data()));
  ASSERT_TRUE(fd.valid());
  const size_t size = 8 << 20;
  std::string bytes(size, 'x');
  ASSERT_TRUE(WriteAll(fd.get(), bytes.data(), bytes.size(), "write").ok());
  if (!ColdCacheCaveat(fd.get(), ReadMode::kBuffered).empty()) GTEST_SKIP() << "/var/tmp is ZFS here";
  EXPECT_EQ(ColdCacheCaveat(fd.get(), ReadMode::kDirect), "") << "not ZFS: O_DIRECT is what it says";
  auto written = ResidentPct(fd.get(), size, path);
  ASSERT_TRUE(written.ok()) << written.status();
  EXPECT_GT(*written, 90) << "just written: cached";
  ASSERT_TRUE(DropCachedPages(fd.get(), path).ok());
  auto cold = ResidentPct(fd.get(), size, path);
  ASSERT_TRUE(cold.ok());
  EXPECT_LT(*cold, 5) << "after the drop";
  ASSERT_TRUE(ReadThrough(fd.get(), size, path).ok());
  auto warm = ResidentPct(fd.get(), size, path);
  ASSERT_TRUE(warm.ok());
  EXPECT_GT(*warm, 95) << "after reading it through";
  EXPECT_FALSE(ReadThrough(fd.get(), size + 1, path).ok()) << "a file shorter than asked";
  ::unlink(path.c_str());
}

// The loaded module's version decides whether a ZFS read with O_DIRECT misses the ARC.
TEST(PageCache, ZfsHonoursDirectIoFromTwoThreeOn) {
  EXPECT_TRUE(ZfsHonoursDirectIo("2.3.0-1"));
  EXPECT_TRUE(ZfsHonoursDirectIo("2.3.4-1~bpo12+1\n"));
  EXPECT_TRUE(ZfsHonoursDirectIo("3.0.0"));
  EXPECT_FALSE(ZfsHonoursDirectIo("2.2.7-1~bpo12+1"));
  EXPECT_FALSE(ZfsHonoursDirectIo("0.8.6-1"));
  EXPECT_FALSE(ZfsHonoursDirectIo(""));
  EXPECT_FALSE(ZfsHonoursDirectIo("zfs-kmod"));
}

}  // namespace
}  // namespace nasperf
