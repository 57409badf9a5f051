// The collector's live view served over HTTP (docs/DESIGN.md §5b): the routes (/metrics,
// the live page, its JSON, the report of what has arrived) over HttpServer, with the
// rules every collector keeps: loopback unless a bearer token file is given, HTTPS on
// request with the collector's own key. Used by `nasperf collector --http` and a lab
// plan's `[collector] http`. The server's one thread calls the board and the report.
#ifndef NASPERF_COLLECTOR_LIVE_HTTP_H_
#define NASPERF_COLLECTOR_LIVE_HTTP_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "collector/http_server.h"
#include "collector/live_board.h"
#include "wire/tls.h"

namespace nasperf {

inline constexpr uint16_t kHttpPort = 7701;

struct LiveHttpOptions {
  HostPort listen{"127.0.0.1", kHttpPort};  // an empty host: loopback
  std::string token_file;                   // the bearer token (mode 600, >= 16 characters); needed off loopback
  bool tls = false;                         // HTTPS with `identity`'s key
  ServerTls identity;
  std::string out_dir;          // the collector's CSV files, for /report
  std::string what = "--http";  // names the setting in errors
};

absl::StatusOr<std::unique_ptr<HttpServer>> StartLiveHttp(const LiveHttpOptions& options, const LiveBoard& board);

}  // namespace nasperf

#endif  // NASPERF_COLLECTOR_LIVE_HTTP_H_
