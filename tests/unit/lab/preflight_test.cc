// The lab's preflight judgements from agents' answers alone, without processes:
// version and target mismatches, write modes and MTUs the plan does not match, and
// receivers without room for one run or under a --max-size.
#include "lab/preflight.h"

#include "gtest/gtest.h"

namespace nasperf {
namespace {

PlanHost Host(const std::string& name, const std::string& target = "") {
  PlanHost h;
  h.name = name;
  h.agent = {"10.0.0.1", 7600};
  h.target = target;
  return h;
}

proto::HelloReply Hello(const std::string& target, uint64_t free_bytes = 0) {
  proto::HelloReply hello;
  hello.set_version("1.0");
  hello.set_target(target);
  hello.add_write_modes("buffered");
  hello.set_free_bytes(free_bytes);
  return hello;
}

TEST(Preflight, HostsMustRunTheSameVersionAndWriteWhereThePlanSays) {
  EXPECT_TRUE(HostProblems(Host("nas", "/mnt/cache"), Hello("/mnt/cache"), "1.0").empty());
  auto problems = HostProblems(Host("nas", "/mnt/cache"), Hello("/mnt/array"), "2.0");
  ASSERT_EQ(problems.size(), 2u);
  EXPECT_NE(problems[0].find("runs nasperf 1.0, this controller is 2.0"), std::string::npos);
  EXPECT_NE(problems[1].find("writes into /mnt/array"), std::string::npos);
}

TEST(Preflight, TheSendingAgentMustBeBuiltWithTheTransport) {
  PlanTransfer t;
  t.from = "c1";
  t.transport = "smb";
  proto::HelloReply dynamic = Hello("discard"), static_build = Hello("discard");
  for (const char* word : {"native", "scp", "sftp", "nfs", "smb"}) dynamic.add_transports(word);
  for (const char* word : {"native", "scp", "sftp", "nfs"}) static_build.add_transports(word);
  EXPECT_TRUE(SenderProblems("transfer 1", t, dynamic).empty());
  auto problems = SenderProblems("transfer 1", t, static_build);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].find("transfer 1: host c1's nasperf cannot run transport = \"smb\" (it runs "
                             "native|scp|sftp|nfs): a static build has no SMB"),
            std::string::npos)
      << problems[0];
  t.transport = "nfs";
  EXPECT_TRUE(SenderProblems("transfer 1", t, static_build).empty());
}

TEST(Preflight, WriteModeAndMtusMustMatchThePlan) {
  PlanTransfer t;
  t.from = "c1";
  t.to = "nas";
  t.write_mode = "direct";
  PlanHost from = Host("c1"), to = Host("nas");
  from.mtu = 9000;
  proto::CheckPathReply path;
  path.set_mtu(1500);
  auto problems = TransferProblems("transfer 1", t, from, to, Hello("/mnt/cache"), path);
  ASSERT_EQ(problems.size(), 2u);
  EXPECT_NE(problems[0].find("does not take write_mode = \"direct\""), std::string::npos);
  EXPECT_NE(problems[1].find("interface MTU toward nas is 1500, the plan says mtu = 9000"), std::string::npos);
  EXPECT_TRUE(TransferProblems("transfer 1", t, Host("c1"), to, Hello("discard"), path).empty());
}

TEST(Preflight, EveryReceiverNeedsRoomForOneRun) {
  Plan plan;
  PlanTransfer t;
  t.to = "nas";
  t.size = 3 << 20;
  plan.transfers.push_back(t);
  std::map<std::string, proto::HelloReply> hellos{{"nas", Hello("/mnt/cache", 4 << 20)}};
  hellos["nas"].set_min_free(2 << 20);
  hellos["nas"].set_max_size(1 << 20);
  auto problems = CapacityProblems(plan, hellos, {{"nas", 3 << 20}});
  ASSERT_EQ(problems.size(), 2u);
  EXPECT_NE(problems[0].find("one run writes 3.00 MiB"), std::string::npos) << problems[0];
  EXPECT_NE(problems[1].find("above its --max-size"), std::string::npos) << problems[1];
  hellos["nas"] = Hello("/mnt/cache", 100 << 20);
  EXPECT_TRUE(CapacityProblems(plan, hellos, {{"nas", 3 << 20}}).empty());
}

}  // namespace
}  // namespace nasperf
