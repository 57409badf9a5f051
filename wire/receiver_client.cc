#include "wire/receiver_client.h"

#include "absl/strings/str_cat.h"
#include "grpcpp/grpcpp.h"
#include "wire/validate.h"
#include "wire/wire.h"

namespace nasperf {

// A reply that fails its check is the receiver's fault, named as such.
absl::Status ReceiverClient::Refuse(const absl::Status& why) const {
  return absl::DataLossError(absl::StrCat("receiver ", FormatHostPort(address_), " sent a bad reply: ", why.message()));
}

ReceiverClient::ReceiverClient(const HostPort& address, std::string token, std::shared_ptr<const PeerTrust> trust,
                               const std::string& fingerprint)
    : address_(address), token_(std::move(token)) {
  stub_ = proto::Receiver::NewStub(NewChannel(FormatHostPort(address_), trust.get(), fingerprint));
}

absl::StatusOr<proto::HelloReply> ReceiverClient::Hello() {
  grpc::ClientContext context;
  PrepareCall(&context, token_, absl::Seconds(10));
  proto::HelloReply reply;
  grpc::Status status = stub_->Hello(&context, proto::HelloRequest(), &reply);
  if (!status.ok()) return FromGrpc(status, "receiver", FormatHostPort(address_));
  if (absl::Status bad = CheckHelloReply(reply); !bad.ok()) return Refuse(bad);
  // Another data-port codec would refuse every header with a bare reset: say why now.
  const uint32_t wire = reply.wire_version() == 0 ? 1 : reply.wire_version();
  if (wire != kWireVersion) {
    return absl::FailedPreconditionError(
        absl::StrCat("receiver ", FormatHostPort(address_), " runs nasperf ", reply.version(),
                     ", whose data port speaks version ", wire, "; this nasperf speaks ", kWireVersion,
                     ": run the same nasperf on both ends (sender --to user@host:/dir uploads this one)"));
  }
  return reply;
}

absl::StatusOr<proto::OpenTransferReply> ReceiverClient::OpenTransfer(const proto::OpenTransferRequest& request) {
  grpc::ClientContext context;
  PrepareCall(&context, token_, absl::Seconds(10));
  proto::OpenTransferReply reply;
  grpc::Status status = stub_->OpenTransfer(&context, request, &reply);
  if (!status.ok()) return FromGrpc(status, "receiver", FormatHostPort(address_));
  if (absl::Status bad = CheckOpenTransferReply(reply); !bad.ok()) return Refuse(bad);
  return reply;
}

absl::StatusOr<proto::TransferReport> ReceiverClient::FetchReport(const proto::OpenTransferRequest& opened,
                                                                  uint64_t transfer_id, absl::Duration wait) {
  grpc::ClientContext context;
  PrepareCall(&context, token_, wait + absl::Seconds(10));
  proto::FetchReportRequest request;
  request.set_transfer_id(transfer_id);
  request.set_wait_s(absl::ToDoubleSeconds(wait));
  proto::TransferReport reply;
  grpc::Status status = stub_->FetchReport(&context, request, &reply);
  if (!status.ok()) return FromGrpc(status, "receiver", FormatHostPort(address_));
  if (absl::Status bad = CheckFetchedReport(reply, transfer_id, opened); !bad.ok()) return Refuse(bad);
  return reply;
}

absl::StatusOr<proto::PrepareReadReply> ReceiverClient::PrepareRead(const proto::PrepareReadRequest& request) {
  grpc::ClientContext context;
  // Laying out (or warming) even a 45 GB file on a slow array at 10 MB/s fits.
  PrepareCall(&context, token_, absl::Seconds(120 + static_cast<double>(request.size()) / 10e6));
  proto::PrepareReadReply reply;
  grpc::Status status = stub_->PrepareRead(&context, request, &reply);
  if (!status.ok()) return FromGrpc(status, "receiver", FormatHostPort(address_));
  if (absl::Status bad = CheckPrepareReadReply(reply, request); !bad.ok()) return Refuse(bad);
  return reply;
}

absl::StatusOr<proto::EndRunReply> ReceiverClient::EndRun(const std::string& run_id) {
  grpc::ClientContext context;
  PrepareCall(&context, token_, absl::Seconds(60));
  proto::EndRunRequest request;
  request.set_run_id(run_id);
  proto::EndRunReply reply;
  grpc::Status status = stub_->EndRun(&context, request, &reply);
  if (!status.ok()) return FromGrpc(status, "receiver", FormatHostPort(address_));
  return reply;
}

}  // namespace nasperf
