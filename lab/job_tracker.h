// One lab run's transfers from start to rows: start each job on its sending agent,
// hold them at the barrier until every stream is connected (or ready_timeout), release
// them all at one instant, and wait until every job is done. A job whose agent
// refuses, dies or stops answering gets a row made here for each stream it never
// reported, so every planned stream has a sender row. Drives agents only through
// `AgentConnection` (lab/agent_client.h). Runs on the calling thread.
#ifndef NASPERF_LAB_JOB_TRACKER_H_
#define NASPERF_LAB_JOB_TRACKER_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "lab/agent_client.h"
#include "lab/plan.h"
#include "proto/nasperf.pb.h"

namespace nasperf {

// One transfer of the plan in one run.
struct LabJob {
  const PlanTransfer* transfer = nullptr;
  AgentConnection* agent = nullptr;  // the sending host's
  proto::SenderJob job;              // job_id, run, first_stream, streams ... as sent
  // What the agent reported (its spool also delivers them to the collector) ...
  std::vector<proto::TransferReport> agent_rows;
  // ... and the rows made here for streams it never reported (status failed or
  // aborted); only the controller can deliver these.
  std::vector<proto::TransferReport> lost_rows;
};

struct JobTrackerOptions {
  absl::Duration ready_timeout = absl::Seconds(20);
  absl::Duration start_delay = absl::Milliseconds(250);    // barrier release → first byte
  absl::Duration wait_per_call = absl::Milliseconds(500);  // WaitJob's long poll
  absl::Duration retry_pause = absl::Milliseconds(300);    // after a call that failed
  int unanswered_before_dead = 3;                          // consecutive failed calls
  // Polled between calls; true once aborts the run: lost rows say "aborted". The
  // caller tells the agents (Abort) when it first turns true.
  std::function<bool()> interrupted = [] { return false; };
};

// Runs `jobs` (their agent_rows/lost_rows empty) to the end and returns them with
// their rows. Never fails: what went wrong is in the rows.
std::vector<LabJob> RunJobs(std::vector<LabJob> jobs, const JobTrackerOptions& options);

// The sender row for a stream of `job` that its agent never reported.
proto::TransferReport LostRow(const proto::SenderJob& job, int stream, const std::string& status,
                              const std::string& error);

}  // namespace nasperf

#endif  // NASPERF_LAB_JOB_TRACKER_H_
