// What the collector's HTTP side shows (docs/DESIGN.md §5, live view): per host, role,
// label, transport and direction the rows stored so far (bytes, transfers by status,
// the last MB/s, verdicts) and, while a loop runs, its live updates (the current MB/s,
// copy i of N, time left); plus the collector's own health. Rendered in the Prometheus
// text format (/metrics) and as JSON for the live page. Bounded in series, loops, points
// and rows. Thread-safe: gRPC threads feed it, the HTTP thread reads it.
#ifndef NASPERF_COLLECTOR_LIVE_BOARD_H_
#define NASPERF_COLLECTOR_LIVE_BOARD_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "proto/nasperf.pb.h"

namespace nasperf {

class LiveBoard {
 public:
  // Past these, new series and loops are counted as dropped, never kept.
  static constexpr size_t kMaxSeries = 1024;
  static constexpr size_t kMaxLoops = 256;
  static constexpr size_t kMaxPointsPerLoop = 600;  // 5 minutes at two a second
  static constexpr size_t kMaxRecentRows = 50;
  // A loop whose last update is older than this is not running any more (its sender was
  // killed, or it ended): its live gauges go.
  static constexpr int64_t kFreshNs = 5'000'000'000;

  // mono_ns: the clock (a test's fake).
  explicit LiveBoard(std::function<int64_t()> mono_ns = nullptr);

  // A row the collector stored (not a duplicate).
  void AddRow(const proto::TransferReport& row);
  // A report that arrived: stored, a duplicate, or refused.
  enum class Outcome { kStored, kDuplicate, kRefused };
  void CountReport(Outcome outcome);
  // A checked live update (CheckLiveUpdate).
  void Update(const proto::LiveUpdate& update);

  // The Prometheus text exposition format, version 0.0.4.
  std::string Metrics() const;
  // The live page's data: loops with their recent MB/s, recent rows, health.
  std::string Json() const;

 private:
  // host, role, label, transport, direction
  using Key = std::tuple<std::string, std::string, std::string, std::string, std::string>;
  struct Series {
    uint64_t bytes = 0;
    std::map<std::string, uint64_t> transfers;  // by status
    std::map<std::string, uint64_t> verdicts;
    std::optional<double> last_bytes_per_second;
    std::optional<double> last_sustained_bytes_per_second;  // after a cache's knee (cache_knee.h)
    std::optional<uint64_t> last_burst_bytes;               // what the cache absorbed, with its shape
    std::string last_cache_shape;
    std::optional<double> last_longest_stall_s;
    uint64_t stalls = 0;
  };
  struct Loop {
    proto::LiveUpdate last;
    int64_t first_ns = 0, last_ns = 0;
    std::deque<std::pair<double, double>> points;  // seconds since the first update, MB/s
  };
  bool Fresh(const Loop& loop, int64_t now) const { return !loop.last.ended() && now - loop.last_ns <= kFreshNs; }
  std::string CacheMetrics() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  std::function<int64_t()> mono_ns_;
  mutable absl::Mutex mu_;
  std::map<Key, Series> series_ ABSL_GUARDED_BY(mu_);
  std::map<std::pair<std::string, Key>, Loop> loops_ ABSL_GUARDED_BY(mu_);  // by run id and series
  std::deque<proto::TransferReport> recent_ ABSL_GUARDED_BY(mu_);           // without samples
  uint64_t stored_ ABSL_GUARDED_BY(mu_) = 0, duplicates_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t refused_ ABSL_GUARDED_BY(mu_) = 0, updates_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t dropped_ ABSL_GUARDED_BY(mu_) = 0;  // series or loops past their bound
};

// One label value of the exposition format: \, " and the line break escaped.
std::string PrometheusLabelValue(const std::string& value);

}  // namespace nasperf

#endif  // NASPERF_COLLECTOR_LIVE_BOARD_H_
