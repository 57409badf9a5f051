#include "measure/netinfo.h"

#include <linux/ethtool.h>

#include "gtest/gtest.h"

namespace nasperf {
namespace {

TEST(TcpGoodputCeiling, TenGigabitFiguresFromTheDesign) {
  EXPECT_NEAR(TcpGoodputCeilingMBps(10000, 1500), 1177, 1);
  EXPECT_NEAR(TcpGoodputCeilingMBps(10000, 9000), 1238, 1);
  EXPECT_NEAR(TcpGoodputCeilingMBps(1000, 1500), 117.7, 0.1);
  EXPECT_EQ(TcpGoodputCeilingMBps(1000, 40), 0);
}

TEST(InterfaceFacts, LoopbackIsFoundWithItsMtu) {
  auto lo = InterfaceToward("127.0.0.1");
  ASSERT_TRUE(lo.ok()) << lo.status();
  EXPECT_EQ(lo->name, "lo");
  EXPECT_EQ(lo->local_address, "127.0.0.1");
  ASSERT_TRUE(lo->mtu.has_value());
  EXPECT_GE(*lo->mtu, 1500u);
  EXPECT_FALSE(lo->link_mbps.has_value());  // loopback has no link speed: unknown, not 0
}

TEST(InterfaceFacts, UnknownAddressIsNotFound) {
  EXPECT_TRUE(absl::IsNotFound(InterfaceOwning("203.0.113.254").status()));
}

TEST(LinkModes, SpeedsOfCommonModesAndNoneForFlags) {
  EXPECT_EQ(LinkModeMbps(ETHTOOL_LINK_MODE_1000baseT_Full_BIT), 1000u);
  EXPECT_EQ(LinkModeMbps(ETHTOOL_LINK_MODE_2500baseT_Full_BIT), 2500u);
  EXPECT_EQ(LinkModeMbps(ETHTOOL_LINK_MODE_10000baseT_Full_BIT), 10000u);
  EXPECT_EQ(LinkModeMbps(ETHTOOL_LINK_MODE_25000baseSR_Full_BIT), 25000u);
  EXPECT_EQ(LinkModeMbps(ETHTOOL_LINK_MODE_Autoneg_BIT), 0u);
  EXPECT_EQ(LinkModeMbps(ETHTOOL_LINK_MODE_Pause_BIT), 0u);
}

TEST(InterfaceFacts, LoopbackHasNoNicMaximum) {
  auto facts = InterfaceOwning("127.0.0.1");
  ASSERT_TRUE(facts.ok()) << facts.status();
  EXPECT_FALSE(facts->max_link_mbps.has_value());  // lo has no link modes: no warning to give
}

}  // namespace
}  // namespace nasperf
