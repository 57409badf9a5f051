// The collector's live board (collector/live_board.h): /metrics in the Prometheus text
// format from stored rows and live updates (escaped, bounded, live gauges only while a
// loop runs) and the live page's JSON.
#include "collector/live_board.h"

#include <limits>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "wire/validate.h"

namespace nasperf {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

proto::TransferReport Row(const std::string& host, const std::string& status, double mb_per_s, uint64_t bytes,
                          const std::string& verdict) {
  proto::TransferReport r;
  r.set_run_id("20261205-000000-abcd");
  r.set_host(host);
  r.set_role("sender");
  r.set_label("cache");
  r.set_transport("native");
  r.set_direction("write");
  r.set_status(status);
  r.set_bytes(bytes);
  if (mb_per_s > 0) r.set_mb_per_s(mb_per_s);
  r.set_bottleneck(verdict);
  r.add_samples()->set_bytes(bytes);
  return r;
}

proto::LiveUpdate Update(int copy, double mb_per_s) {
  proto::LiveUpdate u;
  u.set_run_id("20261205-000000-abcd");
  u.set_host("client1");
  u.set_role("sender");
  u.set_label("cache");
  u.set_transport("native");
  u.set_direction("write");
  u.set_copy(copy);
  u.set_copies(6);
  u.set_mb_per_s(mb_per_s);
  u.set_left_s(40);
  return u;
}

// Every line of the exposition is a comment or NAME{LABELS} VALUE: a metric name, label
// values in quotes with only \\, \" and \n escaped, and a number.
void ExpectWellFormed(const std::string& text) {
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    if (absl::StartsWith(line, "# HELP ") || absl::StartsWith(line, "# TYPE ")) continue;
    size_t i = 0;
    while (i < line.size() && (absl::ascii_islower(line[i]) || line[i] == '_')) ++i;
    ASSERT_GT(i, 0u) << line;
    if (i < line.size() && line[i] == '{') {
      bool quoted = false;
      for (++i; i < line.size() && (quoted || line[i] != '}'); ++i) {
        if (quoted && line[i] == '\\') {
          ++i;
          ASSERT_TRUE(i < line.size() && (line[i] == '\\' || line[i] == '"' || line[i] == 'n')) << line;
        } else if (line[i] == '"') {
          quoted = !quoted;
        }
      }
      ASSERT_LT(i, line.size()) << line;
      ++i;
    }
    double value = 0;
    ASSERT_TRUE(i < line.size() && line[i] == ' ' && absl::SimpleAtod(line.substr(i + 1), &value)) << line;
  }
}

TEST(LiveBoard, RowsBecomeCountersAndTheLastRate) {
  LiveBoard board;
  board.AddRow(Row("client1", "ok", 110.5, 1000, "network"));
  proto::TransferReport knee = Row("client1", "ok", 98.25, 2000, "disk");
  knee.set_sustained_mb_per_s(61);
  knee.set_burst_bytes(268435456);
  knee.set_cache_shape("ramp");
  knee.set_stall_count(2);
  knee.set_longest_stall_s(6.5);
  board.AddRow(knee);
  board.AddRow(Row("client1", "failed", 0, 300, ""));
  board.CountReport(LiveBoard::Outcome::kStored);
  board.CountReport(LiveBoard::Outcome::kRefused);
  const std::string m = board.Metrics();
  ExpectWellFormed(m);
  const std::string labels = R"(host="client1",role="sender",label="cache",transport="native",direction="write")";
  EXPECT_THAT(m, HasSubstr(absl::StrCat("nasperf_transfer_bytes_total{", labels, "} 3300\n")));
  EXPECT_THAT(m, HasSubstr(absl::StrCat("nasperf_transfers_total{", labels, ",status=\"ok\"} 2\n")));
  EXPECT_THAT(m, HasSubstr(absl::StrCat("nasperf_transfers_total{", labels, ",status=\"failed\"} 1\n")));
  EXPECT_THAT(m, HasSubstr(absl::StrCat("nasperf_last_transfer_bytes_per_second{", labels, "} 98250000\n")));
  EXPECT_THAT(m, HasSubstr(absl::StrCat("nasperf_verdicts_total{", labels, ",verdict=\"disk\"} 1\n")));
  EXPECT_THAT(m, HasSubstr(absl::StrCat("nasperf_last_sustained_bytes_per_second{", labels, "} 61000000\n")));
  EXPECT_THAT(m, HasSubstr(absl::StrCat("nasperf_last_burst_bytes{", labels, ",shape=\"ramp\"} 268435456\n")));
  EXPECT_THAT(m, HasSubstr(absl::StrCat("nasperf_last_longest_stall_seconds{", labels, "} 6.5\n")));
  EXPECT_THAT(m, HasSubstr(absl::StrCat("nasperf_stalls_total{", labels, "} 2\n")));
  EXPECT_THAT(m, HasSubstr("nasperf_collector_reports_total{outcome=\"refused\"} 1\n"));
  EXPECT_THAT(m, HasSubstr("# TYPE nasperf_transfer_bytes_total counter\n"));
}

TEST(LiveBoard, LabelValuesAreEscapedAndTheJsonToo) {
  LiveBoard board;
  board.AddRow(Row("nas\"x\\y\nz", "ok", 1, 1, ""));
  const std::string m = board.Metrics();
  ExpectWellFormed(m);
  EXPECT_THAT(m, HasSubstr(R"(host="nas\"x\\y\nz")"));
  EXPECT_THAT(board.Json(), HasSubstr(R"("host":"nas\"x\\y\nz")"));
  EXPECT_THAT(board.Json(), Not(HasSubstr("\n")));
}

TEST(LiveBoard, LiveGaugesOnlyWhileALoopRuns) {
  int64_t now = 1'000'000'000;
  LiveBoard board([&now] { return now; });
  board.Update(Update(2, 105));
  std::string m = board.Metrics();
  ExpectWellFormed(m);
  EXPECT_THAT(m, HasSubstr("nasperf_current_bytes_per_second{host=\"client1\""));
  EXPECT_THAT(m, HasSubstr("run_id=\"20261205-000000-abcd\"} 105000000\n"));
  EXPECT_THAT(m, HasSubstr("nasperf_loop_seconds_left{"));
  now += 500'000'000;
  board.Update(Update(2, 107));
  EXPECT_THAT(board.Json(), HasSubstr("\"points\":[[0,105],[0.5,107]]"));
  now += LiveBoard::kFreshNs + 1;
  EXPECT_THAT(board.Metrics(), Not(HasSubstr("nasperf_current_bytes_per_second{"))) << "a silent loop is not running";
  EXPECT_THAT(board.Json(), HasSubstr("\"running\":false"));
  proto::LiveUpdate last = Update(6, 0);
  last.set_ended(true);
  board.Update(last);
  EXPECT_THAT(board.Metrics(), Not(HasSubstr("nasperf_loop_copy{"))) << "an ended loop is not running";
}

TEST(LiveBoard, SeriesLoopsPointsAndRowsAreBounded) {
  int64_t now = 0;
  LiveBoard board([&now] { return now; });
  for (size_t i = 0; i <= LiveBoard::kMaxSeries; ++i) board.AddRow(Row(absl::StrCat("host", i), "ok", 1, 1, ""));
  EXPECT_THAT(board.Metrics(), HasSubstr("nasperf_collector_series_dropped_total 1\n"));
  EXPECT_THAT(board.Metrics(), Not(HasSubstr(absl::StrCat("host=\"host", LiveBoard::kMaxSeries, "\""))));
  size_t rows = 0;
  for (size_t at = board.Json().find("\"iteration\""); at != std::string::npos;
       at = board.Json().find("\"iteration\"", at + 1)) {
    ++rows;
  }
  EXPECT_EQ(rows, LiveBoard::kMaxRecentRows);
  for (size_t i = 0; i < LiveBoard::kMaxPointsPerLoop + 10; ++i) {
    now += 1'000'000;
    board.Update(Update(1, static_cast<double>(i)));
  }
  const std::string json = board.Json();
  EXPECT_THAT(json, Not(HasSubstr("[0,0]"))) << "the oldest points went";
  for (size_t i = 0; i < LiveBoard::kMaxLoops + 1; ++i) {
    proto::LiveUpdate u = Update(1, 1);
    u.set_run_id(absl::StrCat("run-", i));
    board.Update(u);
  }
  EXPECT_THAT(board.Metrics(), HasSubstr("nasperf_collector_series_dropped_total 3\n"));  // 1 series, 2 loops
}

// What a peer sends is checked where it enters (Collector.Live).
TEST(CheckLiveUpdate, RefusesWhatNoLoopSends) {
  EXPECT_TRUE(CheckLiveUpdate(Update(2, 100)).ok()) << CheckLiveUpdate(Update(2, 100));
  auto refused = [](auto change) {
    proto::LiveUpdate u = Update(2, 100);
    change(u);
    return !CheckLiveUpdate(u).ok();
  };
  EXPECT_TRUE(refused([](proto::LiveUpdate& u) { u.set_copy(7); }));
  EXPECT_TRUE(refused([](proto::LiveUpdate& u) { u.set_copy(0); }));
  EXPECT_TRUE(refused([](proto::LiveUpdate& u) { u.set_copies(kMaxLiveCopies + 1); }));
  EXPECT_TRUE(refused([](proto::LiveUpdate& u) { u.set_mb_per_s(-1); }));
  EXPECT_TRUE(refused([](proto::LiveUpdate& u) { u.set_mb_per_s(1e300); }));
  EXPECT_TRUE(refused([](proto::LiveUpdate& u) { u.set_left_s(std::numeric_limits<double>::quiet_NaN()); }));
  EXPECT_TRUE(refused([](proto::LiveUpdate& u) { u.set_host("a\nb"); }));
  EXPECT_TRUE(refused([](proto::LiveUpdate& u) { u.set_role("admin"); }));
  EXPECT_TRUE(refused([](proto::LiveUpdate& u) { u.set_label(std::string(10000, 'x')); }));
  EXPECT_TRUE(refused([](proto::LiveUpdate& u) { u.set_run_id(""); }));
}

}  // namespace
}  // namespace nasperf
