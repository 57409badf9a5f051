// Monotonic time for measuring and wall time for labelling, and a thread's CPU time.
// Timings use the monotonic clock only; started_at columns use the wall clock.
// Thread-safe.
#ifndef NASPERF_COMMON_CLOCK_H_
#define NASPERF_COMMON_CLOCK_H_

#include <cstdint>
#include <optional>

namespace nasperf {

// CLOCK_MONOTONIC in nanoseconds.
int64_t MonoNanos();
// CLOCK_REALTIME in nanoseconds since the Unix epoch.
int64_t WallNanos();

inline double NanosToSeconds(int64_t ns) { return static_cast<double>(ns) / 1e9; }

// CPU seconds spent by one thread, user and system (the cpu_user_s and cpu_sys_s
// columns add up the threads that did a transfer's work).
struct CpuTime {
  double user_s = 0;
  double sys_s = 0;
  CpuTime& operator+=(const CpuTime& other) {
    user_s += other.user_s;
    sys_s += other.sys_s;
    return *this;
  }
};
inline CpuTime operator-(const CpuTime& a, const CpuTime& b) { return {a.user_s - b.user_s, a.sys_s - b.sys_s}; }
// The calling thread's CPU time so far (getrusage RUSAGE_THREAD).
CpuTime ThreadCpuTime();

// How long a thread wanted the CPU: time on it, and time runnable but kept off it
// (another task had it, or a cgroup CPU quota throttled the thread), from
// /proc/thread-self/schedstat. A thread blocked on a socket or a disk is in neither.
struct CpuDemand {
  int64_t on_cpu_ns = 0;
  int64_t waiting_ns = 0;
};
// The calling thread's so far; nullopt where the kernel keeps no schedstat.
std::optional<CpuDemand> ThreadCpuDemand();

// At or above this share of a span on (or queued for) the CPU, a data thread was
// CPU-bound: it never waited on the network or the disk long enough to matter.
inline constexpr double kCpuBoundPct = 90.0;

// Measures one thread's CPU demand over a span, as a share of the span's wall time:
// Start and Stop on that thread. Pct is -1 when unknown (no schedstat, no span).
class CpuBusy {
 public:
  void Start();
  void Stop();
  double Pct() const;

 private:
  std::optional<CpuDemand> start_, stop_;
  int64_t start_ns_ = 0, stop_ns_ = 0;
};

}  // namespace nasperf

#endif  // NASPERF_COMMON_CLOCK_H_
