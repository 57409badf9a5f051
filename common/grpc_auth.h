// What every nasperf gRPC endpoint shares: the token in call metadata (checked in
// constant time), channels that trust their peer as common/tls.h decides, server
// limits, and absl::Status <-> grpc::Status. Thread-safe.
#ifndef NASPERF_COMMON_GRPC_AUTH_H_
#define NASPERF_COMMON_GRPC_AUTH_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/tls.h"
#include "grpcpp/grpcpp.h"

namespace nasperf {

// The largest gRPC message any nasperf endpoint sends or takes, set explicitly on
// both ends (gRPC's default is 4 MiB on receive only). A report stays far below it:
// samples are capped (common/sampler.h) and WaitJob pages its rows.
inline constexpr int kMaxMessageBytes = 16 << 20;
// A peer that opens a connection and says nothing holds a descriptor only this long
// (gRPC's default is 120 s, enough for idle sockets to use up the descriptors).
inline constexpr int kServerHandshakeTimeoutMs = 5000;
// Servers: the message limits above, the handshake deadline, and no SO_REUSEPORT:
// gRPC sets it by default, so a second nasperf on a busy port would start and take
// half its connections instead of failing with "port in use".
void ConfigureServer(grpc::ServerBuilder* builder);

// A channel to host:port that reconnects quickly (200 ms, backing off to 2 s), so an
// agent notices a restarted peer within seconds. TLS as `trust` says, the peer pinned
// to `fingerprint` when one is given; plaintext when trust is null (unit tests only:
// every command builds a PeerTrust from its flags).
std::shared_ptr<grpc::Channel> NewChannel(const std::string& address, const PeerTrust* trust,
                                          const std::string& fingerprint = "");
// The token in metadata and a deadline: every client call of nasperf starts here.
void PrepareCall(grpc::ClientContext* context, const std::string& token, absl::Duration deadline);
// OK, or UNAUTHENTICATED naming what to set. Logs the refusal with the peer.
grpc::Status CheckToken(const grpc::ServerContext& context, const std::string& token, const char* component);

// The caller's IP address from a server context ("ipv4:10.0.0.2:5555" -> "10.0.0.2").
std::string PeerHost(const grpc::ServerContext& context);

grpc::Status ToGrpc(const absl::Status& status);
// Prefixes the message with "<what> <address>"; unreachable peers say so, and a peer
// whose TLS key was refused (common/tls.h) says why instead.
absl::Status FromGrpc(const grpc::Status& status, const std::string& what, const std::string& address);

}  // namespace nasperf

#endif  // NASPERF_COMMON_GRPC_AUTH_H_
