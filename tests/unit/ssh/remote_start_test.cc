// The address a host reports for the SSH connection (issue 29 row 7): the start
// script's `addr=` line comes from the host, so it must read as an IP address; a name
// would be looked up in DNS and an escape sequence would reach the terminal.
#include "ssh/remote_start.h"

#include <string>

#include "gtest/gtest.h"

namespace nasperf {
namespace {

TEST(ParseRemoteAddress, TakesIpAddresses) {
  for (const char* addr : {"192.168.1.20", "127.0.0.1", "::1", "fd00::5", "fe80::1%eth0", "2001:db8::7"}) {
    auto parsed = ParseRemoteAddress(addr);
    ASSERT_TRUE(parsed.ok()) << addr << ": " << parsed.status();
    EXPECT_EQ(*parsed, addr);
  }
}

TEST(ParseRemoteAddress, RefusesNamesAndEscapesWithOneLine) {
  for (const std::string addr :
       {"evil.example", "localhost", "", "10.0.0.1 ", "10.0.0.1:22", "010.0.0.1", "1.2.3", "10.0.0.1%eth0", "fe80::1%",
        "fe80::1%eth0;rm", "\x1b]0;pwned\x07", "10.0.0.1\x1b[2J", "[::1]"}) {
    auto parsed = ParseRemoteAddress(addr);
    ASSERT_FALSE(parsed.ok()) << addr;
    const std::string message(parsed.status().message());
    EXPECT_NE(message.find("not an IP address"), std::string::npos) << message;
    EXPECT_EQ(message.find('\x1b'), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace nasperf
