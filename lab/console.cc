#include "lab/console.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/fd.h"
#include "common/log.h"
#include "common/policy.h"
#include "common/stats.h"
#include "common/units.h"

namespace nasperf {
namespace {

const char* Plural(int n) { return n == 1 ? "" : "s"; }

std::string TransferLine(const TransferTally& t) {
  const PlanTransfer& p = *t.transfer;
  // A partly failed transfer shows what its ok streams moved (the aggregate counts it).
  const bool show_send = t.ok || t.send_mb_per_s > 0;
  const bool show_durable = (t.ok || t.durable_mb_per_s > 0) && t.receiver_rows > 0;
  return absl::StrFormat("  %-22s %2d stream%s %10s  send %9s  durable %9s  %s", absl::StrCat(p.from, " -> ", p.to),
                         p.streams, p.streams == 1 ? " " : "s", p.file.empty() ? FormatSize(p.size) : "file",
                         show_send ? absl::StrFormat("%.1f MB/s", t.send_mb_per_s) : "-",
                         show_durable ? absl::StrFormat("%.1f MB/s", t.durable_mb_per_s) : "-", t.ok ? "ok" : t.error);
}

}  // namespace

void LabConsole::Line(const std::string& text) {
  std::fprintf(out_, "%s\n", TerminalSafe(text).c_str());  // agents' names, errors and paths are peers' text
  std::fflush(out_);
}

void LabConsole::Banner(const std::string& run_id, const Plan& plan) {
  const int transfers = static_cast<int>(plan.transfers.size());
  Line(absl::StrFormat(
      "lab %s%s: %d transfer%s per run, %d run%s%s%s", run_id,
      plan.label.empty() ? "" : absl::StrCat(" \"", plan.label, "\""), transfers, Plural(transfers), plan.runs,
      Plural(plan.runs), plan.warmup > 0 ? absl::StrCat(" after ", plan.warmup, " warm-up") : "",
      plan.pause > absl::ZeroDuration() ? absl::StrCat(", pause ", absl::FormatDuration(plan.pause)) : ""));
}

void LabConsole::HostChecked(const PlanHost& host, const proto::HelloReply& hello) {
  Line(absl::StrFormat(
      "  %-10s %-21s nasperf %s on %s, target %s%s", host.name, FormatHostPort(host.agent), hello.version(),
      hello.host(), hello.target(),
      hello.target() == kDiscardTarget ? "" : absl::StrCat(" (", FormatSize(hello.free_bytes()), " free)")));
}

void LabConsole::PathChecked(const std::string& transfer_name, const PlanTransfer& transfer,
                             const proto::CheckPathReply& path) {
  Line(absl::StrCat("  ", transfer.from, " -> ", transfer.to, ": ", path.line()));
  for (const std::string& warning : path.warnings()) Line(absl::StrCat("  warning: ", transfer_name, ": ", warning));
}

void LabConsole::Run(const RunTally& run, bool warmup, int nth, int of, int iteration) {
  Line(absl::StrFormat("%s %d/%d (iteration %d): start skew %s", warmup ? "warm-up" : "run", nth, of, iteration,
                       run.start_skew_ms ? absl::StrFormat("%.2f ms", *run.start_skew_ms) : "-"));
  for (const TransferTally& t : run.transfers) Line(TransferLine(t));
  for (const ReceiverTally& r : run.receivers) {
    // What the NAS took, as `report` prints it for the run; over SSH no agent there
    // reports what arrived when.
    Line(absl::StrFormat("  %-22s %2d transfer%s  %s%s", absl::StrCat("= ", r.name), r.transfers,
                         r.transfers == 1 ? " " : "s",
                         r.intake ? IntakeLine(*r.intake) : "no NAS intake (no receiver rows with times)",
                         r.complete ? "" : " (not every transfer finished)"));
  }
}

void LabConsole::Summary(const LabOutcome& outcome, const LabTotals& totals, const std::string& results_dir) {
  Line("");
  Line(absl::StrFormat("summary: %d run%s, %d transfer rows, %d failed (%d aborted)", outcome.runs_done,
                       Plural(outcome.runs_done), totals.sender_rows, totals.failed, totals.aborted));
  if (!totals.start_skews_ms.empty()) {
    const nasperf::Summary s = Summarize(totals.start_skews_ms);
    Line(absl::StrFormat("  start skew: median %.2f ms, max %.2f ms", s.median, s.max));
  }
  for (const auto* figure : {&totals.all_mb_per_s, &totals.while_all_mb_per_s}) {
    for (const auto& [name, values] : *figure) {
      const nasperf::Summary s = Summarize(values);
      Line(absl::StrFormat("  %s %s MB/s: median %.1f, min %.1f, max %.1f (n %d)", name,
                           figure == &totals.all_mb_per_s ? "all bytes/span" : "while all ran", s.median, s.min, s.max,
                           s.n));
    }
  }
  if (!outcome.transfers_csv.empty()) {
    Line(absl::StrFormat("results: %s (nasperf report %s)", outcome.transfers_csv, results_dir));
  }
}

}  // namespace nasperf
