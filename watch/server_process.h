// The process serving an observed copy (smbd, sshd's sftp, an NFS server, cp), found by
// the open file descriptor that names the copy's file (the kernel NFS server, which has
// none, by its exports and its nfsd threads), and what its threads did while
// the copy ran: on a CPU or queued for one (schedstat), or blocked in the kernel (state
// D: a disk, or the page cache's dirty limit holding writes back). Reads /proc, bounded.
// An object belongs to the one thread that samples it; the parsers are pure.
#ifndef NASPERF_WATCH_SERVER_PROCESS_H_
#define NASPERF_WATCH_SERVER_PROCESS_H_

#include <cstdint>
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

// The state letter of a /proc/PID/task/TID/stat line (after the last ')'); 0 when
// the line has none.
char ParseThreadState(absl::string_view stat);
// On-CPU plus runnable-but-waiting nanoseconds of a schedstat line; nullopt when malformed.
std::optional<int64_t> ParseSchedstatDemand(absl::string_view schedstat);

// Who serves a copy: a process holding the file open for writing, or the kernel NFS
// server's threads (one kernel thread each, all named nfsd).
struct Writer {
  std::vector<int> pids;  // the process; or each nfsd thread
  std::string comm;
  bool kernel_nfsd = false;
};
// The pid of a process holding `path` open for writing (the first found; not
// `except`, the watcher itself), and its comm: by the descriptor's link, or by device
// and inode where the link has the file's name under another directory (a server in
// its own mount namespace).
std::optional<Writer> FindWriter(const std::string& path, const std::string& proc = "/proc", int except = -1);
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
  std::string name;                // "smbd[1234]", "nfsd (kernel, 8 threads)"
  double busiest_thread_pct = -1;  // its busiest thread's CPU demand over the looks' span; -1 unknown
  double blocked_pct = -1;         // looks at which some thread was in D; -1 unknown
  int looks = 0;
  bool kernel_nfsd = false;  // the kernel's nfsd threads: they serve every NFS client
};

class ServerProcess {
 public:
  ServerProcess(Writer writer, std::string proc = "/proc");
  // One look at the process's threads (at most kMaxSampledThreads in all); a process
  // that has ended is not looked at again and keeps what was seen.
  void Look(int64_t now_ns);
  ServerFigures Figures() const;

 private:
  struct ThreadSpan {
    int64_t first_ns = 0, last_ns = 0, first_demand = 0, last_demand = 0;
  };
  Writer writer_;
  std::string proc_;
  bool gone_ = false;
  int looks_ = 0, blocked_looks_ = 0;
  std::map<std::string, ThreadSpan> threads_;  // by /proc/PID/task/TID
};

}  // namespace nasperf

#endif  // NASPERF_WATCH_SERVER_PROCESS_H_
