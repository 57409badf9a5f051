// A client for the Collector service: one Report call per transfer row (with its
// samples), the token in metadata, a deadline on every call. Thread-safe.
#ifndef NASPERF_COLLECTOR_COLLECTOR_CLIENT_H_
#define NASPERF_COLLECTOR_COLLECTOR_CLIENT_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/fd.h"
#include "proto/nasperf.grpc.pb.h"
#include "wire/grpc_auth.h"

namespace nasperf {

class CollectorClient {
 public:
  // trust and fingerprint: as for ReceiverClient (wire/receiver_client.h).
  CollectorClient(const HostPort& address, std::string token, std::shared_ptr<const PeerTrust> trust = nullptr,
                  const std::string& fingerprint = "");
  // True when the collector already had this report (and wrote nothing).
  absl::StatusOr<bool> Report(const proto::TransferReport& report, absl::Duration deadline = absl::Seconds(10));
  // One live update (collector/live_feed.h).
  absl::Status Live(const proto::LiveUpdate& update, absl::Duration deadline);
  const HostPort& address() const { return address_; }

 private:
  HostPort address_;
  std::string token_;
  std::unique_ptr<proto::Collector::Stub> stub_;
};

}  // namespace nasperf

#endif  // NASPERF_COLLECTOR_COLLECTOR_CLIENT_H_
