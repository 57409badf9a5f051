// The process serving an observed copy (smbd, sshd's sftp, an NFS server, cp), found by
// the open file descriptor that names the copy's file (the kernel NFS server, which has
// none, by its exports and its nfsd threads), and what its threads did while
// the copy ran: on a CPU or queued for one (schedstat), or blocked in the kernel (state
// D: a disk, or the page cache's dirty limit holding writes back). Reads /proc, bounded.
// An object belongs to the one thread that samples it; the parsers are pure.
#ifndef NASPERF_WATCH_SERVER_PROCESS_H_
#define NASPERF_WATCH_SERVER_PROCESS_H_

#include <sys/stat.h>

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace nasperf {

// Past these a scan or a look stops: a host with a huge /proc never makes one run long.
inline constexpr int kMaxScannedPids = 65536;
inline constexpr int kMaxScannedFds = 4096;
inline constexpr int kMaxSampledThreads = 256;
inline constexpr int kMaxWriterProcesses = 16;

// The state letter of a /proc/PID/task/TID/stat line (after the last ')'); 0 when
// the line has none.
char ParseThreadState(absl::string_view stat);
// On-CPU plus runnable-but-waiting nanoseconds of a schedstat line; nullopt when malformed.
std::optional<int64_t> ParseSchedstatDemand(absl::string_view schedstat);

// Who serves a copy: the processes holding the file open for writing (one smbd per
// connection when a client writes one file over several), or the kernel NFS server's
// threads (one kernel thread each, all named nfsd).
struct Writer {
  std::vector<int> pids;  // the processes; or each nfsd thread
  std::string comm;
  bool kernel_nfsd = false;
};
// The processes holding `path` open for writing (not `except`, the watcher itself):
// the first found and its comm, then others of that comm, at most kMaxWriterProcesses.
// By the descriptor's link, or by device and inode where the link has the file's name
// under another directory (a server in its own mount namespace). identity: the file's
// stat from a descriptor the caller holds (then `path` is only compared, never stat'ed).
std::optional<Writer> FindWriter(const std::string& path, const std::string& proc = "/proc", int except = -1,
                                 const struct stat* identity = nullptr);
// Whether a /proc/PID/fdinfo/FD text says the descriptor can write.
bool FdInfoWrites(absl::string_view fdinfo);

// The kernel NFS server writes from kernel threads that hold no file open, so FindWriter
// cannot see it: when `path` lies under a directory the kernel exports
// (proc/fs/nfs/exports) and kernel threads named nfsd run, those threads (at most
// kMaxSampledThreads). They serve every NFS client: their figures include other traffic.
std::optional<Writer> FindKernelNfsd(const std::string& path, const std::string& proc = "/proc");
// The exported paths of a /proc/fs/nfs/exports text ("/srv/share\tclient(rw,...)";
// octal escapes such as \040 decoded); at most 1024 lines of 4096 bytes read.
std::vector<std::string> ParseNfsExports(absl::string_view text);
// Whether a /proc/PID/stat line is a kernel thread's (PF_KTHREAD in its flags).
bool StatIsKernelThread(absl::string_view stat);

struct ServerFigures {
  std::string name;                // "smbd[1234]", "smbd[1234+1240]", "nfsd (kernel, 8 threads)"
  double busiest_thread_pct = -1;  // its busiest thread's CPU demand over the looks' span; -1 unknown
  double blocked_pct = -1;         // looks at which some thread was in D; -1 unknown
  // Looks at which some thread was on or queued for a CPU (state R): a server whose
  // work hops between threads (smbd's main thread and its I/O pool) is CPU-bound with
  // no one thread busy all the time. -1 unknown.
  double running_pct = -1;
  // Of the CPU-quota periods in which the process's cgroup ran, the share in which the
  // quota throttled it (a container's --cpus, a service's CPUQuota); -1 unknown or no
  // quota periods seen.
  double quota_throttled_pct = -1;
  int looks = 0;
  bool kernel_nfsd = false;  // the kernel's nfsd threads: they serve every NFS client
};

class ServerProcess {
 public:
  ServerProcess(Writer writer, std::string proc = "/proc", std::string cgroup_root = "/sys/fs/cgroup");
  // One look at the process's threads (at most kMaxSampledThreads in all); a process
  // that has ended is not looked at again and keeps what was seen.
  void Look(int64_t now_ns);
  int pid() const { return writer_.pids.empty() ? 0 : writer_.pids.front(); }
  // The figures up to the first look at or after `end_ns` (the copy's last write): the
  // looks after it, while the watch waits to be sure the copy ended, are idle time that
  // is not the copy's. Of the last kKeptLooks looks; by default up to the last one.
  ServerFigures Figures(int64_t end_ns = INT64_MAX) const;

 private:
  static constexpr size_t kKeptLooks = 64;  // > 1 s of looks at the watch's 10 per second
  struct LookRecord {
    int64_t ns = 0;
    int looks = 0, blocked_looks = 0, running_looks = 0;  // so far, this one included
    std::map<std::string, int64_t> demand;                // by thread, at this look
    std::optional<std::pair<int64_t, int64_t>> quota;     // its cgroup's nr_periods, nr_throttled
  };
  Writer writer_;
  std::string proc_;
  std::string cpu_stat_;                                    // its CPU cgroup's cpu.stat; "" none
  std::optional<std::pair<int64_t, int64_t>> first_quota_;  // at the first look that read it
  bool gone_ = false;
  // Each thread's first and latest sight (ns, demand), by /proc/PID/task/TID: a thread
  // that did work and then ended (an I/O pool's) still counts.
  std::map<std::string, std::pair<int64_t, int64_t>> first_seen_, last_seen_;
  std::deque<LookRecord> recent_;  // the last kKeptLooks looks
};

}  // namespace nasperf

#endif  // NASPERF_WATCH_SERVER_PROCESS_H_
