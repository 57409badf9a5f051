// Monotonic time for measuring and wall time for labelling, and a thread's CPU time.
// Timings use the monotonic clock only; started_at columns use the wall clock.
// Thread-safe.
#ifndef NASPERF_COMMON_CLOCK_H_
#define NASPERF_COMMON_CLOCK_H_

#include <cstdint>

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

}  // namespace nasperf

#endif  // NASPERF_COMMON_CLOCK_H_
