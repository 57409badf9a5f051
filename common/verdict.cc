#include "common/verdict.h"

#include <algorithm>

#include "common/policy.h"

namespace nasperf {

std::string Verdict(double net_wait_pct, double disk_wait_pct, double source_wait_pct) {
  // The receiver waits for data whenever the sender waits on its source, so its net
  // wait holds the source's: the network's own share is what is left.
  const double network = source_wait_pct > 0 ? std::max(0.0, net_wait_pct - source_wait_pct) : net_wait_pct;
  if (source_wait_pct >= kVerdictThresholdPct && source_wait_pct >= network && source_wait_pct >= disk_wait_pct) {
    return Name(Bottleneck::kSource);
  }
  if (disk_wait_pct >= kVerdictThresholdPct && disk_wait_pct >= network) return Name(Bottleneck::kDisk);
  if (network >= kVerdictThresholdPct) return Name(Bottleneck::kNetwork);
  return Name(Bottleneck::kBalanced);
}

std::string VerdictMeaning(const std::string& word) {
  auto verdict = Parse<Bottleneck>(word);
  if (!verdict.ok()) return "";
  switch (*verdict) {
    case Bottleneck::kNetwork:
      return "the network (or the sender's socket) delivered slower than the NAS's disk took it";
    case Bottleneck::kDisk:
      return "the NAS's disk (or its final sync) took the data slower than the network brought it";
    case Bottleneck::kSource:
    case Bottleneck::kOldSender:
      return "the sender's own disk or file system fed the data slower than the network and the NAS took it";
    case Bottleneck::kBalanced:
      return "no side waited on another for a fifth of the time";
  }
  return "";
}

}  // namespace nasperf
