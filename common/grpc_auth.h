// What every nasperf gRPC endpoint shares: the token in call metadata (checked in
// constant time), optional TLS on servers (--tls-cert/--tls-key) and clients
// (--tls-ca), and absl::Status <-> grpc::Status. Thread-safe.
#ifndef NASPERF_COMMON_GRPC_AUTH_H_
#define NASPERF_COMMON_GRPC_AUTH_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "grpcpp/grpcpp.h"

namespace nasperf {

struct TlsFiles {
  std::string cert;  // PEM; server side
  std::string key;   // PEM; server side
  std::string ca;    // PEM; client side: trust this CA (or self-signed cert)
};

// Insecure without cert/key; TLS with both; an error with only one or an unreadable file.
absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> ServerCredentials(const TlsFiles& tls);
// Insecure without a CA file, TLS trusting that CA with one.
absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> ClientCredentials(const TlsFiles& tls);

// The largest gRPC message any nasperf endpoint sends or takes, set explicitly on
// both ends (gRPC's default is 4 MiB on receive only). A report stays far below it:
// samples are capped (common/sampler.h) and WaitJob pages its rows.
inline constexpr int kMaxMessageBytes = 16 << 20;
// Servers: the limits above on a builder.
void LimitMessages(grpc::ServerBuilder* builder);

// A channel to host:port that reconnects quickly (200 ms, backing off to 2 s), so an
// agent notices a restarted peer within seconds. Insecure when credentials is null.
std::shared_ptr<grpc::Channel> NewChannel(const std::string& address,
                                          std::shared_ptr<grpc::ChannelCredentials> credentials);
// The token in metadata and a deadline: every client call of nasperf starts here.
void PrepareCall(grpc::ClientContext* context, const std::string& token, absl::Duration deadline);
// OK, or UNAUTHENTICATED naming what to set. Logs the refusal with the peer.
grpc::Status CheckToken(const grpc::ServerContext& context, const std::string& token,
                        const char* component);

// The caller's IP address from a server context ("ipv4:10.0.0.2:5555" -> "10.0.0.2").
std::string PeerHost(const grpc::ServerContext& context);

grpc::Status ToGrpc(const absl::Status& status);
// Prefixes the message with "<what> <address>"; unreachable peers say so.
absl::Status FromGrpc(const grpc::Status& status, const std::string& what,
                      const std::string& address);

}  // namespace nasperf

#endif  // NASPERF_COMMON_GRPC_AUTH_H_
