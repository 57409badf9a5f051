#include "common/verdict.h"

#include <algorithm>

#include "absl/strings/str_format.h"
#include "common/policy.h"

namespace nasperf {

std::string Verdict(double net_wait_pct, double disk_wait_pct, double source_wait_pct, double line_rate_pct) {
  if (line_rate_pct >= kLinkFullPct) return Name(Bottleneck::kNetwork);
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

std::optional<double> LineRatePct(double mb_per_s, double ceiling_mb_per_s, std::string* note) {
  if (!(ceiling_mb_per_s > 0)) return std::nullopt;
  const double pct = 100 * mb_per_s / ceiling_mb_per_s;
  if (pct <= kMaxPlausibleLineRatePct) return pct;
  *note = absl::StrFormat(
      "%.1f MB/s is %.0f%% of the %.1f MB/s a link of the stated speed carries: the link is faster than "
      "--link-speed (or the NIC) says, so line_rate_pct is left out",
      mb_per_s, pct, ceiling_mb_per_s);
  return std::nullopt;
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
