// What the lab console prints for a tally: one line per transfer and per receiver,
// "-" where a failed transfer moved nothing, and the summary's medians.
#include "lab/console.h"

#include <cstdio>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace nasperf {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

class ConsoleTest : public ::testing::Test {
 protected:
  void SetUp() override { out_ = open_memstream(&buffer_, &size_); }
  void TearDown() override { std::free(buffer_); }
  std::string Printed() {
    std::fflush(out_);
    std::string text(buffer_, size_);
    std::fclose(out_);
    out_ = nullptr;
    return text;
  }
  std::FILE* out_ = nullptr;
  char* buffer_ = nullptr;
  size_t size_ = 0;
};

TEST_F(ConsoleTest, ARunShowsEachTransferAndEachReceiversIntake) {
  PlanTransfer ok_transfer, failed_transfer;
  ok_transfer.from = "c1";
  ok_transfer.to = "nas";
  ok_transfer.streams = 2;
  ok_transfer.size = 1ULL << 30;
  failed_transfer.from = "c2";
  failed_transfer.to = "nas";
  failed_transfer.streams = 1;
  failed_transfer.file = "/data/big.mov";
  RunTally run;
  run.transfers.push_back({&ok_transfer, 230.5, 220.25, 2, true, ""});
  run.transfers.push_back({&failed_transfer, 0, 0, 0, false, "failed: agent stopped answering mid-run"});
  run.receivers.push_back({"nas", 2, 230.5, 220.25, false});
  IntakeTransfer a, b;
  a.duration_s = 1;
  a.bytes = 1e9;
  b.duration_s = 10;
  b.bytes = 1e9;
  run.receivers.back().intake = ComputeIntake({a, b});
  run.receivers.push_back({"ssh-nas", 1, 80, 0, true, false});
  run.start_skew_ms = 1.25;
  LabConsole(out_).Run(run, /*warmup=*/false, 2, 3, 2);
  std::string text = Printed();
  EXPECT_THAT(text, HasSubstr("run 2/3 (iteration 2): start skew 1.25 ms\n"));
  EXPECT_THAT(text, HasSubstr("c1 -> nas"));
  EXPECT_THAT(text, HasSubstr("1.00 GiB  send 230.5 MB/s  durable 220.2 MB/s  ok\n"));
  EXPECT_THAT(text, HasSubstr("file  send         -  durable         -  failed: agent stopped answering mid-run\n"));
  EXPECT_THAT(text, HasSubstr("= nas"));
  EXPECT_THAT(text, HasSubstr("2 transfers  all bytes/span 200.0 MB/s (10.000 s), while all ran 1100.0 MB/s "
                              "(1.000 s), no timeline (1 step of 10.000 s: too short for a curve) (not every "
                              "transfer finished)\n"));
  EXPECT_THAT(text, HasSubstr("= ssh-nas               1 transfer   no NAS intake (no receiver rows with times)\n"));
  EXPECT_THAT(text, Not(HasSubstr("aggregate")));
}

TEST_F(ConsoleTest, TheSummaryGivesMediansAndWhereTheResultsAre) {
  LabOutcome outcome;
  outcome.runs_done = 3;
  outcome.transfers_csv = "results/transfers.csv";
  LabTotals totals;
  totals.sender_rows = 6;
  totals.failed = 1;
  totals.aborted = 1;
  totals.start_skews_ms = {1, 3, 2};
  totals.all_mb_per_s["nas"] = {100, 300, 200};
  totals.while_all_mb_per_s["nas"] = {400};
  LabConsole(out_).Summary(outcome, totals, "results");
  std::string text = Printed();
  EXPECT_THAT(text, HasSubstr("summary: 3 runs, 6 transfer rows, 1 failed (1 aborted)\n"));
  EXPECT_THAT(text, HasSubstr("start skew: median 2.00 ms, max 3.00 ms\n"));
  EXPECT_THAT(text, HasSubstr("nas all bytes/span MB/s: median 200.0, min 100.0, max 300.0 (n 3)\n"));
  EXPECT_THAT(text, HasSubstr("nas while all ran MB/s: median 400.0, min 400.0, max 400.0 (n 1)\n"));
  EXPECT_THAT(text, HasSubstr("results: results/transfers.csv (nasperf report results)\n"));
}

// Issue 29 row 10: an agent names its host, version and target, a path check sends
// its own line, a transfer's error comes from a peer: none of it drives the terminal.
TEST_F(ConsoleTest, APeersTextReachesTheTerminalEscaped) {
  PlanHost host;
  host.name = "nas";
  proto::HelloReply hello;
  hello.set_version("0.1.0\x1b[2J");
  hello.set_host("nas\x1b]0;pwned\x07");
  hello.set_target(
      "/pool\xc2\x9b"
      "31m");
  LabConsole console(out_);
  console.HostChecked(host, hello);
  PlanTransfer transfer;
  transfer.from = "c1";
  transfer.to = "nas";
  proto::CheckPathReply path;
  path.set_line("path ok\x1b[1A");
  path.add_warnings("\x1b]8;;http://evil\x1b\\click");
  console.PathChecked("c1->nas", transfer, path);
  const std::string text = Printed();
  EXPECT_EQ(text.find('\x1b'), std::string::npos) << text;
  EXPECT_EQ(text.find("\xc2\x9b"), std::string::npos) << text;
  EXPECT_THAT(text, HasSubstr("nasperf 0.1.0\\x1b[2J on nas\\x1b]0;pwned\\x07, target /pool\\xc2\\x9b31m"));
  EXPECT_THAT(text, HasSubstr("c1 -> nas: path ok\\x1b[1A\n"));
}

}  // namespace
}  // namespace nasperf
