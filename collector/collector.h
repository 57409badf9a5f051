// The collector (`nasperf collector`): a gRPC Collector service that writes every
// report it receives into DIR/transfers.csv and samples.csv through CsvSink -
// exactly once per (run, role, host, iteration, stream, transfer), synced before the
// ack - and prints one console line per row with a running per-label summary.
// Start() returns once listening; Shutdown() may be called from any thread.
#ifndef NASPERF_COLLECTOR_COLLECTOR_H_
#define NASPERF_COLLECTOR_COLLECTOR_H_

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "collector/live_board.h"
#include "common/fd.h"
#include "common/policy.h"
#include "wire/grpc_auth.h"

namespace nasperf {

struct CollectorOptions {
  std::string out_dir;
  HostPort listen{"", kCollectorPort};
  std::string token;
  ServerTls tls;                 // default: this host's own key (wire/tls.h)
  std::FILE* console = nullptr;  // per-row lines; null = quiet
  uint64_t max_store_bytes = 0;  // refuse rows once the CSV files would pass this; 0 = no limit
  LiveBoard* live = nullptr;     // fed every stored row and live update (the HTTP side); may be null
};

struct CollectorCounters {
  uint64_t rows = 0;
  uint64_t duplicates = 0;
  uint64_t refused = 0;
};

class Collector {
 public:
  static absl::StatusOr<std::unique_ptr<Collector>> Start(const CollectorOptions& options);
  virtual ~Collector() = default;
  virtual uint16_t port() const = 0;
  virtual CollectorCounters counters() const = 0;
  virtual std::string transfers_path() const = 0;
  // TLS: what clients pin, and a line for the start banner.
  virtual const ServerSecurity& security() const = 0;
  virtual void Shutdown() = 0;
};

}  // namespace nasperf

#endif  // NASPERF_COLLECTOR_COLLECTOR_H_
