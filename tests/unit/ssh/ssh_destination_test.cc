#include "gtest/gtest.h"
#include "ssh/ssh_options.h"

namespace nasperf {
namespace {

TEST(ParseSshDestination, UserHostDir) {
  auto d = ParseSshDestination("admin@nas.local:/mnt/user/bench");
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->user, "admin");
  EXPECT_EQ(d->host, "nas.local");
  EXPECT_EQ(d->dir, "/mnt/user/bench");
}

TEST(ParseSshDestination, NoUserMeansConfigOrLocalUser) {
  auto d = ParseSshDestination("nas:/tank/bench");
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->user, "");
  EXPECT_EQ(d->host, "nas");
  EXPECT_EQ(d->dir, "/tank/bench");
}

TEST(ParseSshDestination, RelativeDirIsTheRemoteHome) {
  auto d = ParseSshDestination("nas:bench");
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->dir, "bench");
}

TEST(ParseSshDestination, BracketedIpv6) {
  auto d = ParseSshDestination("root@[fd00::5]:/data");
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->user, "root");
  EXPECT_EQ(d->host, "fd00::5");
  EXPECT_EQ(d->dir, "/data");
}

TEST(ParseSshDestination, ColonsInTheDirStayThere) {
  auto d = ParseSshDestination("nas:/mnt/a:b");
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->host, "nas");
  EXPECT_EQ(d->dir, "/mnt/a:b");
}

TEST(ParseSshDestination, Refusals) {
  for (const char* bad : {"nas", "nas:", ":/dir", "@nas:/dir", "[fd00::5/dir", "[fd00::5]/dir", ""}) {
    auto d = ParseSshDestination(bad);
    ASSERT_FALSE(d.ok()) << bad;
    EXPECT_NE(d.status().message().find("[user@]host:/remote/dir"), std::string::npos) << bad;
  }
}

}  // namespace
}  // namespace nasperf
