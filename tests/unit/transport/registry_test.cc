// The registry: every transport word has exactly one entry, that entry is the one
// TransportFor returns, and what the CLI refuses follows from its capabilities.
#include "transport/registry.h"

#include <set>

#include "gtest/gtest.h"

namespace nasperf {
namespace {

TEST(Registry, EveryTransportWordHasOneEntry) {
  std::set<std::string> seen;
  for (const TransportEntry& entry : Transports()) {
    EXPECT_TRUE(seen.insert(Name(entry.kind)).second) << Name(entry.kind) << " is listed twice";
    EXPECT_NE(entry.make, nullptr);
    EXPECT_NE(std::string(entry.summary), "");
  }
  for (const std::string& name : Names<TransportKind>()) {
    auto kind = Parse<TransportKind>(name);
    ASSERT_TRUE(kind.ok()) << name;
    EXPECT_EQ(TransportFor(*kind).kind, *kind) << name << " has no entry";
    EXPECT_EQ(seen.count(name), 1u);
  }
}

TEST(Registry, CapabilitiesNameTheTransportsThatHaveThem) {
  EXPECT_EQ(TransportsWith(&TransportCaps::ssh_login), "scp|sftp");
  EXPECT_EQ(TransportsWith(&TransportCaps::verify), "native");
  EXPECT_EQ(TransportsWith(&TransportCaps::reads), "native|sftp");
  // A transport is either spoken to an agent or logged into over SSH, never both.
  for (const TransportEntry& entry : Transports()) EXPECT_NE(entry.caps.agent, entry.caps.ssh_login);
}

}  // namespace
}  // namespace nasperf
