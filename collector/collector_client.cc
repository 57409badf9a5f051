#include "collector/collector_client.h"

namespace nasperf {

CollectorClient::CollectorClient(const HostPort& address, std::string token,
                                 std::shared_ptr<grpc::ChannelCredentials> credentials)
    : address_(address), token_(std::move(token)) {
  stub_ = proto::Collector::NewStub(NewChannel(FormatHostPort(address_), std::move(credentials)));
}

absl::StatusOr<bool> CollectorClient::Report(const proto::TransferReport& report,
                                             absl::Duration deadline) {
  grpc::ClientContext context;
  PrepareCall(&context, token_, deadline);
  proto::ReportAck ack;
  grpc::Status status = stub_->Report(&context, report, &ack);
  if (!status.ok()) return FromGrpc(status, "collector", FormatHostPort(address_));
  return ack.duplicate();
}

}  // namespace nasperf
