// `nasperf watch DIR`: measures the copies other tools make into a directory on the NAS
// (smbd, sshd's scp and sftp, an NFS server, cp, rsync). Each copy becomes a row (role
// nas, transport observed) handed to the sink as soon as it ends, its file closed or
// not grown for a while, with its samples, the NAS's device figures, the serving
// process's CPU and blocking, the NIC's receive rate and a verdict (disk, server-cpu,
// network or client). RunWatch owns the calling thread until *stop; everything it
// starts runs on that thread.
#ifndef NASPERF_WATCH_COPY_WATCHER_H_
#define NASPERF_WATCH_COPY_WATCHER_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "wire/report_sink.h"

namespace nasperf {

// The transport word of watch's rows: a copy some other tool made. No registry entry
// has it, so no run can ask for it.
inline constexpr char kObservedTransport[] = "observed";

struct WatchOptions {
  std::string dir;  // a directory; its subdirectories are watched too
  // >= 0: DIR already opened (O_PATH) by the caller, who keeps it open until RunWatch
  // returns; `dir` then only names it. Everything under DIR is reached through the
  // descriptors of its directories, never by a path, so no link swapped in is followed.
  int dir_fd = -1;
  std::string label = "watch";
  std::string run_id;  // "" = a new one
  std::string host;    // "" = this host's name
  double interval_s = 1;
  double idle_s = 3;             // a copy whose file has not grown this long has ended
  uint64_t min_bytes = 1 << 20;  // smaller copies are counted, not rowed
  uint32_t link_mbps = 0;        // 0: the NICs' own speed, where they say it
  std::string nic;               // "" = every interface but lo
  const std::atomic<bool>* stop = nullptr;
  // At *stop the copies still open are whole (a run that asked for the watch ended and
  // its transfers are done), not aborted (Ctrl-C while someone copies).
  bool stop_ends_copies = false;
  std::function<void(const std::string&)> line;  // live lines, one per call
  std::function<void()> ready;                   // called once DIR's tree is watched
  // Tests: runs on the watch's thread in each look, after it read the queue and before
  // it looks at the files (what a writer does in that window is the case under test).
  std::function<void()> before_look;
  std::string proc = "/proc", sys = "/sys";
};

struct WatchSummary {
  int rows = 0;           // copies rowed
  int small = 0;          // copies under min_bytes or too quick to time: counted only
  int submit_errors = 0;  // rows the sink refused (said on a line each)
};

// Runs until *o.stop; an error when DIR cannot be watched or vanishes (copies in
// progress are then rowed as aborted first).
absl::StatusOr<WatchSummary> RunWatch(const WatchOptions& o, ReportSink& sink);

// What the NAS's parts did during one copy; -1 where unknown.
struct ObservedFigures {
  double line_rate_pct = -1;       // the NIC's receive rate against the link
  double server_cpu_pct = -1;      // the serving process's busiest thread
  double server_blocked_pct = -1;  // looks at which one of its threads was in D
  double busiest_device_pct = -1;  // the busiest device under DIR
  int line_rate_intervals = 0;     // > 0: line_rate_pct is the median of this many sample intervals
  double server_running_pct = -1;  // looks at which one of its threads was on or queued for a CPU
  double server_quota_pct = -1;    // its cgroup's CPU-quota periods in which the quota throttled it
  // The copy's directory is a tmpfs or ramfs: no disk under it, so the server's waits in
  // the kernel there are locks or memory (two smbds writing one file), never a disk's.
  bool in_memory = false;
};
// The verdict word ("" when too little is known) and why, in words.
std::string ObservedVerdict(const ObservedFigures& f, std::string* why);

}  // namespace nasperf

#endif  // NASPERF_WATCH_COPY_WATCHER_H_
