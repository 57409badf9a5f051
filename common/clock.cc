#include "common/clock.h"

#include <sys/resource.h>
#include <time.h>

namespace nasperf {

int64_t MonoNanos() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

int64_t WallNanos() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

CpuTime ThreadCpuTime() {
  struct rusage usage {};
  if (::getrusage(RUSAGE_THREAD, &usage) != 0) return {};
  auto seconds = [](const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6; };
  return {seconds(usage.ru_utime), seconds(usage.ru_stime)};
}

}  // namespace nasperf
