// A process's CPU cgroup quota (a container's --cpus, a service's CPUQuota): where its
// cgroup's cpu.stat is (v1 cpu controller or v2 unified) and how often the quota
// throttled the group. Parsers are pure; CpuQuotaSpan belongs to the thread that uses it.
#ifndef NASPERF_MEASURE_CPU_QUOTA_H_
#define NASPERF_MEASURE_CPU_QUOTA_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/string_view.h"

namespace nasperf {

// Fewer quota periods than this (100 ms each by default) say nothing of a quota.
inline constexpr int64_t kMinQuotaPeriods = 5;

// The cpu.stat of the CPU cgroup a /proc/PID/cgroup text puts a process in, under
// `cgroup_root` (v1: ROOT/cpu/PATH or ROOT/cpu,cpuacct/PATH; v2: ROOT/PATH); "" when
// none is named.
std::string CpuStatPath(absl::string_view proc_cgroup, const std::string& cgroup_root);
// nr_periods and nr_throttled of a cpu.stat text (v1 and v2 both); nullopt when absent.
std::optional<std::pair<int64_t, int64_t>> ParseCpuStatThrottling(absl::string_view cpu_stat);
// Of the quota periods between two readings (nr_periods, nr_throttled), the share in
// which the quota throttled the group; -1 when either is unknown, the counts went
// back, or fewer than kMinQuotaPeriods passed.
double QuotaThrottledPct(const std::optional<std::pair<int64_t, int64_t>>& before,
                         const std::optional<std::pair<int64_t, int64_t>>& after);

// The calling process's own CPU quota over a span (a transfer): Start and Stop read
// /proc/self/cgroup and the group's cpu.stat, a few small reads each, never per block.
// No cgroup, no quota or an unreadable file leave the figure unknown, never an error.
class CpuQuotaSpan {
 public:
  explicit CpuQuotaSpan(std::string proc = "/proc", std::string cgroup_root = "/sys/fs/cgroup");
  void Start();
  void Stop();
  // QuotaThrottledPct of the span; -1 unknown.
  double ThrottledPct() const { return QuotaThrottledPct(start_, stop_); }

 private:
  std::string proc_, cgroup_root_;
  std::string cpu_stat_;  // found at Start: both readings come from one group
  std::optional<std::pair<int64_t, int64_t>> start_, stop_;
};

}  // namespace nasperf

#endif  // NASPERF_MEASURE_CPU_QUOTA_H_
