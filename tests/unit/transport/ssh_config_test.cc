// The scp and sftp entries' parse (transport/ssh_flags.cc), asked through the registry
// as the CLI asks it: `to` is [user@]host[:port]:/dir, the login flags come by name, the
// environment's SFTP knobs count for the command line only, and a refusal is one line
// naming the field (--to, a flag, the environment variable). These pin what `nasperf
// sender` did before the parse existed (tests/integration/test_ssh_cli.sh end to end).
#include <cstdlib>
#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "transport/registry.h"
#include "transport/ssh.h"

namespace nasperf {
namespace {

absl::StatusOr<std::unique_ptr<TransportConfig>> Parse(const std::string& word, const std::string& to,
                                                       const ParsedFlags& flags = {}, Origin origin = Origin::kUser,
                                                       std::string* bad = nullptr) {
  const TransportEntry* entry = FindTransport(word);
  EXPECT_NE(entry, nullptr) << word;
  if (entry == nullptr || entry->parse == nullptr) return absl::InternalError(absl::StrCat(word, " has no parse"));
  std::string ignored;
  return entry->parse(to, flags, origin, bad != nullptr ? bad : &ignored);
}

const SshConfig& Ssh(const std::unique_ptr<TransportConfig>& config) { return dynamic_cast<const SshConfig&>(*config); }

// Sets an environment variable for one test, and unsets it after.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) { setenv(name, value, 1); }
  ~ScopedEnv() { unsetenv(name_); }

 private:
  const char* name_;
};

TEST(SshConfig, ALoginWithItsFlagsIsWhatTheRunLogsInWith) {
  for (const char* word : {"scp", "sftp"}) {
    ParsedFlags flags;
    flags.Add("--ssh-port", "2222");
    flags.Add("--identity", "/root/.ssh/id_lab");
    flags.Add("--known-hosts", "/root/kh");
    flags.Add("--ssh-config", "/dev/null");
    flags.Add("--accept-new-host-key", "");
    auto config = Parse(word, "backup@nas.example:/srv/in", flags);
    ASSERT_TRUE(config.ok()) << word << ": " << config.status();
    EXPECT_EQ((*config)->Peer(), "nas.example:2222") << "host:port when the login names one (PeerCell), as rows say";
    const TransportConfig::Needs needs = (*config)->needs();
    EXPECT_FALSE(needs.shared_token || needs.trust || needs.pins_own_key);  // no agent there
    const SshOptions& login = Ssh(*config).login;
    EXPECT_EQ(login.to.user, "backup");
    EXPECT_EQ(login.to.host, "nas.example");
    EXPECT_EQ(login.to.dir, "/srv/in");
    EXPECT_EQ(login.port, 2222);
    EXPECT_EQ(login.identity, "/root/.ssh/id_lab");
    EXPECT_EQ(login.known_hosts, "/root/kh");
    EXPECT_EQ(login.config_file, "/dev/null");
    EXPECT_TRUE(login.accept_new_host_key);
    EXPECT_EQ(Ssh(*config).knobs.write_size, kMaxSftpWrite);
    EXPECT_EQ(Ssh(*config).knobs.writes_in_flight, kSftpWritesInFlight);
  }
}

TEST(SshConfig, ABadToNamesTo) {
  for (const std::string to : {"nas", "nas:", "@nas:/x", ":/x", "nas:0:/x"}) {
    std::string bad;
    auto config = Parse("sftp", to, {}, Origin::kUser, &bad);
    ASSERT_FALSE(config.ok()) << to;
    EXPECT_EQ(bad, "--to") << to;
    EXPECT_FALSE(absl::StrContains(config.status().message(), "\n")) << to;
  }
  std::string bad;
  auto config = Parse("scp", "nas", {}, Origin::kUser, &bad);
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.status().message(),
            "expected [user@]host:/remote/dir, got \"nas\" (no :/remote/dir after the host)");
}

TEST(SshConfig, APortInToIsTheSshPortButNotBesideSshPort) {
  auto config = Parse("sftp", "root@[::1]:2200:/srv", {}, Origin::kPlan);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(Ssh(*config).login.to.host, "::1");
  EXPECT_EQ(Ssh(*config).login.to.dir, "/srv");
  EXPECT_EQ(Ssh(*config).login.port, 2200);
  ParsedFlags port;
  port.Add("--ssh-port", "22");
  std::string bad;
  EXPECT_FALSE(Parse("sftp", "nas:2200:/srv", port, Origin::kUser, &bad).ok());
  EXPECT_EQ(bad, "--ssh-port");
}

TEST(SshConfig, TheUsersEnvironmentSetsTheSftpKnobs) {
  ScopedEnv size("NASPERF_SFTP_WRITE", "64KiB");
  ScopedEnv depth("NASPERF_SFTP_IN_FLIGHT", "4");
  auto config = Parse("sftp", "nas:/x");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(Ssh(*config).knobs.write_size, 64u << 10);
  EXPECT_EQ(Ssh(*config).knobs.writes_in_flight, 4u);
}

TEST(SshConfig, ABadKnobNamesItsVariable) {
  {
    ScopedEnv size("NASPERF_SFTP_WRITE", "1MiB");
    std::string bad;
    auto config = Parse("sftp", "nas:/x", {}, Origin::kUser, &bad);
    ASSERT_FALSE(config.ok());
    EXPECT_EQ(bad, "NASPERF_SFTP_WRITE");
    EXPECT_EQ(config.status().message(), absl::StrCat("must be a size from 1 to ", kMaxSftpWrite, " bytes"));
  }
  for (const char* value : {"0", "257", "many"}) {
    ScopedEnv depth("NASPERF_SFTP_IN_FLIGHT", value);
    std::string bad;
    auto config = Parse("sftp", "nas:/x", {}, Origin::kUser, &bad);
    ASSERT_FALSE(config.ok()) << value;
    EXPECT_EQ(bad, "NASPERF_SFTP_IN_FLIGHT");
    EXPECT_EQ(config.status().message(), "must be 1 to 256");
  }
}

TEST(SshConfig, APlanOrAPeerGetsNoKnobsNoConfigFileNoNewHostKeyNoPrompt) {
  ScopedEnv size("NASPERF_SFTP_WRITE", "not a size");  // the agent's own environment: not the peer's to use
  ScopedEnv depth("NASPERF_SFTP_IN_FLIGHT", "2");
  for (Origin origin : {Origin::kPlan, Origin::kPeer}) {
    auto config = Parse("sftp", "nas:/x", {}, origin);
    ASSERT_TRUE(config.ok()) << config.status();
    EXPECT_EQ(Ssh(*config).knobs.write_size, kMaxSftpWrite);
    EXPECT_EQ(Ssh(*config).knobs.writes_in_flight, kSftpWritesInFlight);
    EXPECT_FALSE(Ssh(*config).login.prompt);
    for (const char* name : {"--ssh-config", "--accept-new-host-key"}) {
      ParsedFlags flags;
      flags.Add(name, "/etc/passwd");
      std::string bad;
      EXPECT_FALSE(Parse("sftp", "nas:/x", flags, origin, &bad).ok()) << name;
      EXPECT_EQ(bad, name);
    }
    std::string bad;
    EXPECT_FALSE(Parse("scp", "nas:relative", {}, origin, &bad).ok());
    EXPECT_EQ(bad, "--to");
  }
}

TEST(SshConfig, DeployBinaryIsTheNativeLoginsOnly) {
  ParsedFlags flags;
  flags.Add("--deploy-binary", "/opt/nasperf");
  std::string bad;
  auto config = Parse("scp", "nas:/x", flags, Origin::kUser, &bad);
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(bad, "--deploy-binary");
  EXPECT_EQ(config.status().message(), "only with --to [user@]host:/dir");
}

}  // namespace
}  // namespace nasperf
