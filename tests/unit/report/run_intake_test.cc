// The NAS's intake read back from transfers.csv and samples.csv: the issue's two
// clients give all bytes/span and while-all-ran exactly, report and compare count the
// run by it, a live row and its CSV give the same line, and 16 hosts x 3 runs is too
// few runs for a trend however their 48 rows line up.
#include "report/run_intake.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "report/analysis.h"
#include "report/html.h"
#include "wire/columns.h"

namespace nasperf {
namespace {

using ::testing::HasSubstr;

constexpr char kTransfersHeader[] =
    "run_id,label,iteration,stream,role,host,started_at,first_byte_s,duration_s,bytes,"
    "mb_per_s,status,warmup\n";
constexpr char kSamplesHeader[] = "run_id,label,iteration,stream,role,host,t_s,bytes,mb_per_s,transfer_id\n";

// One client at 1000 MB/s for 1 s and one at 100 MB/s for 10 s into one NAS, both
// from 10:00:00; 1 s samples.
ResultTable TwoClients() {
  ResultTable t;
  std::string transfers = kTransfersHeader;
  transfers += "r,two,1,0,receiver,nas,2026-12-02T10:00:00.000Z,0.000000,1.000000,1000000000,1000.00,ok,false\n";
  transfers += "r,two,1,1,receiver,nas,2026-12-02T10:00:00.000Z,0.000000,10.000000,1000000000,100.00,ok,false\n";
  transfers += "r,two,1,0,sender,c1,2026-12-02T10:00:00.000Z,0.000000,1.000000,1000000000,1000.00,ok,false\n";
  transfers += "r,two,1,1,sender,c2,2026-12-02T10:00:00.000Z,0.000000,10.000000,1000000000,100.00,ok,false\n";
  std::string samples = kSamplesHeader;
  samples += "r,two,1,0,receiver,nas,1.000,1000000000,1000.00,1\n";
  for (int s = 1; s <= 10; ++s) samples += absl::StrFormat("r,two,1,1,receiver,nas,%d.000,100000000,100.00,2\n", s);
  EXPECT_TRUE(ParseTransfersCsv("transfers.csv", transfers, &t).ok());
  EXPECT_TRUE(ParseSamplesCsv("samples.csv", samples, &t).ok());
  return t;
}

TEST(RunIntake, TheIssuesTwoClientsReadBackFromTheCsv) {
  const std::vector<RunIntake> runs = RunIntakes(TwoClients());
  ASSERT_EQ(runs.size(), 1u);
  const IntakeFigures& f = runs[0].figures;
  EXPECT_EQ(runs[0].host, "nas");
  EXPECT_EQ(f.transfers, 2u);
  EXPECT_DOUBLE_EQ(f.all_mb_per_s, 200);
  EXPECT_DOUBLE_EQ(f.while_all_mb_per_s, 1100);
  EXPECT_DOUBLE_EQ(f.window_s, 1);
  EXPECT_DOUBLE_EQ(f.peak_mb_per_s, 1100);
  EXPECT_DOUBLE_EQ(f.median_mb_per_s, 100);
  EXPECT_EQ(f.unsampled, 0u);
}

TEST(RunIntake, ReportAndCompareCountTheRunAsTheNasTookIt) {
  const ResultTable t = TwoClients();
  auto report = SummarizeResults(t, std::nullopt);
  ASSERT_TRUE(report.ok());
  ASSERT_GE(report->groups.size(), 1u);
  EXPECT_EQ(report->groups[0].role, Role::kReceiver);
  EXPECT_EQ(report->groups[0].rates_in_order, std::vector<double>{200}) << "not the longest stream's 200 by chance";
  const std::string text = ReportText(*report);
  EXPECT_THAT(text, HasSubstr("nas r iteration 1: 2 transfers, all bytes/span 200.0 MB/s (10.000 s), while all ran "
                              "1100.0 MB/s (1.000 s), timeline peak 1100.0, median 100.0 MB/s (10 steps of 1.000 s)"));
  EXPECT_THAT(text, HasSubstr("1 shorter than 3 samples"));
  EXPECT_THAT(ReportJson(*report), HasSubstr("\"all_mb_per_s\":200,\"window_s\":1,\"while_all_mb_per_s\":1100"));
  auto compare = Compare(t, "label", "", Role::kReceiver);
  ASSERT_TRUE(compare.ok());
  EXPECT_DOUBLE_EQ(compare->rows[0].stats.median, 200);
}

TEST(RunIntake, StaggeredStreamsAreCountedOverTheSpanNotTheLongestStream) {
  ResultTable t;
  std::string transfers = kTransfersHeader;
  // Two 100 MB/s streams of 1 s each, the second 1 s later: 200 MB in 2 s.
  transfers += "r,x,1,0,receiver,nas,2026-12-02T10:00:00.000Z,0.000000,1.000000,100000000,100.00,ok,false\n";
  transfers += "r,x,1,1,receiver,nas,2026-12-02T10:00:01.000Z,0.000000,1.000000,100000000,100.00,ok,false\n";
  ASSERT_TRUE(ParseTransfersCsv("transfers.csv", transfers, &t).ok());
  auto report = SummarizeResults(t, Role::kReceiver);
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->groups[0].rates_in_order, std::vector<double>{100});
  EXPECT_THAT(ReportText(*report), HasSubstr("while all ran: never all at once"));
  EXPECT_THAT(ReportText(*report), HasSubstr("2 without samples (taken as even)"));
}

TEST(RunIntake, ARunWithAStreamWithoutTimesGivesNoIntakeRatherThanPartOfOne) {
  ResultTable t;
  std::string transfers = kTransfersHeader;
  transfers += "r,x,1,0,receiver,nas,2026-12-02T10:00:00.000Z,0.000000,1.000000,100000000,100.00,ok,false\n";
  transfers += "r,x,1,1,receiver,nas,2026-12-02T10:00:00.000Z,,1.000000,100000000,100.00,ok,false\n";
  ASSERT_TRUE(ParseTransfersCsv("transfers.csv", transfers, &t).ok());
  const SampleIndex samples = IndexSamples(t);
  std::vector<const TransferRecord*> rows;
  for (const TransferRecord& r : t.transfers) rows.push_back(&r);
  EXPECT_FALSE(IntakeOfRows(rows, samples).has_value()) << "one stream's 100 MB/s is not the run's";
  auto report = SummarizeResults(t, Role::kReceiver);
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->groups[0].rates_in_order, std::vector<double>{200}) << "the streams' rates, side by side";
}

// The lab computes from live rows, `report` from their CSV cells: the same line.
TEST(RunIntake, ALiveRowAndItsCsvGiveTheSameFigures) {
  std::vector<proto::TransferReport> rows;
  for (int i = 0; i < 3; ++i) {
    proto::TransferReport row;
    row.set_run_id("r");
    row.set_label("x");
    row.set_iteration(1);
    row.set_stream(i);
    row.set_role("receiver");
    row.set_host("nas");
    row.set_status("ok");
    row.set_warmup(false);
    row.set_started_at_unix_ns(1764669600123456789LL + i * 7654321LL);
    row.set_first_byte_s(0.0004567 * (i + 1));
    row.set_duration_s(1.2345678 + 0.3 * i);
    row.set_bytes(0);
    double t_s = 0;
    for (int k = 1; k <= 6 + i; ++k) {
      t_s += 0.2 + 0.0001234 * k;
      proto::Sample* s = row.add_samples();
      s->set_t_s(t_s);
      s->set_bytes(1000000 * (k + i));
      s->set_interval_s(0.2);
      row.set_bytes(row.bytes() + s->bytes());
    }
    row.set_mb_per_s(row.bytes() / row.duration_s() / 1e6);
    rows.push_back(row);
  }
  std::vector<IntakeTransfer> live;
  for (const proto::TransferReport& row : rows) live.push_back(*IntakeFromRow(row));
  auto live_figures = ComputeIntake(live);
  ASSERT_TRUE(live_figures.has_value());

  std::string transfers = kTransfersHeader, samples = kSamplesHeader;
  for (const proto::TransferReport& row : rows) {
    std::vector<std::string> cells;
    for (const char* name : {"run_id", "label", "iteration", "stream", "role", "host", "started_at", "first_byte_s",
                             "duration_s", "bytes", "mb_per_s", "status", "warmup"}) {
      cells.push_back(FormatCell(*FindTransferColumn(name), row));
    }
    absl::StrAppend(&transfers, absl::StrJoin(cells, ","), "\n");
    for (const proto::Sample& s : row.samples()) {
      absl::StrAppendFormat(&samples, "r,x,1,%d,receiver,nas,%.3f,%d,%.2f,0\n", row.stream(), s.t_s(), s.bytes(),
                            s.bytes() / s.interval_s() / 1e6);
    }
  }
  ResultTable t;
  ASSERT_TRUE(ParseTransfersCsv("transfers.csv", transfers, &t).ok());
  ASSERT_TRUE(ParseSamplesCsv("samples.csv", samples, &t).ok());
  const std::vector<RunIntake> runs = RunIntakes(t);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(IntakeLine(runs[0].figures), IntakeLine(*live_figures));
  EXPECT_DOUBLE_EQ(runs[0].figures.all_mb_per_s, live_figures->all_mb_per_s);
  EXPECT_DOUBLE_EQ(runs[0].figures.while_all_mb_per_s, live_figures->while_all_mb_per_s);
  EXPECT_DOUBLE_EQ(runs[0].figures.peak_mb_per_s, live_figures->peak_mb_per_s);
}

// The issue's lab: 16 clients x 3 runs; sender rows that rise with the order they
// were taken in within each run are 48 rows but 3 runs: no trend can be told.
TEST(RunIntake, SixteenHostsTimesThreeRunsGiveNoTrend) {
  ResultTable t;
  std::string transfers = kTransfersHeader;
  for (int run = 1; run <= 3; ++run) {
    for (int host = 0; host < 16; ++host) {
      absl::StrAppendFormat(&transfers,
                            "r,lab,%d,%d,sender,c%02d,2026-12-02T10:0%d:%02d.000Z,0.001,0.300000,134217728,%.2f,ok,"
                            "false\n",
                            run, host, host, run, host, 230.0 + 30 * host + run);
    }
  }
  ASSERT_TRUE(ParseTransfersCsv("transfers.csv", transfers, &t).ok());
  auto report = SummarizeResults(t, Role::kSender);
  ASSERT_TRUE(report.ok());
  ASSERT_EQ(report->groups.size(), 1u);
  EXPECT_EQ(report->groups[0].stats.n, 48u);
  EXPECT_EQ(report->groups[0].trend_runs, 3u);
  EXPECT_FALSE(report->groups[0].drifts);
  EXPECT_EQ(TrendText(report->groups[0]), "too few runs for a trend (3 runs, n<4)");
  for (const std::string& w : report->warnings) EXPECT_THAT(w, ::testing::Not(HasSubstr("Mann-Kendall")));
  auto compare = Compare(t, "label", "", Role::kSender);
  ASSERT_TRUE(compare.ok());
  for (const std::string& w : compare->warnings) EXPECT_THAT(w, ::testing::Not(HasSubstr("Mann-Kendall")));
}

// The issue's timeline: 0.2-0.6 s transfers with a 1 s interval have one sample each,
// which plotted as points fell like 1/t. Each is drawn flat at its average, said so,
// and the NAS's intake of the run is one step, not a curve.
TEST(RunIntake, ALabOfShortTransfersDrawsNoCurve) {
  ResultTable t;
  std::string transfers = kTransfersHeader, samples = kSamplesHeader;
  for (int host = 0; host < 16; ++host) {
    const double seconds = 0.2 + 0.025 * host;
    absl::StrAppendFormat(&transfers,
                          "r,lab,1,%d,receiver,nas,2026-12-02T10:00:00.0%02dZ,0.001000,%.6f,134217728,%.2f,ok,false\n",
                          host, host, seconds, 134.217728 / seconds);
    absl::StrAppendFormat(&samples, "r,lab,1,%d,receiver,nas,%.3f,134217728,%.2f,%d\n", host, seconds,
                          134.217728 / seconds, host);
  }
  ASSERT_TRUE(ParseTransfersCsv("transfers.csv", transfers, &t).ok());
  ASSERT_TRUE(ParseSamplesCsv("samples.csv", samples, &t).ok());
  auto report = SummarizeResults(t, std::nullopt);
  ASSERT_TRUE(report.ok());
  ASSERT_EQ(report->intakes.size(), 1u);
  EXPECT_FALSE(report->intakes[0].figures.TimelineIsCurve());
  EXPECT_THAT(ReportText(*report), HasSubstr("no timeline ("));
  EXPECT_THAT(ReportText(*report), HasSubstr("16 shorter than 3 samples"));
  HtmlReportInput in{&t, &*report, nullptr, "nasperf test"};
  const std::string html = RenderHtmlReport(in);
  const size_t at = html.find("data-chart=\"timeline-receiver\"");
  ASSERT_NE(at, std::string::npos);
  const std::string timeline = html.substr(at, html.find("</svg>", at) - at);
  EXPECT_THAT(timeline, ::testing::Not(HasSubstr("<polyline"))) << "no transfer is a curve";
  EXPECT_THAT(timeline, HasSubstr("1 interval, drawn as its average"));
  EXPECT_THAT(html, HasSubstr("16 transfers shorter than 3 intervals are drawn flat"));
  EXPECT_THAT(html, HasSubstr("data-chart=\"intake-nas\""));
}

TEST(RunIntake, TheHtmlReportHasTheIntakeTableAndChart) {
  const ResultTable t = TwoClients();
  auto report = SummarizeResults(t, std::nullopt);
  ASSERT_TRUE(report.ok());
  HtmlReportInput in{&t, &*report, nullptr, "nasperf test"};
  const std::string html = RenderHtmlReport(in);
  EXPECT_THAT(html, HasSubstr("<td>nas</td><td>r</td><td>1</td><td>2</td><td>200.0</td><td>1100.0 (1.000 s)</td>"
                              "<td>1100.0</td><td>100.0</td><td>1100.0</td>"));
  EXPECT_THAT(html, HasSubstr("data-chart=\"intake-nas\""));
  // The last run stacked: one band per client, named by its sender row.
  const size_t at = html.find("data-chart=\"intake-stack-nas\"");
  ASSERT_NE(at, std::string::npos);
  const std::string stack = html.substr(at, html.find("</svg>", at) - at);
  EXPECT_THAT(stack, HasSubstr("<title>c1 stream 0</title>"));
  EXPECT_THAT(stack, HasSubstr("<title>c2 stream 1</title>"));
  size_t bands = 0;
  for (size_t p = stack.find("<polygon"); p != std::string::npos; p = stack.find("<polygon", p + 1)) ++bands;
  EXPECT_EQ(bands, 2u);
}

TEST(RunIntake, EachTransferIsNamedByItsSender) {
  const std::vector<RunIntake> runs = RunIntakes(TwoClients());
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].senders, (std::vector<std::string>{"c1 stream 0", "c2 stream 1"}));
  ASSERT_EQ(runs[0].figures.timeline_by_transfer_mb_per_s.size(), 2u);
  EXPECT_DOUBLE_EQ(runs[0].figures.timeline_by_transfer_mb_per_s[0][0], 1000);
  EXPECT_DOUBLE_EQ(runs[0].figures.timeline_by_transfer_mb_per_s[1][0], 100);
}

TEST(RunIntake, OneValuePerRunIsTheMedianOfItsHosts) {
  EXPECT_EQ(PerRunValues({1, 5, 3, 10, 20}, {1, 1, 1, 2, 2}), (std::vector<double>{3, 15}));
  EXPECT_EQ(PerRunValues({4, 2}, {}), (std::vector<double>{4, 2}));
}

}  // namespace
}  // namespace nasperf
