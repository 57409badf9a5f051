#include "collector/collector_client.h"

#include <chrono>

namespace nasperf {

CollectorClient::CollectorClient(const HostPort& address, std::string token,
                                 std::shared_ptr<grpc::ChannelCredentials> credentials)
    : address_(address), token_(std::move(token)) {
  if (credentials == nullptr) credentials = grpc::InsecureChannelCredentials();
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 200);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 2000);
  stub_ = proto::Collector::NewStub(
      grpc::CreateCustomChannel(FormatHostPort(address_), credentials, args));
}

absl::StatusOr<bool> CollectorClient::Report(const proto::TransferReport& report,
                                             absl::Duration deadline) {
  grpc::ClientContext context;
  AddToken(&context, token_);
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::milliseconds(absl::ToInt64Milliseconds(deadline)));
  proto::ReportAck ack;
  grpc::Status status = stub_->Report(&context, report, &ack);
  if (!status.ok()) return FromGrpc(status, "collector", FormatHostPort(address_));
  return ack.duplicate();
}

}  // namespace nasperf
