#include "watch/server_process.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/fd.h"

namespace nasperf {
namespace {

constexpr size_t kMaxStatBytes = 4096;

struct DirCloser {
  void operator()(DIR* d) const { closedir(d); }
};
using Dir = std::unique_ptr<DIR, DirCloser>;

// The numeric entries of a /proc directory (pids, tids, fds), at most `max`.
std::vector<int> NumericEntries(const std::string& dir, int max) {
  std::vector<int> out;
  Dir d(opendir(dir.c_str()));
  if (!d) return out;
  while (dirent* e = readdir(d.get())) {
    int n = 0;
    if (absl::SimpleAtoi(e->d_name, &n) && n >= 0) out.push_back(n);
    if (static_cast<int>(out.size()) >= max) break;
  }
  return out;
}

std::string LinkTarget(const std::string& path) {
  char buf[4096];
  const ssize_t n = readlink(path.c_str(), buf, sizeof buf);
  return n > 0 && static_cast<size_t>(n) < sizeof buf ? std::string(buf, static_cast<size_t>(n)) : "";
}

std::string Comm(const std::string& proc, int pid) {
  std::string comm(absl::StripAsciiWhitespace(ReadFileBounded(absl::StrCat(proc, "/", pid, "/comm"), 64).value_or("")));
  // It ends up in a CSV cell and a console line.
  for (char& c : comm) {
    if (absl::ascii_iscntrl(c) || c == ',' || c == '"') c = '?';
  }
  return comm.empty() ? "?" : comm;
}

}  // namespace

char ParseThreadState(absl::string_view stat) {
  const size_t close = stat.rfind(')');
  if (close == absl::string_view::npos || close + 2 >= stat.size() || stat[close + 1] != ' ') return 0;
  const char state = stat[close + 2];
  return absl::ascii_isalpha(state) ? state : 0;
}

std::optional<int64_t> ParseSchedstatDemand(absl::string_view schedstat) {
  std::vector<absl::string_view> f = absl::StrSplit(absl::StripAsciiWhitespace(schedstat), ' ', absl::SkipEmpty());
  int64_t on_cpu = 0, waiting = 0;
  if (f.size() < 2 || !absl::SimpleAtoi(f[0], &on_cpu) || !absl::SimpleAtoi(f[1], &waiting) || on_cpu < 0 ||
      waiting < 0 || on_cpu > (int64_t{1} << 62) - waiting) {
    return std::nullopt;
  }
  return on_cpu + waiting;
}

bool FdInfoWrites(absl::string_view fdinfo) {
  for (absl::string_view line : absl::StrSplit(fdinfo, '\n')) {
    if (!absl::ConsumePrefix(&line, "flags:")) continue;
    int flags = 0;
    // Octal, as the kernel prints it.
    if (!absl::numbers_internal::safe_strtoi_base(absl::StripAsciiWhitespace(line), &flags, 8)) return false;
    return (flags & O_ACCMODE) != O_RDONLY;
  }
  return false;
}

std::optional<Writer> FindWriter(const std::string& path, const std::string& proc, int except) {
  for (int pid : NumericEntries(proc, kMaxScannedPids)) {
    if (pid == except) continue;
    const std::string fd_dir = absl::StrCat(proc, "/", pid, "/fd");
    for (int fd : NumericEntries(fd_dir, kMaxScannedFds)) {
      if (LinkTarget(absl::StrCat(fd_dir, "/", fd)) != path) continue;
      const std::string info = ReadFileBounded(absl::StrCat(proc, "/", pid, "/fdinfo/", fd), 4096).value_or("");
      if (FdInfoWrites(info)) return Writer{pid, Comm(proc, pid)};
    }
  }
  return std::nullopt;
}

ServerProcess::ServerProcess(Writer writer, std::string proc) : writer_(std::move(writer)), proc_(std::move(proc)) {}

void ServerProcess::Look(int64_t now_ns) {
  if (gone_) return;
  const std::string task = absl::StrCat(proc_, "/", writer_.pid, "/task");
  const std::vector<int> tids = NumericEntries(task, kMaxSampledThreads);
  if (tids.empty()) {
    gone_ = true;
    return;
  }
  bool blocked = false;
  for (int tid : tids) {
    const std::string dir = absl::StrCat(task, "/", tid);
    absl::StatusOr<std::string> stat = ReadFileBounded(dir + "/stat", kMaxStatBytes);
    if (stat.ok() && ParseThreadState(*stat) == 'D') blocked = true;
    absl::StatusOr<std::string> schedstat = ReadFileBounded(dir + "/schedstat", 256);
    const std::optional<int64_t> demand = schedstat.ok() ? ParseSchedstatDemand(*schedstat) : std::nullopt;
    if (!demand) continue;
    auto [it, added] = threads_.emplace(tid, ThreadSpan{now_ns, now_ns, *demand, *demand});
    if (!added) it->second.last_ns = now_ns, it->second.last_demand = *demand;
  }
  ++looks_;
  blocked_looks_ += blocked ? 1 : 0;
}

ServerFigures ServerProcess::Figures() const {
  ServerFigures f;
  f.name = absl::StrCat(writer_.comm, "[", writer_.pid, "]");
  f.looks = looks_;
  if (looks_ > 0) f.blocked_pct = 100.0 * blocked_looks_ / looks_;
  int64_t span_ns = 0;
  for (const auto& [tid, t] : threads_) span_ns = std::max(span_ns, t.last_ns - t.first_ns);
  if (span_ns <= 0) return f;
  f.busiest_thread_pct = 0;
  for (const auto& [tid, t] : threads_) {
    const double pct = 100.0 * static_cast<double>(t.last_demand - t.first_demand) / static_cast<double>(span_ns);
    f.busiest_thread_pct = std::max(f.busiest_thread_pct, std::min(100.0, pct));
  }
  return f;
}

}  // namespace nasperf
