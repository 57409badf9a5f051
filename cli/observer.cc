#include "cli/observer.h"

#include <algorithm>
#include <cstdio>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/fd.h"
#include "common/log.h"
#include "common/policy.h"
#include "transport/registry.h"

namespace nasperf::cli {

void AddObserverFlags(CLI::App* cmd, ObserverFlags& f) {
  cmd->add_option("--observer", f.address,
                  "An agent on the NAS (HOST[:PORT]) that watches its --target while the loop runs: each copy also "
                  "gets a row from the NAS's side (role nas: its disks, the serving process, its NIC, a verdict)");
  cmd->add_option("--observe-dir", f.subdir, "With --observer: a directory under the agent's target to watch");
}

absl::StatusOr<std::unique_ptr<LoopObserver>> LoopObserver::Start(const ObserverFlags& f, const std::string& label,
                                                                  const std::string& run_id, uint32_t link_mbps,
                                                                  double interval_s, const std::string& token,
                                                                  const PeerTrust* trust) {
  if (!f.Given()) return nullptr;
  auto address = ParseHostPort(f.address, kAgentPort);
  if (!address.ok()) return address.status();
  PlanHost host;
  host.name = f.address;
  host.agent = *address;
  auto observer = std::make_unique<LoopObserver>();
  observer->agent_ = ConnectAgent(host, token, trust, /*fingerprint=*/"");
  proto::ObserveRequest request;
  request.set_subdir(f.subdir);
  request.set_label(label);
  request.set_run_id(run_id);
  request.set_link_mbps(link_mbps);
  if (interval_s > 0) request.set_interval_s(interval_s);
  auto reply = observer->agent_->Observe(request);
  if (!reply.ok()) return reply.status();
  observer->id_ = reply->observation_id();
  observer->dir_ = reply->dir();
  return observer;
}

absl::StatusOr<std::vector<proto::TransferReport>> LoopObserver::Finish(ReportSink& sink) {
  auto rows = agent_->StopObserving(id_);
  if (!rows.ok()) return rows.status();
  for (const proto::TransferReport& row : *rows) {
    if (absl::Status s = sink.Submit(row); !s.ok()) return s;
  }
  return rows;
}

void SayWhoseVerdicts(const RunOptions& options, bool observed) {
  const TransportEntry& entry = TransportFor(options.transport);
  if (entry.caps.agent || options.direction != Direction::kWrite) return;
  if (const std::string scope = entry.verdict_scope != nullptr ? entry.verdict_scope(options) : ""; !scope.empty()) {
    std::printf("%s\n", scope.c_str());
    std::fflush(stdout);
    return;
  }
  std::printf("%s\n", observed
                          ? "  verdicts: the client's side here; the NAS's side, copy by copy, from its observer below"
                          : "  verdicts: the client's side only, no nasperf on the NAS (network when the link was "
                            "full, sender-cpu, source); for the NAS's part (disk, server-cpu) run `nasperf agent "
                            "--target SHARE_DIR` there and add --observer NAS");
  std::fflush(stdout);
}

void SayObserved(const std::string& address, const std::vector<proto::TransferReport>& rows,
                 const RunOptions& options) {
  std::printf("observer %s: %zu %s measured on the NAS (role nas)\n", address.c_str(), rows.size(),
              rows.size() == 1 ? "copy" : "copies");
  for (const proto::TransferReport& row : rows) {
    std::printf("%s\n", TerminalSafe(ObservedCopyLine(row)).c_str());  // the agent's text
  }
  const bool nas_waited = std::any_of(rows.begin(), rows.end(), [](const proto::TransferReport& row) {
    return row.bottleneck() == Name(Bottleneck::kClient);
  });
  const TransportEntry& entry = TransportFor(options.transport);
  if (nas_waited && entry.nas_waited_hint != nullptr) {
    const std::string hint = entry.nas_waited_hint(options);
    if (!hint.empty()) std::printf("%s\n", hint.c_str());
  }
  std::fflush(stdout);
}

}  // namespace nasperf::cli
