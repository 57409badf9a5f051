// The sender's path verdicts as pure functions of the facts: which warnings a
// path earns, the MSS cap for a path narrower than its interfaces, and when the
// socket buffers are sized by hand rather than left to autotuning.
#include "transport/path_check.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace nasperf {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

PathFacts CleanJumboPath() {
  PathFacts f;
  f.receiver = {"198.18.1.10", 7600};
  f.interface = "eth0";
  f.mtu = 9000;
  f.peer_mtu = 9000;
  f.path_mtu = 9000;
  f.mss = 8948;
  f.link_mbps = 10000;
  f.nic_max_mbps = 10000;
  f.rtt_ms = 0.1;
  f.probe_offered = true;
  return f;
}

TEST(PathWarnings, CleanJumboPathHasNone) {
  EXPECT_THAT(PathWarnings(CleanJumboPath()), IsEmpty());
  EXPECT_EQ(PathMaxSegment(CleanJumboPath()), 0u);
}

TEST(PathWarnings, JumboBlockedBetweenJumboEnds) {
  PathFacts f = CleanJumboPath();
  f.path_mtu = 1500;
  EXPECT_THAT(PathWarnings(f), ElementsAre(HasSubstr("jumbo frames do not pass end to end")));
  EXPECT_EQ(PathMaxSegment(f), 1460u);  // fits a 1500-byte packet
  EXPECT_EQ(*f.EffectiveMtu(), 1500u);
}

TEST(PathWarnings, MtuMismatchIsNamedWithBothValues) {
  PathFacts f = CleanJumboPath();
  f.peer_mtu = 1500;
  f.path_mtu = 1500;
  f.mss = 1448;
  EXPECT_THAT(PathWarnings(f), ElementsAre(HasSubstr("MTU mismatch: 9000 here, 1500 on the receiver")));
  EXPECT_EQ(PathMaxSegment(f), 0u);  // the interfaces already agree on 1500 through the handshake
}

TEST(PathWarnings, ClampedMss) {
  PathFacts f = CleanJumboPath();
  f.mss = 1448;
  EXPECT_THAT(PathWarnings(f), ElementsAre(HasSubstr("MSS 1448 is lower than MTU 9000 implies (8948)")));
}

TEST(PathWarnings, LoopbackSizedMssIsNotJudged) {
  PathFacts f = CleanJumboPath();
  f.mtu = f.peer_mtu = f.path_mtu = 65536;
  f.mss = 32741;  // Linux bounds it to half the first window
  f.link_mbps.reset();
  EXPECT_THAT(PathWarnings(f), IsEmpty());
}

TEST(PathWarnings, NicNegotiatedBelowItsMaximum) {
  PathFacts f = CleanJumboPath();
  f.link_mbps = 1000;
  EXPECT_THAT(PathWarnings(f), ElementsAre(HasSubstr("negotiated at 1000 Mb/s but the NIC can do 10000")));
  f.link_from_flag = true;  // --link-speed says what the user shaped it to: no complaint
  EXPECT_THAT(PathWarnings(f), IsEmpty());
}

TEST(PathWarnings, UnansweredProbeSaysWhatToCheck) {
  PathFacts f = CleanJumboPath();
  f.path_mtu.reset();
  EXPECT_THAT(PathWarnings(f), ElementsAre(HasSubstr("path MTU unknown: no answer to UDP probes")));
  f.probe_offered = false;
  EXPECT_THAT(PathWarnings(f), ElementsAre(HasSubstr("the receiver does not answer path MTU probes")));
}

TEST(PathLine, NamesEveryFact) {
  EXPECT_EQ(PathLine(CleanJumboPath()),
            "path: 198.18.1.10:7600 via eth0 (?), MTU 9000, link 10000 Mb/s; receiver MTU 9000; "
            "path MTU 9000, MSS 8948, RTT 0.10 ms, TCP ceiling 1238 MB/s");
}

// Issue 18: a switch that drops frames over 1500 was reported as path MTU 1504. A
// port passes a few bytes beyond its MTU for VLAN tags; the finding means 1500.
TEST(MtuMeant, AFewBytesOverAStandardMtuMeanThatMtu) {
  EXPECT_EQ(MtuMeant(1504), 1500u);
  EXPECT_EQ(MtuMeant(1508), 1500u);
  EXPECT_EQ(MtuMeant(9004), 9000u);
  EXPECT_EQ(MtuMeant(1500), 1500u);
  EXPECT_EQ(MtuMeant(1509), 1509u) << "past two tags: as probed";
  EXPECT_EQ(MtuMeant(1400), 1400u) << "a tunnel's MTU stays what it is";
}

TEST(PathMtuText, SaysWhatWasMeasuredAndWhatItMeans) {
  PathFacts f = CleanJumboPath();
  f.path_mtu = 1500;
  f.path_mtu_probed = 1504;
  EXPECT_EQ(PathMtuText(f, true),
            "1500 (UDP probe; packets up to 1504 pass: the few bytes a port allows beyond its MTU for VLAN tags)");
  f.path_mtu_probed = 1500;
  f.icmp_seen = true;
  EXPECT_EQ(PathMtuText(f, true), "1500 (ICMP)");
  EXPECT_EQ(PathMtuText(f, false), "1500");
  f.path_mtu.reset();
  EXPECT_EQ(PathMtuText(f, false), "unknown");
}

TEST(AutoWindow, AutotuningUnlessTheBdpOutgrowsIt) {
  PathFacts f = CleanJumboPath();
  EXPECT_EQ(AutoWindowBytes(f), 0u);  // 10 Gb/s x 0.1 ms = 125 kB
  f.rtt_ms = 20;                      // 10 Gb/s x 20 ms = 25 MB: twice that
  EXPECT_EQ(AutoWindowBytes(f), 50'000'000u);
  f.link_mbps.reset();
  EXPECT_EQ(AutoWindowBytes(f), 0u);  // nothing to size by
}

}  // namespace
}  // namespace nasperf
