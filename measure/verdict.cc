#include "measure/verdict.h"

#include <algorithm>

#include "absl/strings/str_format.h"
#include "common/policy.h"

namespace nasperf {

namespace {

// The CPU-bound end, if any (the link not full). A thread that was on the CPU (or
// wanted it) nearly all the time never waited on anything else long enough to matter:
// the waits it caused only follow from it. A quota that held an end back in nearly
// every period is the kernel's own word that the end wanted more CPU than it got.
std::optional<Bottleneck> CpuBound(const VerdictFigures& f) {
  if (f.line_rate_pct >= kLinkFullPct) return std::nullopt;
  const bool sender = f.sender_cpu_pct >= kCpuBoundPct || f.sender_quota_pct >= kQuotaBoundPct;
  const bool receiver = f.receiver_cpu_pct >= kCpuBoundPct || f.receiver_quota_pct >= kQuotaBoundPct;
  if (sender && receiver) {
    return f.receiver_cpu_pct >= f.sender_cpu_pct ? Bottleneck::kReceiverCpu : Bottleneck::kSenderCpu;
  }
  if (sender || receiver) return sender ? Bottleneck::kSenderCpu : Bottleneck::kReceiverCpu;
  return std::nullopt;
}

Bottleneck Judge(const VerdictFigures& f) {
  if (f.line_rate_pct >= kLinkFullPct) return Bottleneck::kNetwork;
  if (std::optional<Bottleneck> cpu = CpuBound(f)) return *cpu;
  // The receiver waits for data whenever the sender waits on its source, so its net
  // wait holds the source's: the network's own share is what is left.
  const double network = f.source_wait_pct > 0 ? std::max(0.0, f.net_wait_pct - f.source_wait_pct) : f.net_wait_pct;
  if (f.source_wait_pct >= kVerdictThresholdPct && f.source_wait_pct >= network &&
      f.source_wait_pct >= f.disk_wait_pct) {
    return Bottleneck::kSource;
  }
  if (f.disk_wait_pct >= kVerdictThresholdPct && f.disk_wait_pct >= network) return Bottleneck::kDisk;
  if (network >= kVerdictThresholdPct) return Bottleneck::kNetwork;
  return Bottleneck::kBalanced;
}

}  // namespace

std::string Verdict(const VerdictFigures& f) { return Name(Judge(f)); }

std::string CpuVerdict(const VerdictFigures& f) {
  const std::optional<Bottleneck> cpu = CpuBound(f);
  return cpu ? Name(*cpu) : "";
}

std::string QuotaReason(const VerdictFigures& f, const std::string& verdict) {
  const bool sender = verdict == Name(Bottleneck::kSenderCpu);
  if (!sender && verdict != Name(Bottleneck::kReceiverCpu)) return "";
  const double quota = sender ? f.sender_quota_pct : f.receiver_quota_pct;
  if (quota < kQuotaBoundPct) return "";
  return absl::StrFormat(
      "%s: its CPU quota throttled it in %.0f %% of its periods (the %s's cgroup: a container's or "
      "service's CPU limit)",
      verdict, quota, sender ? "sender" : "receiver");
}

std::string ReadVerdict(const VerdictFigures& f) {
  // The wire's sending end is the NAS: its source is the NAS's disk, the receiving
  // end's disk is the client's, and each CPU word names the role, not the wire side.
  switch (Judge(f)) {
    case Bottleneck::kSource:
      return Name(Bottleneck::kDisk);
    case Bottleneck::kDisk:
      return Name(Bottleneck::kClientDisk);
    case Bottleneck::kSenderCpu:
      return Name(Bottleneck::kReceiverCpu);
    case Bottleneck::kReceiverCpu:
      return Name(Bottleneck::kSenderCpu);
    case Bottleneck::kNetwork:
      return Name(Bottleneck::kNetwork);
    default:
      return Name(Bottleneck::kBalanced);
  }
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
      return "the NAS's disk (or its final sync) was slower than the network: it took (for reads, gave) the data "
             "slower than the network carried it (on a local file system, slower than the CPU made it)";
    case Bottleneck::kSource:
    case Bottleneck::kOldSender:
      return "the sender's own disk or file system fed the data slower than the network and the NAS took it";
    case Bottleneck::kSenderCpu:
      return "the sender's CPU: its sending thread was busy (or queued for a core) nearly the whole time, or its "
             "CPU quota held it back in nearly every period";
    case Bottleneck::kReceiverCpu:
      return "the NAS's CPU: the receiver's thread was busy (or queued for a core) nearly the whole time, or its "
             "CPU quota held it back in nearly every period";
    case Bottleneck::kClientDisk:
      return "the client's own disk (--local-target) took the data slower than the NAS and the network gave it";
    case Bottleneck::kBalanced:
      return "no side waited on another for a fifth of the time";
    case Bottleneck::kServerCpu:
      return "the NAS's CPU: the process serving the copy (smbd, sshd, the NFS server) was busy or queued for a core "
             "nearly the whole time";
    case Bottleneck::kClient:
      return "none of the NAS's parts was busy (disk, serving process, NIC): the client or its path held the copy "
             "back";
    case Bottleneck::kMetadata:
      return "the file system's work per file: creating, closing and syncing each file took more of the time than "
             "writing its bytes (small files, a slow fsync, a journal on slow disks)";
  }
  return "";
}

}  // namespace nasperf
