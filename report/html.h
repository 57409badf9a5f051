// The self-contained HTML report: inline SVG charts (MB/s per iteration per label,
// the per-interval timeline from samples.csv, box plots per label, each NAS's intake
// per run), the summary and
// compare tables, failures and the run's metadata. No scripts, no network fetches;
// every value from a CSV is HTML-escaped. Pure functions; thread-safe.
#ifndef NASPERF_REPORT_HTML_H_
#define NASPERF_REPORT_HTML_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "report/analysis.h"
#include "report/table.h"

namespace nasperf {

// &, <, >, " and ' as entities: safe in text and in quoted attributes.
std::string HtmlEscape(absl::string_view text);

struct HtmlReportInput {
  const ResultTable* table = nullptr;
  const ReportResult* report = nullptr;
  const CompareResult* compare = nullptr;  // may be null (e.g. nothing measured)
  std::string generator;                   // "nasperf 0.1.0"
};

std::string RenderHtmlReport(const HtmlReportInput& input);

// Renders and writes to path (through a temporary file and a rename).
absl::Status WriteHtmlReport(const HtmlReportInput& input, const std::string& path);

// The whole report for a table: summaries for `role` (nullopt = both), the comparison
// by label against the first label, rendered and written to path.
absl::Status WriteHtmlReportFor(const ResultTable& table, std::optional<Role> role, const std::string& path,
                                const std::string& generator);
// The same as text (the collector's /report).
absl::StatusOr<std::string> RenderHtmlReportFor(const ResultTable& table, std::optional<Role> role,
                                                const std::string& generator);

}  // namespace nasperf

#endif  // NASPERF_REPORT_HTML_H_
