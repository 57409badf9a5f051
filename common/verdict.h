// The one-word bottleneck verdict (DESIGN.md section 4), shared by both ends so the
// sender's row and the receiver's row are judged by the same rule. Pure functions.
#ifndef NASPERF_COMMON_VERDICT_H_
#define NASPERF_COMMON_VERDICT_H_

#include <string>

namespace nasperf {

// A side is the bottleneck when the other waited on it for at least this share.
inline constexpr double kVerdictThresholdPct = 20.0;

// net_wait_pct: the disk writer sat idle waiting for data (network slower);
// disk_wait_pct: the network reader waited for a free buffer or the final sync ran
// (disk slower); source_wait_pct: the sender waited on its own source (its disk or
// generator), a part of net_wait_pct, since the receiver waits meanwhile. Negative =
// unknown. Returns "disk", "network", "source" or "balanced".
std::string Verdict(double net_wait_pct, double disk_wait_pct, double source_wait_pct = -1);

// The verdict word in a sentence, for consoles and reports ("" for an unknown word).
// An older nasperf's "sender" reads as "source".
std::string VerdictMeaning(const std::string& word);

}  // namespace nasperf

#endif  // NASPERF_COMMON_VERDICT_H_
