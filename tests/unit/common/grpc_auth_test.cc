// What common/grpc_auth.h sets up on a server that needs no server to check. The
// token checked before a request is read is tested live on loopback
// (integration.grpc_auth_first).
#include "common/grpc_auth.h"

#include <gtest/gtest.h>

namespace nasperf {
namespace {

TEST(RequireTokenFirst, PlaintextServersAreLeftAsTheyAre) {
  // gRPC aborts when a processor is set on insecure credentials: nothing is set.
  ServerSecurity security;
  security.credentials = grpc::InsecureServerCredentials();
  RequireTokenFirst(&security, "token", "test");
  EXPECT_NE(security.credentials, nullptr);
}

}  // namespace
}  // namespace nasperf
