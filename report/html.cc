#include "report/html.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/fd.h"
#include "measure/cache_knee.h"
#include "measure/intake.h"

namespace nasperf {

std::string HtmlEscape(absl::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

namespace {

constexpr double kWidth = 960, kHeight = 330;
constexpr double kLeft = 70, kRight = 180, kTop = 20, kBottom = 50;  // the legend sits on the right
const char* const kPalette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"};

std::string Color(size_t i) { return kPalette[i % (sizeof(kPalette) / sizeof(kPalette[0]))]; }

// Round tick steps (1, 2, 5 x 10^k) covering [lo, hi]; whole numbers only when the
// axis counts something (runs). Always at least two ticks, whatever the values
// (non-finite ones included).
std::vector<double> Ticks(double lo, double hi, bool whole = false, int target = 6) {
  if (!std::isfinite(lo)) lo = 0;
  if (!std::isfinite(hi) || !(hi > lo)) hi = lo + 1;
  double raw = (hi - lo) / target;
  double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  double step = magnitude;
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (raw <= m * magnitude) {
      step = m * magnitude;
      break;
    }
  }
  if (whole) step = std::max(1.0, std::round(step));
  std::vector<double> ticks;
  for (double t = std::floor(lo / step) * step; t <= hi + step * 1e-9 && ticks.size() < 100; t += step) {
    ticks.push_back(t);
  }
  if (ticks.size() < 2) ticks = {lo, hi};
  return ticks;
}

std::string Num(double v) { return absl::StrFormat("%.1f", v); }

// Maps data coordinates into the plot area and draws the frame, grid and axis labels.
class Plot {
 public:
  Plot(double x_lo, double x_hi, double y_lo, double y_hi, bool whole_x = false) {
    x_ticks_ = Ticks(x_lo, x_hi, whole_x);
    y_ticks_ = Ticks(y_lo, y_hi);
    x_lo_ = std::min(x_lo, x_ticks_.front());
    x_hi_ = std::max(x_hi, x_ticks_.back());
    y_lo_ = std::min(y_lo, y_ticks_.front());
    y_hi_ = std::max(y_hi, y_ticks_.back());
    if (x_hi_ <= x_lo_) x_hi_ = x_lo_ + 1;
    if (y_hi_ <= y_lo_) y_hi_ = y_lo_ + 1;
  }
  double X(double x) const { return kLeft + (x - x_lo_) / (x_hi_ - x_lo_) * (kWidth - kLeft - kRight); }
  double Y(double y) const { return kHeight - kBottom - (y - y_lo_) / (y_hi_ - y_lo_) * (kHeight - kTop - kBottom); }

  std::string Axes(const std::string& x_title, const std::string& y_title, bool x_labels = true) const {
    std::string out = "<g class=\"axes\">";
    for (double t : y_ticks_) {
      absl::StrAppendFormat(&out,
                            "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" class=\"grid\"/>"
                            "<text x=\"%.1f\" y=\"%.1f\" class=\"ytick\">%s</text>",
                            kLeft, kWidth - kRight, Y(t), Y(t), kLeft - 6, Y(t) + 4, absl::StrFormat("%g", t));
    }
    if (x_labels) {
      for (double t : x_ticks_) {
        absl::StrAppendFormat(&out, "<text x=\"%.1f\" y=\"%.1f\" class=\"xtick\">%s</text>", X(t),
                              kHeight - kBottom + 16, absl::StrFormat("%g", t));
      }
    }
    absl::StrAppendFormat(&out,
                          "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" class=\"axis\"/>"
                          "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" class=\"axis\"/>",
                          kLeft, kWidth - kRight, Y(y_lo_), Y(y_lo_), kLeft, kLeft, Y(y_lo_), Y(y_hi_));
    absl::StrAppendFormat(&out, "<text x=\"%.1f\" y=\"%.1f\" class=\"xtitle\">%s</text>", (kLeft + kWidth - kRight) / 2,
                          kHeight - 10, HtmlEscape(x_title));
    absl::StrAppendFormat(&out, "<text transform=\"translate(16 %.1f) rotate(-90)\" class=\"ytitle\">%s</text>",
                          (kTop + kHeight - kBottom) / 2, HtmlEscape(y_title));
    return out + "</g>";
  }

 private:
  std::vector<double> x_ticks_, y_ticks_;
  double x_lo_ = 0, x_hi_ = 1, y_lo_ = 0, y_hi_ = 1;
};

std::string Legend(const std::vector<std::string>& names) {
  std::string out = "<g class=\"legend\">";
  for (size_t i = 0; i < names.size(); ++i) {
    double y = kTop + 10 + 18 * static_cast<double>(i);
    absl::StrAppendFormat(&out,
                          "<rect x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"12\" fill=\"%s\"/>"
                          "<text x=\"%.1f\" y=\"%.1f\">%s</text>",
                          kWidth - kRight + 16, y - 10, Color(i), kWidth - kRight + 34, y, HtmlEscape(names[i]));
  }
  return out + "</g>";
}

std::string SvgOpen(const std::string& name, const std::string& description) {
  return absl::StrFormat(
      "<svg class=\"chart\" data-chart=\"%s\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 %g %g\" "
      "width=\"%g\" height=\"%g\" role=\"img\" aria-label=\"%s\">",
      HtmlEscape(name), kWidth, kHeight, kWidth, kHeight, HtmlEscape(description));
}

// MB/s of every observation against its run (the n-th iteration taken, whole
// numbers): one line per group and host, so three clients of one lab run are three
// points above one run, not three runs. No sum of their rates: what a NAS took from
// them together is its intake chart (they seldom all ran for the same time).
std::string IterationChart(const std::vector<const GroupSummary*>& groups, Role role) {
  double y_hi = 0;
  size_t x_hi = 1;
  std::vector<std::string> names;
  for (const GroupSummary* g : groups) {
    for (size_t k = 0; k < g->rates_in_order.size(); ++k) {
      y_hi = std::max(y_hi, g->rates_in_order[k]);
      x_hi = std::max(x_hi, g->run_ordinals[k]);
    }
    names.push_back(g->group);
  }
  Plot plot(1, static_cast<double>(x_hi), 0, y_hi * 1.05, /*whole_x=*/true);
  std::string out = SvgOpen(absl::StrCat("iterations-", Name(role)), "MB/s per iteration per label");
  out += plot.Axes("run (measured iterations in the order taken)", "MB/s");
  out += "<g class=\"marks\">";
  for (size_t i = 0; i < groups.size(); ++i) {
    const GroupSummary& g = *groups[i];
    std::map<std::string, std::string> lines;  // host -> points
    for (size_t k = 0; k < g.rates_in_order.size(); ++k) {
      const double x = plot.X(static_cast<double>(g.run_ordinals[k])), y = plot.Y(g.rates_in_order[k]);
      absl::StrAppendFormat(&lines[g.hosts[k]], "%.1f,%.1f ", x, y);
    }
    for (const auto& [host, points] : lines) {
      absl::StrAppendFormat(&out, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"%s\"/>", Color(i),
                            points);
    }
    for (size_t k = 0; k < g.rates_in_order.size(); ++k) {
      absl::StrAppendFormat(
          &out, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"%s\"><title>%s run %d%s: %s MB/s</title></circle>",
          plot.X(static_cast<double>(g.run_ordinals[k])), plot.Y(g.rates_in_order[k]), Color(i), HtmlEscape(g.group),
          g.run_ordinals[k], lines.size() > 1 ? HtmlEscape(absl::StrCat(" (", g.hosts[k], ")")) : "",
          Num(g.rates_in_order[k]));
    }
  }
  out += "</g>" + Legend(names) + "</svg>";
  return out;
}

// Box plots: box from the 25th to the 75th percentile, a line at the median, whiskers
// to min and max, every run as a dot.
std::string BoxChart(const std::vector<const GroupSummary*>& groups, Role role) {
  double y_hi = 0;
  std::vector<std::string> names;
  for (const GroupSummary* g : groups) {
    y_hi = std::max(y_hi, g->stats.max);
    names.push_back(g->group);
  }
  const double slots = static_cast<double>(groups.size());
  Plot plot(0, slots, 0, y_hi * 1.05);
  std::string out = SvgOpen(absl::StrCat("boxes-", Name(role)), "Box plots of MB/s per label");
  out += plot.Axes("label", "MB/s", /*x_labels=*/false);
  out += "<g class=\"marks\">";
  const double slot_width = (kWidth - kLeft - kRight) / std::max(1.0, slots);
  const double box_width = std::min(80.0, slot_width * 0.5);
  for (size_t i = 0; i < groups.size(); ++i) {
    std::vector<double> sorted = groups[i]->rates_in_order;
    std::sort(sorted.begin(), sorted.end());
    if (sorted.empty()) continue;
    double q1 = PercentileSorted(sorted, 0.25), q3 = PercentileSorted(sorted, 0.75);
    double median = PercentileSorted(sorted, 0.5);
    double cx = kLeft + slot_width * (static_cast<double>(i) + 0.5);
    std::string color = Color(i);
    absl::StrAppendFormat(&out, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#444\"/>", cx, cx,
                          plot.Y(sorted.front()), plot.Y(sorted.back()));
    for (double w : {sorted.front(), sorted.back()}) {
      absl::StrAppendFormat(&out, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#444\"/>",
                            cx - box_width / 4, cx + box_width / 4, plot.Y(w), plot.Y(w));
    }
    absl::StrAppendFormat(
        &out,
        "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\" fill-opacity=\"0.35\" "
        "stroke=\"%s\"><title>%s: median %s, quartiles %s-%s, min %s, max %s MB/s</title></rect>",
        cx - box_width / 2, plot.Y(q3), box_width, std::max(1.0, plot.Y(q1) - plot.Y(q3)), color, color,
        HtmlEscape(groups[i]->group), Num(median), Num(q1), Num(q3), Num(sorted.front()), Num(sorted.back()));
    absl::StrAppendFormat(&out,
                          "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#000\" stroke-width=\"2\"/>",
                          cx - box_width / 2, cx + box_width / 2, plot.Y(median), plot.Y(median));
    for (size_t k = 0; k < sorted.size(); ++k) {
      double jitter = (static_cast<double>(k % 5) - 2) * box_width / 12;
      absl::StrAppendFormat(&out, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\" fill=\"%s\"/>", cx + jitter,
                            plot.Y(sorted[k]), color);
    }
    absl::StrAppendFormat(&out, "<text x=\"%.1f\" y=\"%.1f\" class=\"xtick\">%s (n=%d)</text>", cx,
                          kHeight - kBottom + 16, HtmlEscape(groups[i]->group), sorted.size());
  }
  out += "</g></svg>";
  return out;
}

// Many-files groups: each file's create-to-close time at p50, p90, p99 and the max (the
// medians over the group's rows), a line per group: where the slow files begin.
std::string FileLatencyChart(const std::vector<const GroupSummary*>& groups, Role role) {
  constexpr double kAt[] = {50, 90, 99, 100};
  double y_hi = 0;
  std::vector<const GroupSummary*> drawn;
  std::vector<std::string> names;
  for (const GroupSummary* g : groups) {
    if (g->file_latency_ms.size() != 4) continue;
    drawn.push_back(g);
    names.push_back(g->group);
    y_hi = std::max(y_hi, g->file_latency_ms.back());
  }
  if (drawn.empty()) return "";
  Plot plot(50, 100, 0, y_hi * 1.05);
  std::string out =
      SvgOpen(absl::StrCat("file-latency-", Name(role)), "Each file's create-to-close time by percentile");
  out += plot.Axes("percentile of the files (100: the slowest)", "ms, create to close");
  out += "<g class=\"marks\">";
  for (size_t i = 0; i < drawn.size(); ++i) {
    std::string points;
    for (size_t k = 0; k < 4; ++k)
      absl::StrAppendFormat(&points, "%.1f,%.1f ", plot.X(kAt[k]), plot.Y(drawn[i]->file_latency_ms[k]));
    absl::StrAppendFormat(&out, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"%s\"/>", Color(i),
                          points);
    for (size_t k = 0; k < 4; ++k) {
      absl::StrAppendFormat(
          &out, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"%s\"><title>%s: p%g %.2f ms</title></circle>",
          plot.X(kAt[k]), plot.Y(drawn[i]->file_latency_ms[k]), Color(i), HtmlEscape(drawn[i]->group), kAt[k],
          drawn[i]->file_latency_ms[k]);
    }
  }
  return out + "</g>" + Legend(names) + "</svg>";
}

// One transfer's marks on the timeline. Fewer than kMinTimelineSamples samples are not
// a curve: such a transfer is drawn flat at its average, over its time, and said so.
std::string SeriesMarks(const Plot& plot, const std::vector<const SampleRecord*>& points, const std::string& color,
                        bool* flat) {
  const SampleRecord& first = *points.front();
  const std::string title =
      absl::StrFormat("%s iteration %d stream %d (%s)", first.label, first.iteration, first.stream, first.host);
  *flat = points.size() < kMinTimelineSamples;
  if (*flat) {
    double mb = 0, previous = 0;
    for (const SampleRecord* p : points) {
      mb += p->bytes >= 0 ? p->bytes / 1e6 : p->mb_per_s * std::max(0.0, p->t_s - previous);
      previous = p->t_s;
    }
    const double end = points.back()->t_s, average = end > 0 ? mb / end : 0;
    return absl::StrFormat(
        "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"1.5\" "
        "stroke-dasharray=\"4 3\"><title>%s: %d interval%s, drawn as its average %s MB/s</title></line>",
        plot.X(0), plot.X(end), plot.Y(average), plot.Y(average), color, HtmlEscape(title), points.size(),
        points.size() == 1 ? "" : "s", Num(average));
  }
  std::string coords;
  for (const SampleRecord* p : points)
    absl::StrAppendFormat(&coords, "%.1f,%.1f ", plot.X(p->t_s), plot.Y(p->mb_per_s));
  return absl::StrFormat(
      "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" stroke-opacity=\"0.75\" "
      "points=\"%s\"><title>%s</title></polyline>",
      color, coords, HtmlEscape(title));
}

// Where a transfer's cache cliff was (measure/cache_knee.h): a drop from its burst rate to
// the sustained one at the knee, with the knee and the row's stalls in words.
struct KneeOfSeries {
  CacheKnee knee;
  std::string stalls;  // DescribeStalls
};
std::string KneeMark(const Plot& plot, const KneeOfSeries& k, const std::string& color, const std::string& title) {
  const CacheKnee& knee = k.knee;
  const double x = plot.X(knee.knee_s);
  return absl::StrFormat(
      "<g class=\"knee\"><title>%s: cache cliff at %.1f s: %s%s%s</title><line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" "
      "y2=\"%.1f\" stroke=\"%s\" stroke-width=\"2\" stroke-dasharray=\"2 2\"/><circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" "
      "fill=\"none\" stroke=\"%s\" stroke-width=\"2\"/></g>",
      HtmlEscape(title), knee.knee_s, HtmlEscape(DescribeKnee(knee)), k.stalls.empty() ? "" : "; ",
      HtmlEscape(k.stalls), x, x, plot.Y(knee.burst_mb_per_s), plot.Y(knee.sustained_mb_per_s), color, x,
      plot.Y(knee.burst_mb_per_s), color);
}

// Per-interval MB/s of every measured transfer against seconds since its first byte.
// Samples of warm-ups and failed transfers are left out like their rows; samples
// with no transfer row at all (a samples.csv given alone) are shown. *flat counts the
// transfers too short for a curve.
std::string TimelineChart(const ResultTable& table, Role role, const std::vector<std::string>& group_order,
                          size_t* flat) {
  const std::vector<SampleRecord>& samples = table.samples;
  std::set<std::string> measured, unmeasured;
  std::map<std::string, KneeOfSeries> knees;
  for (const TransferRecord& r : table.transfers) {
    const std::string key = TransferKey(r.run_id, r.role, r.host, r.iteration, r.stream);
    (r.Measured() ? measured : unmeasured).insert(key);
    if (std::optional<CacheKnee> knee = KneeOfRow(r.row); knee && r.Measured()) {
      knees.emplace(key, KneeOfSeries{*knee, DescribeStalls(r.row)});
    }
  }
  std::map<std::string, size_t> color_of;
  for (size_t i = 0; i < group_order.size(); ++i) color_of[group_order[i]] = i;
  // One series per transfer, in file order.
  std::vector<std::string> keys;
  std::map<std::string, std::vector<const SampleRecord*>> series;
  double t_hi = 0, y_hi = 0;
  for (const SampleRecord& s : samples) {
    if (s.role != role) continue;
    std::string key = TransferKey(s.run_id, s.role, s.host, s.iteration, s.stream);
    if (unmeasured.count(key) > 0 && measured.count(key) == 0) continue;
    auto [it, added] = series.emplace(key, std::vector<const SampleRecord*>());
    if (added) keys.push_back(key);
    it->second.push_back(&s);
    t_hi = std::max(t_hi, s.t_s);
    y_hi = std::max(y_hi, s.mb_per_s);
    if (color_of.count(s.label) == 0) {
      size_t next = color_of.size();
      color_of[s.label] = next;
    }
  }
  *flat = 0;
  if (keys.empty()) return "";
  Plot plot(0, t_hi, 0, y_hi * 1.05);
  std::string out = SvgOpen(absl::StrCat("timeline-", Name(role)), "Per-interval MB/s of each transfer over time");
  out += plot.Axes("seconds since the transfer's first byte", "MB/s in the interval");
  out += "<g class=\"marks\">";
  for (const std::string& key : keys) {
    std::vector<const SampleRecord*>& points = series[key];
    std::stable_sort(points.begin(), points.end(),
                     [](const SampleRecord* a, const SampleRecord* b) { return a->t_s < b->t_s; });
    bool is_flat = false;
    const std::string color = Color(color_of[points.front()->label]);
    out += SeriesMarks(plot, points, color, &is_flat);
    *flat += is_flat ? 1 : 0;
    if (auto knee = knees.find(key); knee != knees.end() && !is_flat) {
      const SampleRecord& first = *points.front();
      out += KneeMark(
          plot, knee->second, color,
          absl::StrFormat("%s iteration %d stream %d (%s)", first.label, first.iteration, first.stream, first.host));
    }
  }
  std::vector<std::string> names(color_of.size());
  for (const auto& [name, i] : color_of) names[i] = name;
  out += "</g>" + Legend(names) + "</svg>";
  return out;
}

std::string Distinct(const ResultTable& table, const std::string& column, std::optional<Role> role = std::nullopt) {
  std::vector<std::string> values;
  std::set<std::string> seen;
  for (const TransferRecord& r : table.transfers) {
    if (role && r.role != *role) continue;
    const std::string& v = r.Cell(column);
    if (!v.empty() && seen.insert(v).second) values.push_back(v);
  }
  return values.empty() ? "-" : absl::StrJoin(values, ", ");
}

std::string Row(const std::vector<std::string>& cells, const char* tag = "td") {
  std::string out = "<tr>";
  for (const std::string& c : cells) absl::StrAppend(&out, "<", tag, ">", HtmlEscape(c), "</", tag, ">");
  return out + "</tr>\n";
}

std::string MetadataTable(const ResultTable& table, const std::string& generator) {
  std::string first, last;
  for (const TransferRecord& r : table.transfers) {
    if (r.started_at.empty()) continue;
    if (first.empty() || r.started_at < first) first = r.started_at;
    if (last.empty() || r.started_at > last) last = r.started_at;
  }
  std::vector<std::pair<std::string, std::string>> facts = {
      {"runs", Distinct(table, "run_id")},
      {"labels", Distinct(table, "label")},
      {"sender hosts", Distinct(table, "host", Role::kSender)},
      {"receiver hosts", Distinct(table, "host", Role::kReceiver)},
      {"time span", first.empty() ? "-" : absl::StrCat(first, " to ", last)},
      {"transports", Distinct(table, "transport")},
      {"write modes", Distinct(table, "write_mode")},
      {"sync policies", Distinct(table, "sync_policy")},
      {"MTU (sender)", Distinct(table, "mtu", Role::kSender)},
      {"MTU (receiver)", Distinct(table, "mtu", Role::kReceiver)},
      {"path MTU", Distinct(table, "path_mtu")},
      {"MSS", Distinct(table, "mss")},
      {"link Mb/s", Distinct(table, "link_mbps")},
      {"agent versions", Distinct(table, "version")},
      {"report by", generator},
      {"input files", absl::StrJoin(table.files, ", ")},
  };
  std::string out = "<table class=\"meta\">\n";
  for (const auto& [name, value] : facts) {
    // Columns no agent fills yet (path MTU, versions) would only add rows of dashes.
    if (value == "-" && (name == "path MTU" || name == "agent versions")) continue;
    out += Row({name, value});
  }
  return out + "</table>\n";
}

std::string List(const std::vector<std::string>& items);

std::string SummaryTable(const ReportResult& report) {
  std::string out =
      "<table>\n" + Row({"label", "role", "n", "median", "mean", "stddev", "min", "max", "p5", "p95", "bottleneck",
                         "trend", "n counts", "path", "NAS device", "cache cliff", "many files"},
                        "th");
  for (const GroupSummary& g : report.groups) {
    std::vector<std::string> mix;
    for (const auto& [verdict, count] : g.bottlenecks) mix.push_back(absl::StrCat(verdict, " ", count));
    const Summary& s = g.stats;
    out += Row({g.group, Name(g.role), absl::StrCat(s.n), Num(s.median), Num(s.mean), Num(s.stddev), Num(s.min),
                Num(s.max), Num(s.p5), Num(s.p95), absl::StrJoin(mix, ", "), TrendText(g), g.observation,
                g.path.empty() ? "-" : g.path, g.devices.empty() ? "-" : g.devices,
                g.cache_cliff.empty() ? "-" : g.cache_cliff, g.many_files.empty() ? "-" : g.many_files});
  }
  out += "</table>\n";
  std::vector<std::string> legend = VerdictLegend(report);
  if (!legend.empty()) absl::StrAppend(&out, "<p>Verdicts:</p>", List(legend));
  return out;
}

std::string CompareTable(const CompareResult& c) {
  std::string out =
      absl::StrCat("<p>By <b>", HtmlEscape(c.by), "</b>, ", Name(c.role), " ", HtmlEscape(RateMeaning(c.role)),
                   ", against <b>", HtmlEscape(c.baseline), "</b>.</p>\n<table class=\"compare\">\n");
  out += Row({c.by, "n", "median MB/s", "difference", "95% CI", "Mann-Whitney p", "verdict"}, "th");
  for (const Comparison& r : c.rows) {
    if (r.baseline) {
      out += Row({r.group, absl::StrCat(r.stats.n), Num(r.stats.median), "", "", "", r.verdict});
    } else {
      out +=
          Row({r.group, absl::StrCat(r.stats.n), Num(r.stats.median), absl::StrFormat("%+.1f%%", r.difference.percent),
               absl::StrFormat("%+.1f%% to %+.1f%%", r.difference.ci_low, r.difference.ci_high),
               absl::StrFormat("%.4f (%s)", r.test.p, r.test.exact ? "exact" : "normal approx."), r.verdict});
    }
  }
  return out + "</table>\n";
}

std::string List(const std::vector<std::string>& items) {
  std::string out = "<ul>";
  for (const std::string& i : items) absl::StrAppend(&out, "<li>", HtmlEscape(i), "</li>");
  return out + "</ul>\n";
}

// Per NAS: what it took from all the transfers of each run together (measure/intake.h),
// one step line per run against seconds since the run's first byte.
std::string IntakeChart(const std::string& host, const std::vector<const RunIntake*>& runs) {
  double t_hi = 0, y_hi = 0;
  for (const RunIntake* r : runs) {
    t_hi = std::max(t_hi, r->figures.span_s);
    y_hi = std::max(y_hi, r->figures.peak_mb_per_s);
  }
  Plot plot(0, t_hi, 0, y_hi * 1.05);
  std::string out = SvgOpen(absl::StrCat("intake-", host), "MB/s the NAS took from all transfers of a run");
  out += plot.Axes("seconds since the run's first byte at the NAS", "MB/s into the NAS");
  out += "<g class=\"marks\">";
  std::vector<std::string> names;
  for (size_t i = 0; i < runs.size(); ++i) {
    const IntakeFigures& f = runs[i]->figures;
    std::string coords;
    double at = 0;
    for (size_t k = 0; k < f.timeline_mb_per_s.size() && k < f.timeline_len_s.size(); ++k) {
      const double y = plot.Y(f.timeline_mb_per_s[k]);
      at += f.timeline_len_s[k];
      absl::StrAppendFormat(&coords, "%.1f,%.1f %.1f,%.1f ", plot.X(at - f.timeline_len_s[k]), y, plot.X(at), y);
    }
    const std::string name = absl::StrFormat("%s iteration %d", runs[i]->run_id, runs[i]->iteration);
    absl::StrAppendFormat(&out,
                          "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" points=\"%s\"><title>%s: "
                          "%s</title></polyline>",
                          Color(i), coords, HtmlEscape(name), HtmlEscape(IntakeLine(f)));
    names.push_back(name);
  }
  out += "</g>" + Legend(names) + "</svg>";
  return out;
}

// Past this many bands a legend would run off the chart; each band keeps its tooltip.
constexpr size_t kMaxLegendBands = 12;

// One run of one NAS as stacked bands, one per transfer, on the intake's grid: the top
// edge is the NAS's intake timeline, each band what one client's transfer added to it.
std::string IntakeStackChart(const RunIntake& run) {
  const IntakeFigures& f = run.figures;
  const auto& bands = f.timeline_by_transfer_mb_per_s;
  const size_t steps = f.timeline_mb_per_s.size();
  Plot plot(0, f.span_s, 0, f.peak_mb_per_s * 1.05);
  std::string out = SvgOpen(absl::StrCat("intake-stack-", run.host),
                            absl::StrFormat("MB/s the NAS %s took in run %s iteration %d, one band per transfer",
                                            run.host, run.run_id, run.iteration));
  out += plot.Axes(
      absl::StrFormat("seconds since the first byte at the NAS (run %s iteration %d)", run.run_id, run.iteration),
      "MB/s into the NAS, stacked");
  out += "<g class=\"marks\">";
  std::vector<double> below(steps, 0);
  std::vector<std::string> names;
  for (size_t b = 0; b < bands.size() && b < run.senders.size(); ++b) {
    std::string upper, lower;
    double at = 0;
    for (size_t k = 0; k < steps && k < bands[b].size() && k < f.timeline_len_s.size(); ++k) {
      const double top = below[k] + bands[b][k];
      absl::StrAppendFormat(&upper, "%.1f,%.1f %.1f,%.1f ", plot.X(at), plot.Y(top), plot.X(at + f.timeline_len_s[k]),
                            plot.Y(top));
      at += f.timeline_len_s[k];
    }
    for (size_t k = std::min(steps, f.timeline_len_s.size()); k-- > 0;) {
      absl::StrAppendFormat(&lower, "%.1f,%.1f %.1f,%.1f ", plot.X(at), plot.Y(below[k]),
                            plot.X(at - f.timeline_len_s[k]), plot.Y(below[k]));
      at -= f.timeline_len_s[k];
      if (k < bands[b].size()) below[k] += bands[b][k];
    }
    absl::StrAppendFormat(&out,
                          "<polygon fill=\"%s\" fill-opacity=\"0.75\" points=\"%s%s\"><title>%s</title></polygon>",
                          Color(b), upper, lower, HtmlEscape(run.senders[b]));
    names.push_back(run.senders[b]);
  }
  out += "</g>";
  if (names.size() <= kMaxLegendBands) out += Legend(names);
  return out + "</svg>";
}

// The NAS intake figures per run and a chart per NAS, for runs of several transfers.
std::string IntakeSection(const ReportResult& report) {
  std::map<std::string, std::vector<const RunIntake*>> by_host;
  std::string rows;
  for (const RunIntake& r : report.intakes) {
    const IntakeFigures& f = r.figures;
    if (f.transfers < 2) continue;
    by_host[r.host].push_back(&r);
    rows +=
        Row({r.host, r.run_id, absl::StrCat(r.iteration), absl::StrCat(f.transfers), Num(f.all_mb_per_s),
             f.overlapped ? absl::StrFormat("%s (%.3f s)", Num(f.while_all_mb_per_s), f.window_s) : "never all at once",
             f.TimelineIsCurve() ? Num(f.peak_mb_per_s) : "-", f.TimelineIsCurve() ? Num(f.median_mb_per_s) : "-",
             Num(f.sum_of_rates_mb_per_s)});
  }
  if (rows.empty()) return "";
  std::string out =
      "<h2>NAS intake per run: all its transfers together</h2>\n<p class=\"note\">All bytes/span: every byte over "
      "the first byte to the last. While all ran: bytes in the window where every transfer ran, over that window "
      "(what the NAS takes at once). Peak and median: of the summed per-interval timeline. The sum of the "
      "transfers' own rates is shown for contrast: it is what the NAS took only when all started and ended "
      "together. Below the table, per NAS: each run's intake timeline, then its last run stacked, one band per "
      "transfer (who the intake came from, and when).</p>\n<table>\n";
  out += Row({"NAS", "run", "iteration", "transfers", "all bytes/span MB/s", "while all ran MB/s", "timeline peak",
              "timeline median", "sum of rates (not intake)"},
             "th");
  out += rows + "</table>\n";
  for (const auto& [host, runs] : by_host) {
    out += IntakeChart(host, runs);
    // The last run stacked by transfer: who the NAS's intake came from, and when.
    const RunIntake& last = *runs.back();
    if (last.figures.TimelineIsCurve() && !last.figures.timeline_by_transfer_mb_per_s.empty()) {
      out += IntakeStackChart(last);
    }
  }
  return out;
}

constexpr char kStyle[] = R"(
body { font: 14px/1.45 system-ui, sans-serif; margin: 24px; color: #222; max-width: 1000px; }
h1 { font-size: 22px; } h2 { font-size: 17px; margin-top: 28px; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; margin: 8px 0; } td, th { border: 1px solid #ddd; padding: 3px 8px; text-align: right; }
td:first-child, th:first-child, table.meta td, table.compare td:last-child { text-align: left; }
th { background: #f4f4f4; }
svg.chart { display: block; margin: 6px 0 18px; background: #fff; }
svg .grid { stroke: #eee; } svg .axis { stroke: #888; }
svg text { font: 12px system-ui, sans-serif; fill: #333; }
svg .ytick { text-anchor: end; } svg .xtick, svg .xtitle, svg .ytitle { text-anchor: middle; }
.warn { color: #8a4b00; } .note { color: #666; }
)";

}  // namespace

std::string RenderHtmlReport(const HtmlReportInput& in) {
  const ResultTable& table = *in.table;
  const ReportResult& report = *in.report;
  std::string out = absl::StrCat(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>nasperf report</title>\n<style>",
      kStyle, "</style></head><body>\n<h1>nasperf report</h1>\n");
  absl::StrAppend(&out, "<p class=\"note\">Throughput in decimal MB/s (10<sup>6</sup> bytes/s). Warm-ups (",
                  report.warmups_skipped, report.warmups_skipped == 1 ? " row" : " rows",
                  ") and rows whose status is not ok (", report.failures.size(),
                  ") are left out of every number and chart.</p>\n");
  if (in.compare != nullptr) absl::StrAppend(&out, "<h2>Comparison</h2>\n", CompareTable(*in.compare));
  std::vector<std::string> warnings = report.warnings;
  if (in.compare != nullptr) {
    for (const std::string& w : in.compare->warnings) {
      if (std::find(warnings.begin(), warnings.end(), w) == warnings.end()) warnings.push_back(w);
    }
  }
  if (!warnings.empty()) absl::StrAppend(&out, "<div class=\"warn\"><b>Warnings</b>", List(warnings), "</div>\n");

  std::vector<Role> roles;
  for (const GroupSummary& g : report.groups) {
    if (std::find(roles.begin(), roles.end(), g.role) == roles.end()) roles.push_back(g.role);
  }
  for (Role role : roles) {
    std::vector<const GroupSummary*> groups;
    std::vector<std::string> names;
    for (const GroupSummary& g : report.groups) {
      if (g.role == role) {
        groups.push_back(&g);
        names.push_back(g.group);
      }
    }
    absl::StrAppend(&out, "<h2>", Name(role), ": ", HtmlEscape(RateMeaning(role)), " per iteration</h2>\n",
                    IterationChart(groups, role));
    absl::StrAppend(&out, "<h2>", Name(role), ": distribution per label</h2>\n", BoxChart(groups, role));
    if (std::string latency = FileLatencyChart(groups, role); !latency.empty()) {
      absl::StrAppend(&out, "<h2>", Name(role), ": each file's create to close (many-files rows, medians)</h2>\n",
                      latency);
    }
    size_t flat = 0;
    std::string timeline = TimelineChart(table, role, names, &flat);
    if (!timeline.empty()) {
      absl::StrAppend(&out, "<h2>", Name(role),
                      ": per-interval timeline (a cliff is a cache filling or a disk slowing)</h2>\n", timeline);
    }
    if (flat > 0) {
      absl::StrAppendFormat(&out,
                            "<p class=\"note\">%d transfer%s shorter than %d intervals %s drawn flat (dashed) at "
                            "%s average: %s samples are not a curve. A shorter --interval shows their shape.</p>\n",
                            flat, flat == 1 ? "" : "s", kMinTimelineSamples, flat == 1 ? "is" : "are",
                            flat == 1 ? "its" : "their", flat == 1 ? "its" : "their");
    }
  }
  out += IntakeSection(report);
  absl::StrAppend(&out, "<h2>Summary</h2>\n", SummaryTable(report));
  if (!report.failures.empty()) {
    out += "<h2>Failures (never averaged in)</h2>\n<table>\n";
    out += Row({"label", "role", "iteration", "stream", "status", "error", "where"}, "th");
    for (const TransferRecord* r : report.failures) {
      out += Row({r->label, Name(r->role), absl::StrCat(r->iteration), absl::StrCat(r->stream), Name(r->status),
                  r->error, r->source});
    }
    out += "</table>\n";
  }
  absl::StrAppend(&out, "<h2>Run</h2>\n", MetadataTable(table, in.generator), "</body></html>\n");
  return out;
}

absl::Status WriteHtmlReport(const HtmlReportInput& input, const std::string& path) {
  return ReplaceFile(path, RenderHtmlReport(input), 0644, /*durable=*/false);
}

absl::StatusOr<std::string> RenderHtmlReportFor(const ResultTable& table, std::optional<Role> role,
                                                const std::string& generator) {
  auto report = SummarizeResults(table, role);
  if (!report.ok()) return report.status();
  // Nothing measured leaves nothing to compare; the report still shows the failures.
  auto compare = Compare(table, "label", "", role);
  HtmlReportInput input;
  input.table = &table;
  input.report = &*report;
  input.compare = compare.ok() ? &*compare : nullptr;
  input.generator = generator;
  return RenderHtmlReport(input);
}

absl::Status WriteHtmlReportFor(const ResultTable& table, std::optional<Role> role, const std::string& path,
                                const std::string& generator) {
  absl::StatusOr<std::string> html = RenderHtmlReportFor(table, role, generator);
  if (!html.ok()) return html.status();
  return ReplaceFile(path, *html, 0644, /*durable=*/false);
}

}  // namespace nasperf
