#include "report/analysis.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/json.h"
#include "measure/cache_knee.h"
#include "measure/verdict.h"

namespace nasperf {

std::string RateMeaning(Role role) {
  switch (role) {
    case Role::kReceiver:
      return "durable MB/s (receiver: first byte to data on disk)";
    case Role::kSender:
      return "end-to-end MB/s (sender: first byte to the receiver's answer)";
    case Role::kNas:
      return "observed MB/s (nasperf watch on the NAS: first to last write of a copy another tool made)";
  }
  return "MB/s";
}

namespace {

absl::Status CheckColumn(const ResultTable& table, const std::string& by) {
  if (by == "direction") return absl::OkStatus();  // older files without the column are writes
  for (const TransferRecord& r : table.transfers) {
    if (r.cells.count(by) > 0) return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat("no column '", by, "' in ", absl::StrJoin(table.files, ", ")));
}

// A read and a write never share a statistic: reads are grouped apart, whatever the
// column (rows before the direction column are writes), and so are reads past the
// NAS's cache (read_mode direct) from reads through it.
std::string GroupOf(const TransferRecord& r, const std::string& by) {
  const std::string& direction = r.Cell("direction");
  const bool read = direction == Name(Direction::kRead);
  if (by == "direction") return read ? direction : Name(Direction::kWrite);
  const std::string& value = r.Cell(by);
  const std::string group = value.empty() ? "(empty)" : value;
  if (!read) return group;
  const bool direct = by != "read_mode" && r.Cell("read_mode") == Name(ReadMode::kDirect);
  return absl::StrCat(group, direct ? " (read, direct)" : " (read)");
}

// Measured rows of one role grouped by a column; groups in order of first appearance,
// rows in the order they were taken (start time, then iteration and stream).
std::string IterationKey(const TransferRecord& r) {
  return absl::StrCat(r.run_id, "\x1f", r.host, "\x1f", r.iteration);
}

// One MB/s per iteration (see GroupRows), in the order the iterations were taken.
std::vector<double> IterationRates(GroupRows& g, const std::set<std::string>& failed_iterations,
                                   const SampleIndex& samples) {
  std::vector<std::string> order;
  std::map<std::string, std::vector<const TransferRecord*>> streams;
  for (const TransferRecord* r : g.rows) {
    std::string key = IterationKey(*r);
    auto [it, added] = streams.emplace(key, std::vector<const TransferRecord*>());
    if (added) order.push_back(key);
    it->second.push_back(r);
  }
  std::vector<double> rates;
  std::map<std::string, size_t> ordinal_of_run;  // (run, iteration) -> 1, 2, ... in order taken
  for (const std::string& key : order) {
    const std::vector<const TransferRecord*>& rows = streams[key];
    if (failed_iterations.count(absl::StrCat(g.group, "\x1e", key)) > 0) {
      ++g.iterations_with_failed_streams;
      continue;
    }
    const TransferRecord& first = *rows.front();
    auto [ordinal, added] =
        ordinal_of_run.emplace(absl::StrCat(first.run_id, "\x1f", first.iteration), ordinal_of_run.size() + 1);
    g.run_ordinals.push_back(ordinal->second);
    g.hosts.push_back(first.host);
    if (rows.size() == 1) {
      rates.push_back(rows[0]->mb_per_s);
      continue;
    }
    ++g.multi_stream_iterations;
    // What the NAS took: all bytes from the first byte to the last (measure/intake.h),
    // the figure the lab console prints for the run.
    if (auto intake = IntakeOfRows(rows, samples)) {
      rates.push_back(intake->all_mb_per_s);
      continue;
    }
    double bytes = 0, longest = 0, rate_sum = 0;
    bool known = true;
    for (const TransferRecord* r : rows) {
      known &= r->bytes >= 0 && r->duration_s > 0;
      bytes += r->bytes;
      longest = std::max(longest, r->duration_s);
      rate_sum += r->mb_per_s;
    }
    // A file without start times: the longest stream's time; without bytes and
    // durations either, the streams' rates add up (they ran side by side).
    rates.push_back(known ? bytes / longest / 1e6 : rate_sum);
  }
  return rates;
}

std::vector<GroupRows> Group(const ResultTable& table, Role role, const std::string& by) {
  std::vector<GroupRows> groups;
  std::map<std::string, size_t> index;
  // Iterations (per group) where some stream did not finish ok.
  std::set<std::string> failed_iterations;
  for (const TransferRecord& r : table.transfers) {
    if (r.role == role && !r.warmup && r.status != Status::kOk) {
      failed_iterations.insert(absl::StrCat(GroupOf(r, by), "\x1e", IterationKey(r)));
    }
  }
  for (const TransferRecord& r : table.transfers) {
    if (r.role != role || !r.Measured()) continue;
    std::string key = GroupOf(r, by);
    auto [it, added] = index.emplace(key, groups.size());
    if (added) {
      GroupRows group;
      group.group = key;
      group.role = role;
      groups.push_back(std::move(group));
    }
    groups[it->second].rows.push_back(&r);
  }
  const SampleIndex samples = IndexSamples(table);
  for (GroupRows& g : groups) {
    // RFC 3339 UTC times with a fixed format sort as text; rows without one (older
    // files) fall back to iteration order.
    std::stable_sort(g.rows.begin(), g.rows.end(), [](const TransferRecord* a, const TransferRecord* b) {
      return std::tie(a->started_at, a->iteration, a->stream) < std::tie(b->started_at, b->iteration, b->stream);
    });
    g.rates = IterationRates(g, failed_iterations, samples);
  }
  return groups;
}

// Receiver first: its durable MB/s is what a NAS test is about.
std::vector<Role> RolesPresent(const ResultTable& table) {
  std::vector<Role> roles;
  for (Role role : {Role::kReceiver, Role::kSender, Role::kNas}) {
    if (std::any_of(table.transfers.begin(), table.transfers.end(),
                    [role](const TransferRecord& r) { return r.role == role && r.Measured(); })) {
      roles.push_back(role);
    }
  }
  return roles;
}

std::string DriftWarning(const std::string& group, Role role, const TrendResult& t) {
  return absl::StrFormat(
      "%s (%s): MB/s %s with iteration order (Mann-Kendall p=%.3f, Sen's slope %+.1f MB/s per run) - a cache "
      "filling up or a disk heating up? The median hides this; look at the per-iteration chart",
      group, Name(role), t.sen_slope < 0 ? "falls" : "rises", t.p, t.sen_slope);
}

bool Drifts(const TrendResult& t, size_t n) { return n >= kMinTrendRuns && t.p < kAlpha && t.sen_slope != 0; }

void WarnAboutStreams(const GroupRows& g, std::vector<std::string>* warnings) {
  if (g.iterations_with_failed_streams > 0) {
    warnings->push_back(absl::StrFormat("%s (%s): %d iteration%s left out because one of its streams failed", g.group,
                                        Name(g.role), g.iterations_with_failed_streams,
                                        g.iterations_with_failed_streams == 1 ? "" : "s"));
  }
}

std::string SummaryJson(const Summary& s) {
  return absl::StrCat("\"n\":", s.n, ",\"median\":", JsonNumber(s.median), ",\"mean\":", JsonNumber(s.mean),
                      ",\"stddev\":", JsonNumber(s.stddev), ",\"min\":", JsonNumber(s.min),
                      ",\"max\":", JsonNumber(s.max), ",\"p5\":", JsonNumber(s.p5), ",\"p95\":", JsonNumber(s.p95));
}

std::string JsonStrings(const std::vector<std::string>& items) {
  std::vector<std::string> quoted;
  for (const std::string& s : items) quoted.push_back(JsonString(s));
  return absl::StrCat("[", absl::StrJoin(quoted, ","), "]");
}

// The distinct non-empty values of a column over rows, joined with "/" ("" if none).
std::string DistinctValues(const std::vector<const TransferRecord*>& rows, const std::string& column) {
  std::vector<std::string> values;
  for (const TransferRecord* r : rows) {
    const std::string& v = r->Cell(column);
    if (!v.empty() && std::find(values.begin(), values.end(), v) == values.end()) values.push_back(v);
  }
  return absl::StrJoin(values, "/");
}

std::string PathText(const std::vector<const TransferRecord*>& rows) {
  std::vector<std::string> parts;
  for (const auto& [column, name, unit] : {std::tuple{"mtu", "MTU", ""},
                                           {"path_mtu", "path MTU", ""},
                                           {"mss", "MSS", ""},
                                           {"link_mbps", "link", " Mb/s"}}) {
    std::string values = DistinctValues(rows, column);
    if (!values.empty()) parts.push_back(absl::StrCat(name, " ", values, unit));
  }
  std::vector<double> line_rates;
  for (const TransferRecord* r : rows) {
    double pct = 0;
    if (absl::SimpleAtod(r->Cell("line_rate_pct"), &pct) && pct <= kMaxPlausibleLineRatePct) line_rates.push_back(pct);
  }
  if (!line_rates.empty()) parts.push_back(absl::StrFormat("line rate %.1f %% (median)", Summarize(line_rates).median));
  return absl::StrJoin(parts, ", ");
}

std::string DevicesText(const std::vector<const TransferRecord*>& rows) {
  std::map<std::string, std::vector<double>> busy;  // busiest_device -> its busy % per row
  for (const TransferRecord* r : rows) {
    if (!r->row.busiest_device().empty()) busy[r->row.busiest_device()].push_back(r->row.busiest_busy_pct());
  }
  const auto most = std::max_element(busy.begin(), busy.end(),
                                     [](const auto& a, const auto& b) { return a.second.size() < b.second.size(); });
  if (most == busy.end()) return "";
  return absl::StrFormat("%s busiest in %d of %d rows, %.0f %% busy (median)", most->first, most->second.size(),
                         rows.size(), Summarize(most->second).median);
}

// The knee's figures as medians, its shape the most common one; then the stalls.
std::string CacheCliffText(const std::vector<const TransferRecord*>& rows) {
  std::vector<double> burst, bytes, sustained;
  std::map<CacheShape, int> shapes;
  size_t stalled = 0, timed = 0;
  double longest_stall = 0;
  for (const TransferRecord* r : rows) {
    if (std::optional<CacheKnee> knee = KneeOfRow(r->row)) {
      burst.push_back(knee->burst_mb_per_s);
      bytes.push_back(static_cast<double>(knee->burst_bytes));
      sustained.push_back(knee->sustained_mb_per_s);
      ++shapes[knee->shape];
    }
    if (r->row.has_longest_stall_s()) ++timed;
    if (r->row.stall_count() > 0) {
      ++stalled;
      longest_stall = std::max(longest_stall, r->row.longest_stall_s());
    }
  }
  std::string text;
  if (!burst.empty()) {
    const auto shape = std::max_element(shapes.begin(), shapes.end(),
                                        [](const auto& a, const auto& b) { return a.second < b.second; });
    const CacheKnee median{Summarize(burst).median, static_cast<uint64_t>(std::llround(Summarize(bytes).median)),
                           Summarize(sustained).median, 0, shape->first};
    text = absl::StrFormat("cache cliff in %d of %d rows: %s%s", burst.size(), rows.size(), DescribeKnee(median),
                           burst.size() > 1 ? " (medians)" : "");
  }
  if (stalled > 0) {
    absl::StrAppendFormat(&text, "%sstalls in %d of %d rows, the longest %.1f s", text.empty() ? "" : "; ", stalled,
                          timed, longest_stall);
  }
  return text;
}

// The group's many-files rows in words, and their latency percentiles (medians) in ms.
std::string ManyFilesText(const std::vector<const TransferRecord*>& rows, std::vector<double>* latency_ms) {
  std::vector<double> rate, p50, p90, p99, max, own;
  for (const TransferRecord* r : rows) {
    if (!r->row.has_files_per_s() || !r->row.has_file_p50_s()) continue;
    rate.push_back(r->row.files_per_s());
    p50.push_back(r->row.file_p50_s() * 1e3);
    p90.push_back(r->row.file_p90_s() * 1e3);
    p99.push_back(r->row.file_p99_s() * 1e3);
    max.push_back(r->row.file_max_s() * 1e3);
    own.push_back(r->row.metadata_pct());
  }
  if (rate.empty()) return "";
  *latency_ms = {Summarize(p50).median, Summarize(p90).median, Summarize(p99).median, Summarize(max).median};
  return absl::StrFormat(
      "many files in %d of %d rows: %.1f files/s, each file p50 %.2f ms, p99 %.2f ms; the files' own work %.0f %% of "
      "the time%s",
      rate.size(), rows.size(), Summarize(rate).median, Summarize(p50).median, Summarize(p99).median,
      Summarize(own).median, rate.size() > 1 ? " (medians)" : "");
}

std::string ObservationText(const GroupRows& g) {
  std::set<std::string> hosts;
  size_t most_streams = 1;
  std::map<std::string, size_t> streams;
  for (const TransferRecord* r : g.rows) {
    hosts.insert(r->host);
    most_streams = std::max(most_streams, ++streams[IterationKey(*r)]);
  }
  std::string text = hosts.size() > 1
                         ? absl::StrFormat("one per host and iteration (%d hosts, each its own MB/s)", hosts.size())
                         : "one per iteration";
  if (most_streams > 1)
    absl::StrAppendFormat(&text, "; up to %d streams of one together: all bytes over their span", most_streams);
  return text;
}

std::string BottleneckMix(const std::map<std::string, int>& mix) {
  std::vector<std::string> parts;
  for (const auto& [verdict, count] : mix) parts.push_back(absl::StrCat(verdict, " ", count));
  return parts.empty() ? "-" : absl::StrJoin(parts, ", ");
}

// Runs with one transfer are their own row's figure; the section is for runs where
// several transfers met at one NAS.
std::string IntakeText(const std::vector<RunIntake>& intakes) {
  std::string out;
  for (const RunIntake& run : intakes) {
    const IntakeFigures& f = run.figures;
    if (f.transfers < 2) continue;
    if (out.empty()) out = "\nNAS intake per run (all its transfers together, from the receiver's rows and samples):\n";
    absl::StrAppendFormat(&out, "  %s %s iteration %d: %d transfers, %s\n", run.host, run.run_id, run.iteration,
                          f.transfers, IntakeLine(f));
    std::vector<std::string> notes;
    if (run.failed > 0) notes.push_back(absl::StrCat(run.failed, " not ok, left out"));
    if (f.coarse > 0) notes.push_back(absl::StrCat(f.coarse, " shorter than 3 samples (each its own average)"));
    if (f.unsampled > 0) notes.push_back(absl::StrCat(f.unsampled, " without samples (taken as even)"));
    if (!notes.empty()) absl::StrAppend(&out, "    transfers: ", absl::StrJoin(notes, "; "), "\n");
  }
  return out;
}

std::string IntakeJson(const RunIntake& run) {
  const IntakeFigures& f = run.figures;
  return absl::StrCat(
      "{\"run_id\":", JsonString(run.run_id), ",\"label\":", JsonString(run.label), ",\"host\":", JsonString(run.host),
      ",\"iteration\":", run.iteration, ",\"transfers\":", f.transfers, ",\"failed\":", run.failed,
      ",\"bytes\":", JsonNumber(f.bytes), ",\"span_s\":", JsonNumber(f.span_s),
      ",\"all_mb_per_s\":", JsonNumber(f.all_mb_per_s),
      ",\"window_s\":", f.overlapped ? JsonNumber(f.window_s) : "null",
      ",\"while_all_mb_per_s\":", f.overlapped ? JsonNumber(f.while_all_mb_per_s) : "null",
      ",\"step_s\":", JsonNumber(f.step_s), ",\"timeline_is_curve\":", f.TimelineIsCurve() ? "true" : "false",
      ",\"peak_mb_per_s\":", JsonNumber(f.peak_mb_per_s), ",\"median_mb_per_s\":", JsonNumber(f.median_mb_per_s),
      ",\"sum_of_rates_mb_per_s\":", JsonNumber(f.sum_of_rates_mb_per_s), ",\"coarse_transfers\":", f.coarse,
      ",\"unsampled_transfers\":", f.unsampled, "}");
}

}  // namespace

absl::StatusOr<ReportResult> SummarizeResults(const ResultTable& table, std::optional<Role> role,
                                              const std::string& by) {
  if (absl::Status s = CheckColumn(table, by); !s.ok()) return s;
  ReportResult report;
  report.warnings = table.warnings;
  const std::vector<Role> roles = role ? std::vector<Role>{*role} : RolesPresent(table);
  for (Role r : roles) {
    for (const GroupRows& g : Group(table, r, by)) {
      GroupSummary s;
      s.group = g.group;
      s.role = r;
      s.rates_in_order = g.Rates();
      s.run_ordinals = g.run_ordinals;
      s.hosts = g.hosts;
      WarnAboutStreams(g, &report.warnings);
      s.stats = Summarize(s.rates_in_order);
      s.observation = ObservationText(g);
      s.path = PathText(g.rows);
      s.devices = DevicesText(g.rows);
      s.cache_cliff = CacheCliffText(g.rows);
      s.many_files = ManyFilesText(g.rows, &s.file_latency_ms);
      for (const TransferRecord* row : g.rows) ++s.bottlenecks[row->bottleneck.empty() ? "unknown" : row->bottleneck];
      const std::vector<double> per_run = PerRunValues(s.rates_in_order, s.run_ordinals);
      s.trend_runs = per_run.size();
      s.trend = MannKendall(per_run);
      s.drifts = Drifts(s.trend, s.trend_runs);
      if (s.drifts) report.warnings.push_back(DriftWarning(s.group, r, s.trend));
      report.groups.push_back(std::move(s));
    }
  }
  for (const TransferRecord& r : table.transfers) {
    if (role && r.role != *role) continue;
    if (r.status != Status::kOk) {
      report.failures.push_back(&r);
    } else if (r.warmup) {
      ++report.warmups_skipped;
    }
  }
  if (!role || *role == Role::kReceiver) report.intakes = RunIntakes(table);
  if (report.groups.empty()) {
    report.warnings.push_back(absl::StrCat("no measured rows", role ? absl::StrCat(" for role ", Name(*role)) : "",
                                           " (status ok, not a warm-up, with a throughput)"));
  }
  return report;
}

std::vector<double> PerRunValues(const std::vector<double>& values, const std::vector<size_t>& run_ordinals) {
  if (run_ordinals.size() != values.size()) return values;  // no ordinals known: each value is a run
  std::map<size_t, std::vector<double>> runs;
  for (size_t i = 0; i < values.size(); ++i) runs[run_ordinals[i]].push_back(values[i]);
  std::vector<double> out;
  for (const auto& [ordinal, of_run] : runs) out.push_back(Summarize(of_run).median);
  return out;
}

std::string TrendText(const GroupSummary& g) {
  if (g.trend_runs < kMinTrendRuns) {
    return absl::StrFormat("too few runs for a trend (%d run%s, n<%d)", g.trend_runs, g.trend_runs == 1 ? "" : "s",
                           kMinTrendRuns);
  }
  if (!g.drifts) return absl::StrFormat("no trend (Mann-Kendall p=%.3f)", g.trend.p);
  return absl::StrFormat("%s by %.1f MB/s per run (Mann-Kendall p=%.3f)", g.trend.sen_slope < 0 ? "falls" : "rises",
                         std::fabs(g.trend.sen_slope), g.trend.p);
}

absl::StatusOr<ResultTable> FilterRows(const ResultTable& table, const std::vector<std::string>& where) {
  ResultTable kept = table;
  for (const std::string& condition : where) {
    const size_t eq = condition.find('=');
    if (eq == std::string::npos || eq == 0) {
      return absl::InvalidArgumentError(absl::StrCat("--where ", condition, ": expected COLUMN=VALUE"));
    }
    const std::string column = condition.substr(0, eq), value = condition.substr(eq + 1);
    if (absl::Status s = CheckColumn(kept, column); !s.ok()) return s;
    std::vector<TransferRecord> rows;
    for (TransferRecord& r : kept.transfers) {
      if (r.Cell(column) == value) rows.push_back(std::move(r));
    }
    if (rows.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("--where ", condition, ": no row has ", column, " = ", value));
    }
    kept.transfers = std::move(rows);
  }
  // Samples follow their transfers (a chart must not show what was filtered out).
  std::set<std::string> transfers;
  for (const TransferRecord& r : kept.transfers) {
    transfers.insert(TransferKey(r.run_id, r.role, r.host, r.iteration, r.stream));
  }
  std::vector<SampleRecord> samples;
  for (const SampleRecord& s : kept.samples) {
    if (transfers.count(TransferKey(s.run_id, s.role, s.host, s.iteration, s.stream)) > 0) samples.push_back(s);
  }
  kept.samples = std::move(samples);
  return kept;
}

std::string VerdictText(const Comparison& c, size_t baseline_n, bool* significant) {
  *significant = false;
  const size_t n = c.stats.n;
  if (n < kMinRunsPerGroup || baseline_n < kMinRunsPerGroup) {
    return absl::StrFormat("too few runs to tell (n=%d vs %d; %+.1f%%)", baseline_n, n, c.difference.percent);
  }
  if (c.test.smallest_possible_p > kAlpha) {
    return absl::StrFormat("too few runs to tell: n=%d vs %d can never reach p<%.2f (%+.1f%%)", baseline_n, n, kAlpha,
                           c.difference.percent);
  }
  const MedianDifference& d = c.difference;
  if (c.test.p < kAlpha && d.ci_low > 0) {
    *significant = true;
    return absl::StrFormat("faster by %.1f%% (95%% CI %.1f–%.1f%%)", d.percent, d.ci_low, d.ci_high);
  }
  if (c.test.p < kAlpha && d.ci_high < 0) {
    *significant = true;
    return absl::StrFormat("slower by %.1f%% (95%% CI %.1f–%.1f%%)", -d.percent, -d.ci_high, -d.ci_low);
  }
  return absl::StrFormat("no significant difference (%+.1f%%, 95%% CI %+.1f–%+.1f%%)", d.percent, d.ci_low, d.ci_high);
}

// A row's figure for a metric of one value per row: sustained MB/s where it had a cache
// cliff, files/s where it wrote many files.
std::optional<double> RowFigure(const TransferRecord& r, CompareMetric metric) {
  if (metric == CompareMetric::kFilesPerS) {
    if (!r.row.has_files_per_s()) return std::nullopt;
    return r.row.files_per_s();
  }
  std::optional<CacheKnee> knee = KneeOfRow(r.row);
  if (!knee) return std::nullopt;
  return knee->sustained_mb_per_s;
}

// The metrics of one value per row (sustained, files/s), in the order taken; groups
// without such a row are dropped with a warning.
void KeepRowFigures(Role role, CompareMetric metric, std::vector<GroupRows>* groups,
                    std::vector<std::string>* warnings) {
  const char* had = metric == CompareMetric::kFilesPerS ? "wrote many files" : "had a cache cliff";
  std::vector<GroupRows> kept;
  for (GroupRows& g : *groups) {
    GroupRows s;
    s.group = g.group;
    s.role = role;
    std::map<std::string, size_t> ordinal_of_run;
    for (const TransferRecord* r : g.rows) {
      std::optional<double> figure = RowFigure(*r, metric);
      if (!figure) continue;
      s.rows.push_back(r);
      s.rates.push_back(*figure);
      auto [ordinal, added] =
          ordinal_of_run.emplace(absl::StrCat(r->run_id, "\x1f", r->iteration), ordinal_of_run.size() + 1);
      s.run_ordinals.push_back(ordinal->second);
      s.hosts.push_back(r->host);
    }
    const size_t without = g.rows.size() - s.rows.size();
    if (s.rows.empty()) {
      warnings->push_back(absl::StrFormat("%s: none of its %d rows %s: left out", g.group, g.rows.size(), had));
      continue;
    }
    if (without > 0) {
      warnings->push_back(
          absl::StrFormat("%s: %d of its %d rows %s: left out", g.group, without, g.rows.size(),
                          metric == CompareMetric::kFilesPerS ? "wrote one file" : "had no cache cliff"));
    }
    kept.push_back(std::move(s));
  }
  *groups = std::move(kept);
}

// The role compare reads: the one asked for, the receiver for the sustained metric, else
// the receiver when it has measured rows.
absl::StatusOr<Role> CompareRole(const ResultTable& table, std::optional<Role> role, CompareMetric metric) {
  if (metric == CompareMetric::kSustainedMbPerS) {
    if (role && *role != Role::kReceiver) {
      return absl::InvalidArgumentError(
          absl::StrCat(kSustainedMetric, " is the receiver's figure (the end that writes): leave out --role sender"));
    }
    return Role::kReceiver;
  }
  if (role) return *role;
  std::vector<Role> roles = RolesPresent(table);
  if (roles.empty()) return absl::InvalidArgumentError("no measured rows (status ok, not a warm-up) to compare");
  return roles.front();
}

absl::StatusOr<CompareResult> Compare(const ResultTable& table, const std::string& by, const std::string& baseline,
                                      std::optional<Role> role, CompareMetric metric) {
  if (absl::Status s = CheckColumn(table, by); !s.ok()) return s;
  CompareResult result;
  result.by = by;
  result.metric = metric;
  result.warnings = table.warnings;
  absl::StatusOr<Role> compared = CompareRole(table, role, metric);
  if (!compared.ok()) return compared.status();
  result.role = *compared;
  std::vector<GroupRows> groups = Group(table, result.role, by);
  if (metric != CompareMetric::kMbPerS) KeepRowFigures(result.role, metric, &groups, &result.warnings);
  if (groups.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("no measured ", Name(result.role), " rows",
                     metric == CompareMetric::kSustainedMbPerS ? " with a cache cliff (sustained_mb_per_s)"
                     : metric == CompareMetric::kFilesPerS     ? " of many files (files_per_s)"
                                                               : "",
                     " to compare"));
  }
  size_t base = 0;
  if (!baseline.empty()) {
    auto it = std::find_if(groups.begin(), groups.end(), [&](const GroupRows& g) { return g.group == baseline; });
    if (it == groups.end()) {
      std::vector<std::string> names;
      for (const GroupRows& g : groups) names.push_back(g.group);
      return absl::InvalidArgumentError(absl::StrCat("baseline '", baseline, "' has no measured ", Name(result.role),
                                                     " rows; ", by, " values: ", absl::StrJoin(names, ", ")));
    }
    base = static_cast<size_t>(it - groups.begin());
  }
  std::rotate(groups.begin(), groups.begin() + base, groups.begin() + base + 1);
  result.baseline = groups.front().group;
  const std::vector<double> base_rates = groups.front().Rates();
  for (size_t i = 0; i < groups.size(); ++i) {
    Comparison c;
    c.group = groups[i].group;
    c.baseline = i == 0;
    std::vector<double> rates = groups[i].Rates();
    WarnAboutStreams(groups[i], &result.warnings);
    if (by != "label") {
      const std::string labels = DistinctValues(groups[i].rows, "label");
      if (labels.find('/') != std::string::npos) {
        result.warnings.push_back(absl::StrFormat(
            "%s %s pools rows of labels %s (different set-ups, e.g. cache and array): compare within one with "
            "--where label=%s",
            by, c.group, labels, labels.substr(0, labels.find('/'))));
      }
    }
    c.stats = Summarize(rates);
    const std::vector<double> per_run = PerRunValues(rates, groups[i].run_ordinals);
    TrendResult trend = MannKendall(per_run);
    if (Drifts(trend, per_run.size())) result.warnings.push_back(DriftWarning(c.group, result.role, trend));
    if (c.baseline) {
      c.verdict = "baseline";
    } else {
      c.test = MannWhitneyU(base_rates, rates);
      c.difference = BootstrapMedianDifference(base_rates, rates);
      c.verdict = VerdictText(c, base_rates.size(), &c.significant);
      if (rates.size() < kMinRunsPerGroup || base_rates.size() < kMinRunsPerGroup) {
        result.warnings.push_back(absl::StrFormat(
            "%s vs %s: n=%d vs %d is too few to say anything; measure at least %d runs each (5+ to reach p<0.05)",
            c.group, result.baseline, rates.size(), base_rates.size(), kMinRunsPerGroup));
      } else if (c.test.smallest_possible_p > kAlpha) {
        result.warnings.push_back(absl::StrFormat(
            "%s vs %s: with n=%d vs %d the smallest possible p is %.3f, so no difference can be significant; "
            "measure more runs",
            c.group, result.baseline, rates.size(), base_rates.size(), c.test.smallest_possible_p));
      }
    }
    result.rows.push_back(std::move(c));
  }
  if (result.rows.size() == 1) {
    result.warnings.push_back(absl::StrCat("only one ", by, " (", result.baseline, "): nothing to compare against"));
  }
  return result;
}

std::vector<std::string> VerdictLegend(const ReportResult& report) {
  std::set<std::string> words;
  for (const GroupSummary& g : report.groups) {
    for (const auto& [word, count] : g.bottlenecks) words.insert(word);
  }
  std::vector<std::string> legend;
  for (const std::string& word : words) {
    std::string meaning = VerdictMeaning(word);
    if (!meaning.empty()) legend.push_back(absl::StrCat(word, ": ", meaning));
  }
  return legend;
}

std::string ReportText(const ReportResult& report) {
  std::string out;
  int width = 16;  // the label column fits the longest label
  for (const GroupSummary& g : report.groups) width = std::max(width, static_cast<int>(g.group.size()));
  const GroupSummary* previous = nullptr;
  std::vector<std::string> notes;  // per group: what n counts, the path
  auto flush_notes = [&] {
    for (const std::string& note : notes) absl::StrAppend(&out, note);
    notes.clear();
  };
  for (const GroupSummary& g : report.groups) {
    if (previous == nullptr || g.role != previous->role) {
      flush_notes();
      absl::StrAppend(&out, out.empty() ? "" : "\n", Name(g.role), ": ", RateMeaning(g.role), "\n");
      absl::StrAppendFormat(&out, "  %-*s %4s %9s %9s %8s %9s %9s %9s %9s  %s\n", width, "label", "n", "median", "mean",
                            "stddev", "min", "max", "p5", "p95", "bottleneck");
    }
    const Summary& s = g.stats;
    absl::StrAppendFormat(&out, "  %-*s %4d %9.1f %9.1f %8.1f %9.1f %9.1f %9.1f %9.1f  %s\n", width, g.group, s.n,
                          s.median, s.mean, s.stddev, s.min, s.max, s.p5, s.p95, BottleneckMix(g.bottlenecks));
    notes.push_back(absl::StrCat("    ", g.group, ": n counts ", g.observation, g.path.empty() ? "" : "; ", g.path,
                                 "; ", TrendText(g), g.devices.empty() ? "" : "; NAS device: ", g.devices,
                                 g.cache_cliff.empty() ? "" : "; ", g.cache_cliff, g.many_files.empty() ? "" : "; ",
                                 g.many_files, "\n"));
    previous = &g;
  }
  flush_notes();
  absl::StrAppend(&out, IntakeText(report.intakes));
  for (const std::string& line : VerdictLegend(report)) absl::StrAppend(&out, "  ", line, "\n");
  if (report.warmups_skipped > 0) {
    absl::StrAppend(&out, "warm-ups skipped: ", report.warmups_skipped,
                    report.warmups_skipped == 1 ? " row\n" : " rows\n");
  }
  if (!report.failures.empty()) {
    absl::StrAppend(&out, "\nfailures (never averaged in): ", report.failures.size(), "\n");
    for (const TransferRecord* r : report.failures) {
      absl::StrAppendFormat(&out, "  %-16s %-8s iter %3d stream %d  %-7s %s  [%s]\n", r->label, Name(r->role),
                            r->iteration, r->stream, Name(r->status), r->error.empty() ? "-" : r->error, r->source);
    }
  }
  for (const std::string& w : report.warnings) absl::StrAppend(&out, "warning: ", w, "\n");
  return out;
}

std::string ReportJson(const ReportResult& report) {
  std::vector<std::string> groups;
  for (const GroupSummary& g : report.groups) {
    std::vector<std::string> mix;
    for (const auto& [verdict, count] : g.bottlenecks) mix.push_back(absl::StrCat(JsonString(verdict), ":", count));
    groups.push_back(absl::StrCat(
        "{\"label\":", JsonString(g.group), ",\"role\":", JsonString(Name(g.role)), ",", SummaryJson(g.stats),
        ",\"bottleneck\":{", absl::StrJoin(mix, ","), "},\"trend_p\":", JsonNumber(g.trend.p),
        ",\"sen_slope\":", JsonNumber(g.trend.sen_slope), ",\"trend_runs\":", g.trend_runs,
        ",\"drifts\":", g.drifts ? "true" : "false", ",\"observation\":", JsonString(g.observation),
        ",\"path\":", JsonString(g.path), ",\"devices\":", JsonString(g.devices),
        ",\"cache_cliff\":", JsonString(g.cache_cliff), ",\"many_files\":", JsonString(g.many_files), "}"));
  }
  std::vector<std::string> failures;
  for (const TransferRecord* r : report.failures) {
    failures.push_back(absl::StrCat("{\"label\":", JsonString(r->label), ",\"role\":", JsonString(Name(r->role)),
                                    ",\"iteration\":", r->iteration, ",\"stream\":", r->stream,
                                    ",\"status\":", JsonString(Name(r->status)), ",\"error\":", JsonString(r->error),
                                    ",\"source\":", JsonString(r->source), "}"));
  }
  std::vector<std::string> intakes;
  for (const RunIntake& run : report.intakes) intakes.push_back(IntakeJson(run));
  return absl::StrCat("{\"groups\":[", absl::StrJoin(groups, ","), "],\"failures\":[", absl::StrJoin(failures, ","),
                      "],\"warmups_skipped\":", report.warmups_skipped, ",\"warnings\":", JsonStrings(report.warnings),
                      ",\"intake\":[", absl::StrJoin(intakes, ","), "]}\n");
}

std::string CompareMeaning(const CompareResult& c) {
  if (c.metric == CompareMetric::kSustainedMbPerS) {
    return "sustained MB/s (receiver: after the cache cliff, one per row that had one)";
  }
  if (c.metric == CompareMetric::kFilesPerS) return "files/s (one per row that wrote many files)";
  return RateMeaning(c.role);
}

std::string CompareText(const CompareResult& c) {
  std::string out =
      absl::StrCat("compare by ", c.by, ", ", Name(c.role), " ", CompareMeaning(c), ", baseline ", c.baseline, "\n");
  int width = std::max<int>(16, static_cast<int>(c.by.size()));
  for (const Comparison& r : c.rows) width = std::max(width, static_cast<int>(r.group.size()));
  absl::StrAppendFormat(&out, "  %-*s %4s %9s %9s %9s  %s\n", width, c.by, "n", "median", "diff", "p", "verdict");
  for (const Comparison& r : c.rows) {
    if (r.baseline) {
      absl::StrAppendFormat(&out, "  %-*s %4d %9.1f %9s %9s  %s\n", width, r.group, r.stats.n, r.stats.median, "", "",
                            r.verdict);
    } else {
      absl::StrAppendFormat(&out, "  %-*s %4d %9.1f %+8.1f%% %9.4f  %s\n", width, r.group, r.stats.n, r.stats.median,
                            r.difference.percent, r.test.p, r.verdict);
    }
  }
  for (const std::string& w : c.warnings) absl::StrAppend(&out, "warning: ", w, "\n");
  return out;
}

std::string CompareJson(const CompareResult& c) {
  std::vector<std::string> rows;
  for (const Comparison& r : c.rows) {
    std::string row = absl::StrCat("{\"group\":", JsonString(r.group), ",\"baseline\":", r.baseline ? "true" : "false",
                                   ",", SummaryJson(r.stats));
    if (!r.baseline) {
      absl::StrAppend(&row, ",\"diff_pct\":", JsonNumber(r.difference.percent),
                      ",\"ci95_low_pct\":", JsonNumber(r.difference.ci_low),
                      ",\"ci95_high_pct\":", JsonNumber(r.difference.ci_high), ",\"u\":", JsonNumber(r.test.u),
                      ",\"p\":", JsonNumber(r.test.p), ",\"p_method\":", JsonString(r.test.exact ? "exact" : "normal"),
                      ",\"significant\":", r.significant ? "true" : "false");
    }
    absl::StrAppend(&row, ",\"verdict\":", JsonString(r.verdict), "}");
    rows.push_back(std::move(row));
  }
  return absl::StrCat("{\"by\":", JsonString(c.by), ",\"role\":", JsonString(Name(c.role)), ",\"metric\":",
                      JsonString(c.metric == CompareMetric::kSustainedMbPerS ? kSustainedMetric
                                 : c.metric == CompareMetric::kFilesPerS     ? kFilesMetric
                                                                             : "mb_per_s"),
                      ",\"baseline\":", JsonString(c.baseline), ",\"rows\":[", absl::StrJoin(rows, ","),
                      "],\"warnings\":", JsonStrings(c.warnings), "}\n");
}

}  // namespace nasperf
