// Monotonic time for measuring and wall time for labelling. Timings use the
// monotonic clock only; started_at columns use the wall clock. Thread-safe.
#ifndef NASPERF_COMMON_CLOCK_H_
#define NASPERF_COMMON_CLOCK_H_

#include <cstdint>

namespace nasperf {

// CLOCK_MONOTONIC in nanoseconds.
int64_t MonoNanos();
// CLOCK_REALTIME in nanoseconds since the Unix epoch.
int64_t WallNanos();

inline double NanosToSeconds(int64_t ns) { return static_cast<double>(ns) / 1e9; }

}  // namespace nasperf

#endif  // NASPERF_COMMON_CLOCK_H_
