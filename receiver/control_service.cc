#include "receiver/control_service.h"

#include <optional>

#include "absl/strings/str_cat.h"
#include "common/file_set.h"
#include "common/log.h"
#include "common/policy.h"
#include "common/units.h"
#include "measure/netinfo.h"
#include "measure/page_cache.h"
#include "receiver/read_session.h"
#include "wire/grpc_auth.h"
#include "wire/validate.h"
#include "wire/wire.h"

namespace nasperf {

grpc::Status ControlService::Hello(grpc::ServerContext* context, const proto::HelloRequest*, proto::HelloReply* reply) {
  if (grpc::Status s = CheckToken(context); !s.ok()) return s;
  reply->set_host(host_);
  reply->set_version(NASPERF_VERSION);
  reply->set_wire_version(kWireVersion);
  reply->set_target(target_.path());
  if (auto free = target_.FreeBytes(); free.ok()) reply->set_free_bytes(*free);
  for (WriteMode mode : target_.write_modes()) reply->add_write_modes(Name(mode));
  reply->set_data_port(data_port_);
  reply->set_max_size(options_.max_size);
  for (const std::string& transport : options_.transports) reply->add_transports(transport);
  reply->set_min_free(options_.check_free ? options_.min_free : 0);
  if (pmtu_) {
    pmtu_->Admit(PeerHost(*context));  // this caller's path probes get answers
    reply->set_probe_port(pmtu_->port());
  }
  if (auto facts = InterfaceToward(PeerHost(*context)); facts.ok() && facts->mtu) {
    reply->set_mtu(*facts->mtu);
  }
  return grpc::Status::OK;
}

grpc::Status ControlService::OpenTransfer(grpc::ServerContext* context, const proto::OpenTransferRequest* request,
                                          proto::OpenTransferReply* reply) {
  if (grpc::Status s = CheckToken(context); !s.ok()) return s;
  absl::StatusOr<TransferPlan> plan = Plan(*request);
  if (!plan.ok()) {
    Log(LogLevel::kInfo, kComponent, "refused transfer from %s: %s", context->peer(), plan.status().message());
    return ToGrpc(plan.status());
  }
  reply->set_transfer_id(plan->id);
  reply->set_ticket(std::string(plan->ticket.begin(), plan->ticket.end()));
  reply->set_data_port(data_port_);
  reply->set_ticket_ttl_s(absl::ToDoubleSeconds(options_.ticket_ttl));
  reply->set_expects_footer(request->sends_footer());
  return grpc::Status::OK;
}

grpc::Status ControlService::PrepareRead(grpc::ServerContext* context, const proto::PrepareReadRequest* request,
                                         proto::PrepareReadReply* reply) {
  if (grpc::Status s = CheckToken(context); !s.ok()) return s;
  Cleanup cleanup = options_.cleanup;
  if (!request->cleanup().empty()) {
    auto asked = Parse<Cleanup>(request->cleanup());
    if (!asked.ok()) return ToGrpc(asked.status());
    cleanup = *asked;
  }
  // A file about to be laid out is admitted as a write of its size would be, and
  // holds a transfer slot and its bytes while it is written.
  std::optional<uint64_t> hold;
  const LayOutAdmission admit = [&](uint64_t size) -> absl::Status {
    if (absl::Status s = CheckSize(size); !s.ok()) return s;
    absl::MutexLock admitting(&admit_mu_);
    if (absl::Status s = CheckRoom(size); !s.ok()) return s;
    absl::StatusOr<uint64_t> held = table_.BeginLayOut(size);
    if (!held.ok()) return held.status();
    hold = *held;
    return absl::OkStatus();
  };
  bool laid_out = false;
  absl::StatusOr<proto::PrepareReadReply> prepared =
      !request->remote_file().empty() && !options_.serve_existing_files
          ? absl::StatusOr<proto::PrepareReadReply>(ExistingFilesNotServed(request->remote_file()))
          : nasperf::PrepareRead(
                target_, *request,
                options_.serve_existing_files || table_.WasLaidOut(ReadFileName(request->run_id(), request->stream())),
                admit, &laid_out);
  if (hold) table_.EndLayOut(*hold);
  if (!prepared.ok()) {
    Log(LogLevel::kInfo, kComponent, "refused read setup from %s: %s", context->peer(), prepared.status().message());
    return ToGrpc(prepared.status());
  }
  // Only what this call wrote is ours: it is served, and removed at EndRun (unless the
  // peer asked cleanup=never) or when the receiver stops, whichever comes first.
  if (laid_out) table_.NoteLaidOut(prepared->file());
  if (laid_out && cleanup != Cleanup::kNever) table_.KeepUntilRunEnds(request->run_id(), prepared->file());
  *reply = std::move(*prepared);
  return grpc::Status::OK;
}

grpc::Status ControlService::FetchReport(grpc::ServerContext* context, const proto::FetchReportRequest* request,
                                         proto::TransferReport* reply) {
  if (grpc::Status s = CheckToken(context); !s.ok()) return s;
  const double wait = BoundedWaitSeconds(request->wait_s(), 60);
  auto report = table_.Fetch(request->transfer_id(), absl::Seconds(wait));
  if (!report.ok()) return ToGrpc(report.status());
  *reply = *report;
  return grpc::Status::OK;
}

grpc::Status ControlService::EndRun(grpc::ServerContext* context, const proto::EndRunRequest* request,
                                    proto::EndRunReply* reply) {
  if (grpc::Status s = CheckToken(context); !s.ok()) return s;
  uint32_t removed = 0;
  for (const std::string& name : table_.TakeRunFiles(request->run_id())) {
    if (target_.Remove(name).ok()) ++removed;
  }
  reply->set_files_removed(removed);
  return grpc::Status::OK;
}

grpc::Status ControlService::CheckToken(grpc::ServerContext* context) {
  return nasperf::CheckToken(*context, options_.token, kComponent);
}

absl::StatusOr<TransferPlan> ControlService::Plan(const proto::OpenTransferRequest& request) {
  if (absl::Status s = CheckRunId(request.run_id()); !s.ok()) return s;
  if (absl::Status s = CheckTransferKey(request.label(), request.iteration(), request.stream()); !s.ok()) {
    return s;
  }
  if (absl::Status s = CheckPlainText("sender host", request.sender_host(), 255); !s.ok()) return s;
  if (request.size() == 0) return absl::InvalidArgumentError("size must be positive");
  if (request.path_mtu() != 0 && (request.path_mtu() < 576 || request.path_mtu() > 1 << 20)) {
    return absl::InvalidArgumentError(absl::StrCat("implausible path MTU ", request.path_mtu()));
  }
  if (request.link_mbps() > 10'000'000) {  // 10 Tb/s
    return absl::InvalidArgumentError(absl::StrCat("implausible link speed ", request.link_mbps(), " Mb/s"));
  }
  if (request.window_bytes() > kMaxWindow) {
    return absl::InvalidArgumentError(absl::StrCat("window above ", FormatSize(kMaxWindow)));
  }
  if (absl::Status s = CheckSize(request.size()); !s.ok()) return s;
  if (absl::Status s = CheckInterval(request.interval_s()); !s.ok()) return s;
  TransferPlan plan;
  plan.request = request;
  if (!request.direction().empty()) {
    auto direction = Parse<Direction>(request.direction());
    if (!direction.ok()) return direction.status();
    plan.direction = *direction;
  }
  if (plan.direction == Direction::kRead) return PlanRead(std::move(plan));
  plan.reserve_bytes = request.size();
  if (!request.write_mode().empty()) {
    auto mode = Parse<WriteMode>(request.write_mode());
    if (!mode.ok()) return mode.status();
    plan.mode = *mode;
  }
  if (!target_.Supports(plan.mode)) {
    return absl::FailedPreconditionError(target_.Unsupported(plan.mode));
  }
  if (!request.sync_policy().empty()) {
    auto sync = ParseSyncPolicy(request.sync_policy());
    if (!sync.ok()) return sync.status();
    plan.sync = *sync;
  }
  if (absl::Status s = PlanFileSet(plan); !s.ok()) return s;
  plan.cleanup = options_.cleanup;
  if (!request.cleanup().empty()) {
    auto cleanup = Parse<Cleanup>(request.cleanup());
    if (!cleanup.ok()) return cleanup.status();
    plan.cleanup = *cleanup;
  }
  absl::MutexLock admitting(&admit_mu_);
  if (absl::Status s = CheckRoom(request.size()); !s.ok()) return s;
  return table_.Add(std::move(plan));
}

absl::Status ControlService::CheckSize(uint64_t size) const {
  if (options_.max_size > 0 && size > options_.max_size) {
    return absl::InvalidArgumentError(absl::StrCat("size ", FormatSize(size), " is above this receiver's --max-size ",
                                                   FormatSize(options_.max_size)));
  }
  return absl::OkStatus();
}

absl::Status ControlService::CheckRoom(uint64_t size) {
  if (!options_.check_free) return absl::OkStatus();
  return target_.CheckRoom(size, table_.reserved_bytes(), options_.min_free);
}

// A write of many files: their sizes as the sender drew them (or, for a tree, as it
// sends them after the data header), which must add up to the transfer's size; each file is written whole before the
// next, so neither O_DIRECT's alignment nor a sync every N bytes applies.
absl::Status ControlService::PlanFileSet(TransferPlan& plan) const {
  const proto::OpenTransferRequest& request = plan.request;
  if (request.file_count() == 0) {
    if (!request.file_size().empty()) return absl::InvalidArgumentError("a file size with no file count");
    if (request.files_per_dir() != 0) return absl::InvalidArgumentError("files per directory with no file count");
    return absl::OkStatus();
  }
  if (request.file_count() > kMaxSetFiles) {
    return absl::InvalidArgumentError(absl::StrCat("file count ", request.file_count(), " is above ", kMaxSetFiles));
  }
  if (request.files_per_dir() > request.file_count()) {
    return absl::InvalidArgumentError(absl::StrCat("files per directory ", request.files_per_dir(), " is above the ",
                                                   request.file_count(), " files"));
  }
  if (absl::Status s = CheckPlainText("file size", request.file_size(), 64); !s.ok()) return s;
  if (plan.mode == WriteMode::kDirect || plan.sync.kind == SyncPolicy::kEvery) {
    return absl::InvalidArgumentError("many files take write mode buffered or dsync and sync end or none");
  }
  if (request.file_size() == kTreeFileSize) {  // a real tree's: they follow the data header
    plan.file_sizes_follow = true;
    return absl::OkStatus();
  }
  absl::StatusOr<FileSizeDist> dist = ParseFileSizeDist(request.file_size());
  if (!dist.ok()) return dist.status();
  auto sizes =
      std::make_shared<std::vector<uint64_t>>(FileSetSizes(*dist, request.file_count(), /*seed=*/request.file_count()));
  uint64_t total = 0;
  for (uint64_t size : *sizes) total += size;
  if (total != request.size()) {
    return absl::InvalidArgumentError(absl::StrCat(request.file_count(), " files of ", request.file_size(), " are ",
                                                   total, " bytes, not the ", request.size(), " asked"));
  }
  plan.file_sizes = std::move(sizes);
  return absl::OkStatus();
}

// A read streams a file PrepareRead answered with: it must still be there, as long.
absl::StatusOr<TransferPlan> ControlService::PlanRead(TransferPlan plan) {
  const proto::OpenTransferRequest& request = plan.request;
  if (absl::Status s = CheckFileName("read file", request.read_file()); !s.ok()) return s;
  if (!table_.WasLaidOut(request.read_file()) && !options_.serve_existing_files) {
    return ExistingFilesNotServed(request.read_file());
  }
  if (auto cache = Parse<CacheState>(request.cache()); !cache.ok()) return cache.status();
  auto read_mode = ParseOr(request.read_mode(), ReadMode::kBuffered);
  if (!read_mode.ok()) return read_mode.status();
  plan.read_mode = *read_mode;
  uint64_t length = 0;
  absl::StatusOr<Fd> file = target_.OpenForRead(request.read_file(), &length);
  if (!file.ok()) return file.status();
  // A file system that refuses O_DIRECT says so now, not in a failed row.
  if (plan.read_mode == ReadMode::kDirect) {
    if (absl::Status s = ReadPastCache(file->get(), absl::StrCat(target_.path(), "/", request.read_file())); !s.ok()) {
      return s;
    }
  }
  if (length != request.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat(request.read_file(), " has ", length, " bytes, not ", request.size()));
  }
  return table_.Add(std::move(plan));
}

}  // namespace nasperf
