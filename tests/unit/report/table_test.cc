// Loading result CSVs for report/compare: columns by header name, appended and
// reordered columns, warm-ups, malformed files named by file and line, merging.
#include "report/table.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "report/analysis.h"
#include "report/html.h"
#include "temp_dir.h"

namespace nasperf {
namespace {

using ::testing::HasSubstr;

constexpr char kHeader[] =
    "run_id,label,iteration,stream,role,host,peer,transport,bytes,started_at,duration_s,mb_per_s,"
    "first_byte_s,write_s,sync_s,net_wait_pct,disk_wait_pct,bottleneck,write_mode,sync_policy,mtu,"
    "path_mtu,mss,link_mbps,line_rate_pct,checksum,verified,status,error,transfer_id,warmup,"
    "source_wait_pct\n";

std::string Row(const std::string& label, int iteration, const std::string& role, const std::string& rate,
                const std::string& status = "ok", const std::string& warmup = "false", const std::string& error = "") {
  return "r1," + label + "," + std::to_string(iteration) + ",0," + role +
         ",nas,10.0.0.2,native,1000,2026-12-02T10:00:0" + std::to_string(iteration % 10) + ".000Z,1.0," + rate +
         ",0.001,0.5,0.1,1.0,50.0,disk,buffered,end,9000,,8948,10000,40.0,,false," + status + "," + error + "," +
         std::to_string(iteration) + "," + warmup + ",\n";
}

TEST(ResultTable, ReadsTheContractColumns) {
  ResultTable t;
  std::string csv = std::string(kHeader) + Row("cache", 0, "receiver", "100.5", "ok", "true") +
                    Row("cache", 1, "receiver", "200.25") +
                    Row("cache", 2, "receiver", "", "failed", "false", "\"write x: No space left on device\"");
  ASSERT_TRUE(ParseTransfersCsv("t.csv", csv, &t).ok());
  ASSERT_EQ(t.transfers.size(), 3u);
  EXPECT_TRUE(t.transfers[0].warmup);
  EXPECT_FALSE(t.transfers[0].Measured());
  EXPECT_TRUE(t.transfers[1].Measured());
  EXPECT_DOUBLE_EQ(t.transfers[1].mb_per_s, 200.25);
  EXPECT_EQ(t.transfers[1].Cell("mtu"), "9000");
  EXPECT_EQ(t.transfers[1].source, "t.csv:3");
  EXPECT_FALSE(t.transfers[2].Measured());
  EXPECT_EQ(t.transfers[2].error, "write x: No space left on device");
}

TEST(ResultTable, FindsColumnsByNameAndToleratesAppendedOnes) {
  ResultTable t;
  std::string csv =
      "status,mb_per_s,role,iteration,label,future_column\n"
      "ok,321.0,sender,1,nvme,whatever\n"
      "ok,322.0,sender,-1,nvme,x\n";
  ASSERT_TRUE(ParseTransfersCsv("odd.csv", csv, &t).ok());
  ASSERT_EQ(t.transfers.size(), 2u);
  EXPECT_EQ(t.transfers[0].label, "nvme");
  EXPECT_DOUBLE_EQ(t.transfers[0].mb_per_s, 321.0);
  EXPECT_EQ(t.transfers[0].Cell("future_column"), "whatever");
  // No warmup column: a warm-up is an iteration <= 0.
  EXPECT_FALSE(t.transfers[0].warmup);
  EXPECT_TRUE(t.transfers[1].warmup);
}

TEST(ResultTable, MalformedFilesNameFileAndLine) {
  {
    ResultTable t;
    absl::Status s = ParseTransfersCsv("a.csv", std::string(kHeader) + Row("x", 1, "sender", "1") + "r1,x,2\n", &t);
    EXPECT_FALSE(s.ok());
    EXPECT_THAT(s.message(), HasSubstr("a.csv:3"));
    EXPECT_THAT(s.message(), HasSubstr("3 fields"));
  }
  {
    ResultTable t;
    absl::Status s = ParseTransfersCsv("b.csv", std::string(kHeader) + Row("x", 1, "sender", "fast"), &t);
    EXPECT_THAT(s.message(), HasSubstr("b.csv:2: column mb_per_s: 'fast' is not a number"));
  }
  {
    ResultTable t;
    absl::Status s = ParseTransfersCsv("c.csv", "label,role\nx,sender\n", &t);
    EXPECT_THAT(s.message(), HasSubstr("c.csv:1: header lacks the columns iteration, mb_per_s, status"));
  }
  {
    ResultTable t;
    absl::Status s = ParseTransfersCsv("d.csv", std::string(kHeader) + Row("x", 1, "sender", "1") + "r1,\"x\"y\n", &t);
    EXPECT_THAT(s.message(), HasSubstr("d.csv"));
    EXPECT_THAT(s.message(), HasSubstr("line 3"));
  }
  {
    ResultTable t;
    absl::Status s = ParseTransfersCsv("e.csv", std::string(kHeader) + Row("x", 1, "sender", "1"), &t);
    EXPECT_TRUE(s.ok());
    absl::Status bad_iteration =
        ParseTransfersCsv("e.csv", "label,iteration,role,mb_per_s,status\nx,one,sender,1,ok\n", &t);
    EXPECT_THAT(bad_iteration.message(), HasSubstr("e.csv:2: column iteration: 'one' is not a whole number"));
  }
  {
    // Words are read through their Parse, once, here: the statistics compare enums.
    ResultTable t;
    absl::Status bad_role = ParseTransfersCsv("f.csv", "label,iteration,role,mb_per_s,status\nx,1,client,1,ok\n", &t);
    EXPECT_THAT(bad_role.message(), HasSubstr("f.csv:2: column role: 'client' is not one of sender, receiver, nas"));
    absl::Status bad_status = ParseTransfersCsv("f.csv", "label,iteration,role,mb_per_s,status\nx,1,sender,1,OK\n", &t);
    EXPECT_THAT(bad_status.message(), HasSubstr("column status: 'OK' is not one of ok, failed, aborted"));
    EXPECT_TRUE(t.transfers.empty());
  }
}

// nasperf before the `source` word wrote `sender` for a slow source: read as source,
// and the summary says what the word means.
TEST(ResultTable, AnOlderSenderVerdictReadsAsSource) {
  ResultTable t;
  ASSERT_TRUE(ParseTransfersCsv("old.csv",
                                "label,iteration,role,mb_per_s,status,bottleneck\n"
                                "usb,1,sender,40,ok,sender\nusb,2,sender,41,ok,source\n",
                                &t)
                  .ok());
  ASSERT_EQ(t.transfers.size(), 2u);
  EXPECT_EQ(t.transfers[0].bottleneck, "source");
  auto report = SummarizeResults(t, std::nullopt);
  ASSERT_TRUE(report.ok()) << report.status();
  std::string text = ReportText(*report);
  EXPECT_THAT(text, HasSubstr("source 2"));
  EXPECT_THAT(text, HasSubstr("source: the sender's own disk or file system fed the data slower"));
}

TEST(ResultTable, FiguresBeyondAnyRealRateAreRefused) {
  // Sums and means over many such rows would overflow to inf (and once crashed
  // the HTML report's axis ticks).
  for (const char* value : {"1e308", "-1e16", "inf", "nan"}) {
    ResultTable t;
    absl::Status s = ParseTransfersCsv("big.csv", std::string(kHeader) + Row("x", 1, "sender", value), &t);
    EXPECT_FALSE(s.ok()) << value;
    EXPECT_THAT(s.message(), HasSubstr("big.csv:2: column mb_per_s")) << value;
  }
}

TEST(ResultTable, TheLargestAllowedFiguresStillRenderAsHtml) {
  ResultTable t;
  std::string csv = kHeader;
  for (int i = 1; i <= 50; ++i) csv += Row(i % 2 ? "x" : "y", i, "sender", i % 3 ? "1e15" : "9.99e14");
  ASSERT_TRUE(ParseTransfersCsv("big.csv", csv, &t).ok());
  auto report = SummarizeResults(t, std::nullopt);
  ASSERT_TRUE(report.ok()) << report.status();
  auto compare = Compare(t, "label", "", std::nullopt);
  HtmlReportInput input;
  input.table = &t;
  input.report = &*report;
  input.compare = compare.ok() ? &*compare : nullptr;
  std::string html = RenderHtmlReport(input);
  EXPECT_THAT(html, HasSubstr("<svg"));
  EXPECT_THAT(html, testing::Not(HasSubstr("inf")));
  EXPECT_THAT(html, testing::Not(HasSubstr("nan")));
}

TEST(ResultTable, TornLastLineIsAWarningNotAnError) {
  ResultTable t;
  std::string csv = std::string(kHeader) + Row("x", 1, "sender", "10");
  csv += "r1,x,2,0,sen";
  ASSERT_TRUE(ParseTransfersCsv("torn.csv", csv, &t).ok());
  EXPECT_EQ(t.transfers.size(), 1u);
  ASSERT_EQ(t.warnings.size(), 1u);
  EXPECT_THAT(t.warnings[0], HasSubstr("torn.csv"));
}

class ResultFiles : public TempDirTest {
 protected:
  std::string Write(const std::string& name, const std::string& text) {
    std::string path = dir_ + "/" + name;
    std::ofstream(path) << text;
    return path;
  }
};

TEST_F(ResultFiles, MergesDirectoriesAndFilesAndCountsATransferOnce) {
  std::filesystem::create_directories(dir_ + "/day1");
  Write("day1/transfers.csv", std::string(kHeader) + Row("a", 1, "receiver", "100") + Row("a", 2, "receiver", "110"));
  Write("day1/samples.csv",
        "run_id,label,iteration,stream,role,host,t_s,bytes,mb_per_s,transfer_id\n"
        "r1,a,1,0,receiver,nas,1.000,100000000,100.00,1\n");
  std::string day2 = Write("day2.csv",
                           "extra,status,label,iteration,role,mb_per_s,run_id,stream,host\n"
                           "z,ok,b,1,receiver,150,r2,0,nas\n");
  // day1's transfers.csv named twice (as its directory and as a file): counted once.
  auto table = LoadResults({dir_ + "/day1", day2, dir_ + "/day1/transfers.csv"});
  ASSERT_TRUE(table.ok()) << table.status();
  EXPECT_EQ(table->transfers.size(), 3u);
  EXPECT_EQ(table->samples.size(), 1u);
  EXPECT_EQ(table->files.size(), 3u);
}

TEST_F(ResultFiles, DuplicateRowsFromTwoCollectorsCountOnce) {
  std::string row = Row("a", 1, "receiver", "100");
  std::string one = Write("one.csv", std::string(kHeader) + row);
  std::string two = Write("two.csv", std::string(kHeader) + row + Row("a", 2, "receiver", "120"));
  auto table = LoadResults({one, two});
  ASSERT_TRUE(table.ok());
  EXPECT_EQ(table->transfers.size(), 2u);
  ASSERT_FALSE(table->warnings.empty());
  EXPECT_THAT(table->warnings.back(), HasSubstr("1 duplicate transfer row"));
}

// Issue 42 row 5: a live view reads only the store's tail, whole rows only (a cut inside
// a quoted field with a newline included), and says it shows the last N rows.
TEST_F(ResultFiles, TheTailOfAStoreIsReadAndSaysSo) {
  std::filesystem::create_directories(dir_ + "/store");
  std::string csv = kHeader;
  for (int i = 1; i <= 1000; ++i) {
    csv += i % 2 == 0 ? Row("a", i, "receiver", "100") : Row("a", i, "receiver", "", "failed", "false", "\"one\ntwo\"");
  }
  Write("store/transfers.csv", csv);
  for (TailBounds bounds : {TailBounds{3000, 1000}, TailBounds{3050, 1000}, TailBounds{3100, 1000},
                            TailBounds{3150, 1000}, TailBounds{1 << 20, 10}, TailBounds{1 << 20, 11}}) {
    auto table = LoadResultsTail(dir_ + "/store", bounds);
    ASSERT_TRUE(table.ok()) << bounds.max_bytes << " " << bounds.max_rows << ": " << table.status();
    ASSERT_FALSE(table->transfers.empty());
    EXPECT_LE(table->transfers.size(), std::min<size_t>(bounds.max_rows, 20));
    EXPECT_EQ(table->transfers.back().iteration, 1000);
    EXPECT_EQ(table->transfers.front().iteration, 1001 - static_cast<long long>(table->transfers.size()));
    EXPECT_THAT(absl::StrJoin(table->warnings, "\n"),
                HasSubstr(absl::StrCat("shows only the last ", table->transfers.size(), " transfer rows")));
  }
  auto whole = LoadResultsTail(dir_ + "/store", TailBounds{size_t{1} << 20, 2000});
  ASSERT_TRUE(whole.ok()) << whole.status();
  EXPECT_EQ(whole->transfers.size(), 1000u) << "a store smaller than the bound is read whole";
  EXPECT_THAT(LoadResultsTail(dir_, TailBounds{}).status().message(), HasSubstr("no transfers.csv"));
}

TEST_F(ResultFiles, MissingInputsAreNamed) {
  auto missing = LoadResults({dir_ + "/nope.csv"});
  EXPECT_THAT(missing.status().message(), HasSubstr("nope.csv"));
  auto empty_dir = LoadResults({dir_});
  EXPECT_THAT(empty_dir.status().message(), HasSubstr("no transfers.csv"));
}

}  // namespace
}  // namespace nasperf
