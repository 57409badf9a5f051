// The receiver agent (`nasperf receiver`): a gRPC control service (Hello,
// OpenTransfer, FetchReport, EndRun) guarded by a token, and a TCP data listener that
// admits a connection only with a one-time ticket and writes its payload into the
// target through the write pipeline. Start() returns once both ports listen.
// Threads: gRPC's pool for control calls, one accept thread, and one thread per data
// connection (receiver/connections.h owns and joins them). Shutdown() may be called
// from any thread (e.g. a signal watcher).
#ifndef NASPERF_RECEIVER_RECEIVER_H_
#define NASPERF_RECEIVER_RECEIVER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/fd.h"
#include "common/policy.h"
#include "wire/grpc_auth.h"
#include "wire/report_sink.h"

namespace nasperf {

struct ReceiverOptions {
  std::string target;               // a directory, or "discard"
  HostPort listen{"", kAgentPort};  // control (gRPC); port 0 = ephemeral
  uint16_t data_port = 0;           // 0: control port + 1, or ephemeral when that is 0
  std::string token;                // required
  bool check_free = true;
  uint64_t min_free = 1ULL << 30;    // refuse a transfer that leaves less than this
  uint64_t max_size = 0;             // 0 = no limit
  Cleanup cleanup = Cleanup::kEach;  // default when the sender does not ask
  absl::Duration ticket_ttl = absl::Seconds(30);
  absl::Duration idle_timeout = absl::Seconds(60);
  int max_transfers = 64;
  // Reads: token holders may read files nasperf laid out; existing files of the
  // target (the user's data) only with this (--serve-existing-files).
  bool serve_existing_files = false;
  ServerTls tls;                  // the control port's TLS; default: this host's own key
  ReportSink* reports = nullptr;  // each finished transfer's row goes here too
  // More gRPC services on the control port, same TLS (`nasperf agent` adds its Agent
  // service). Not owned; must outlive Shutdown(); each checks the token itself.
  std::vector<grpc::Service*> extra_services;
  // Said in Hello for a lab's checks: the transports an agent's sender can run.
  std::vector<std::string> transports;
};

struct ReceiverCounters {
  uint64_t ok = 0;
  uint64_t failed = 0;
  uint64_t aborted = 0;
  uint64_t refused = 0;     // data connections closed before any file existed
  uint64_t timed_out = 0;   // no whole header within 5 s of accept (1 s when crowded)
  uint64_t over_limit = 0;  // closed at accept, or dropped before a header: too many at once
};

class Receiver {
 public:
  static absl::StatusOr<std::unique_ptr<Receiver>> Start(const ReceiverOptions& options);
  virtual ~Receiver() = default;

  virtual uint16_t control_port() const = 0;
  virtual uint16_t data_port() const = 0;
  virtual ReceiverCounters counters() const = 0;
  // The control port's TLS: what clients pin, and a line for the start banner.
  virtual const ServerSecurity& security() const = 0;
  // Stops accepting, aborts transfers in flight (their files are removed), applies
  // cleanup=end to what is left, removes every read file it laid out (also those a
  // peer asked to keep: cleanup=never) and returns when every thread has ended.
  // Idempotent.
  virtual void Shutdown() = 0;
};

}  // namespace nasperf

#endif  // NASPERF_RECEIVER_RECEIVER_H_
