// The collector's read-only HTTP side (`nasperf collector --http`, docs/DESIGN.md §5, live
// view): GET and HEAD only; a bearer token when one is set; every request bounded (8 KiB
// of header, no body, a few seconds to arrive), at most 16 connections and 50 requests a
// second. Boost.Beast, header-only, so it links into the static binary. One thread serves
// every connection and calls the handler; Start() returns once listening, Stop() or the
// destructor ends it.
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
};
// Called on the server's thread with the request's path (no query), for a request that
// passed every check.
using HttpHandler = std::function<HttpReply(const std::string& path)>;

struct HttpOptions {
  HostPort listen{"127.0.0.1", 0};
  std::string token;  // what `Authorization: Bearer` must carry; empty: nothing asked
  // Paths served without the token: pages that hold no data (the live page itself).
  std::vector<std::string> open_paths;
  // Both set: HTTPS with this key and certificate (PEM); empty: plain HTTP.
  std::string tls_key_pem, tls_cert_pem;
  absl::Duration read_timeout = absl::Seconds(5);  // for one request to arrive whole
  int max_connections = 16;
  double max_requests_per_s = 50;  // and as many at once
};

// Whether an address (a name or an IP) is a loopback one: only there may the HTTP side
// go without a token.
bool IsLoopbackHost(const std::string& host);

class HttpServer {
 public:
  static absl::StatusOr<std::unique_ptr<HttpServer>> Start(const HttpOptions& options, HttpHandler handler);
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
