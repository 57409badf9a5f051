// The verdict rules (measure/verdict.h) on hand-made figures.
#include "measure/verdict.h"

#include <string>

#include "gtest/gtest.h"

namespace nasperf {
namespace {

TEST(Verdict, PicksTheSideTheOtherWaitedOn) {
  EXPECT_EQ(Verdict({80, 5}), "network");
  EXPECT_EQ(Verdict({5, 80}), "disk");
  EXPECT_EQ(Verdict({5, 5}), "balanced");
  EXPECT_EQ(Verdict({30, 60}), "disk");
  EXPECT_EQ(Verdict({10, 10, 70}), "source");
  EXPECT_EQ(Verdict({10, 10, -1}), "balanced");
}

TEST(Verdict, AFullLinkIsTheNetworkWhateverTheWaits) {
  EXPECT_EQ(Verdict({5, 60, -1, 98.9}), "network");
  EXPECT_EQ(Verdict({5, 60, 70, 96}), "network") << "a source that kept the link full did not limit it";
  EXPECT_EQ(Verdict({5, 60, -1, 90}), "disk");
  EXPECT_EQ(Verdict({5, 60, -1, -1}), "disk") << "line rate unknown";
}

// The CPU words: a data thread on (or queued for) the CPU 90 % of the time or more.
TEST(Verdict, ACpuBoundEndIsNamedBeforeTheWaitsItCaused) {
  VerdictFigures receiver_bound{5, 80};  // its reader waited on a writer that only computed
  receiver_bound.receiver_cpu_pct = 97;
  receiver_bound.sender_cpu_pct = 20;
  EXPECT_EQ(Verdict(receiver_bound), "receiver-cpu");
  VerdictFigures sender_bound{85, 0};  // the NAS waited for data the sender could not produce faster
  sender_bound.sender_cpu_pct = 99;
  sender_bound.receiver_cpu_pct = 10;
  EXPECT_EQ(Verdict(sender_bound), "sender-cpu");
  VerdictFigures both{5, 5};
  both.sender_cpu_pct = 95;
  both.receiver_cpu_pct = 98;
  EXPECT_EQ(Verdict(both), "receiver-cpu") << "the busier end";
  VerdictFigures almost{5, 80};
  almost.receiver_cpu_pct = 89.9;
  EXPECT_EQ(Verdict(almost), "disk") << "below the CPU-bound share the waits decide";
  VerdictFigures full_link{5, 5, -1, 97};
  full_link.sender_cpu_pct = 99;
  EXPECT_EQ(Verdict(full_link), "network") << "a full link: a faster CPU would not have helped";
  VerdictFigures unknown{80, 5};
  EXPECT_EQ(Verdict(unknown), "network") << "no CPU figures: the waits as before";
}

// An end held by a cgroup CPU quota (a container's --cpus, a service's CPUQuota): the
// kernel's count of the periods the quota throttled it in decides, even when its thread
// came out under the busy share (the lab's sender at 5 % of a core: busy 89.7 %, its
// network work done elsewhere while it waited on the socket).
TEST(Verdict, AnEndItsCpuQuotaThrottledInMostPeriodsIsCpuBound) {
  VerdictFigures sender{85, 0};  // the NAS waited for data
  sender.sender_cpu_pct = 89.7;
  sender.receiver_cpu_pct = 10;
  EXPECT_EQ(Verdict(sender), "network") << "without the quota's figure, as before";
  sender.sender_quota_pct = 93;
  EXPECT_EQ(Verdict(sender), "sender-cpu");
  EXPECT_EQ(CpuVerdict(sender), "sender-cpu");
  EXPECT_EQ(QuotaReason(sender, "sender-cpu"),
            "sender-cpu: its CPU quota throttled it in 93 % of its periods (the sender's cgroup: a container's or "
            "service's CPU limit)");
  VerdictFigures receiver{5, 60};
  receiver.receiver_cpu_pct = 70;
  receiver.receiver_quota_pct = 80;
  EXPECT_EQ(Verdict(receiver), "receiver-cpu") << "80 % of the periods is enough";
  EXPECT_NE(QuotaReason(receiver, "receiver-cpu").find("throttled it in 80 % of its periods"), std::string::npos);
  receiver.receiver_quota_pct = 79;
  EXPECT_EQ(Verdict(receiver), "disk") << "a quota that held it back now and then decides nothing";
  EXPECT_EQ(CpuVerdict(receiver), "");
  EXPECT_EQ(QuotaReason(receiver, "disk"), "");
  VerdictFigures full_link{5, 5, -1, 97};
  full_link.sender_quota_pct = 99;
  EXPECT_EQ(Verdict(full_link), "network") << "a full link: more CPU would not have helped";
  EXPECT_EQ(CpuVerdict(full_link), "");
  VerdictFigures busy_receiver{5, 5};
  busy_receiver.receiver_cpu_pct = 99;
  busy_receiver.sender_cpu_pct = 60;
  busy_receiver.sender_quota_pct = 95;
  EXPECT_EQ(Verdict(busy_receiver), "receiver-cpu") << "both ends bound: the busier one, as before";
  EXPECT_EQ(QuotaReason(busy_receiver, "receiver-cpu"), "") << "no quota held the receiver";
}

// A read's figures as they fall on the wire (the NAS sends): each word names the place.
TEST(Verdict, AReadNamesPlacesNotWireSides) {
  EXPECT_EQ(ReadVerdict({90, 2, 85}), "disk") << "the NAS's disk: its file reads";
  EXPECT_EQ(ReadVerdict({10, 70, 2}), "client-disk") << "the client's --local-target";
  EXPECT_EQ(ReadVerdict({90, 2, 5}), "network");
  VerdictFigures nas_cpu{5, 5, 5};
  nas_cpu.sender_cpu_pct = 97;  // the wire's sender: the NAS agent
  EXPECT_EQ(ReadVerdict(nas_cpu), "receiver-cpu");
  VerdictFigures client_cpu{5, 5, 5};
  client_cpu.receiver_cpu_pct = 97;
  EXPECT_EQ(ReadVerdict(client_cpu), "sender-cpu");
  EXPECT_EQ(ReadVerdict({5, 5, 5}), "balanced");
}

TEST(LineRatePct, APlausibleShareOrANoteSayingTheLinkIsFaster) {
  std::string note;
  EXPECT_DOUBLE_EQ(*LineRatePct(50, 100, &note), 50);
  EXPECT_DOUBLE_EQ(*LineRatePct(104, 100, &note), 104) << "within the slack";
  EXPECT_TRUE(note.empty());
  EXPECT_FALSE(LineRatePct(277, 100, &note).has_value());
  EXPECT_NE(note.find("277%"), std::string::npos) << note;
  EXPECT_FALSE(LineRatePct(50, 0, &note).has_value()) << "no ceiling, no figure";
}

// While the sender waits on its source, the NAS necessarily waits on the network: its
// net wait holds the source's. Only what is left of it is the network's own.
TEST(Verdict, TheNetworksShareIsWhatIsLeftAfterTheSourcesWait) {
  EXPECT_EQ(Verdict({100, 0, 99}), "source") << "a slow source: the NAS waited all along, for it";
  EXPECT_EQ(Verdict({100, 0, 5}), "network") << "a slow link behind a quick source";
  EXPECT_EQ(Verdict({100, 0, 40}), "network") << "60 % of the wait was the network's own";
  EXPECT_EQ(Verdict({10, 70, 30}), "disk");
}

}  // namespace
}  // namespace nasperf
