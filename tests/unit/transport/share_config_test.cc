// The share entries' parse (nfs://, smb://): the URL and the transport's own flags
// become its ShareConfig; a plan's or a peer's ask less than the user's;
// each refusal names its field (--to, or the flag) in the CLI's words.
#include <memory>
#include <string>
#include <utility>

#include "gtest/gtest.h"
#include "transport/registry.h"
#include "transport/run_options.h"
#include "transport/share_config.h"

namespace nasperf {
namespace {

constexpr Origin kOrigins[] = {Origin::kUser, Origin::kPlan, Origin::kPeer};

struct Parsed {
  absl::StatusOr<std::unique_ptr<TransportConfig>> config;
  std::string field;
  ShareOptions share;  // the config's, when parsed
};

Parsed ParseWith(const char* word, const std::string& to, const ParsedFlags& flags, Origin origin) {
  const TransportEntry& entry = TransportFor(word);
  Parsed out{absl::UnknownError("no parse"), "", {}};
  if (entry.parse == nullptr) return out;
  out.config = entry.parse(to, flags, origin, &out.field);
  if (out.config.ok()) {
    const auto* share = dynamic_cast<const ShareConfig*>(out.config->get());
    if (share != nullptr) out.share = share->share();
  }
  return out;
}

ParsedFlags Flags(std::initializer_list<std::pair<const char*, const char*>> given) {
  ParsedFlags flags;
  for (const auto& [name, value] : given) flags.Add(name, value);
  return flags;
}

TEST(ShareConfigTest, EachOriginTakesAGoodUrlAndItsFlags) {
  for (Origin origin : kOrigins) {
    Parsed nfs =
        ParseWith("nfs", "nfs://nas:2049/srv/pool", Flags({{"--nfs-in-flight", "4"}, {"--nfs-timeout", "7"}}), origin);
    ASSERT_TRUE(nfs.config.ok()) << nfs.config.status();
    EXPECT_EQ(nfs.share.url, "nfs://nas:2049/srv/pool");
    EXPECT_EQ(nfs.share.in_flight, 4);
    EXPECT_EQ(nfs.share.timeout_s, 7);
    EXPECT_EQ((*nfs.config)->Peer(), "nas:2049");

    Parsed smb = ParseWith("smb", "smb://root@198.18.1.10/cache",
                           Flags({{"--smb-signing", "required"}, {"--smb-channels", "2"}}), origin);
    ASSERT_TRUE(smb.config.ok()) << smb.config.status();
    EXPECT_EQ(smb.share.url, "smb://root@198.18.1.10/cache");
    EXPECT_EQ(smb.share.smb_signing, "required");
    EXPECT_EQ(smb.share.smb_channels, 2);
    EXPECT_EQ(smb.share.smb_encrypt, "default") << "a flag not given keeps the command line's default";
    EXPECT_EQ(smb.share.smb_write_size, uint64_t{8} << 20);
    EXPECT_EQ((*smb.config)->Peer(), "198.18.1.10");
  }
}

// Issue 42, row 9: AUTH_SYS carries whatever ids the client says; only the user's own
// --to may pick them.
TEST(ShareConfigTest, NfsIdsOnlyFromTheUser) {
  for (const char* to : {"nfs://nas/srv/array?uid=1000&gid=100", "nfs://nas/srv/array?uid=0", "nfs://nas/x?gid=0"}) {
    Parsed user = ParseWith("nfs", to, {}, Origin::kUser);
    EXPECT_TRUE(user.config.ok()) << to << ": " << user.config.status();
    EXPECT_EQ(user.share.url, to);
    for (Origin origin : {Origin::kPlan, Origin::kPeer}) {
      Parsed asked = ParseWith("nfs", to, {}, origin);
      EXPECT_TRUE(absl::IsPermissionDenied(asked.config.status())) << to << ": " << asked.config.status();
      EXPECT_EQ(asked.field, "--to");
      EXPECT_NE(
          std::string(asked.config.status().message()).find("an agent takes no uid= or gid= in a job's nfs:// URL"),
          std::string::npos)
          << asked.config.status();
    }
  }
}

TEST(ShareConfigTest, ABadUrlIsRefusedNamingTo) {
  for (Origin origin : kOrigins) {
    Parsed nfs = ParseWith("nfs", "nfs://nas", {}, origin);
    EXPECT_TRUE(absl::IsInvalidArgument(nfs.config.status())) << nfs.config.status();
    EXPECT_EQ(nfs.field, "--to");
    EXPECT_EQ(nfs.config.status().message(),
              "not an nfs://host[:port]/export[/dir] URL: no export path after the host");
    Parsed smb = ParseWith("smb", "nas:/x", {}, origin);
    EXPECT_EQ(smb.field, "--to");
    EXPECT_EQ(smb.config.status().message(),
              "not an smb://[user@]host[:port]/share[/dir] URL: it must begin with smb://");
  }
}

TEST(ShareConfigTest, AFlagIsRefusedNamingItself) {
  for (Origin origin : kOrigins) {
    for (const auto& [word, to, flag, value, why] :
         {std::tuple{"nfs", "nfs://nas/x", "--nfs-in-flight", "0", "not in range 1 to 256"},
          std::tuple{"nfs", "nfs://nas/x", "--nfs-timeout", "-5", "not in range 1 to 600"},
          std::tuple{"smb", "smb://nas/x", "--smb-encrypt", "maybe", "maybe not in {default,off,desired,required}"},
          std::tuple{"nfs", "nfs://nas/x", "--smb-signing", "required", "not expected"}}) {
      Parsed parsed = ParseWith(word, to, Flags({{flag, value}}), origin);
      EXPECT_TRUE(absl::IsInvalidArgument(parsed.config.status())) << flag << ": " << parsed.config.status();
      EXPECT_EQ(parsed.field, flag);
      EXPECT_NE(std::string(parsed.config.status().message()).find(why), std::string::npos) << parsed.config.status();
    }
  }
}

// A login file by flag names a file on the host that runs the job: only the user's own.
// A plan's and a peer's come by `credentials`, checked against the agent's --allow-source.
TEST(ShareConfigTest, ASmbLoginFileByFlagOnlyFromTheUser) {
  const ParsedFlags file = Flags({{"--smb-credentials", "/root/.smbcred"}});
  Parsed user = ParseWith("smb", "smb://nas/x", file, Origin::kUser);
  ASSERT_TRUE(user.config.ok()) << user.config.status();
  EXPECT_EQ(user.share.smb_credentials, "/root/.smbcred");
  for (Origin origin : {Origin::kPlan, Origin::kPeer}) {
    Parsed asked = ParseWith("smb", "smb://nas/x", file, origin);
    EXPECT_FALSE(asked.config.ok());
    EXPECT_EQ(asked.field, "--smb-credentials");
    EXPECT_EQ(asked.config.status().message(), "give the login file as the transfer's `credentials`");
  }
}

// A plan's and a job's words become the ParsedFlags the parse takes, checked as the
// command line checks them.
TEST(ShareConfigTest, FlagWordsBecomeParsedFlags) {
  auto flags = ParseTransportFlagWords("smb", {"--smb-signing", "required", "--smb-encrypt=desired"});
  ASSERT_TRUE(flags.ok()) << flags.status();
  EXPECT_EQ(flags->Text("--smb-signing"), "required");
  EXPECT_EQ(flags->Text("--smb-encrypt"), "desired");
  EXPECT_FALSE(flags->Given("--smb-channels"));
  auto refused = ParseTransportFlagWords("smb", {"--smb-credentials=/etc/shadow"});
  EXPECT_EQ(refused.status().message(),
            "transport_flags: --smb-credentials: give the login file as the transfer's `credentials`");
  EXPECT_EQ(ParseTransportFlagWords("scp", {"--nfs-in-flight", "4"}).status().message(),
            "transport_flags: transport scp takes none (nfs|smb do)");
}

}  // namespace
}  // namespace nasperf
