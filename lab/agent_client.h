// How the lab controller talks to one host's Agent service. `AgentConnection` is the
// interface the job tracker drives (unit tests fake it); `ConnectAgent` gives the gRPC
// one, which puts the token and a deadline on every call, names the host in every
// error and checks every reply where it enters. One connection per host; a
// connection is used by one thread at a time.
#ifndef NASPERF_LAB_AGENT_CLIENT_H_
#define NASPERF_LAB_AGENT_CLIENT_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "lab/plan.h"
#include "proto/nasperf.pb.h"
#include "wire/tls.h"

namespace nasperf {

class AgentConnection {
 public:
  virtual ~AgentConnection() = default;
  virtual absl::Status StartSender(const proto::SenderJob& job) = 0;
  // Releases the job's barrier: its streams start sending at start_at_unix_ns.
  virtual absl::Status Go(const std::string& job_id, int64_t start_at_unix_ns) = 0;
  // The job's state after waiting up to wait_s for it to be ready (until_ready) or
  // done. A done job's rows come all at once, each one checked (CheckReport).
  virtual absl::StatusOr<proto::JobState> WaitJob(const std::string& job_id, bool until_ready, double wait_s) = 0;
  virtual absl::Status Abort(const std::string& run_id) = 0;
  virtual absl::StatusOr<proto::CheckPathReply> CheckPath(const proto::CheckPathRequest& request) = 0;
  // The agent watches its target (or a directory under it) for copies other tools make
  // until StopObserving, which returns their rows (role nas), each one checked.
  virtual absl::StatusOr<proto::ObserveReply> Observe(const proto::ObserveRequest& /*request*/) {
    return absl::UnimplementedError("this connection cannot observe");
  }
  virtual absl::StatusOr<std::vector<proto::TransferReport>> StopObserving(const std::string& /*observation_id*/) {
    return absl::UnimplementedError("this connection cannot observe");
  }
};

// fingerprint: the key the agent must show (one started over SSH); empty: trust
// decides (wire/tls.h). trust may be null (plaintext, tests).
std::unique_ptr<AgentConnection> ConnectAgent(const PlanHost& host, const std::string& token, const PeerTrust* trust,
                                              const std::string& fingerprint);

// One console line for a copy an observing agent measured (a row of role nas): which
// copy, its rate, what the NAS negotiated (a share's protocol) and the verdict with its reason, so the
// NAS's side is read where the run is, not only in the CSV. The text is the peer's:
// print it through TerminalSafe.
std::string ObservedCopyLine(const proto::TransferReport& row);

}  // namespace nasperf

#endif  // NASPERF_LAB_AGENT_CLIENT_H_
