// nasperf report and compare: the flags of the result readers and their wiring.
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/flags.h"
#include "common/log.h"
#include "report/analysis.h"
#include "report/html.h"
#include "report/table.h"

namespace nasperf::cli {
namespace {

// ----------------------------------------------------------------- report, compare

const std::vector<std::string>& GroupingColumns() {
  static const auto* columns = new std::vector<std::string>{
      "label",     "write_mode", "sync_policy", "transport", "mtu",       "path_mtu", "mss",
      "link_mbps", "host",       "peer",        "run_id",    "direction", "cache",    "read_mode"};
  return *columns;
}

struct ReportFlags {
  std::vector<std::string> inputs, where;
  std::string role, html, by = "label", baseline, metric = "mb_per_s";
  bool json = false;
};

void AddReportInputs(CLI::App* cmd, ReportFlags& f, const std::string& role_help) {
  cmd->add_option("inputs", f.inputs, "Result directories (holding transfers.csv, samples.csv) or CSV files; merged")
      ->required();
  cmd->add_option("--role", f.role, role_help)->check(CLI::IsMember(Names<Role>()));
  cmd->add_flag("--json", f.json, "Print JSON instead of a table");
  cmd->add_option("--where", f.where, "Only rows with COLUMN=VALUE, e.g. label=cache (repeatable: all must hold)");
}

// The results the inputs hold, narrowed by --where.
absl::StatusOr<ResultTable> LoadReportInputs(const ReportFlags& f) {
  auto table = LoadResults(f.inputs);
  if (!table.ok() || f.where.empty()) return table;
  return FilterRows(*table, f.where);
}

CLI::App* AddReport(CLI::App& app, ReportFlags& f) {
  auto* cmd =
      app.add_subcommand("report", "Per label and role: n, median, mean, spread and bottlenecks; --html writes charts");
  AddReportInputs(cmd, f, "Only this role's rows: receiver (durable MB/s) or sender (end-to-end MB/s); default both");
  cmd->add_option("--html", f.html, "Also write a self-contained HTML report with charts to FILE");
  return cmd;
}

CLI::App* AddCompare(CLI::App& app, ReportFlags& f) {
  auto* cmd = app.add_subcommand(
      "compare", "Every label (or --by column) against a baseline: difference, 95% CI, p-value, verdict");
  AddReportInputs(cmd, f,
                  "Compare this role's MB/s: receiver (durable) or sender (end-to-end); default receiver "
                  "when there are receiver rows");
  cmd->add_option("--by", f.by, "Column to group by")->capture_default_str()->check(CLI::IsMember(GroupingColumns()));
  cmd->add_option("--baseline", f.baseline, "Group the others are compared against (default: the first in file order)");
  cmd->add_option("--metric", f.metric,
                  "mb_per_s (each iteration's MB/s), sustained_mb_per_s (the receiver's MB/s after the cache "
                  "cliff, rows that had one) or files_per_s (rows that wrote many files, --files)")
      ->capture_default_str()
      ->check(CLI::IsMember({std::string("mb_per_s"), std::string(kSustainedMetric), std::string(kFilesMetric)}));
  return cmd;
}

// --role: one role, or both when not given.
std::optional<Role> RoleFlag(const std::string& command, const std::string& text) {
  if (text.empty()) return std::nullopt;
  return EnumFlag<Role>(command, "--role", text);
}

int RunReport(const ReportFlags& f) {
  const std::string cmd = "report";
  auto table = LoadReportInputs(f);
  if (!table.ok()) return Fail(cmd, table.status());
  const std::optional<Role> role = RoleFlag(cmd, f.role);
  auto report = SummarizeResults(*table, role);
  if (!report.ok()) return Fail(cmd, report.status());
  // Labels, hosts and errors come from CSV files of any origin.
  std::fputs(TerminalSafe(f.json ? ReportJson(*report) : ReportText(*report), /*keep_newlines=*/true).c_str(), stdout);
  if (!f.html.empty()) {
    if (absl::Status s = WriteHtmlReportFor(*table, role, f.html, "nasperf " NASPERF_VERSION); !s.ok()) {
      return Fail(cmd, s);
    }
    if (!f.json) std::printf("html report: %s\n", f.html.c_str());
  }
  return 0;
}

int RunCompare(const ReportFlags& f) {
  const std::string cmd = "compare";
  auto table = LoadReportInputs(f);
  if (!table.ok()) return Fail(cmd, table.status());
  const CompareMetric metric = f.metric == kSustainedMetric ? CompareMetric::kSustainedMbPerS
                               : f.metric == kFilesMetric   ? CompareMetric::kFilesPerS
                                                            : CompareMetric::kMbPerS;
  auto compare = Compare(*table, f.by, f.baseline, RoleFlag(cmd, f.role), metric);
  if (!compare.ok()) return Fail(cmd, compare.status());
  std::fputs(TerminalSafe(f.json ? CompareJson(*compare) : CompareText(*compare), /*keep_newlines=*/true).c_str(),
             stdout);
  return 0;
}

}  // namespace

Command AddReportCommand(CLI::App& app) { return CommandOf<ReportFlags>(app, AddReport, RunReport); }

Command AddCompareCommand(CLI::App& app) { return CommandOf<ReportFlags>(app, AddCompare, RunCompare); }

}  // namespace nasperf::cli
