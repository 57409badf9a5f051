// The agent's observations (issue 27 item 4): `nasperf watch` (watch/copy_watcher.h) on
// its target or a directory under it, started and stopped by a peer, each on a thread
// of its own; the rows wait for StopObserving. Bounded: kMaxObservations at once, each
// stopped by itself after kMaxObservationTime, kMaxObservedRows rows kept. Thread-safe.
#ifndef NASPERF_LAB_OBSERVATIONS_H_
#define NASPERF_LAB_OBSERVATIONS_H_

#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "proto/nasperf.pb.h"

namespace nasperf {

inline constexpr size_t kMaxObservations = 4;
inline constexpr size_t kMaxObservedRows = 1024;
inline constexpr absl::Duration kMaxObservationTime = absl::Hours(24);

class Observations {
 public:
  // target: the agent's --target directory; empty (or discard): nothing to observe.
  explicit Observations(std::string target);
  ~Observations();

  // Starts watching target/subdir (checked: relative, no "..", a directory reached
  // through no symlink of the peer's choosing).
  absl::StatusOr<proto::ObserveReply> Start(const proto::ObserveRequest& request);
  // Stops it (the first call) and hands over its rows from first_report on, a page at
  // most max_bytes long; forgets it after the last page.
  absl::Status Stop(const std::string& id, uint32_t first_report, size_t max_bytes, proto::JobState* reply);
  // Stops and joins every observation.
  void Shutdown();

 private:
  struct Observation;
  void Sweep() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::string target_;
  absl::Mutex mu_;
  uint64_t next_id_ ABSL_GUARDED_BY(mu_) = 1;
  std::map<std::string, std::shared_ptr<Observation>> observations_ ABSL_GUARDED_BY(mu_);
};

}  // namespace nasperf

#endif  // NASPERF_LAB_OBSERVATIONS_H_
