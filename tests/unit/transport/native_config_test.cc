// The native entry's parse and begin (transport/native_deploy.cc), asked through the
// registry as the CLI asks it: --to HOST[:PORT] names an agent (the shared token, TLS),
// a login [user@]host:/dir starts a receiver there over SSH (its own token, its key
// pinned), and anything else is refused in one line naming the field. These pin what
// `nasperf sender` did before the parse existed (tests/integration/test_ssh_cli.sh,
// test_cli_errors.sh hold the texts end to end).
#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "transport/native.h"
#include "transport/registry.h"

namespace nasperf {
namespace {

const TransportEntry& Native() {
  const TransportEntry* entry = FindTransport(kWireTransport);
  EXPECT_NE(entry, nullptr);
  EXPECT_NE(entry->parse, nullptr);
  return *entry;
}

absl::StatusOr<std::unique_ptr<TransportConfig>> Parse(const std::string& to, const ParsedFlags& flags = {},
                                                       Origin origin = Origin::kUser, std::string* bad = nullptr) {
  std::string ignored;
  return Native().parse(to, flags, origin, bad != nullptr ? bad : &ignored);
}

TEST(NativeConfig, AnAgentAddressNeedsTheSharedTokenAndTrust) {
  auto config = Parse("nas.example:7601");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ((*config)->Peer(), "nas.example:7601");
  const TransportConfig::Needs needs = (*config)->needs();
  EXPECT_TRUE(needs.shared_token);
  EXPECT_TRUE(needs.trust);
  EXPECT_FALSE(needs.pins_own_key);
  const auto* native = dynamic_cast<const NativeConfig*>(config->get());
  ASSERT_NE(native, nullptr);
  EXPECT_EQ(native->agent.host, "nas.example");
  EXPECT_EQ(native->agent.port, 7601);
  EXPECT_FALSE(native->login.has_value());

  auto default_port = Parse("nas");
  ASSERT_TRUE(default_port.ok()) << default_port.status();
  EXPECT_EQ((*default_port)->Peer(), "nas:7600");
}

TEST(NativeConfig, ALoginStartsAReceiverThereWithItsOwnTokenAndKey) {
  ParsedFlags flags;
  flags.Add("--ssh-port", "2222");
  flags.Add("--deploy-binary", "/opt/nasperf-static");
  auto config = Parse("root@nas:/srv/cache", flags);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ((*config)->Peer(), "nas");
  const TransportConfig::Needs needs = (*config)->needs();
  EXPECT_FALSE(needs.shared_token);  // the receiver started there gets a token of its own
  EXPECT_TRUE(needs.trust);
  EXPECT_TRUE(needs.pins_own_key);  // so no --plaintext, no --tls-ca
  const auto* native = dynamic_cast<const NativeConfig*>(config->get());
  ASSERT_NE(native, nullptr);
  ASSERT_TRUE(native->login.has_value());
  EXPECT_EQ(native->login->user, "root");
  EXPECT_EQ(native->login->host, "nas");
  EXPECT_EQ(native->login->dir, "/srv/cache");
  EXPECT_EQ(native->ssh.port, 2222);  // the login's flags, checked as the SSH entries' own
  EXPECT_EQ(native->deploy_binary, "/opt/nasperf-static");
  EXPECT_TRUE(native->agent.host.empty());  // known once the receiver there listens (begin)
  EXPECT_NE(Native().begin, nullptr);
}

TEST(NativeConfig, ABadToIsRefusedInOneLine) {
  for (const std::string to : {"nas:notaport", "nas:70000", "nas:relative/dir"}) {
    std::string bad;
    auto config = Parse(to, {}, Origin::kUser, &bad);
    ASSERT_FALSE(config.ok()) << to;
    EXPECT_EQ(bad, "--to") << to;
    EXPECT_FALSE(config.status().message().empty()) << to;
    EXPECT_FALSE(absl::StrContains(config.status().message(), "\n")) << to;
  }
}

TEST(NativeConfig, LoginFlagsAndDeployBinaryNeedALogin) {
  for (const std::string name : {"--ssh-port", "--identity", "--accept-new-host-key"}) {
    ParsedFlags flags;
    flags.Add(name, "x");
    std::string bad;
    auto config = Parse("nas", flags, Origin::kUser, &bad);
    ASSERT_FALSE(config.ok()) << name;
    EXPECT_EQ(bad, name);
    EXPECT_EQ(config.status().message(), "only with --to [user@]host:/dir or --transport scp|sftp");
  }
  ParsedFlags deploy;
  deploy.Add("--deploy-binary", "/x");
  std::string bad;
  auto config = Parse("nas", deploy, Origin::kUser, &bad);
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(bad, "--deploy-binary");
  EXPECT_EQ(config.status().message(), "only with --to [user@]host:/dir");
}

TEST(NativeConfig, OnlyTheCommandLineStartsAReceiverOverSsh) {
  for (Origin origin : {Origin::kPlan, Origin::kPeer, Origin::kWorker}) {
    std::string bad;
    EXPECT_FALSE(Parse("root@nas:/srv/cache", {}, origin, &bad).ok());
    EXPECT_EQ(bad, "--to");
    EXPECT_TRUE(Parse("nas:7601", {}, origin).ok());
  }
}

TEST(NativeConfig, BeginStartsNothingForAnAgentAlreadyThere) {
  auto config = Parse("127.0.0.1:7600");
  ASSERT_TRUE(config.ok()) << config.status();
  RunOptions options;
  options.config = std::move(*config);
  int lines = 0;
  auto scope = Native().begin(options, [&](const std::string&) { ++lines; });
  ASSERT_TRUE(scope.ok()) << scope.status();
  EXPECT_EQ(*scope, nullptr);
  EXPECT_EQ(lines, 0);
  const auto* native = dynamic_cast<const NativeConfig*>(options.config.get());
  ASSERT_NE(native, nullptr);  // still the parse's: nothing started
  EXPECT_EQ(native->agent.port, 7600);
}

}  // namespace
}  // namespace nasperf
