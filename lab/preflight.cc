#include "lab/preflight.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/fd.h"
#include "common/policy.h"
#include "common/units.h"
#include "transport/registry.h"

namespace nasperf {

std::vector<std::string> HostProblems(const PlanHost& host, const proto::HelloReply& hello,
                                      const std::string& controller_version) {
  std::vector<std::string> problems;
  if (hello.version() != controller_version) {
    problems.push_back(absl::StrCat("host ", host.name, ": agent ", FormatHostPort(host.agent), " runs nasperf ",
                                    hello.version(), ", this controller is ", controller_version));
  }
  if (!host.target.empty() && hello.target() != host.target) {
    problems.push_back(absl::StrCat("host ", host.name, ": its agent writes into ", hello.target(),
                                    ", the plan says target = \"", host.target,
                                    "\" (start it with nasperf agent --target ", host.target, ")"));
  }
  return problems;
}

std::vector<std::string> SenderProblems(const std::string& name, const PlanTransfer& t, const proto::HelloReply& from) {
  const std::string& word = t.transport;
  const auto& built = from.transports();
  if (built.empty() || std::find(built.begin(), built.end(), word) != built.end()) return {};
  const char* why = TransportFor(word).unbuilt_why;
  return {absl::StrCat(name, ": host ", t.from, "'s nasperf cannot run transport = \"", word, "\" (it runs ",
                       absl::StrJoin(built, "|"), ")", why != nullptr ? absl::StrCat(": ", why) : "")};
}

std::vector<std::string> TransferProblems(const std::string& name, const PlanTransfer& t, const PlanHost& from,
                                          const PlanHost& to, const proto::HelloReply& rx,
                                          const proto::CheckPathReply& path) {
  std::vector<std::string> problems;
  if (std::find(rx.write_modes().begin(), rx.write_modes().end(), t.write_mode) == rx.write_modes().end() &&
      rx.target() != kDiscardTarget) {
    problems.push_back(absl::StrCat(name, ": ", t.to, "'s target ", rx.target(), " does not take write_mode = \"",
                                    t.write_mode, "\" (it takes ", absl::StrJoin(rx.write_modes(), ", "), ")"));
  }
  if (from.mtu && path.has_mtu() && path.mtu() != *from.mtu) {
    problems.push_back(absl::StrCat("host ", t.from, ": interface MTU toward ", t.to, " is ", path.mtu(),
                                    ", the plan says mtu = ", *from.mtu));
  }
  if (to.mtu && path.has_peer_mtu() && path.peer_mtu() != *to.mtu) {
    problems.push_back(
        absl::StrCat("host ", t.to, ": interface MTU is ", path.peer_mtu(), ", the plan says mtu = ", *to.mtu));
  }
  return problems;
}

std::vector<std::string> CapacityProblems(const Plan& plan, const std::map<std::string, proto::HelloReply>& hellos,
                                          const std::map<std::string, uint64_t>& bytes_per_run) {
  std::vector<std::string> problems;
  for (const auto& [name, bytes] : bytes_per_run) {
    auto found = hellos.find(name);
    if (found == hellos.end()) continue;
    const proto::HelloReply& rx = found->second;
    if (rx.target() != kDiscardTarget && bytes + rx.min_free() > rx.free_bytes()) {
      problems.push_back(absl::StrCat(
          "host ", name, ": one run writes ", FormatSize(bytes), " into ", rx.target(), ", which has ",
          FormatSize(rx.free_bytes()), " free",
          rx.min_free() > 0 ? absl::StrCat(" and must keep ", FormatSize(rx.min_free()), " (its --min-free)") : ""));
    }
    if (rx.max_size() == 0) continue;
    for (const PlanTransfer& t : plan.transfers) {
      if (t.to == name && t.size > rx.max_size()) {
        problems.push_back(absl::StrCat("host ", name, ": a transfer of ", FormatSize(t.size),
                                        " is above its --max-size ", FormatSize(rx.max_size())));
      }
    }
  }
  return problems;
}

}  // namespace nasperf
