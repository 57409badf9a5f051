#include "lab/agent_client.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "grpcpp/grpcpp.h"
#include "proto/nasperf.grpc.pb.h"
#include "wire/grpc_auth.h"
#include "wire/validate.h"

namespace nasperf {
namespace {

constexpr uint32_t kMaxRowsPerJob = 1024;  // 64 streams make 128; more is a broken or hostile agent

class GrpcAgentConnection : public AgentConnection {
 public:
  GrpcAgentConnection(const PlanHost& host, const std::string& token, const PeerTrust* trust,
                      const std::string& fingerprint)
      : name_(host.name),
        address_(FormatHostPort(host.agent)),
        token_(token),
        stub_(proto::Agent::NewStub(NewChannel(address_, trust, fingerprint))) {}

  absl::Status StartSender(const proto::SenderJob& job) override {
    proto::StartSenderReply reply;
    return Call("start a transfer", absl::Seconds(10),
                [&](grpc::ClientContext* c) { return stub_->StartSender(c, job, &reply); });
  }

  absl::Status Go(const std::string& job_id, int64_t start_at_unix_ns) override {
    proto::GoRequest request;
    request.set_job_id(job_id);
    request.set_start_at_unix_ns(start_at_unix_ns);
    proto::GoReply reply;
    return Call("release the barrier", absl::Seconds(5),
                [&](grpc::ClientContext* c) { return stub_->Go(c, request, &reply); });
  }

  absl::StatusOr<proto::JobState> WaitJob(const std::string& job_id, bool until_ready, double wait_s) override {
    proto::WaitJobRequest request;
    request.set_job_id(job_id);
    request.set_until_ready(until_ready);
    request.set_wait_s(wait_s);
    proto::JobState state;
    absl::Status s = Call("wait for a transfer", absl::Seconds(wait_s + 10),
                          [&](grpc::ClientContext* c) { return stub_->WaitJob(c, request, &state); });
    if (!s.ok()) return s;
    if (!state.done()) return state;
    if (s = FetchRemainingRows(request, &state); !s.ok()) return s;
    for (const proto::TransferReport& r : state.reports()) {
      if (absl::Status bad = CheckReport(r); !bad.ok()) {
        return absl::DataLossError(absl::StrCat("host ", name_, ": agent sent a bad row: ", bad.message()));
      }
    }
    return state;
  }

  absl::Status Abort(const std::string& run_id) override {
    proto::AbortRequest request;
    request.set_run_id(run_id);
    proto::AbortReply reply;
    return Call("abort", absl::Seconds(5), [&](grpc::ClientContext* c) { return stub_->Abort(c, request, &reply); });
  }

  absl::StatusOr<proto::ObserveReply> Observe(const proto::ObserveRequest& request) override {
    proto::ObserveReply reply;
    absl::Status s = Call("start observing", absl::Seconds(10),
                          [&](grpc::ClientContext* c) { return stub_->Observe(c, request, &reply); });
    if (!s.ok()) return s;
    if (reply.observation_id().empty() || reply.observation_id().size() > 64 || reply.dir().size() > 4096) {
      return absl::DataLossError(absl::StrCat("host ", name_, ": agent sent a bad observation id"));
    }
    return reply;
  }

  absl::StatusOr<std::vector<proto::TransferReport>> StopObserving(const std::string& observation_id) override {
    proto::StopObservingRequest request;
    request.set_observation_id(observation_id);
    std::vector<proto::TransferReport> rows;
    for (uint32_t pages = 0;; ++pages) {
      request.set_first_report(static_cast<uint32_t>(rows.size()));
      proto::JobState page;
      absl::Status s = Call("stop observing", absl::Seconds(30),
                            [&](grpc::ClientContext* c) { return stub_->StopObserving(c, request, &page); });
      if (!s.ok()) return s;
      if (page.total_reports() > kMaxRowsPerJob || pages > kMaxRowsPerJob) {
        return absl::DataLossError(absl::StrCat("host ", name_, ": agent claims ", page.total_reports(), " rows"));
      }
      for (proto::TransferReport& r : *page.mutable_reports()) {
        if (absl::Status bad = CheckReport(r); !bad.ok()) {
          return absl::DataLossError(absl::StrCat("host ", name_, ": agent sent a bad row: ", bad.message()));
        }
        rows.push_back(std::move(r));
      }
      if (rows.size() >= page.total_reports()) return rows;
      if (page.reports_size() == 0) {
        return absl::DataLossError(absl::StrCat("host ", name_, ": agent sent an empty page of rows"));
      }
    }
  }

  absl::StatusOr<proto::CheckPathReply> CheckPath(const proto::CheckPathRequest& request) override {
    proto::CheckPathReply reply;
    absl::Status s = Call("check the path", absl::Seconds(30),
                          [&](grpc::ClientContext* c) { return stub_->CheckPath(c, request, &reply); });
    if (!s.ok()) return s;
    return reply;
  }

 private:
  // A finished job's rows come in pages after the first.
  absl::Status FetchRemainingRows(proto::WaitJobRequest request, proto::JobState* state) {
    if (state->total_reports() > kMaxRowsPerJob) {
      return absl::DataLossError(
          absl::StrCat("host ", name_, ": agent claims ", state->total_reports(), " rows for one job"));
    }
    request.set_wait_s(0);
    while (static_cast<uint32_t>(state->reports_size()) < state->total_reports()) {
      request.set_first_report(static_cast<uint32_t>(state->reports_size()));
      proto::JobState page;
      absl::Status s = Call("fetch a transfer's rows", absl::Seconds(10),
                            [&](grpc::ClientContext* c) { return stub_->WaitJob(c, request, &page); });
      if (!s.ok()) return s;
      if (page.reports_size() == 0) {
        return absl::DataLossError(absl::StrCat("host ", name_, ": agent sent an empty page of rows"));
      }
      for (auto& r : *page.mutable_reports()) *state->add_reports() = std::move(r);
    }
    return absl::OkStatus();
  }

  template <typename Rpc>
  absl::Status Call(const char* what, absl::Duration deadline, Rpc rpc) {
    grpc::ClientContext context;
    PrepareCall(&context, token_, deadline);
    grpc::Status status = rpc(&context);
    if (status.ok()) return absl::OkStatus();
    if (status.error_code() == grpc::StatusCode::UNIMPLEMENTED) {
      return absl::FailedPreconditionError(
          absl::StrCat("host ", name_, ": ", address_, " runs `nasperf receiver`, not `nasperf agent`"));
    }
    absl::Status s = FromGrpc(status, absl::StrCat("host ", name_, ": agent"), address_);
    return absl::Status(s.code(), absl::StrCat(s.message(), " (", what, ")"));
  }

  std::string name_, address_, token_;
  std::unique_ptr<proto::Agent::Stub> stub_;
};

}  // namespace

std::unique_ptr<AgentConnection> ConnectAgent(const PlanHost& host, const std::string& token, const PeerTrust* trust,
                                              const std::string& fingerprint) {
  return std::make_unique<GrpcAgentConnection>(host, token, trust, fingerprint);
}

std::string ObservedCopyLine(const proto::TransferReport& row) {
  // The detail says how the copy ended and was timed, who served it, then the verdict's
  // reason, which opens with the verdict's word ("no verdict" when there is none).
  const std::string& detail = row.observed_detail();
  const std::string opening = absl::StrCat(row.bottleneck().empty() ? "no verdict" : row.bottleneck(), ": ");
  size_t why = detail.find(absl::StrCat("; ", opening));
  why = why == std::string::npos ? 0 : why + 2;
  std::string line =
      absl::StrFormat("  %s  %.1f MB/s  %s", row.iteration() > 0 ? absl::StrCat("copy ", row.iteration()) : "warm-up",
                      row.mb_per_s(), row.status().empty() || row.status() == "ok" ? "" : row.status() + "  ");
  if (!row.share_protocol().empty()) absl::StrAppend(&line, "[", row.share_protocol(), "]  ");
  absl::StrAppend(&line, detail.substr(why));
  return line;
}

}  // namespace nasperf
