// The one-word bottleneck verdict (docs/DESIGN.md §6, measurement semantics: Verdict), shared by both ends so the
// sender's row and the receiver's row are judged by the same rule. Pure functions.
#ifndef NASPERF_MEASURE_VERDICT_H_
#define NASPERF_MEASURE_VERDICT_H_

#include <optional>
#include <string>

#include "common/clock.h"

namespace nasperf {

// A side is the bottleneck when the other waited on it for at least this share.
inline constexpr double kVerdictThresholdPct = 20.0;
// At or above this share of the path's TCP ceiling the link was full: no other part
// could have made the transfer faster, whatever the waits say.
inline constexpr double kLinkFullPct = 95.0;
// Above this share the stated link speed cannot be the real one (a higher rate than
// the link carries is impossible; 5% covers header-size and timing slack).
inline constexpr double kMaxPlausibleLineRatePct = 105.0;

// What a verdict is judged from, each a percentage of the transfer; negative = unknown.
struct VerdictFigures {
  // The disk writer sat idle waiting for data (the network was slower).
  double net_wait_pct = -1;
  // The network reader waited for a free buffer, or the final sync ran (the disk).
  double disk_wait_pct = -1;
  // The sender waited on its own source (its disk or generator); a part of
  // net_wait_pct, since the receiver waits meanwhile.
  double source_wait_pct = -1;
  // The rate as a share of the path's TCP ceiling: kLinkFullPct or more is the network.
  double line_rate_pct = -1;
  // Each end's busiest data thread on the CPU or queued for it (CpuBusy): at
  // kCpuBoundPct or more that end's CPU was the limit, whatever the other waits say.
  double sender_cpu_pct = -1;
  double receiver_cpu_pct = -1;
  // Of the CPU-quota periods each end's cgroup ran in (a container's --cpus, a
  // service's CPUQuota; measure/cpu_quota.h), the share in which the quota throttled it:
  // at kQuotaBoundPct or more that end's CPU was the limit, however its thread's own
  // share came out (the kernel may do its network work elsewhere while it waits).
  double sender_quota_pct = -1;
  double receiver_quota_pct = -1;
};

// An end whose CPU quota throttled it in at least this share of its periods is
// CPU-bound, as the watch judges a quota-held server (watch/copy_watcher.cc).
inline constexpr double kQuotaBoundPct = 80.0;

// "network", "disk", "source", "sender-cpu", "receiver-cpu" or "balanced". A full
// link decides first, then a CPU-bound end (busy, or held by its quota; of two, the
// busier one), then the waits.
std::string Verdict(const VerdictFigures& figures);
// The CPU step of Verdict alone: the CPU-bound end's word, or "" when the link was full
// or neither end was CPU-bound. For a row judged before the quotas were known.
std::string CpuVerdict(const VerdictFigures& figures);
// When the verdict names an end its quota held back, the sentence that says so
// ("sender-cpu: its CPU quota throttled it in 93 % of its periods ..."), for the
// row's notes; "" otherwise.
std::string QuotaReason(const VerdictFigures& figures, const std::string& verdict);

// A read's verdict (the NAS agent streams a file to the client), from the same
// figures as they fall on the wire: the NAS agent is the end that sends. So
// source_wait_pct is the NAS's disk (the agent's file reads), disk_wait_pct the
// client's --local-target, net_wait_pct the client waiting for data, sender_cpu_pct
// the NAS agent's thread and receiver_cpu_pct the client's. The words name places as
// for writes: "disk" (the NAS's), "client-disk", "network", "receiver-cpu" (the NAS
// agent, role receiver), "sender-cpu" (the client, role sender), "balanced".
std::string ReadVerdict(const VerdictFigures& wire_figures);

// mb_per_s as a share of the path's TCP ceiling, or nullopt when that share is over
// kMaxPlausibleLineRatePct: then *note says the link is faster than stated.
std::optional<double> LineRatePct(double mb_per_s, double ceiling_mb_per_s, std::string* note);

// The verdict word in a sentence, for consoles and reports ("" for an unknown word).
// An older nasperf's "sender" reads as "source".
std::string VerdictMeaning(const std::string& word);

}  // namespace nasperf

#endif  // NASPERF_MEASURE_VERDICT_H_
