// --to nfs://...: what the NFS transport accepts, and the one line for what it refuses.
#include <string>

#include "gtest/gtest.h"
#include "transport/nfs.h"

namespace nasperf {
namespace {

TEST(NfsUrlTest, HostPortExportDirectoryAndCredentials) {
  absl::StatusOr<NfsUrl> url = ParseNfsUrl("nfs://nas.local:2049/srv/pool//share/dir/?uid=1000&gid=100");
  ASSERT_TRUE(url.ok()) << url.status();
  EXPECT_EQ(url->host, "nas.local");
  EXPECT_EQ(url->port, 2049);
  EXPECT_EQ(url->path, "/srv/pool/share/dir");  // empty parts and the trailing slash dropped
  EXPECT_EQ(url->uid, 1000u);
  EXPECT_EQ(url->gid, 100u);
}

TEST(NfsUrlTest, PortAndCredentialsAreOptional) {
  absl::StatusOr<NfsUrl> url = ParseNfsUrl("nfs://198.18.1.10/export");
  ASSERT_TRUE(url.ok()) << url.status();
  EXPECT_EQ(url->port, 0);  // the server's portmapper says
  EXPECT_EQ(url->path, "/export");
  EXPECT_FALSE(url->uid.has_value());
  EXPECT_TRUE(ParseNfsUrl("nfs://nas/export?version=3").ok());
}

TEST(NfsUrlTest, RefusesWhatItCannotHonourInOneLine) {
  const struct {
    const char* url;
    const char* says;
  } cases[] = {
      {"smb://nas/share", "must begin with nfs://"},
      {"nfs://nas", "no export path"},
      {"nfs://nas/", "no export path"},
      {"nfs://nas:0/x", "bad port"},
      {"nfs://nas:70000/x", "bad port"},
      {"nfs://nas:2049x/x", "bad port"},
      {"nfs://me@nas/x", "no user@"},
      {"nfs://na$s/x", "bad host"},
      {"nfs://nas/x/../etc", "\"..\""},
      {"nfs://nas/x/./y", "\"..\""},
      {"nfs://nas/x?uid=-1", "unknown or bad query"},
      {"nfs://nas/x?uid=4294967295", "unknown or bad query"},
      {"nfs://nas/x?autoreconnect=-1", "unknown or bad query"},
      {"nfs://nas/x\n", "control character"},
      {"nfs://nas/x?version=4", "NFSv4 is not offered"},
  };
  for (const auto& c : cases) {
    absl::StatusOr<NfsUrl> url = ParseNfsUrl(c.url);
    ASSERT_FALSE(url.ok()) << c.url;
    EXPECT_NE(url.status().message().find(c.says), std::string::npos) << c.url << ": " << url.status();
    EXPECT_EQ(url.status().message().find('\n'), std::string::npos) << c.url;
  }
  EXPECT_NE(ParseNfsUrl("nfs://nas/" + std::string(1100, 'a')).status().message().find("longer than 1024 characters"),
            std::string::npos);
  std::string deep = "nfs://nas";
  for (int i = 0; i < 40; ++i) deep += "/d";
  EXPECT_NE(ParseNfsUrl(deep).status().message().find("more than 32 path parts"), std::string::npos);
  EXPECT_TRUE(ParseNfsUrl(deep.substr(0, 9 + 32 * 2)).ok()) << "32 parts are allowed";
}

}  // namespace
}  // namespace nasperf
