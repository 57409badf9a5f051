// The Agent service of `nasperf agent` (served beside the receiver on its control
// port): runs sender jobs for a lab controller (lab/controller.h). A job opens its
// transfers, holds every stream at a barrier until the controller's start instant
// (Go), pushes, and keeps the rows for WaitJob while also reporting them to the
// plan's collector through a spool, made for an accepted job and ended once no job
// uses it and its reports are delivered. Observe/StopObserving watch the target for
// copies other tools make (lab/observations.h). All RPCs are thread-safe; each job runs on
// its own thread, and one more thread enforces the time limits (AgentLimits);
// Shutdown() aborts and joins them.
#ifndef NASPERF_LAB_AGENT_H_
#define NASPERF_LAB_AGENT_H_

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/allowed_source.h"
#include "common/fd.h"
#include "lab/agent_limits.h"
#include "proto/nasperf.pb.h"
#include "transport/run_options.h"
#include "wire/grpc_auth.h"

namespace nasperf {

struct AgentOptions {
  std::string token;       // checked on every call; also sent to receivers and collectors
  std::string spool_root;  // where rows wait while a collector is unreachable
  // Toward receivers and collectors; null = plain. A job's receiver must show the key
  // the controller pinned for it; a collector is trusted as this agent's flags say.
  std::shared_ptr<const PeerTrust> trust;
  std::FILE* console = nullptr;  // one line per job and the sender's table; null = quiet
  // Directories (OpenAllowedDirectory) whose regular files a job may send; empty:
  // jobs send generated data only. A token holder must not make the agent send, or
  // even confirm, any other file it can read.
  std::vector<AllowedDirectory> allowed_sources;
  // Directories (OpenAllowedDirectory) beneath which a job whose `to` is a directory of
  // this host (a mounted directory's) may create files; empty: every such job is
  // refused. A token holder must not make a root agent write anywhere else.
  std::vector<AllowedDirectory> allowed_paths;
  // How many jobs and streams at once, how long a job waits for Go or its rows for
  // WaitJob, how far Go's instant may be (lab/agent_limits.h). A refused StartSender
  // makes nothing: no thread, no payload pool, no spool.
  AgentLimits limits;
  // The receiver's --target: what Observe may watch (it or a directory under it); empty
  // or discard: Observe is refused.
  std::string target;
};

// WaitJob's page: rows from `first` on, as many as fit in max_bytes (at least one),
// and the total; true when the page reaches the last row.
bool PageOfRows(const std::vector<proto::TransferReport>& rows, uint32_t first, size_t max_bytes,
                proto::JobState* reply);

class AgentService {
 public:
  static std::unique_ptr<AgentService> Create(const AgentOptions& options);
  virtual ~AgentService() = default;
  // To register on the receiver's server (ReceiverOptions::extra_services).
  virtual grpc::Service* service() = 0;
  // Aborts every job, waits for their threads, then waits up to 10 s for the spools.
  virtual void Shutdown() = 0;
};

}  // namespace nasperf

#endif  // NASPERF_LAB_AGENT_H_
