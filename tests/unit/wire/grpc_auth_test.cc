// What wire/grpc_auth.h sets up on a server that needs no server to check (the
// open-file floor: issue 42, row 6). The token checked before a request is read is
// tested live on loopback (integration.grpc_auth_first).
#include "wire/grpc_auth.h"

#include <gtest/gtest.h>

namespace nasperf {
namespace {

TEST(ServerFileLimit, BelowTheFloorIsOneLineNamingTheLimitAndTheFix) {
  absl::Status s = CheckServerFileLimit(1024);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  std::string message(s.message());
  EXPECT_NE(message.find("open-file limit is 1024"), std::string::npos) << message;
  EXPECT_NE(message.find("ulimit -Hn 65536"), std::string::npos) << message;
  EXPECT_NE(message.find("LimitNOFILE=65536"), std::string::npos) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  EXPECT_TRUE(CheckServerFileLimit(kMinServerOpenFiles).ok());
  EXPECT_TRUE(CheckServerFileLimit(uint64_t{1} << 20).ok());
}

TEST(RequireTokenFirst, PlaintextServersAreLeftAsTheyAre) {
  // gRPC aborts when a processor is set on insecure credentials: nothing is set.
  ServerSecurity security;
  security.credentials = grpc::InsecureServerCredentials();
  RequireTokenFirst(&security, "token", "test");
  EXPECT_NE(security.credentials, nullptr);
}

// A peer's gRPC error text is escaped where it enters (FromGrpc), so neither the
// error exit nor an error cell carries its escape sequences.
TEST(TerminalSafe, APeersGrpcErrorTextIsEscapedWhereItEnters) {
  for (auto code : {grpc::StatusCode::INVALID_ARGUMENT, grpc::StatusCode::UNAVAILABLE}) {
    absl::Status s = FromGrpc(grpc::Status(code, "no\x1b]0;pwned\x07\x1b[2J"), "receiver", "10.0.0.5:7600");
    const std::string message(s.message());
    EXPECT_EQ(message.find('\x1b'), std::string::npos) << message;
    EXPECT_NE(message.find("no\\x1b]0;pwned\\x07\\x1b[2J"), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace nasperf
