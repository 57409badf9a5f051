// The console line for a copy an observing agent measured: the copy, its rate, what
// smbd negotiated, and the verdict's reason cut from the row's detail.
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lab/agent_client.h"

namespace nasperf {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

proto::TransferReport ObservedRow(const std::string& bottleneck, const std::string& why) {
  proto::TransferReport row;
  row.set_iteration(2);
  row.set_mb_per_s(499.12);
  row.set_status("ok");
  row.set_bottleneck(bottleneck);
  row.set_observed_detail(
      absl::StrCat("ended: closed; timed from the file's creation to its last change (kernel times); served by "
                   "smbd[8445]: busiest thread 40 % on a CPU; ",
                   why));
  return row;
}

TEST(ObservedCopyLine, SaysTheCopyItsRateAndTheVerdictsReason) {
  proto::TransferReport row =
      ObservedRow("server-cpu",
                  "server-cpu: one of the serving process's threads was on or queued for a CPU at 84 % (NIC 40 %; "
                  "in memory (tmpfs): no disk)");
  row.set_share_protocol("smb SMB3_11 signing=AES-128-GMAC encryption=none (smbstatus)");
  const std::string line = ObservedCopyLine(row);
  EXPECT_THAT(line, StartsWith("  copy 2  499.1 MB/s  [smb SMB3_11 signing=AES-128-GMAC encryption=none (smbstatus)]  "
                               "server-cpu: one of the serving"));
  EXPECT_THAT(line, HasSubstr("(NIC 40 %; in memory (tmpfs): no disk)"));  // the reason whole, its "; " too
  EXPECT_THAT(line, Not(HasSubstr("ended: closed")));
}

TEST(ObservedCopyLine, NoVerdictAndAFailedWarmUpAreSaid) {
  proto::TransferReport row = ObservedRow("", "no verdict: too little seen (NIC ?)");
  row.set_iteration(0);
  row.set_status("aborted");
  EXPECT_EQ(ObservedCopyLine(row), "  warm-up  499.1 MB/s  aborted  no verdict: too little seen (NIC ?)");
}

TEST(ObservedCopyLine, ADetailWithoutTheVerdictsReasonIsShownWhole) {
  proto::TransferReport row = ObservedRow("disk", "something else");
  EXPECT_THAT(ObservedCopyLine(row), HasSubstr("499.1 MB/s  ended: closed; timed"));
}

}  // namespace
}  // namespace nasperf
