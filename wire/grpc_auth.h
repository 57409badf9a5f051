// What every nasperf gRPC endpoint shares: the token in call metadata (checked in
// constant time, on TLS servers before a request is read), channels that trust their
// peer as wire/tls.h decides, server limits, and absl::Status <-> grpc::Status.
// Thread-safe.
#ifndef NASPERF_WIRE_GRPC_AUTH_H_
#define NASPERF_WIRE_GRPC_AUTH_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "grpcpp/grpcpp.h"
#include "wire/tls.h"

namespace nasperf {

// The largest gRPC message any nasperf endpoint sends or takes, set explicitly on
// both ends (gRPC's default is 4 MiB on receive only). A report stays far below it:
// samples are capped (measure/sampler.h) and WaitJob pages its rows. Servers take
// less (ServerLimits): this is what clients accept in a reply.
inline constexpr int kMaxMessageBytes = 16 << 20;
// The largest request the receiver/agent control port reads. Its requests are
// small: the largest, a lab's SenderJob, is a few paths (each under PATH_MAX) and a
// handful of words. A request is parsed before its handler runs, and 2 bytes of an
// empty unknown field cost some 60 bytes once parsed: 64 KiB bounds that to ~2 MB.
inline constexpr int kMaxControlRequestBytes = 64 << 10;
// A peer that opens a connection and says nothing holds a descriptor only this long
// (gRPC's default is 120 s, enough for idle sockets to use up the descriptors).
inline constexpr int kServerHandshakeTimeoutMs = 5000;
// What one server may take: its largest request, and a gRPC resource quota (threads,
// which bound the calls handled and so the requests parsed at once, and the memory
// of its transports' buffers). Past max_threads a call gets RESOURCE_EXHAUSTED.
struct ServerLimits {
  const char* name;  // of the quota, for gRPC's traces
  int max_request_bytes;
  int max_threads;
  int64_t max_memory_bytes;
};
// The fewest open files a nasperf server runs with (its hard limit, which it raises
// its soft limit to: RaiseFileLimit, common/fd.h). gRPC has no cap on connections,
// and each idle one holds a descriptor for up to kServerHandshakeTimeoutMs: below
// this, a thousand idle connections stop accept() (EMFILE) and real clients time out.
inline constexpr uint64_t kMinServerOpenFiles = 4096;
// OK, or FailedPrecondition: one line naming `limit` and how to raise it.
absl::Status CheckServerFileLimit(uint64_t limit);
// What a server calls at start: RaiseFileLimit, then CheckServerFileLimit on the
// result. A limit that cannot be read or raised is no error: *warning says why.
absl::Status RaiseServerFileLimit(std::string* warning);
// Servers: the limits above (replies up to kMaxMessageBytes), the handshake deadline,
// and no SO_REUSEPORT: gRPC sets it by default, so a second nasperf on a busy port
// would start and take half its connections instead of failing with "port in use".
void ConfigureServer(grpc::ServerBuilder* builder, const ServerLimits& limits);
// On a TLS server, the token is checked on each call's metadata by gRPC's auth filter,
// before the request message is read: a wrong or missing token ends the call with
// UNAUTHENTICATED (logged, throttled, as CheckToken) and its request is never parsed.
// Nothing with --plaintext (gRPC runs no auth filter there): the handlers' CheckToken
// alone refuses, after the request (bounded by ServerLimits) was parsed.
void RequireTokenFirst(ServerSecurity* security, const std::string& token, const char* component);

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
// whose TLS key was refused (wire/tls.h) says why instead.
absl::Status FromGrpc(const grpc::Status& status, const std::string& what, const std::string& address);

}  // namespace nasperf

#endif  // NASPERF_WIRE_GRPC_AUTH_H_
