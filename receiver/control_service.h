// The receiver's control service (Hello, OpenTransfer, PrepareRead, FetchReport,
// EndRun): checks the token and every field a caller sends, and plans transfers into
// the ticket table the data listener claims them from. Runs on gRPC's threads; the
// table and the target it shares with the data listener are thread-safe, and
// admit_mu_ makes each free-space check and its reservation one step.
#ifndef NASPERF_RECEIVER_CONTROL_SERVICE_H_
#define NASPERF_RECEIVER_CONTROL_SERVICE_H_

#include <cstdint>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "datapath/target.h"
#include "measure/pmtu.h"
#include "proto/nasperf.grpc.pb.h"
#include "receiver/receiver.h"
#include "receiver/transfer_table.h"

namespace nasperf {

class ControlService final : public proto::Receiver::Service {
 public:
  // Nothing is owned; everything outlives the service. pmtu may be null (no probes).
  ControlService(const ReceiverOptions& options, std::string host, Target& target, TransferTable& table,
                 uint16_t data_port, PmtuResponder* pmtu)
      : options_(options), host_(std::move(host)), target_(target), table_(table), data_port_(data_port), pmtu_(pmtu) {}

  grpc::Status Hello(grpc::ServerContext* context, const proto::HelloRequest*, proto::HelloReply* reply) override;
  grpc::Status OpenTransfer(grpc::ServerContext* context, const proto::OpenTransferRequest* request,
                            proto::OpenTransferReply* reply) override;
  grpc::Status PrepareRead(grpc::ServerContext* context, const proto::PrepareReadRequest* request,
                           proto::PrepareReadReply* reply) override;
  grpc::Status FetchReport(grpc::ServerContext* context, const proto::FetchReportRequest* request,
                           proto::TransferReport* reply) override;
  grpc::Status EndRun(grpc::ServerContext* context, const proto::EndRunRequest* request,
                      proto::EndRunReply* reply) override;

 private:
  grpc::Status CheckToken(grpc::ServerContext* context);
  absl::StatusOr<TransferPlan> Plan(const proto::OpenTransferRequest& request);
  absl::StatusOr<TransferPlan> PlanRead(TransferPlan plan);
  absl::Status PlanFileSet(TransferPlan& plan) const;
  // The limits a write and a read file PrepareRead lays out obey alike: --max-size,
  // and the free-space guard (--min-free, after the bytes of transfers in flight).
  absl::Status CheckSize(uint64_t size) const;
  absl::Status CheckRoom(uint64_t size);

  static constexpr char kComponent[] = "receiver";
  const ReceiverOptions& options_;
  const std::string host_;
  Target& target_;
  TransferTable& table_;
  const uint16_t data_port_;
  PmtuResponder* const pmtu_;
  // Held from a free-space check to the reservation it allows (a write's plan, a read
  // file's layout), so two callers cannot both be promised the same free bytes.
  absl::Mutex admit_mu_;
};

}  // namespace nasperf

#endif  // NASPERF_RECEIVER_CONTROL_SERVICE_H_
