#include "measure/cpu_quota.h"

#include <unistd.h>

#include <algorithm>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/fd.h"

namespace nasperf {

std::string CpuStatPath(absl::string_view proc_cgroup, const std::string& cgroup_root) {
  std::string v2;
  int lines = 0;
  for (absl::string_view line : absl::StrSplit(proc_cgroup, '\n')) {
    if (++lines > 64) break;
    const std::vector<absl::string_view> f = absl::StrSplit(line, absl::MaxSplits(':', 2));
    if (f.size() != 3 || !absl::StartsWith(f[2], "/") || absl::StrContains(f[2], "/..")) continue;
    if (f[0] == "0" && f[1].empty()) {
      v2 = absl::StrCat(cgroup_root, f[2] == "/" ? "" : f[2], "/cpu.stat");
      continue;
    }
    const std::vector<absl::string_view> controllers = absl::StrSplit(f[1], ',');
    if (std::find(controllers.begin(), controllers.end(), "cpu") == controllers.end()) continue;
    for (const std::string& mount : {absl::StrCat(cgroup_root, "/cpu"), absl::StrCat(cgroup_root, "/", f[1])}) {
      const std::string path = absl::StrCat(mount, f[2] == "/" ? "" : f[2], "/cpu.stat");
      if (::access(path.c_str(), R_OK) == 0) return path;
    }
  }
  return ::access(v2.c_str(), R_OK) == 0 ? v2 : "";
}

std::optional<std::pair<int64_t, int64_t>> ParseCpuStatThrottling(absl::string_view cpu_stat) {
  std::optional<int64_t> periods, throttled;
  for (absl::string_view line : absl::StrSplit(cpu_stat, '\n')) {
    std::pair<absl::string_view, absl::string_view> kv = absl::StrSplit(line, absl::MaxSplits(' ', 1));
    int64_t value = 0;
    if (!absl::SimpleAtoi(kv.second, &value) || value < 0) continue;
    if (kv.first == "nr_periods") periods = value;
    if (kv.first == "nr_throttled") throttled = value;
  }
  if (!periods || !throttled || *throttled > *periods) return std::nullopt;
  return std::make_pair(*periods, *throttled);
}

double QuotaThrottledPct(const std::optional<std::pair<int64_t, int64_t>>& before,
                         const std::optional<std::pair<int64_t, int64_t>>& after) {
  if (!before || !after) return -1;
  const int64_t periods = after->first - before->first;
  const int64_t throttled = after->second - before->second;
  if (periods < kMinQuotaPeriods || throttled < 0 || throttled > periods) return -1;
  return 100.0 * static_cast<double>(throttled) / static_cast<double>(periods);
}

CpuQuotaSpan::CpuQuotaSpan(std::string proc, std::string cgroup_root)
    : proc_(std::move(proc)), cgroup_root_(std::move(cgroup_root)) {}

void CpuQuotaSpan::Start() {
  // Looked up at each span: a process can be moved into another group while it runs.
  const absl::StatusOr<std::string> cgroup = ReadFileBounded(proc_ + "/self/cgroup", 1 << 14);
  cpu_stat_ = cgroup.ok() ? CpuStatPath(*cgroup, cgroup_root_) : "";
  start_ = cpu_stat_.empty() ? std::nullopt : ParseCpuStatThrottling(ReadFileBounded(cpu_stat_, 4096).value_or(""));
  stop_.reset();
}

void CpuQuotaSpan::Stop() {
  stop_ = cpu_stat_.empty() ? std::nullopt : ParseCpuStatThrottling(ReadFileBounded(cpu_stat_, 4096).value_or(""));
}

}  // namespace nasperf
