// A client for a receiver's control service: the token rides in every call's
// metadata, every call has a deadline, every reply is checked (wire/validate.h)
// before the caller sees it, and failures come back as absl::Status with the
// receiver's address in the message. Thread-safe (gRPC stubs are).
#ifndef NASPERF_WIRE_RECEIVER_CLIENT_H_
#define NASPERF_WIRE_RECEIVER_CLIENT_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/fd.h"
#include "proto/nasperf.grpc.pb.h"
#include "wire/grpc_auth.h"

namespace nasperf {

class ReceiverClient {
 public:
  // trust: from the command's TLS flags (wire/tls.h); plaintext when null. With
  // `fingerprint`, the receiver must show exactly that key (a lab controller's pin).
  ReceiverClient(const HostPort& address, std::string token, std::shared_ptr<const PeerTrust> trust = nullptr,
                 const std::string& fingerprint = "");

  absl::StatusOr<proto::HelloReply> Hello();
  absl::StatusOr<proto::OpenTransferReply> OpenTransfer(const proto::OpenTransferRequest& request);
  // The receiver's row for the transfer `opened` made (its reply's id): refused unless
  // it names that transfer (CheckFetchedReport).
  absl::StatusOr<proto::TransferReport> FetchReport(const proto::OpenTransferRequest& opened, uint64_t transfer_id,
                                                    absl::Duration wait);
  absl::StatusOr<proto::EndRunReply> EndRun(const std::string& run_id);
  // May lay out request.size bytes on the NAS's disk: the deadline grows with it.
  absl::StatusOr<proto::PrepareReadReply> PrepareRead(const proto::PrepareReadRequest& request);

  const HostPort& address() const { return address_; }

 private:
  absl::Status Refuse(const absl::Status& why) const;

  HostPort address_;
  std::string token_;
  std::unique_ptr<proto::Receiver::Stub> stub_;
};

}  // namespace nasperf

#endif  // NASPERF_WIRE_RECEIVER_CLIENT_H_
