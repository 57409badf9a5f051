// The word-valued settings: every name parses back to its value, unknown words are
// refused naming the choices, and sync policies keep the unit a user typed.
#include "common/policy.h"

#include <string>

#include "gtest/gtest.h"

namespace nasperf {
namespace {

template <typename T>
void EveryNameRoundTrips() {
  ASSERT_FALSE(Names<T>().empty());
  for (const std::string& name : Names<T>()) {
    auto value = Parse<T>(name);
    ASSERT_TRUE(value.ok()) << name;
    EXPECT_EQ(Name(*value), name);
  }
}

TEST(Policy, EveryNameRoundTrips) {
  EveryNameRoundTrips<WriteMode>();
  EveryNameRoundTrips<Cleanup>();
  EveryNameRoundTrips<Role>();
  EveryNameRoundTrips<Status>();
  EveryNameRoundTrips<Bottleneck>();
}

TEST(Policy, TheListsAreTheOnesUsersSee) {
  EXPECT_EQ(Names<WriteMode>(), (std::vector<std::string>{"buffered", "direct", "dsync"}));
  EXPECT_EQ(Names<Cleanup>(), (std::vector<std::string>{"each", "end", "never"}));
}

TEST(Policy, UnknownWordsAreRefusedNamingTheChoices) {
  auto mode = Parse<WriteMode>("fast");
  ASSERT_FALSE(mode.ok());
  EXPECT_EQ(mode.status().message(), "invalid write mode \"fast\" (expected buffered, direct, dsync)");
  EXPECT_FALSE(Parse<Cleanup>("").ok());
}

TEST(SyncPolicy, Parses) {
  EXPECT_EQ(ParseSyncPolicy("none")->kind, SyncPolicy::kNone);
  EXPECT_EQ(ParseSyncPolicy("end")->kind, SyncPolicy::kEnd);
  auto every = ParseSyncPolicy("every=256MiB");
  ASSERT_TRUE(every.ok());
  EXPECT_EQ(every->every_bytes, 256u << 20);
  EXPECT_EQ(SyncPolicyName(*every), "every=256MiB");
  EXPECT_EQ(SyncPolicyName(*ParseSyncPolicy("every=1000")), "every=1000");
  EXPECT_EQ(SyncPolicyName(*ParseSyncPolicy("every=2GiB")), "every=2GiB");
  EXPECT_FALSE(ParseSyncPolicy("every=").ok());
  EXPECT_FALSE(ParseSyncPolicy("every=0").ok());
  EXPECT_FALSE(ParseSyncPolicy("always").ok());
}

// A word a peer left out takes the stated default; one it sent must still be a word.
TEST(Policy, ParseOrFillsOnlyAnAbsentWord) {
  EXPECT_EQ(*ParseOr("", ReadMode::kBuffered), ReadMode::kBuffered);
  EXPECT_EQ(*ParseOr("direct", ReadMode::kBuffered), ReadMode::kDirect);
  EXPECT_FALSE(ParseOr("mmap", ReadMode::kBuffered).ok());
  EXPECT_FALSE(ParseOr(" ", CacheState::kCold).ok());
}

}  // namespace
}  // namespace nasperf
