#include "measure/cpu_quota.h"

#include <filesystem>
#include <fstream>

#include "gtest/gtest.h"
#include "temp_dir.h"

namespace nasperf {
namespace {

class CpuQuota : public TempDirTest {
 protected:
  void Write(const std::string& path, const std::string& text) {
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    std::ofstream(path) << text;
  }
};

// The cgroup of a process, v1 or v2, and its cpu.stat's counts (moved here from the
// watch, which judges a server by them, so the sender and receiver read them too).
TEST_F(CpuQuota, FindsAndParsesTheCgroupsCpuStat) {
  const std::string cg = dir_ + "/cg";
  Write(cg + "/cpu/docker/abc/cpu.stat", "nr_periods 100\nnr_throttled 10\nthrottled_time 5\n");
  Write(cg + "/cpu,cpuacct/svc/cpu.stat", "nr_periods 1\nnr_throttled 0\n");
  Write(cg + "/v2/app/cpu.stat", "usage_usec 5\nnr_periods 7\nnr_throttled 3\nthrottled_usec 9\n");
  EXPECT_EQ(CpuStatPath("12:pids:/x\n4:cpu,cpuacct:/docker/abc\n0::/y\n", cg), cg + "/cpu/docker/abc/cpu.stat");
  EXPECT_EQ(CpuStatPath("4:cpuacct,cpu:/svc\n", cg), "") << "neither mount has it";
  EXPECT_EQ(CpuStatPath("0::/v2/app\n", cg), cg + "/v2/app/cpu.stat");
  EXPECT_EQ(CpuStatPath("4:cpu:/docker/abc/../../../etc\n", cg), "") << "no way out of the cgroup tree";
  EXPECT_EQ(CpuStatPath("garbage", cg), "");
  EXPECT_EQ(ParseCpuStatThrottling("nr_periods 7\nnr_throttled 3\n"), std::make_pair(int64_t{7}, int64_t{3}));
  EXPECT_EQ(ParseCpuStatThrottling("nr_periods 2\nnr_throttled 3\n"), std::nullopt) << "more throttled than ran";
  EXPECT_EQ(ParseCpuStatThrottling("nr_periods x\n"), std::nullopt);
  EXPECT_EQ(ParseCpuStatThrottling("usage_usec 5\n"), std::nullopt) << "v2 without the cpu controller";
}

TEST_F(CpuQuota, TheThrottledShareNeedsEnoughPeriods) {
  using Counts = std::optional<std::pair<int64_t, int64_t>>;
  EXPECT_NEAR(QuotaThrottledPct(Counts{{100, 10}}, Counts{{110, 19}}), 90, 1e-9);
  EXPECT_EQ(QuotaThrottledPct(Counts{{100, 10}}, Counts{{104, 14}}), -1) << "4 periods decide nothing";
  EXPECT_EQ(QuotaThrottledPct(Counts{{100, 10}}, Counts{{90, 10}}), -1) << "counts that went back";
  EXPECT_EQ(QuotaThrottledPct(std::nullopt, Counts{{110, 19}}), -1);
  EXPECT_EQ(QuotaThrottledPct(Counts{{0, 0}}, Counts{{0, 0}}), -1) << "a group without a quota";
}

// The process's own group, from /proc/self/cgroup, read at the start and the end of a
// span; absent or unreadable files leave it unknown.
TEST_F(CpuQuota, ASpanReadsTheOwnGroupAtItsStartAndEnd) {
  const std::string proc = dir_ + "/proc", cg = dir_ + "/cg";
  Write(proc + "/self/cgroup", "0::/nasperf.slice/sender\n");
  Write(cg + "/nasperf.slice/sender/cpu.stat", "nr_periods 40\nnr_throttled 2\nthrottled_usec 10\n");
  CpuQuotaSpan span(proc, cg);
  span.Start();
  Write(cg + "/nasperf.slice/sender/cpu.stat", "nr_periods 60\nnr_throttled 20\nthrottled_usec 900000\n");
  span.Stop();
  EXPECT_NEAR(span.ThrottledPct(), 90, 1e-9);

  CpuQuotaSpan none(dir_ + "/no-proc", cg);
  none.Start();
  none.Stop();
  EXPECT_EQ(none.ThrottledPct(), -1);
}

}  // namespace
}  // namespace nasperf
