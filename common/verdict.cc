#include "common/verdict.h"

namespace nasperf {

std::string Verdict(double net_wait_pct, double disk_wait_pct, double source_wait_pct) {
  if (source_wait_pct >= kVerdictThresholdPct && source_wait_pct >= net_wait_pct &&
      source_wait_pct >= disk_wait_pct) {
    return "sender";
  }
  if (disk_wait_pct >= kVerdictThresholdPct && disk_wait_pct >= net_wait_pct) return "disk";
  if (net_wait_pct >= kVerdictThresholdPct) return "network";
  return "balanced";
}

}  // namespace nasperf
