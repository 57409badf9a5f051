#include "common/verdict.h"

#include "common/policy.h"

namespace nasperf {

std::string Verdict(double net_wait_pct, double disk_wait_pct, double source_wait_pct) {
  if (source_wait_pct >= kVerdictThresholdPct && source_wait_pct >= net_wait_pct &&
      source_wait_pct >= disk_wait_pct) {
    return Name(Bottleneck::kSender);
  }
  if (disk_wait_pct >= kVerdictThresholdPct && disk_wait_pct >= net_wait_pct) return Name(Bottleneck::kDisk);
  if (net_wait_pct >= kVerdictThresholdPct) return Name(Bottleneck::kNetwork);
  return Name(Bottleneck::kBalanced);
}

}  // namespace nasperf
