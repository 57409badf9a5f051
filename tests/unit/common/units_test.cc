#include "common/units.h"

#include "gtest/gtest.h"

namespace nasperf {
namespace {

TEST(ParseSize, BinaryAndDecimalUnits) {
  EXPECT_EQ(*ParseSize("45GiB"), 45ULL << 30);
  EXPECT_EQ(*ParseSize("4G"), 4ULL << 30);
  EXPECT_EQ(*ParseSize("512MiB"), 512ULL << 20);
  EXPECT_EQ(*ParseSize("512m"), 512ULL << 20);
  EXPECT_EQ(*ParseSize("1.5K"), 1536u);
  EXPECT_EQ(*ParseSize("1TB"), 1000000000000ULL);
  EXPECT_EQ(*ParseSize("10MB"), 10000000u);
  EXPECT_EQ(*ParseSize("123"), 123u);
  EXPECT_EQ(*ParseSize("123B"), 123u);
  EXPECT_EQ(*ParseSize(" 2TiB "), 2ULL << 40);
}

TEST(ParseSize, RefusesWithTheReason) {
  for (const char* bad : {"", "GiB", "45XB", "-1G", "1.2.3G", "abc", "1e3"}) {
    auto size = ParseSize(bad);
    EXPECT_FALSE(size.ok()) << bad;
  }
  EXPECT_NE(ParseSize("45XB").status().message().find("unknown unit"), std::string::npos);
  EXPECT_FALSE(ParseSize("99999999999T").ok());
}

TEST(ParseDuration, HumanForms) {
  EXPECT_EQ(*ParseDuration("30s"), absl::Seconds(30));
  EXPECT_EQ(*ParseDuration("1m30s"), absl::Seconds(90));
  EXPECT_EQ(*ParseDuration("250ms"), absl::Milliseconds(250));
  EXPECT_EQ(*ParseDuration("2"), absl::Seconds(2));
  EXPECT_EQ(*ParseDuration("0.5"), absl::Milliseconds(500));
  EXPECT_EQ(*ParseDuration("0"), absl::ZeroDuration());
}

TEST(ParseDuration, Refuses) {
  for (const char* bad : {"", "s", "10 parsecs", "-5s", "inf", "nan"}) {
    EXPECT_FALSE(ParseDuration(bad).ok()) << bad;
  }
}

TEST(ParseLinkSpeed, HowLinksAreSold) {
  EXPECT_EQ(*ParseLinkSpeed("10gbit"), 10000u);
  EXPECT_EQ(*ParseLinkSpeed("2.5Gbit/s"), 2500u);
  EXPECT_EQ(*ParseLinkSpeed("1000mbit"), 1000u);
  EXPECT_EQ(*ParseLinkSpeed("100M"), 100u);
  EXPECT_EQ(*ParseLinkSpeed("1000"), 1000u);
  EXPECT_EQ(*ParseLinkSpeed("10Gbps"), 10000u);
  for (const char* bad : {"", "fast", "0", "-1g", "10tbit", "500kbit"}) {
    EXPECT_FALSE(ParseLinkSpeed(bad).ok()) << bad;
  }
}

TEST(FormatSize, ThreeSignificantDigits) {
  EXPECT_EQ(FormatSize(512), "512 B");
  EXPECT_EQ(FormatSize(1536), "1.50 KiB");
  EXPECT_EQ(FormatSize(256ULL << 20), "256 MiB");
  EXPECT_EQ(FormatSize(45ULL << 30), "45.0 GiB");
}

TEST(MegabytesPerSecond, IsDecimal) {
  EXPECT_DOUBLE_EQ(MegabytesPerSecond(1000000, 1.0), 1.0);
  EXPECT_DOUBLE_EQ(MegabytesPerSecond(45000000000ULL, 40.0), 1125.0);
  EXPECT_EQ(MegabytesPerSecond(100, 0), 0);
}

}  // namespace
}  // namespace nasperf
