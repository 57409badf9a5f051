#include "receiver/transfer_table.h"

#include <algorithm>
#include <thread>

#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"

namespace nasperf {
namespace {

TransferPlan Plan(uint64_t size) {
  TransferPlan plan;
  plan.request.set_run_id("r");
  plan.request.set_size(size);
  plan.reserve_bytes = size;
  return plan;
}

DataHeader HeaderFor(const TransferPlan& plan) {
  DataHeader h;
  h.transfer_id = plan.id;
  h.ticket = plan.ticket;
  h.payload_length = plan.request.size();
  return h;
}

TEST(TransferTable, TicketIsOneUse) {
  TransferTable table(absl::Seconds(30), 8);
  auto plan = table.Add(Plan(100));
  ASSERT_TRUE(plan.ok());
  EXPECT_TRUE(table.Claim(HeaderFor(*plan)).ok());
  auto again = table.Claim(HeaderFor(*plan));
  ASSERT_FALSE(again.ok());
  EXPECT_NE(again.status().message().find("already used"), std::string::npos);
}

TEST(TransferTable, UnknownTicketRefused) {
  TransferTable table(absl::Seconds(30), 8);
  auto plan = table.Add(Plan(100));
  DataHeader forged = HeaderFor(*plan);
  forged.ticket[0] ^= 1;
  auto claimed = table.Claim(forged);
  ASSERT_FALSE(claimed.ok());
  EXPECT_NE(claimed.status().message().find("unknown ticket"), std::string::npos);
}

TEST(TransferTable, ExpiredTicketRefused) {
  TransferTable table(absl::Milliseconds(1), 8);
  auto plan = table.Add(Plan(100));
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // expiry is about time itself
  EXPECT_FALSE(table.Claim(HeaderFor(*plan)).ok());
  EXPECT_EQ(table.reserved_bytes(), 0u);
}

TEST(TransferTable, MismatchedHeaderUsesTheTicketUp) {
  TransferTable table(absl::Seconds(30), 8);
  auto plan = table.Add(Plan(100));
  DataHeader wrong = HeaderFor(*plan);
  wrong.payload_length = 101;
  EXPECT_FALSE(table.Claim(wrong).ok());
  EXPECT_FALSE(table.Claim(HeaderFor(*plan)).ok());
  EXPECT_EQ(table.reserved_bytes(), 0u);
}

TEST(TransferTable, ReservesUntilComplete) {
  TransferTable table(absl::Seconds(30), 8);
  auto a = table.Add(Plan(100));
  auto b = table.Add(Plan(50));
  EXPECT_EQ(table.reserved_bytes(), 150u);
  ASSERT_TRUE(table.Claim(HeaderFor(*a)).ok());
  table.Complete(a->id, proto::TransferReport());
  EXPECT_EQ(table.reserved_bytes(), 50u);
  EXPECT_NE(a->id, b->id);
}

TEST(TransferTable, LimitsOpenTransfers) {
  TransferTable table(absl::Seconds(30), 2);
  ASSERT_TRUE(table.Add(Plan(1)).ok());
  ASSERT_TRUE(table.Add(Plan(1)).ok());
  auto third = table.Add(Plan(1));
  ASSERT_FALSE(third.ok());
  EXPECT_TRUE(absl::IsResourceExhausted(third.status()));
}

// Issue 29, row 4: a read file being laid out counts against --max-transfers and the
// free-space guard like a write of its size, until it is written.
TEST(TransferTable, ALayOutHoldsASlotAndItsBytes) {
  TransferTable table(absl::Seconds(30), 2);
  auto laying = table.BeginLayOut(100);
  ASSERT_TRUE(laying.ok()) << laying.status();
  EXPECT_EQ(table.reserved_bytes(), 100u);
  ASSERT_TRUE(table.Add(Plan(1)).ok());
  EXPECT_TRUE(absl::IsResourceExhausted(table.Add(Plan(1)).status()));
  auto another = table.BeginLayOut(1);
  ASSERT_FALSE(another.ok());
  EXPECT_NE(another.status().message().find("--max-transfers"), std::string::npos) << another.status();
  table.EndLayOut(*laying);
  EXPECT_EQ(table.reserved_bytes(), 1u);
  EXPECT_TRUE(table.Add(Plan(1)).ok());
}

TEST(TransferTable, FetchWaitsForCompletion) {
  TransferTable table(absl::Seconds(30), 8);
  auto plan = table.Add(Plan(10));
  ASSERT_TRUE(table.Claim(HeaderFor(*plan)).ok());
  absl::Notification fetching;
  std::thread completer([&] {
    fetching.WaitForNotification();
    proto::TransferReport report;
    report.set_status("ok");
    table.Complete(plan->id, report);
  });
  fetching.Notify();
  auto report = table.Fetch(plan->id, absl::Seconds(20));
  completer.join();
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->status(), "ok");
  EXPECT_TRUE(absl::IsNotFound(table.Fetch(9999, absl::Seconds(1)).status()));
}

TEST(TransferTable, RunFilesAreTakenOnce) {
  TransferTable table(absl::Seconds(30), 8);
  table.KeepUntilRunEnds("r1", "a");
  table.KeepUntilRunEnds("r1", "b");
  table.KeepUntilRunEnds("r2", "c");
  EXPECT_EQ(table.TakeRunFiles("r1"), (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(table.TakeRunFiles("r1").empty());
  EXPECT_EQ(table.TakeAllRunFiles(), (std::vector<std::string>{"c"}));
}

// Issue 29, row 4: at the receiver's stop every laid-out read file goes, also one a
// peer asked to keep (cleanup=never: never noted for its run's end), each name once.
TEST(TransferTable, TheStopTakesEveryLaidOutFile) {
  TransferTable table(absl::Seconds(30), 8);
  table.NoteLaidOut("kept-by-peer");
  table.NoteLaidOut("read-r1");
  table.KeepUntilRunEnds("r1", "read-r1");
  table.KeepUntilRunEnds("r1", "write-r1");
  std::vector<std::string> all = table.TakeAllRunFiles();
  std::sort(all.begin(), all.end());
  EXPECT_EQ(all, (std::vector<std::string>{"kept-by-peer", "read-r1", "write-r1"}));
  EXPECT_FALSE(table.WasLaidOut("kept-by-peer"));
  EXPECT_TRUE(table.TakeAllRunFiles().empty());
}

}  // namespace
}  // namespace nasperf
