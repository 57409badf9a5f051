// The lab controller (`nasperf lab PLAN.toml`): checks every agent and path of a
// plan before anything runs, then for each run starts every transfer on its sending
// agent, releases them all at one instant (a barrier), collects the rows, and prints
// per transfer and per receiver (the NAS's intake, measure/intake.h) with
// the start skew. Rows reach one CSV through the embedded (or the plan's) collector.
// RunLab blocks on the calling thread; `stop` may be set from any thread (Ctrl-C).
#ifndef NASPERF_LAB_CONTROLLER_H_
#define NASPERF_LAB_CONTROLLER_H_

#include <atomic>
#include <cstdio>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "lab/plan.h"
#include "wire/tls.h"

namespace nasperf {

struct LabOptions {
  std::string token;
  std::FILE* console = stdout;
  const std::atomic<bool>* stop = nullptr;  // set: abort every agent's transfers, end the lab
  std::string run_id;                       // empty: generated
  bool ssh = false;                         // start agents that do not answer over SSH (hosts with ssh = ...)
  std::string deploy_binary;                // uploaded to ssh hosts without nasperf = ...; empty: this one
  // How the controller trusts agents and an external collector (wire/tls.h); the
  // embedded collector serves TLS unless this is plaintext. Null: plaintext (tests).
  std::shared_ptr<const PeerTrust> trust;
};

struct LabOutcome {
  std::string run_id;
  int runs_done = 0;
  int transfers = 0;  // sender rows, warm-ups included
  int failed = 0;
  int aborted = 0;
  bool stopped = false;       // on_failure = "stop" ended the lab early
  bool interrupted = false;   // LabOptions::stop
  std::string transfers_csv;  // empty with an external collector
};

// Problems found before the first run come back as one FAILED_PRECONDITION whose
// message has one line per problem; nothing has run then.
absl::StatusOr<LabOutcome> RunLab(const Plan& plan, const LabOptions& options);

}  // namespace nasperf

#endif  // NASPERF_LAB_CONTROLLER_H_
