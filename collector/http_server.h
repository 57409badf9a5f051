// The collector's read-only HTTP side (`nasperf collector --http`, docs/DESIGN.md §5, live
// view): GET and HEAD only; a bearer token when one is set; every request bounded (8 KiB
// of header, no body, a few seconds to arrive). Connections without the token (classed by
// their first request) have a share of connections and of the request budget of their own,
// capped per peer address, so they never starve token-bearing ones. On loopback a request
// served without the token must name loopback as its Host (DNS rebinding). Boost.Beast,
// header-only, so it links into the static binary. One thread serves every connection and
// calls the handler; a deferred handler may answer from any thread. Start() returns once
// listening, Stop() ends it.
#ifndef NASPERF_COLLECTOR_HTTP_SERVER_H_
#define NASPERF_COLLECTOR_HTTP_SERVER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/fd.h"

namespace nasperf {

struct HttpReply {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
  // For an HTML reply: its Content-Security-Policy; empty: kStrictHtmlPolicy (no script).
  std::string csp;
};
// Every HTML reply carries a policy; this one allows no script and nothing fetched.
inline constexpr char kStrictHtmlPolicy[] =
    "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
// Called on the server's thread with the request's path (no query), for a request that
// passed every check.
using HttpHandler = std::function<HttpReply(const std::string& path)>;
// For slow paths: called on the server's thread; `done` must be called exactly once, from
// any thread, and the server's thread goes on serving other requests meanwhile.
// REQUIRES: `done` is called or dropped before the server is destroyed (a handler that
// keeps it is destroyed with the server, before the server's connections).
using HttpDone = std::function<void(HttpReply)>;
using HttpDeferredHandler = std::function<void(const std::string& path, HttpDone done)>;

struct HttpOptions {
  HostPort listen{"127.0.0.1", 0};
  std::string token;  // what `Authorization: Bearer` must carry; empty: nothing asked
  // Paths served without the token: pages that hold no data (the live page itself).
  std::vector<std::string> open_paths;
  // Both set: HTTPS with this key and certificate (PEM); empty: plain HTTP.
  std::string tls_key_pem, tls_cert_pem;
  // Paths answered by the deferred handler (Start's third argument) instead.
  std::vector<std::string> deferred_paths;
  absl::Duration read_timeout = absl::Seconds(5);  // for one request to arrive whole
  absl::Duration idle_timeout = absl::Seconds(2);  // a kept-alive connection waiting for the next
  // Token-bearing connections; those without the token (or waiting for their first request)
  // share half as many (all of them when no token is set), a peer address a quarter.
  int max_connections = 16;
  double max_requests_per_s = 50;  // and as many at once; requests without the token: half
};

// Whether an address (a name or an IP) is a loopback one: only there may the HTTP side
// go without a token.
bool IsLoopbackHost(const std::string& host);

class HttpServer {
 public:
  static absl::StatusOr<std::unique_ptr<HttpServer>> Start(const HttpOptions& options, HttpHandler handler,
                                                           HttpDeferredHandler deferred = nullptr);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;
  uint16_t port() const;
  std::string address() const;  // HOST:PORT as listening
  void Stop();

  struct Impl;

 private:
  explicit HttpServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace nasperf

#endif  // NASPERF_COLLECTOR_HTTP_SERVER_H_
