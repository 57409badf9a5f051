// What `nasperf report` and `nasperf compare` compute from a ResultTable: per group
// and role summaries (failures listed apart, warm-ups skipped), and every group
// against a baseline with a bootstrap CI, a Mann-Whitney p-value, a drift check and
// a verdict in words; plus their console and JSON renderings. Pure functions; thread-safe.
#ifndef NASPERF_REPORT_ANALYSIS_H_
#define NASPERF_REPORT_ANALYSIS_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/stats.h"
#include "report/run_intake.h"
#include "report/statistics.h"
#include "report/table.h"

namespace nasperf {

// Below this many measured iterations in a group, compare says nothing about it.
inline constexpr size_t kMinRunsPerGroup = 3;
inline constexpr double kAlpha = 0.05;
// Below this many runs the trend test is not run (n = 3 can never reach p < kAlpha).
inline constexpr size_t kMinTrendRuns = 4;

// The measured rows of one group, in the order they were taken, and the group's
// observations: one MB/s per iteration. An iteration with several streams is one
// observation, its bytes over the longest stream's time (what the NAS took); an
// iteration where a stream failed is left out, since the others ran without it.
struct GroupRows {
  std::string group;
  Role role = Role::kReceiver;
  std::vector<const TransferRecord*> rows;
  std::vector<double> rates;
  // Per observation: the ordinal (from 1) of its (run, iteration) in the order taken,
  // and its host: observations of several hosts in one run share an ordinal.
  std::vector<size_t> run_ordinals;
  std::vector<std::string> hosts;
  size_t iterations_with_failed_streams = 0;
  size_t multi_stream_iterations = 0;
  const std::vector<double>& Rates() const { return rates; }
};

struct GroupSummary {
  std::string group;
  Role role = Role::kReceiver;
  Summary stats;
  std::map<std::string, int> bottlenecks;  // verdict -> rows
  // Tested on one value per run (the median of its hosts' observations): several
  // hosts of one run are not independent looks at what the run did.
  TrendResult trend;
  size_t trend_runs = 0;
  bool drifts = false;  // trend p < kAlpha with trend_runs >= kMinTrendRuns
  std::vector<double> rates_in_order;
  std::vector<size_t> run_ordinals;  // as in GroupRows
  std::vector<std::string> hosts;    // as in GroupRows
  // What one of the n observations is: "one per iteration", "one per iteration: its 3
  // streams together", "one per host and iteration (3 hosts, each its own MB/s)".
  std::string observation;
  // The path the group ran over, from its rows: MTU, path MTU, MSS, link and the
  // median line rate, each only when known; distinct values joined with "/".
  std::string path;
  // The NAS's busiest device under the target over the group's receiver rows (issue 27):
  // "loop1 busiest in 2 of 2 rows, 86 % busy (median)"; empty when no row names one.
  std::string devices;
  // The cache cliff over the group's rows that had one (measure/cache_knee.h), medians:
  // "cache cliff in 3 of 3 rows: the NAS took 256 MiB at 887 MB/s, then its disks sustained 57 MB/s
  // (ramp); stalls in 1 of 3 rows, the longest 6.5 s"; empty when no row had either.
  std::string cache_cliff;
  // The group's many-files rows (--files), medians: "many files in 3 of 3 rows: 1020.4
  // files/s, each file p50 0.99 ms, p99 1.51 ms; the files' own work 70 % of the time";
  // empty when none wrote many files.
  std::string many_files;
  // Their files' create-to-close time in ms at p50, p90, p99 and the max, each the median
  // over the rows (the HTML report's latency chart); empty with no such row.
  std::vector<double> file_latency_ms;
};

// One value per run, in run order: the median of the observations that share a run
// ordinal (exposed for tests).
std::vector<double> PerRunValues(const std::vector<double>& values, const std::vector<size_t>& run_ordinals);

// The trend in words a reader cannot misread: a slope only when it is significant.
std::string TrendText(const GroupSummary& g);

struct ReportResult {
  std::vector<GroupSummary> groups;             // by role (receiver first), then group order
  std::vector<const TransferRecord*> failures;  // status != ok, warm-ups included
  size_t warmups_skipped = 0;
  std::vector<std::string> warnings;
  // What each NAS took per run, all its transfers together (report/run_intake.h).
  std::vector<RunIntake> intakes;
};

// role: one role's rows, or nullopt for both. by: the column to group by (label).
absl::StatusOr<ReportResult> SummarizeResults(const ResultTable& table, std::optional<Role> role,
                                              const std::string& by = "label");

// Keeps the rows whose COLUMN equals VALUE for every "COLUMN=VALUE" in `where`
// (`--where`); an unknown column or a filter that keeps nothing is an error.
absl::StatusOr<ResultTable> FilterRows(const ResultTable& table, const std::vector<std::string>& where);

struct Comparison {
  std::string group;
  bool baseline = false;
  Summary stats;
  MannWhitneyResult test;
  MedianDifference difference;
  std::string verdict;  // "faster by 38.0% (95% CI 31.0–45.0%)", ...
  bool significant = false;
};

// What `compare` compares: each group's MB/s (per iteration, as `report`), the MB/s
// its writes sustained after the cache cliff (one per row that had a knee), or the
// files/s of its many-files transfers (one per row that wrote many files).
enum class CompareMetric { kMbPerS, kSustainedMbPerS, kFilesPerS };
inline constexpr char kSustainedMetric[] = "sustained_mb_per_s";
inline constexpr char kFilesMetric[] = "files_per_s";

struct CompareResult {
  std::string by, baseline;
  Role role = Role::kReceiver;
  CompareMetric metric = CompareMetric::kMbPerS;
  std::vector<Comparison> rows;  // the baseline first
  std::vector<std::string> warnings;
};

// role nullopt picks the receiver's durable MB/s when there are receiver rows, else the
// sender's end-to-end MB/s. baseline "" = the first group in file order. The sustained
// metric is the receiver's (the end that writes); a group none of whose rows had a
// knee is left out, and said; so is one with no many-files row for files/s.
absl::StatusOr<CompareResult> Compare(const ResultTable& table, const std::string& by, const std::string& baseline,
                                      std::optional<Role> role, CompareMetric metric = CompareMetric::kMbPerS);

// The verdict sentence for one comparison (exposed for tests).
std::string VerdictText(const Comparison& c, size_t baseline_n, bool* significant);

std::string ReportText(const ReportResult& report);
std::string ReportJson(const ReportResult& report);
std::string CompareText(const CompareResult& compare);
std::string CompareJson(const CompareResult& compare);

// What a role's MB/s means, for headings.
std::string RateMeaning(Role role);

// One "word: meaning" line for each verdict word the groups carry.
std::vector<std::string> VerdictLegend(const ReportResult& report);

}  // namespace nasperf

#endif  // NASPERF_REPORT_ANALYSIS_H_
