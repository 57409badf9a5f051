#include "watch/server_process.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/fd.h"
#include "measure/cpu_quota.h"

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

std::optional<Writer> FindWriter(const std::string& path, const std::string& proc, int except,
                                 const struct stat* identity) {
  struct stat file {};
  // The watcher's own descriptor says which file it is: its name is not looked up again.
  const bool stated = identity != nullptr ? (file = *identity, true) : ::stat(path.c_str(), &file) == 0;
  const size_t slash = path.rfind('/');
  const std::string slash_name = slash == std::string::npos ? "/" + path : path.substr(slash);
  // The same file under another path: a server in a mount namespace of its own
  // (nfs-ganesha, a container's smbd) sees the share where it bound it. Only a link
  // with the file's own name is stat'ed, so no other descriptor's file system (a hung
  // NFS mount) is ever touched.
  auto same_file = [&](const std::string& fd_path, const std::string& target) {
    if (target == path) return true;
    if (!stated || !absl::EndsWith(target, slash_name)) return false;
    struct stat st {};
    return ::stat(fd_path.c_str(), &st) == 0 && st.st_dev == file.st_dev && st.st_ino == file.st_ino;
  };
  std::optional<Writer> writer;
  for (int pid : NumericEntries(proc, kMaxScannedPids)) {
    if (pid == except) continue;
    const std::string fd_dir = absl::StrCat(proc, "/", pid, "/fd");
    for (int fd : NumericEntries(fd_dir, kMaxScannedFds)) {
      const std::string fd_path = absl::StrCat(fd_dir, "/", fd);
      if (!same_file(fd_path, LinkTarget(fd_path))) continue;
      const std::string info = ReadFileBounded(absl::StrCat(proc, "/", pid, "/fdinfo/", fd), 4096).value_or("");
      if (!FdInfoWrites(info)) continue;
      const std::string comm = Comm(proc, pid);
      if (!writer) {
        writer = Writer{{pid}, comm};
      } else if (comm == writer->comm) {
        writer->pids.push_back(pid);
      }
      break;
    }
    if (writer && static_cast<int>(writer->pids.size()) >= kMaxWriterProcesses) break;
  }
  return writer;
}

std::vector<std::string> ParseNfsExports(absl::string_view text) {
  std::vector<std::string> paths;
  int lines = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (++lines > 1024) break;
    if (line.empty() || line[0] != '/' || line.size() > 4096) continue;  // '#' comments, blank lines
    const absl::string_view field = line.substr(0, line.find_first_of(" \t"));
    std::string path;
    for (size_t i = 0; i < field.size(); ++i) {
      int code = 0;
      // The kernel writes a blank, a tab, a newline and '\\' as \ooo.
      if (field[i] == '\\' && i + 3 < field.size() &&
          absl::numbers_internal::safe_strtoi_base(field.substr(i + 1, 3), &code, 8) && code > 0 && code < 256) {
        path += static_cast<char>(code);
        i += 3;
      } else {
        path += field[i];
      }
    }
    paths.push_back(std::move(path));
  }
  return paths;
}

bool StatIsKernelThread(absl::string_view stat) {
  constexpr unsigned kPfKthread = 0x00200000;
  const size_t close = stat.rfind(')');
  if (close == absl::string_view::npos) return false;
  // After the comm: state ppid pgrp session tty_nr tpgid flags ...
  std::vector<absl::string_view> f = absl::StrSplit(stat.substr(close + 1), ' ', absl::SkipEmpty());
  unsigned flags = 0;
  return f.size() > 6 && absl::SimpleAtoi(f[6], &flags) && (flags & kPfKthread) != 0;
}

std::optional<Writer> FindKernelNfsd(const std::string& path, const std::string& proc) {
  const std::vector<std::string> exports =
      ParseNfsExports(ReadFileBounded(proc + "/fs/nfs/exports", 1 << 20).value_or(""));
  const bool exported = std::any_of(exports.begin(), exports.end(), [&](const std::string& e) {
    return e == "/" || path == e || absl::StartsWith(path, e + "/");
  });
  if (!exported) return std::nullopt;
  Writer nfsd{{}, "nfsd", /*kernel_nfsd=*/true};
  for (int pid : NumericEntries(proc, kMaxScannedPids)) {
    if (Comm(proc, pid) != "nfsd") continue;
    if (!StatIsKernelThread(ReadFileBounded(absl::StrCat(proc, "/", pid, "/stat"), kMaxStatBytes).value_or(""))) {
      continue;  // a process that calls itself nfsd is not the kernel's server
    }
    nfsd.pids.push_back(pid);
    if (static_cast<int>(nfsd.pids.size()) >= kMaxSampledThreads) break;
  }
  if (nfsd.pids.empty()) return std::nullopt;
  return nfsd;
}

ServerProcess::ServerProcess(Writer writer, std::string proc, std::string cgroup_root)
    : writer_(std::move(writer)), proc_(std::move(proc)) {
  // The kernel's nfsd threads run in the root group, which no quota holds.
  if (!writer_.kernel_nfsd && !writer_.pids.empty()) {
    absl::StatusOr<std::string> cgroup = ReadFileBounded(absl::StrCat(proc_, "/", writer_.pids[0], "/cgroup"), 1 << 14);
    if (cgroup.ok()) cpu_stat_ = CpuStatPath(*cgroup, cgroup_root);
  }
}

void ServerProcess::Look(int64_t now_ns) {
  if (gone_) return;
  std::vector<std::string> threads;  // their /proc/PID/task/TID directories
  for (int pid : writer_.pids) {
    const std::string task = absl::StrCat(proc_, "/", pid, "/task");
    for (int tid : NumericEntries(task, kMaxSampledThreads)) {
      if (static_cast<int>(threads.size()) < kMaxSampledThreads) threads.push_back(absl::StrCat(task, "/", tid));
    }
  }
  if (threads.empty()) {
    gone_ = true;
    return;
  }
  LookRecord look;
  if (!recent_.empty()) look = recent_.back(), look.demand.clear();
  look.ns = now_ns;
  bool blocked = false, running = false;
  for (const std::string& dir : threads) {
    absl::StatusOr<std::string> stat = ReadFileBounded(dir + "/stat", kMaxStatBytes);
    const char state = stat.ok() ? ParseThreadState(*stat) : 0;
    blocked = blocked || state == 'D';
    running = running || state == 'R';
    absl::StatusOr<std::string> schedstat = ReadFileBounded(dir + "/schedstat", 256);
    const std::optional<int64_t> demand = schedstat.ok() ? ParseSchedstatDemand(*schedstat) : std::nullopt;
    if (!demand) continue;
    first_seen_.emplace(dir, std::make_pair(now_ns, *demand));
    last_seen_[dir] = std::make_pair(now_ns, *demand);
    look.demand[dir] = *demand;
  }
  look.quota = cpu_stat_.empty() ? std::nullopt : ParseCpuStatThrottling(ReadFileBounded(cpu_stat_, 4096).value_or(""));
  if (!first_quota_) first_quota_ = look.quota;
  ++look.looks;
  look.blocked_looks += blocked ? 1 : 0;
  look.running_looks += running ? 1 : 0;
  recent_.push_back(std::move(look));
  if (recent_.size() > kKeptLooks) recent_.pop_front();
}

ServerFigures ServerProcess::Figures(int64_t end_ns) const {
  ServerFigures f;
  f.name = writer_.kernel_nfsd ? absl::StrCat("nfsd (kernel, ", writer_.pids.size(), " threads)")
                               : absl::StrCat(writer_.comm, "[", absl::StrJoin(writer_.pids, "+"), "]");
  f.kernel_nfsd = writer_.kernel_nfsd;
  if (recent_.empty()) return f;
  auto end = std::find_if(recent_.begin(), recent_.end(), [end_ns](const LookRecord& r) { return r.ns >= end_ns; });
  const LookRecord& last = end == recent_.end() ? recent_.back() : *end;
  f.looks = last.looks;
  f.blocked_pct = 100.0 * last.blocked_looks / last.looks;
  f.running_pct = 100.0 * last.running_looks / last.looks;
  f.quota_throttled_pct = QuotaThrottledPct(first_quota_, last.quota);
  // Each thread's demand at the end look, or at its last sight before it for one that
  // had ended by then.
  std::map<std::string, int64_t> end_demand;
  for (const auto& [dir, seen] : last_seen_) {
    if (auto at_end = last.demand.find(dir); at_end != last.demand.end()) {
      end_demand[dir] = at_end->second;
    } else if (seen.first <= last.ns) {
      end_demand[dir] = seen.second;
    }
  }
  int64_t span_ns = 0;
  for (const auto& [dir, demand] : end_demand) span_ns = std::max(span_ns, last.ns - first_seen_.at(dir).first);
  if (span_ns <= 0) return f;
  f.busiest_thread_pct = 0;
  for (const auto& [dir, demand] : end_demand) {
    const double pct = 100.0 * static_cast<double>(demand - first_seen_.at(dir).second) / static_cast<double>(span_ns);
    f.busiest_thread_pct = std::max(f.busiest_thread_pct, std::min(100.0, pct));
  }
  return f;
}

}  // namespace nasperf
