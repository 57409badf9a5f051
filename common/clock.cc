#include "common/clock.h"

#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <cstdio>

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

std::optional<CpuDemand> ThreadCpuDemand() {
  // "<on cpu ns> <run queue wait ns> <timeslices>": one short line, read with stdio
  // so a data thread pays one open and read per transfer.
  std::FILE* file = std::fopen("/proc/thread-self/schedstat", "re");
  if (file == nullptr) return std::nullopt;
  long long on_cpu = 0, waiting = 0;
  const int got = std::fscanf(file, "%lld %lld", &on_cpu, &waiting);
  std::fclose(file);
  if (got != 2 || on_cpu < 0 || waiting < 0) return std::nullopt;
  return CpuDemand{on_cpu, waiting};
}

void CpuBusy::Start() {
  start_ns_ = MonoNanos();
  start_ = ThreadCpuDemand();
}

void CpuBusy::Stop() {
  stop_ = ThreadCpuDemand();
  stop_ns_ = MonoNanos();
}

double CpuBusy::Pct() const {
  if (!start_ || !stop_ || stop_ns_ <= start_ns_) return -1;
  const int64_t demand = (stop_->on_cpu_ns - start_->on_cpu_ns) + (stop_->waiting_ns - start_->waiting_ns);
  const double pct = 100.0 * static_cast<double>(demand) / static_cast<double>(stop_ns_ - start_ns_);
  // The kernel brings a running thread's counter up to date only now and then, so a
  // thread busy for the whole span can come out a little over it; far over cannot
  // be true, and is left unknown rather than reported.
  if (!(pct >= 0) || pct > 105) return -1;
  return std::min(pct, 100.0);
}

}  // namespace nasperf
