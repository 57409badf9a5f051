// The process serving an observed copy (smbd, sshd's sftp, an NFS server, cp), found by
// the open file descriptor that names the copy's file, and what its threads did while
// the copy ran: on a CPU or queued for one (schedstat), or blocked in the kernel (state
// D: a disk, or the page cache's dirty limit holding writes back). Reads /proc, bounded.
// An object belongs to the one thread that samples it; the parsers are pure.
#ifndef NASPERF_WATCH_SERVER_PROCESS_H_
#define NASPERF_WATCH_SERVER_PROCESS_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>

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

// The pid of a process holding `path` open for writing (the first found; not
// `except`, the watcher itself), and its comm.
struct Writer {
  int pid = 0;
  std::string comm;
};
std::optional<Writer> FindWriter(const std::string& path, const std::string& proc = "/proc", int except = -1);
// Whether a /proc/PID/fdinfo/FD text says the descriptor can write.
bool FdInfoWrites(absl::string_view fdinfo);

struct ServerFigures {
  std::string name;                // "smbd[1234]"
  double busiest_thread_pct = -1;  // its busiest thread's CPU demand over the looks' span; -1 unknown
  double blocked_pct = -1;         // looks at which some thread was in D; -1 unknown
  int looks = 0;
};

class ServerProcess {
 public:
  ServerProcess(Writer writer, std::string proc = "/proc");
  // One look at the process's threads (at most kMaxSampledThreads); a process that
  // has ended is not looked at again and keeps what was seen.
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
  std::map<int, ThreadSpan> threads_;
};

}  // namespace nasperf

#endif  // NASPERF_WATCH_SERVER_PROCESS_H_
