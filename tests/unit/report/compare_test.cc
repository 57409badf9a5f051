// `nasperf compare` and `report` on small tables: a real 30% difference on 5 vs 5
// runs is called faster, two samples of one distribution are not, too-small samples
// and drifting runs are warned about, and the HTML escapes what the CSV holds.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "report/analysis.h"
#include "report/html.h"
#include "report/table.h"

namespace nasperf {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// Five runs drawn once from N(400, 8) and N(520, 10.4) (+30%), and a second draw
// from N(400, 8): fixed numbers so the test never flakes.
const std::vector<double> kBase = {400.2, 412.5, 395.8, 405.1, 398.9};
const std::vector<double> kFaster = {520.3, 534.1, 515.0, 528.8, 511.6};
const std::vector<double> kSame = {403.7, 397.2, 409.9, 401.4, 393.5};

std::string Csv(const std::vector<std::pair<std::string, std::vector<double>>>& groups,
                const std::string& role = "receiver") {
  std::string csv = "run_id,label,iteration,stream,role,host,started_at,mb_per_s,bottleneck,status,error,warmup,mtu\n";
  int second = 0;
  for (const auto& [label, rates] : groups) {
    // A warm-up and a failure per group: neither may change a number.
    csv += "r," + label + ",0,0," + role + ",nas,2026-12-02T10:00:00.000Z,9999,disk,ok,,true,1500\n";
    csv += "r," + label + ",99,0," + role + ",nas,2026-12-02T10:59:59.000Z,,disk,failed,no space,false,1500\n";
    for (size_t i = 0; i < rates.size(); ++i) {
      char started[40];
      std::snprintf(started, sizeof(started), "2026-12-02T10:%02d:%02d.000Z", second / 60, second % 60);
      ++second;
      csv += "r," + label + "," + std::to_string(i + 1) + ",0," + role + ",nas," + started + "," +
             std::to_string(rates[i]) + ",disk,ok,,false,1500\n";
    }
  }
  return csv;
}

ResultTable Table(const std::string& csv) {
  ResultTable t;
  absl::Status s = ParseTransfersCsv("test.csv", csv, &t);
  EXPECT_TRUE(s.ok()) << s;
  return t;
}

TEST(Compare, TellsARealThirtyPercentFromNoiseOnFiveRuns) {
  ResultTable t = Table(Csv({{"hdd", kBase}, {"nvme", kFaster}, {"hdd-again", kSame}}));
  auto c = Compare(t, "label", "", std::nullopt);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->role, Role::kReceiver);
  EXPECT_EQ(c->baseline, "hdd");
  ASSERT_EQ(c->rows.size(), 3u);
  const Comparison& nvme = c->rows[1];
  EXPECT_EQ(nvme.group, "nvme");
  EXPECT_TRUE(nvme.significant);
  EXPECT_TRUE(nvme.test.exact);
  EXPECT_NEAR(nvme.test.p, 2.0 / 252, 1e-12);  // fully separated 5 vs 5
  EXPECT_NEAR(nvme.difference.percent, (520.3 / 400.2 - 1) * 100, 1e-9);
  EXPECT_THAT(nvme.verdict, testing::StartsWith("faster by 30.0% (95% CI "));
  EXPECT_GT(nvme.difference.ci_low, 20);
  EXPECT_LT(nvme.difference.ci_high, 40);
  const Comparison& same = c->rows[2];
  EXPECT_FALSE(same.significant);
  EXPECT_GT(same.test.p, 0.05);
  EXPECT_THAT(same.verdict, testing::StartsWith("no significant difference ("));
  EXPECT_LT(same.difference.ci_low, 0);
  EXPECT_GT(same.difference.ci_high, 0);
  std::string text = CompareText(*c);
  EXPECT_THAT(text, HasSubstr("faster by 30.0%"));
  EXPECT_THAT(text, HasSubstr("no significant difference"));
}

TEST(Compare, SlowerAndBaselineChoice) {
  ResultTable t = Table(Csv({{"hdd", kBase}, {"nvme", kFaster}}));
  auto c = Compare(t, "label", "nvme", Role::kReceiver);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->rows[0].group, "nvme");
  EXPECT_THAT(c->rows[1].verdict, testing::StartsWith("slower by 23.1% (95% CI "));
  auto missing = Compare(t, "label", "ssd", Role::kReceiver);
  EXPECT_THAT(missing.status().message(), HasSubstr("baseline 'ssd'"));
  auto no_column = Compare(t, "nic", "", Role::kReceiver);
  EXPECT_THAT(no_column.status().message(), HasSubstr("no column 'nic'"));
}

TEST(Compare, WarnsWhenTheSamplesAreTooSmall) {
  ResultTable t = Table(Csv({{"a", {100, 101}}, {"b", {200, 204, 201, 203, 202}}, {"c", {300, 301, 302}}}));
  auto c = Compare(t, "label", "", Role::kReceiver);
  ASSERT_TRUE(c.ok());
  EXPECT_THAT(c->rows[1].verdict, HasSubstr("too few runs to tell (n=2 vs 5"));
  EXPECT_FALSE(c->rows[1].significant);
  std::string text = CompareText(*c);
  EXPECT_THAT(text, HasSubstr("n=5 vs 2 is too few"));
  // 3 vs 3 fully separated: still the smallest possible p = 2/C(6,3) = 0.1, so no verdict.
  ResultTable small = Table(Csv({{"c", {300, 302, 301}}, {"d", {400, 401, 402}}}));
  auto three = Compare(small, "label", "", Role::kReceiver);
  ASSERT_TRUE(three.ok());
  EXPECT_THAT(three->rows[1].verdict, HasSubstr("too few runs to tell: n=3 vs 3 can never reach p<0.05"));
  EXPECT_THAT(CompareText(*three), HasSubstr("smallest possible p is 0.100"));
}

TEST(Compare, WarnsWhenRunsDriftWithIterationOrder) {
  std::vector<double> falling = {980, 975, 960, 940, 900, 860, 830, 790, 770, 742};
  ResultTable t = Table(Csv({{"flat", {500, 505, 498, 502, 499, 503, 501, 497, 504, 500}}, {"cache", falling}}));
  auto c = Compare(t, "label", "", Role::kReceiver);
  ASSERT_TRUE(c.ok());
  std::string text = CompareText(*c);
  EXPECT_THAT(text, HasSubstr("cache (receiver): MB/s falls with iteration order"));
  EXPECT_THAT(text, Not(HasSubstr("flat (receiver): MB/s")));
}

TEST(Compare, ByAnotherColumn) {
  std::string csv = Csv({{"x", kBase}});
  ResultTable t = Table(csv);
  auto c = Compare(t, "mtu", "", Role::kReceiver);
  ASSERT_TRUE(c.ok());
  ASSERT_EQ(c->rows.size(), 1u);
  EXPECT_EQ(c->rows[0].group, "1500");
}

// Reads and writes never share a statistic: the same label splits by direction, and
// `--by direction` / `--by cache` work, also on files from before those columns.
TEST(Report, ReadsAndWritesAreNeverOneStatistic) {
  std::string csv =
      "run_id,label,iteration,stream,role,host,started_at,mb_per_s,status,warmup,direction,cache,read_mode\n";
  for (int i = 1; i <= 3; ++i) {
    csv += absl::StrCat("w,array,", i, ",0,receiver,nas,2026-12-02T10:00:0", i, ".000Z,150,ok,false,write,,\n");
    csv +=
        absl::StrCat("r,array,", i, ",0,receiver,nas,2026-12-02T10:01:0", i, ".000Z,60,ok,false,read,cold,buffered\n");
    csv += absl::StrCat("r2,array,", i, ",0,receiver,nas,2026-12-02T10:02:0", i,
                        ".000Z,900,ok,false,read,warm,buffered\n");
    csv +=
        absl::StrCat("r3,array,", i, ",0,receiver,nas,2026-12-02T10:03:0", i, ".000Z,58,ok,false,read,warm,direct\n");
  }
  ResultTable t = Table(csv);
  auto by_label = SummarizeResults(t, Role::kReceiver, "label");
  ASSERT_TRUE(by_label.ok()) << by_label.status();
  ASSERT_EQ(by_label->groups.size(), 3u);
  EXPECT_EQ(by_label->groups[0].group, "array");
  EXPECT_DOUBLE_EQ(by_label->groups[0].stats.median, 150);
  EXPECT_EQ(by_label->groups[1].group, "array (read)");
  EXPECT_EQ(by_label->groups[1].stats.n, 6u);
  EXPECT_EQ(by_label->groups[2].group, "array (read, direct)");  // past the cache: never pooled with it
  EXPECT_DOUBLE_EQ(by_label->groups[2].stats.median, 58);
  auto by_direction = Compare(t, "direction", "", Role::kReceiver);
  ASSERT_TRUE(by_direction.ok()) << by_direction.status();
  ASSERT_EQ(by_direction->rows.size(), 2u);  // the baseline, and read against it
  EXPECT_EQ(by_direction->rows[0].group, "write");
  EXPECT_EQ(by_direction->rows[1].group, "read");
  auto by_cache = SummarizeResults(t, Role::kReceiver, "cache");
  ASSERT_TRUE(by_cache.ok());
  std::vector<std::string> groups;
  for (const GroupSummary& g : by_cache->groups) groups.push_back(g.group);
  EXPECT_THAT(groups, ::testing::ElementsAre("(empty)", "cold (read)", "warm (read)", "warm (read, direct)"));
  auto by_read_mode = SummarizeResults(t, Role::kReceiver, "read_mode");
  ASSERT_TRUE(by_read_mode.ok()) << by_read_mode.status();
  groups.clear();
  for (const GroupSummary& g : by_read_mode->groups) groups.push_back(g.group);
  EXPECT_THAT(groups, ::testing::ElementsAre("(empty)", "buffered (read)", "direct (read)"));

  ResultTable old = Table(Csv({{"hdd", kBase}}));  // no direction column: writes
  auto old_by_direction = SummarizeResults(old, Role::kReceiver, "direction");
  ASSERT_TRUE(old_by_direction.ok()) << old_by_direction.status();
  ASSERT_EQ(old_by_direction->groups.size(), 1u);
  EXPECT_EQ(old_by_direction->groups[0].group, "write");
}

TEST(Report, SummariesSkipWarmupsAndListFailuresApart) {
  ResultTable t = Table(Csv({{"hdd", kBase}}) + "");
  auto r = SummarizeResults(t, std::nullopt);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->groups.size(), 1u);
  EXPECT_EQ(r->groups[0].stats.n, 5u);
  EXPECT_DOUBLE_EQ(r->groups[0].stats.median, 400.2);
  EXPECT_DOUBLE_EQ(r->groups[0].stats.max, 412.5);
  EXPECT_EQ(r->groups[0].bottlenecks.at("disk"), 5);
  EXPECT_EQ(r->warmups_skipped, 1u);
  ASSERT_EQ(r->failures.size(), 1u);
  EXPECT_EQ(r->failures[0]->error, "no space");
  std::string text = ReportText(*r);
  EXPECT_THAT(text, HasSubstr("failures (never averaged in): 1"));
  EXPECT_THAT(text, HasSubstr("test.csv:3"));
  std::string json = ReportJson(*r);
  EXPECT_THAT(json, HasSubstr("\"n\":5,\"median\":400.2"));
  EXPECT_THAT(json, HasSubstr("\"error\":\"no space\""));
}

TEST(Report, TheStreamsOfOneIterationAreOneObservation) {
  ResultTable t = Table(
      "run_id,label,iteration,stream,role,host,bytes,duration_s,mb_per_s,status,warmup\n"
      // iteration 1: 2 GB in 2.5 s over two streams = 800 MB/s, not two rows of 500 and 400
      "r,x,1,0,receiver,nas,1000000000,2.0,500,ok,false\n"
      "r,x,1,1,receiver,nas,1000000000,2.5,400,ok,false\n"
      // iteration 2: one stream failed, so the other ran alone: left out
      "r,x,2,0,receiver,nas,1000000000,1.0,1000,ok,false\n"
      "r,x,2,1,receiver,nas,,,,failed,false\n"
      // iteration 3: no bytes/duration columns filled: the rates add up
      "r,x,3,0,receiver,nas,,,300,ok,false\n"
      "r,x,3,1,receiver,nas,,,350,ok,false\n");
  auto r = SummarizeResults(t, Role::kReceiver);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->groups.size(), 1u);
  EXPECT_EQ(r->groups[0].rates_in_order, (std::vector<double>{800, 650}));
  EXPECT_THAT(ReportText(*r), HasSubstr("x (receiver): 1 iteration left out because one of its streams failed"));
}

// Issue 18: three clients into one NAS showed the receiver at n=3 (the aggregate per
// run) beside the senders at n=9 (per client) with no word on why. Each group says
// what one observation is, and the path it ran over.
TEST(Report, SaysWhatNCountsAndThePath) {
  ResultTable t = Table(
      "run_id,label,iteration,stream,role,host,bytes,duration_s,mb_per_s,status,warmup,mtu,path_mtu,mss,link_mbps,"
      "line_rate_pct\n"
      "r,lab,1,0,receiver,nas,100000000,1.0,100,ok,false,9000,1500,1448,1000,85.0\n"
      "r,lab,1,1,receiver,nas,100000000,1.0,100,ok,false,9000,1500,1448,1000,85.0\n"
      "r,lab,1,2,receiver,nas,100000000,1.0,100,ok,false,9000,1500,1448,1000,85.0\n"
      "r,lab,1,0,sender,client1,100000000,1.0,100,ok,false,9000,1500,1448,1000,277.0\n"
      "r,lab,1,1,sender,client2,100000000,1.0,100,ok,false,9000,1500,1448,1000,85.0\n"
      "r,lab,1,2,sender,client3,100000000,1.0,100,ok,false,9000,1500,1448,1000,85.0\n");
  auto r = SummarizeResults(t, std::nullopt);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->groups.size(), 2u);
  EXPECT_EQ(r->groups[0].observation, "one per iteration; up to 3 streams of one together: all bytes over their span");
  EXPECT_EQ(r->groups[1].observation, "one per host and iteration (3 hosts, each its own MB/s)");
  EXPECT_EQ(r->groups[0].path, "MTU 9000, path MTU 1500, MSS 1448, link 1000 Mb/s, line rate 85.0 % (median)");
  EXPECT_THAT(r->groups[1].path, HasSubstr("line rate 85.0 %")) << "an impossible 277 % is not a figure";
  const std::string text = ReportText(*r);
  EXPECT_THAT(text, HasSubstr("lab: n counts one per host and iteration (3 hosts"));
  EXPECT_THAT(ReportJson(*r), HasSubstr("\"observation\":\"one per iteration; up to 3 streams"));
}

// Issue 27: which NAS device was busiest, over the group's receiver rows.
TEST(Report, NamesTheNasDeviceThatWasBusiestMostOften) {
  ResultTable t = Table(
      "run_id,label,iteration,stream,role,host,bytes,duration_s,mb_per_s,status,warmup,busiest_device,"
      "busiest_busy_pct,device_busy\n"
      "r,mirror,1,0,receiver,nas,100000000,1.0,55,ok,false,loop1,88.0,loop1=88;loop2=8\n"
      "r,mirror,2,0,receiver,nas,100000000,1.0,56,ok,false,loop1,84.0,loop1=84;loop2=9\n"
      "r,mirror,3,0,receiver,nas,100000000,1.0,57,ok,false,loop2,50.0,loop2=50;loop1=40\n"
      "r,mirror,1,0,sender,client,100000000,1.0,55,ok,false,,,\n");
  auto r = SummarizeResults(t, std::nullopt);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->groups.size(), 2u);
  EXPECT_EQ(r->groups[0].devices, "loop1 busiest in 2 of 3 rows, 86 % busy (median)");
  EXPECT_EQ(r->groups[1].devices, "");  // the sender's rows name no NAS device
  EXPECT_THAT(ReportText(*r), HasSubstr("; NAS device: loop1 busiest in 2 of 3 rows"));
  EXPECT_THAT(ReportJson(*r), HasSubstr("\"devices\":\"loop1 busiest in 2 of 3 rows"));
}

// Issue 27 item 3: the cache cliff over a group's rows, in the report and the HTML.
constexpr char kCliffHeader[] =
    "run_id,label,iteration,stream,role,host,bytes,duration_s,mb_per_s,status,warmup,burst_mb_per_s,burst_bytes,"
    "sustained_mb_per_s\n";

TEST(Report, SaysTheCacheCliffOfTheRowsThatHadOne) {
  ResultTable t = Table(absl::StrCat(kCliffHeader,
                                     "r,pool,1,0,receiver,nas,1000000000,10.0,100,ok,false,900,268435456,60\n"
                                     "r,pool,2,0,receiver,nas,1000000000,10.0,100,ok,false,880,268435456,62\n"
                                     "r,pool,3,0,receiver,nas,1000000000,10.0,100,ok,false,,,\n"));
  auto r = SummarizeResults(t, std::nullopt);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->groups.size(), 1u);
  EXPECT_EQ(r->groups[0].cache_cliff,
            "cache cliff in 2 of 3 rows: the NAS took 256 MiB at 890 MB/s, then its disks sustained 61 MB/s (cliff) "
            "(medians)");
  EXPECT_THAT(ReportText(*r), HasSubstr("; cache cliff in 2 of 3 rows: the NAS took 256 MiB"));
  EXPECT_THAT(ReportJson(*r), HasSubstr("\"cache_cliff\":\"cache cliff in 2 of 3 rows"));
}

// compare --metric sustained_mb_per_s: what the disks held after the cache, per row
// that had a knee; rows and groups without one are left out and said.
TEST(Compare, ComparesTheSustainedRateAfterTheCacheCliff) {
  std::string csv = kCliffHeader;
  const std::vector<double> hdd = {60.1, 61.3, 59.8, 60.7, 60.2}, ssd = {240.5, 238.9, 243.1, 241.0, 239.6};
  for (size_t i = 0; i < hdd.size(); ++i) {
    // Equal burst rates: only the sustained part differs, and the overall MB/s barely.
    absl::StrAppend(&csv, "r,hdd,", i + 1, ",0,receiver,nas,1000000000,5.0,200,ok,false,1200,1073741824,", hdd[i],
                    "\n");
    absl::StrAppend(&csv, "r,ssd,", i + 1, ",0,receiver,nas,1000000000,5.0,201,ok,false,1200,1073741824,", ssd[i],
                    "\n");
  }
  absl::StrAppend(&csv, "r,ssd,6,0,receiver,nas,1000000000,5.0,201,ok,false,,,\n");
  absl::StrAppend(&csv, "r,ram,1,0,receiver,nas,1000000000,1.0,1000,ok,false,,,\n");
  ResultTable t = Table(csv);
  auto c = Compare(t, "label", "", std::nullopt, CompareMetric::kSustainedMbPerS);
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_EQ(c->rows.size(), 2u);
  EXPECT_EQ(c->rows[0].group, "hdd");
  EXPECT_DOUBLE_EQ(c->rows[0].stats.median, 60.2);
  EXPECT_DOUBLE_EQ(c->rows[1].stats.median, 240.5);
  EXPECT_EQ(c->rows[1].stats.n, 5u);
  EXPECT_TRUE(c->rows[1].significant);
  EXPECT_THAT(c->rows[1].verdict, HasSubstr("faster by"));
  EXPECT_THAT(c->warnings, testing::Contains(HasSubstr("ssd: 1 of its 6 rows had no cache cliff")));
  EXPECT_THAT(c->warnings, testing::Contains(HasSubstr("ram: none of its 1 rows had a cache cliff")));
  EXPECT_THAT(CompareText(*c), HasSubstr("sustained MB/s (receiver: after the cache cliff"));
  EXPECT_THAT(CompareJson(*c), HasSubstr("\"metric\":\"sustained_mb_per_s\""));
  // The sender has no such figure; a file without any knee has nothing to compare.
  EXPECT_FALSE(Compare(t, "label", "", Role::kSender, CompareMetric::kSustainedMbPerS).ok());
  auto none = Compare(Table(Csv({{"hdd", kBase}})), "label", "", std::nullopt, CompareMetric::kSustainedMbPerS);
  ASSERT_FALSE(none.ok());
  EXPECT_THAT(std::string(none.status().message()), HasSubstr("with a cache cliff"));
}

TEST(Html, MarksEachTransfersCacheCliffOnTheTimeline) {
  // A row from before knee_s: its knee is its burst's bytes at its rate, 1 s in.
  std::string csv = absl::StrCat(kCliffHeader, "r,pool,1,0,receiver,nas,960000000,2.0,480,ok,false,900,900000000,60\n");
  ResultTable t = Table(csv);
  std::string samples = "run_id,label,iteration,stream,role,host,t_s,bytes,mb_per_s\n";
  for (int k = 1; k <= 10; ++k) {
    absl::StrAppend(&samples, "r,pool,1,0,receiver,nas,", k * 0.1, ",90000000,900\n");
  }
  for (int k = 11; k <= 20; ++k) absl::StrAppend(&samples, "r,pool,1,0,receiver,nas,", k * 0.1, ",6000000,60\n");
  ASSERT_TRUE(ParseSamplesCsv("samples.csv", samples, &t).ok());
  auto r = SummarizeResults(t, std::nullopt);
  ASSERT_TRUE(r.ok());
  HtmlReportInput in{&t, &*r, nullptr, "nasperf test"};
  const std::string html = RenderHtmlReport(in);
  EXPECT_THAT(html, HasSubstr("pool iteration 1 stream 0 (nas): cache cliff at 1.0 s: the NAS took 858 MiB at 900 "
                              "MB/s, then its disks sustained 60 MB/s (cliff)"));
  EXPECT_THAT(html, HasSubstr("<td>cache cliff in 1 of 1 rows: the NAS took 858 MiB at 900 MB/s"));
}

// Many-files rows: report sums up their files/s and latencies (text, JSON, the HTML's
// table and latency chart), compare takes files/s per row, and a group that wrote one
// file each is left out of that metric and said.
TEST(Report, ManyFilesRowsAreSummedUpAndComparedByFilesPerSecond) {
  std::string csv =
      "run_id,label,iteration,stream,role,host,started_at,mb_per_s,bottleneck,status,error,warmup,files,files_per_s,"
      "file_p50_s,file_p90_s,file_p99_s,file_max_s,metadata_pct\n";
  const std::vector<double> nvme = {2510, 2590, 2480, 2555, 2530}, hdd = {410, 395, 402, 420, 399};
  for (size_t i = 0; i < nvme.size(); ++i) {
    absl::StrAppend(&csv, "r,nvme,", i + 1, ",0,sender,c,2026-12-02T10:00:0", i, ".000Z,30,metadata,ok,,false,300,",
                    nvme[i], ",0.0003,0.0004,0.0009,0.002,80\n");
    absl::StrAppend(&csv, "r,hdd,", i + 1, ",0,sender,c,2026-12-02T10:01:0", i, ".000Z,5,metadata,ok,,false,300,",
                    hdd[i], ",0.002,0.003,0.009,0.02,90\n");
  }
  absl::StrAppend(&csv, "r,big,1,0,sender,c,2026-12-02T10:02:00.000Z,500,disk,ok,,false,,,,,,,\n");
  ResultTable t = Table(csv);
  auto r = SummarizeResults(t, std::nullopt);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->groups.size(), 3u);
  EXPECT_EQ(r->groups[0].many_files,
            "many files in 5 of 5 rows: 2530.0 files/s, each file p50 0.30 ms, p99 0.90 ms; the files' own work 80 % "
            "of the time (medians)");
  EXPECT_EQ(r->groups[2].many_files, "");
  EXPECT_THAT(ReportJson(*r), HasSubstr("\"many_files\":\"many files in 5 of 5 rows"));
  HtmlReportInput in{&t, &*r, nullptr, "nasperf test"};
  const std::string html = RenderHtmlReport(in);
  EXPECT_THAT(html, HasSubstr("data-chart=\"file-latency-sender\""));
  EXPECT_THAT(html, HasSubstr("<title>hdd: p99 9.00 ms</title>"));
  auto c = Compare(t, "label", "nvme", Role::kSender, CompareMetric::kFilesPerS);
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_EQ(c->rows.size(), 2u);
  EXPECT_DOUBLE_EQ(c->rows[0].stats.median, 2530);
  EXPECT_THAT(c->rows[1].verdict, HasSubstr("slower by"));
  EXPECT_THAT(c->warnings, testing::Contains(HasSubstr("big: none of its 1 rows wrote many files")));
  EXPECT_THAT(CompareJson(*c), HasSubstr("\"metric\":\"files_per_s\""));
}

// "flat p=0.086, +82.1 MB/s per run" read as a slope that was not there.
TEST(Report, ATrendIsNamedOnlyWhenItIsSignificant) {
  GroupSummary g;
  g.stats.n = 10;
  g.trend_runs = 10;
  g.trend.p = 0.086;
  g.trend.sen_slope = 82.1;
  EXPECT_EQ(TrendText(g), "no trend (Mann-Kendall p=0.086)");
  g.drifts = true;
  g.trend.p = 0.01;
  g.trend.sen_slope = -20.5;
  EXPECT_EQ(TrendText(g), "falls by 20.5 MB/s per run (Mann-Kendall p=0.010)");
  g.trend_runs = 3;
  EXPECT_EQ(TrendText(g), "too few runs for a trend (3 runs, n<4)");
}

TEST(Report, ALongLabelKeepsTheColumnsAligned) {
  const std::string label = "array-with-parity-and-a-very-long-name";
  ResultTable t = Table(Csv({{label, kBase}, {"x", kSame}}));
  auto r = SummarizeResults(t, Role::kReceiver);
  ASSERT_TRUE(r.ok());
  // The bottleneck column starts at the same place on the header and on every row.
  std::vector<std::string> lines = absl::StrSplit(ReportText(*r), '\n');
  ASSERT_GE(lines.size(), 4u);
  const size_t column = lines[1].find("  bottleneck");
  ASSERT_NE(column, std::string::npos);
  EXPECT_EQ(lines[2].find("  disk 5"), column) << lines[2];
  EXPECT_EQ(lines[3].find("  disk 5"), column) << lines[3];
}

// compare --by path_mtu pooled cache and array rows without a word.
TEST(Compare, SaysWhenAGroupPoolsLabelsAndWhereNarrowsIt) {
  // Two sender runs: the array's rows (and its sample) under their own run id.
  ResultTable t =
      Table(absl::StrReplaceAll(Csv({{"cache", kBase}, {"array", kFaster}}), {{"\nr,array,", "\nr2,array,"}}));
  t.samples.push_back({"r", "cache", Role::kReceiver, "nas", 1, 0, 0.5, 100});
  t.samples.push_back({"r2", "array", Role::kReceiver, "nas", 1, 0, 0.5, 100});
  auto pooled = Compare(t, "mtu", "", Role::kReceiver);
  ASSERT_TRUE(pooled.ok());
  EXPECT_THAT(CompareText(*pooled), HasSubstr("mtu 1500 pools rows of labels cache/array"));
  EXPECT_THAT(CompareText(*pooled), HasSubstr("--where label=cache"));
  auto cache = FilterRows(t, {"label=cache"});
  ASSERT_TRUE(cache.ok()) << cache.status();
  auto narrowed = Compare(*cache, "mtu", "", Role::kReceiver);
  ASSERT_TRUE(narrowed.ok());
  EXPECT_THAT(CompareText(*narrowed), Not(HasSubstr("pools rows")));
  EXPECT_EQ(narrowed->rows[0].stats.n, 5u);
  ASSERT_EQ(cache->samples.size(), 1u) << "the samples follow the rows kept";
  EXPECT_EQ(cache->samples[0].label, "cache");
  EXPECT_FALSE(FilterRows(t, {"label=nothing"}).ok());
  EXPECT_FALSE(FilterRows(t, {"nocolumn=1"}).ok());
  EXPECT_FALSE(FilterRows(t, {"label"}).ok());
}

// Issue 18: a three-client lab's per-iteration chart had ticks at 1.5 and 2.5 and
// plotted 9 "iterations" for 3 runs. Runs are whole numbers, and the three clients of
// one run are three points above that run.
TEST(Html, TheIterationChartPlotsRunsOnWholeTicks) {
  std::string csv = "run_id,label,iteration,stream,role,host,mb_per_s,status,warmup\n";
  for (int run = 1; run <= 3; ++run) {
    for (int client = 1; client <= 3; ++client) {
      csv += absl::StrCat("r,lab,", run, ",", client - 1, ",sender,client", client, ",", 100 + run * 10 + client,
                          ",ok,false\n");
    }
  }
  ResultTable t = Table(csv);
  auto r = SummarizeResults(t, Role::kSender);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->groups.size(), 1u);
  EXPECT_EQ(r->groups[0].run_ordinals, (std::vector<size_t>{1, 1, 1, 2, 2, 2, 3, 3, 3}));
  HtmlReportInput in{&t, &*r, nullptr, "nasperf test"};
  const std::string html = RenderHtmlReport(in);
  const std::string chart = html.substr(html.find("data-chart=\"iterations-sender\""));
  const std::string axes = chart.substr(0, chart.find("class=\"marks\""));
  EXPECT_THAT(axes, Not(HasSubstr(">1.5<")));
  EXPECT_THAT(axes, Not(HasSubstr(">2.5<")));
  EXPECT_THAT(chart, HasSubstr("lab run 3 (client2): 132.0 MB/s"));
  // Issue 30: their rates added up are not what the NAS took; no dashed sum.
  EXPECT_THAT(chart.substr(0, chart.find("</svg>")), Not(HasSubstr("together per run")));
  EXPECT_THAT(chart.substr(0, chart.find("</svg>")), Not(HasSubstr("stroke-dasharray")));
  EXPECT_THAT(chart, Not(HasSubstr("run 4")));
}

TEST(Html, EscapesEverythingFromTheCsvAndFetchesNothing) {
  std::string evil = "\"<script>alert('x')</script>&\"";
  std::string csv = Csv({{"plain", kBase}});
  csv += "r," + evil + ",1,0,receiver,<b>host</b>,2026-12-02T11:00:00.000Z,300,disk,ok,,false,1500\n";
  csv += "r," + evil +
         ",2,0,receiver,<b>host</b>,2026-12-02T11:00:01.000Z,,disk,failed,\"<img src=x onerror=y>\",false,1500\n";
  ResultTable t = Table(csv);
  t.samples.push_back({"r", "<i>s</i>", Role::kReceiver, "h", 1, 0, 0.5, 100});
  // The warm-up (iteration 0) and the failed transfer (99) of "plain": left out of the timeline.
  t.samples.push_back({"r", "warmup-sample", Role::kReceiver, "nas", 0, 0, 0.5, 100});
  t.samples.push_back({"r", "failed-sample", Role::kReceiver, "nas", 99, 0, 0.5, 100});
  t.samples.push_back({"r", "measured-sample", Role::kReceiver, "nas", 1, 0, 0.5, 100});
  auto r = SummarizeResults(t, std::nullopt);
  ASSERT_TRUE(r.ok());
  auto c = Compare(t, "label", "", std::nullopt);
  ASSERT_TRUE(c.ok());
  HtmlReportInput in{&t, &*r, &*c, "nasperf test"};
  std::string html = RenderHtmlReport(in);
  EXPECT_THAT(html, Not(HasSubstr("<script")));
  EXPECT_THAT(html, Not(HasSubstr("<img")));
  EXPECT_THAT(html, Not(HasSubstr("<b>host")));
  EXPECT_THAT(html, Not(HasSubstr("<i>s")));
  EXPECT_THAT(html, HasSubstr("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;"));
  EXPECT_THAT(html, HasSubstr("&lt;img src=x onerror=y&gt;"));
  // Self-contained: nothing is loaded from anywhere.
  EXPECT_THAT(html, Not(HasSubstr("src=\"")));
  EXPECT_THAT(html, Not(HasSubstr("<link")));
  EXPECT_THAT(html, Not(HasSubstr("url(")));
  EXPECT_THAT(html, Not(HasSubstr("@import")));
  EXPECT_THAT(html, Not(HasSubstr("warmup-sample")));
  EXPECT_THAT(html, Not(HasSubstr("failed-sample")));
  EXPECT_THAT(html, HasSubstr("measured-sample"));
  for (const char* chart : {"iterations-receiver", "boxes-receiver", "timeline-receiver"}) {
    EXPECT_THAT(html, HasSubstr(std::string("data-chart=\"") + chart + "\"")) << chart;
  }
}

TEST(Html, EscapeTable) { EXPECT_EQ(HtmlEscape("a<b>&\"'c"), "a&lt;b&gt;&amp;&quot;&#39;c"); }

}  // namespace
}  // namespace nasperf
