// What one `nasperf agent` holds for its token holders at most (SECURITY.md, "exhaust
// an agent's memory"): a job's streams each keep a thread, a socket and a payload
// pool (16 MiB for random data) from StartSender until they end, so live jobs and
// their streams are counted before anything is made; a job never released by Go is
// cancelled, a finished job whose rows nobody reads is forgotten, and Go's instant
// must be near. `JobLedger` is the bookkeeping alone, without threads or clocks of
// its own: the agent (lab/agent.cc) calls it under its lock and passes the time in,
// so its unit test (tests/unit/lab/agent_limits_test.cc) drives it with a fake one.
// Not thread-safe.
#ifndef NASPERF_LAB_AGENT_LIMITS_H_
#define NASPERF_LAB_AGENT_LIMITS_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "common/policy.h"

namespace nasperf {

// Jobs started and not yet ended (at the barrier, sending, or cancelled and winding
// down). A lab plan's transfers from one host run as that many jobs at once.
inline constexpr int kMaxAgentJobs = 8;
// Streams summed over those jobs: one job of the largest legal size fits alone.
inline constexpr int kMaxAgentStreams = kMaxStreams;
// Finished jobs whose rows no WaitJob has read: the oldest is forgotten past this
// count, any of them after kUnreadJobLifetime.
inline constexpr int kMaxUnreadJobs = 32;
inline constexpr absl::Duration kUnreadJobLifetime = absl::Minutes(10);
// From StartSender to Go: a job still not released is cancelled (the lab controller
// gives up after its ready_timeout, 20 s by default).
inline constexpr absl::Duration kMaxWaitForGo = absl::Minutes(5);
// Go's start instant, on this host's clock: at most this far ahead (a plan's
// start_delay is at most 60 s; 5 s more for the call and the clocks) ...
inline constexpr absl::Duration kMaxGoAhead = absl::Seconds(65);
// ... and at most this far behind (a late Go starts at once).
inline constexpr absl::Duration kMaxGoBehind = absl::Seconds(10);

struct AgentLimits {
  int max_jobs = kMaxAgentJobs;
  int max_streams = kMaxAgentStreams;
  int max_unread = kMaxUnreadJobs;
  absl::Duration unread_lifetime = kUnreadJobLifetime;
  absl::Duration wait_for_go = kMaxWaitForGo;
  absl::Duration go_ahead = kMaxGoAhead;
  absl::Duration go_behind = kMaxGoBehind;
};

// INVALID_ARGUMENT, in one line, when `start_at` is not within the window around `now`.
absl::Status CheckGoInstant(absl::Time start_at, absl::Time now, const AgentLimits& limits);

class JobLedger {
 public:
  explicit JobLedger(const AgentLimits& limits) : limits_(limits) {}

  // A new job of `streams`: ALREADY_EXISTS for a known id, RESOURCE_EXHAUSTED when
  // the jobs or streams would pass their limit (nothing is recorded then).
  absl::Status Admit(const std::string& id, int streams, absl::Time now);
  // The job was released (Go) / has ended: its streams no longer count, its rows wait
  // for WaitJob.
  void Released(const std::string& id);
  void Finished(const std::string& id, absl::Time now);
  // Its rows were read, or it is forgotten: no trace is left.
  void Remove(const std::string& id);

  struct Due {
    std::vector<std::string> cancel;  // live, never released, waited past wait_for_go
    // finished and unread past unread_lifetime, or the oldest of more than max_unread
    std::vector<std::string> forget;
  };
  Due Sweep(absl::Time now) const;

  int live_jobs() const { return live_jobs_; }
  int live_streams() const { return live_streams_; }
  int unread_jobs() const { return static_cast<int>(ledger_.size()) - live_jobs_; }

 private:
  struct Entry {
    int streams = 0;
    absl::Time admitted;
    bool released = false;
    bool finished = false;
    absl::Time finished_at;
  };
  const AgentLimits limits_;
  std::map<std::string, Entry> ledger_;
  int live_jobs_ = 0;
  int live_streams_ = 0;
};

}  // namespace nasperf

#endif  // NASPERF_LAB_AGENT_LIMITS_H_
