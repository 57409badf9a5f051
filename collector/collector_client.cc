#include "collector/collector_client.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/log.h"
#include "wire/validate.h"

namespace nasperf {

CollectorClient::CollectorClient(const HostPort& address, std::string token, std::shared_ptr<const PeerTrust> trust,
                                 const std::string& fingerprint)
    : address_(address), token_(std::move(token)) {
  stub_ = proto::Collector::NewStub(NewChannel(FormatHostPort(address_), trust.get(), fingerprint));
}

absl::StatusOr<bool> CollectorClient::Report(const proto::TransferReport& report, absl::Duration deadline) {
  // A report the collector could never take is refused here, as invalid, so the
  // spool sets it aside instead of retrying it forever in front of the others.
  if (report.ByteSizeLong() > static_cast<size_t>(kMaxReportBytes)) {
    return absl::InvalidArgumentError(absl::StrCat("report of ", report.ByteSizeLong(), " bytes is above the ",
                                                   kMaxReportBytes, " a collector takes"));
  }
  grpc::ClientContext context;
  PrepareCall(&context, token_, deadline);
  proto::ReportAck ack;
  grpc::Status status = stub_->Report(&context, report, &ack);
  if (status.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED) {
    // A collector busy past its thread or memory quota says RESOURCE_EXHAUSTED too: that
    // report is delivered later, never set aside.
    if (!absl::StrContains(status.error_message(), "larger than max")) {
      return absl::UnavailableError(
          absl::StrCat("collector ", FormatHostPort(address_), " is busy: ", TerminalSafe(status.error_message())));
    }
    // Too large for this collector after all (its limit may be lower): never deliverable.
    return absl::InvalidArgumentError(
        absl::StrCat("collector ", FormatHostPort(address_),
                     " cannot take a report this large: ", TerminalSafe(status.error_message())));
  }
  if (!status.ok()) return FromGrpc(status, "collector", FormatHostPort(address_));
  return ack.duplicate();
}

absl::Status CollectorClient::Live(const proto::LiveUpdate& update, absl::Duration deadline) {
  grpc::ClientContext context;
  PrepareCall(&context, token_, deadline);
  proto::LiveAck ack;
  grpc::Status status = stub_->Live(&context, update, &ack);
  if (!status.ok()) return FromGrpc(status, "collector", FormatHostPort(address_));
  return absl::OkStatus();
}

}  // namespace nasperf
