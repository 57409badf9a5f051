// `sender --observer AGENT`: while the loop runs, the agent on the NAS watches its
// target for the copies arriving there (lab/observations.h), so each copy also gets a
// row from the NAS's side (role nas: its disks, the process serving the copy, its NIC,
// a verdict). For loops whose far end runs no nasperf (no TransportCaps::agent). Used by the
// sender command's one thread.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/statusor.h"
#include "lab/agent_client.h"
#include "transport/run_options.h"
#include "wire/report_sink.h"
#include "wire/tls.h"

namespace nasperf::cli {

struct ObserverFlags {
  std::string address, subdir;
  bool Given() const { return !address.empty(); }
};
void AddObserverFlags(CLI::App* cmd, ObserverFlags& f);

class LoopObserver {
 public:
  // Asks the agent to start watching; nullptr without --observer. An agent that cannot
  // be reached or refuses is an error, before any transfer.
  static absl::StatusOr<std::unique_ptr<LoopObserver>> Start(const ObserverFlags& f, const std::string& label,
                                                             const std::string& run_id, uint32_t link_mbps,
                                                             double interval_s, const std::string& token,
                                                             const PeerTrust* trust);
  // Stops the watch and hands its rows to `sink`; the rows handed.
  absl::StatusOr<std::vector<proto::TransferReport>> Finish(ReportSink& sink);
  const std::string& dir() const { return dir_; }

 private:
  std::unique_ptr<AgentConnection> agent_;
  std::string id_, dir_;
};

// After the loop's summary, over a transport with no nasperf at the far end (writes):
// that its verdicts see the client's side only, and where the NAS's is.
void SayWhoseVerdicts(const RunOptions& options, bool observed);

// Prints the rows Finish handed, one line each (the agent's text made terminal-safe), and
// after a loop that left the NAS idle (a `client` row), the transport's hint to keep it
// busier (TransportEntry::nas_waited_hint).
void SayObserved(const std::string& address, const std::vector<proto::TransferReport>& rows, const RunOptions& options);

}  // namespace nasperf::cli
