#include "receiver/receiver.h"

#include <errno.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <optional>
#include <thread>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/clock.h"
#include "common/grpc_auth.h"
#include "common/log.h"
#include "common/netinfo.h"
#include "common/page_cache.h"
#include "common/pmtu.h"
#include "common/policy.h"
#include "common/token.h"
#include "common/units.h"
#include "common/validate.h"
#include "common/wire.h"
#include "datapath/rows.h"
#include "datapath/socket_source.h"
#include "datapath/target.h"
#include "datapath/write_pipeline.h"
#include "grpcpp/grpcpp.h"
#include "proto/nasperf.grpc.pb.h"
#include "receiver/connections.h"
#include "receiver/data_session.h"
#include "receiver/read_session.h"
#include "receiver/transfer_table.h"

namespace nasperf {

namespace {

constexpr char kComponent[] = "receiver";
constexpr int kMaxConnections = 256;
// A data connection must present its whole header this soon after accept, however
// it trickles in, and one address may hold only so many connections that have not
// yet: a slow-header flood cannot hold the slots real transfers need.
constexpr int64_t kHeaderDeadlineNs = 5'000'000'000;
constexpr int kMaxUnadmittedPerSource = 16;

class ReceiverImpl final : public Receiver, public proto::Receiver::Service {
 public:
  explicit ReceiverImpl(const ReceiverOptions& options)
      : options_(options),
        host_(LocalHostName()),
        table_(options.ticket_ttl, options.max_transfers) {}

  ~ReceiverImpl() override { Shutdown(); }

  absl::Status Init() {
    auto target = Target::Open(options_.target);
    if (!target.ok()) return target.status();
    target_ = std::move(*target);

    HostPort data{options_.listen.host, options_.data_port};
    if (data.port == 0 && options_.listen.port != 0) {
      data.port = static_cast<uint16_t>(options_.listen.port + 1);
    }
    auto listener = ListenTcp(data);
    if (!listener.ok()) return listener.status();
    data_listener_ = std::move(*listener);
    auto port = LocalPort(data_listener_.get());
    if (!port.ok()) return port.status();
    data_port_ = *port;
    // Path MTU probes are a convenience: a receiver without them still serves.
    if (auto responder = PmtuResponder::StartBesides(data_listener_.get()); responder.ok()) {
      pmtu_responder_ = std::move(*responder);
    } else {
      Log(LogLevel::kWarning, kComponent, "no path MTU probes: %s", responder.status().message());
    }

    grpc::ServerBuilder builder;
    LimitMessages(&builder);
    std::string host = options_.listen.host.empty() ? "0.0.0.0" : options_.listen.host;
    int selected = 0;
    auto security = ServerCredentials(options_.tls);
    if (!security.ok()) return security.status();
    security_ = std::move(*security);
    builder.AddListeningPort(FormatHostPort({host, options_.listen.port}), security_.credentials, &selected);
    builder.RegisterService(this);
    for (grpc::Service* service : options_.extra_services) builder.RegisterService(service);
    server_ = builder.BuildAndStart();
    if (server_ == nullptr || selected == 0) {
      return absl::UnavailableError(absl::StrCat(
          "cannot listen on ", FormatHostPort({host, options_.listen.port}),
          " for control (port in use?)"));
    }
    control_port_ = static_cast<uint16_t>(selected);
    accept_thread_ = std::thread([this] { AcceptLoop(); });
    return absl::OkStatus();
  }

  uint16_t control_port() const override { return control_port_; }
  const ServerSecurity& security() const override { return security_; }
  uint16_t data_port() const override { return data_port_; }
  ReceiverCounters counters() const override {
    absl::MutexLock lock(&counters_mu_);
    return counters_;
  }

  void Shutdown() override {
    if (stopping_.exchange(true)) {
      absl::MutexLock lock(&stop_mu_);
      stop_mu_.Await(absl::Condition(this, &ReceiverImpl::Stopped));
      return;
    }
    ::shutdown(data_listener_.get(), SHUT_RDWR);
    if (accept_thread_.joinable()) accept_thread_.join();
    pmtu_responder_.reset();
    connections_.CloseAll();
    if (server_) server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
    if (target_ && !target_->discard()) {
      for (const std::string& name : table_.TakeAllRunFiles()) (void)target_->Remove(name);
    }
    absl::MutexLock lock(&stop_mu_);
    stopped_ = true;
  }

  // ------------------------------------------------------------ control service

  grpc::Status Hello(grpc::ServerContext* context, const proto::HelloRequest*,
                     proto::HelloReply* reply) override {
    if (grpc::Status s = CheckToken(context); !s.ok()) return s;
    reply->set_host(host_);
    reply->set_version(NASPERF_VERSION);
    reply->set_wire_version(kWireVersion);
    reply->set_target(target_->path());
    if (auto free = target_->FreeBytes(); free.ok()) reply->set_free_bytes(*free);
    for (WriteMode mode : target_->write_modes()) reply->add_write_modes(Name(mode));
    reply->set_data_port(data_port_);
    reply->set_max_size(options_.max_size);
    reply->set_min_free(options_.check_free ? options_.min_free : 0);
    if (pmtu_responder_) {
      pmtu_responder_->Admit(PeerHost(*context));  // this caller's path probes get answers
      reply->set_probe_port(pmtu_responder_->port());
    }
    if (auto facts = InterfaceToward(PeerHost(*context)); facts.ok() && facts->mtu) {
      reply->set_mtu(*facts->mtu);
    }
    return grpc::Status::OK;
  }

  grpc::Status OpenTransfer(grpc::ServerContext* context, const proto::OpenTransferRequest* request,
                            proto::OpenTransferReply* reply) override {
    if (grpc::Status s = CheckToken(context); !s.ok()) return s;
    absl::StatusOr<TransferPlan> plan = Plan(*request);
    if (!plan.ok()) {
      Log(LogLevel::kInfo, kComponent, "refused transfer from %s: %s", context->peer(),
          plan.status().message());
      return ToGrpc(plan.status());
    }
    reply->set_transfer_id(plan->id);
    reply->set_ticket(std::string(plan->ticket.begin(), plan->ticket.end()));
    reply->set_data_port(data_port_);
    reply->set_ticket_ttl_s(absl::ToDoubleSeconds(options_.ticket_ttl));
    reply->set_expects_footer(request->sends_footer());
    return grpc::Status::OK;
  }

  grpc::Status PrepareRead(grpc::ServerContext* context, const proto::PrepareReadRequest* request,
                           proto::PrepareReadReply* reply) override {
    if (grpc::Status s = CheckToken(context); !s.ok()) return s;
    Cleanup cleanup = options_.cleanup;
    if (!request->cleanup().empty()) {
      auto asked = Parse<Cleanup>(request->cleanup());
      if (!asked.ok()) return ToGrpc(asked.status());
      cleanup = *asked;
    }
    bool laid_out = false;
    absl::StatusOr<proto::PrepareReadReply> prepared =
        !request->remote_file().empty() && !options_.serve_existing_files
            ? absl::StatusOr<proto::PrepareReadReply>(ExistingFilesNotServed(request->remote_file()))
            : nasperf::PrepareRead(*target_, *request, &laid_out);
    if (!prepared.ok()) {
      Log(LogLevel::kInfo, kComponent, "refused read setup from %s: %s", context->peer(), prepared.status().message());
      return ToGrpc(prepared.status());
    }
    if (laid_out && cleanup != Cleanup::kNever) table_.KeepUntilRunEnds(request->run_id(), prepared->file());
    *reply = std::move(*prepared);
    return grpc::Status::OK;
  }

  grpc::Status FetchReport(grpc::ServerContext* context, const proto::FetchReportRequest* request,
                           proto::TransferReport* reply) override {
    if (grpc::Status s = CheckToken(context); !s.ok()) return s;
    const double wait = BoundedWaitSeconds(request->wait_s(), 60);
    auto report = table_.Fetch(request->transfer_id(), absl::Seconds(wait));
    if (!report.ok()) return ToGrpc(report.status());
    *reply = *report;
    return grpc::Status::OK;
  }

  grpc::Status EndRun(grpc::ServerContext* context, const proto::EndRunRequest* request,
                      proto::EndRunReply* reply) override {
    if (grpc::Status s = CheckToken(context); !s.ok()) return s;
    uint32_t removed = 0;
    for (const std::string& name : table_.TakeRunFiles(request->run_id())) {
      if (target_->Remove(name).ok()) ++removed;
    }
    reply->set_files_removed(removed);
    return grpc::Status::OK;
  }

 private:
  bool Stopped() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(stop_mu_) { return stopped_; }

  grpc::Status CheckToken(grpc::ServerContext* context) {
    return nasperf::CheckToken(*context, options_.token, kComponent);
  }

  absl::StatusOr<TransferPlan> Plan(const proto::OpenTransferRequest& request) {
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
    if (options_.max_size > 0 && request.size() > options_.max_size) {
      return absl::InvalidArgumentError(absl::StrCat(
          "size ", FormatSize(request.size()), " is above this receiver's --max-size ",
          FormatSize(options_.max_size)));
    }
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
    if (!target_->Supports(plan.mode)) {
      return absl::FailedPreconditionError(target_->Unsupported(plan.mode));
    }
    if (!request.sync_policy().empty()) {
      auto sync = ParseSyncPolicy(request.sync_policy());
      if (!sync.ok()) return sync.status();
      plan.sync = *sync;
    }
    plan.cleanup = options_.cleanup;
    if (!request.cleanup().empty()) {
      auto cleanup = Parse<Cleanup>(request.cleanup());
      if (!cleanup.ok()) return cleanup.status();
      plan.cleanup = *cleanup;
    }
    if (!target_->discard() && options_.check_free) {
      auto free = target_->FreeBytes();
      if (!free.ok()) return free.status();
      uint64_t reserved = table_.reserved_bytes();
      uint64_t available = *free > reserved ? *free - reserved : 0;
      if (request.size() > available || available - request.size() < options_.min_free) {
        return absl::ResourceExhaustedError(absl::StrCat(
            "not enough free space on ", target_->path(), ": ", FormatSize(request.size()),
            " requested, ", FormatSize(available), " free (after transfers in flight), --min-free ",
            FormatSize(options_.min_free)));
      }
    }
    return table_.Add(std::move(plan));
  }

  // A read streams a file PrepareRead answered with: it must still be there, as long.
  absl::StatusOr<TransferPlan> PlanRead(TransferPlan plan) {
    const proto::OpenTransferRequest& request = plan.request;
    if (absl::Status s = CheckFileName("read file", request.read_file()); !s.ok()) return s;
    if (!IsLaidOutName(request.read_file()) && !options_.serve_existing_files) {
      return ExistingFilesNotServed(request.read_file());
    }
    if (auto cache = Parse<CacheState>(request.cache()); !cache.ok()) return cache.status();
    auto read_mode = ParseOr(request.read_mode(), ReadMode::kBuffered);
    if (!read_mode.ok()) return read_mode.status();
    plan.read_mode = *read_mode;
    uint64_t length = 0;
    absl::StatusOr<Fd> file = target_->OpenForRead(request.read_file(), &length);
    if (!file.ok()) return file.status();
    // A file system that refuses O_DIRECT says so now, not in a failed row.
    if (plan.read_mode == ReadMode::kDirect) {
      if (absl::Status s = ReadPastCache(file->get(), absl::StrCat(target_->path(), "/", request.read_file())); !s.ok()) {
        return s;
      }
    }
    if (length != request.size()) {
      return absl::InvalidArgumentError(absl::StrCat(request.read_file(), " has ", length, " bytes, not ", request.size()));
    }
    return table_.Add(std::move(plan));
  }

  // ------------------------------------------------------------ data port

  void AcceptLoop() {
    while (!stopping_.load()) {
      sockaddr_storage from{};
      socklen_t from_length = sizeof from;
      int fd = ::accept4(data_listener_.get(), reinterpret_cast<sockaddr*>(&from), &from_length, SOCK_CLOEXEC);
      if (fd < 0) {
        if (errno == EINTR || errno == ECONNABORTED) continue;
        if (stopping_.load()) return;
        if (errno == EMFILE || errno == ENFILE) {
          Log(LogLevel::kError, kComponent, "accept: out of file descriptors");
          std::this_thread::sleep_for(std::chrono::milliseconds(100));  // back off, then retry
          continue;
        }
        Log(LogLevel::kError, kComponent, "accept: %s", strerror(errno));
        return;
      }
      const std::string source = AddressText(from);  // connections are counted per source host
      switch (connections_.Start(fd, source, [this, source](int fd) { Serve(fd, source); })) {
        case ConnectionThreads::Refusal::kNone:
          break;
        case ConnectionThreads::Refusal::kTooMany:
          Refuse(source, "too many connections", &ReceiverCounters::over_limit);
          break;
        case ConnectionThreads::Refusal::kTooManyUnadmitted:
          Refuse(source, "too many connections from this address without a header yet", &ReceiverCounters::over_limit);
          break;
      }
    }
  }

  void Count(uint64_t ReceiverCounters::*field) {
    absl::MutexLock lock(&counters_mu_);
    ++(counters_.*field);
  }

  // Counts the refusal; logs it unless a flood of them is under way.
  void Refuse(const std::string& peer, absl::string_view why,
              uint64_t ReceiverCounters::*counter = &ReceiverCounters::refused) {
    Count(counter);
    uint64_t held = 0;
    if (refusal_log_.Allow(&held)) {
      Log(LogLevel::kWarning, kComponent, "refused data connection from %s: %s%s", peer, why,
          LogThrottle::Held(held));
    }
  }

  // The header phase: the whole header within kHeaderDeadlineNs of accept and a
  // ticket the table accepts, or the connection is refused (nothing exists yet).
  std::optional<TransferPlan> Admit(int fd, const std::string& peer, int64_t accepted_ns) {
    uint8_t header_bytes[kHeaderSize];
    absl::StatusOr<size_t> got =
        ReadFullBy(fd, header_bytes, sizeof header_bytes, accepted_ns + kHeaderDeadlineNs, "read header");
    if (!got.ok()) {
      Refuse(peer, got.status().message(),
             absl::IsDeadlineExceeded(got.status()) ? &ReceiverCounters::timed_out : &ReceiverCounters::refused);
      return std::nullopt;
    }
    if (*got == 0) {
      // The sender's path check connects only to learn the MSS; not an attack.
      Log(LogLevel::kDebug, kComponent, "data connection from %s closed without a header", peer);
      return std::nullopt;
    }
    if (*got < kHeaderSize) {
      Refuse(peer, absl::StrCat("truncated header (", *got, " of ", kHeaderSize, " bytes)"));
      return std::nullopt;
    }
    absl::StatusOr<DataHeader> header = DecodeHeader(header_bytes, sizeof header_bytes);
    if (!header.ok()) {
      Refuse(peer, header.status().message());
      return std::nullopt;
    }
    absl::StatusOr<TransferPlan> claimed = table_.Claim(*header);
    if (!claimed.ok()) {
      Refuse(peer, claimed.status().message());
      DataTrailer refusal;
      refusal.status = TrailerStatus::kFailed;
      refusal.error_code = EACCES;
      SendTrailer(fd, refusal);
      return std::nullopt;
    }
    return std::move(*claimed);
  }

  // The sender's footer right after the payload. Without a usable one the transfer
  // still counts (its bytes are all there); only the verdict cannot name the source.
  std::optional<DataFooter> ReadFooter(int fd, uint64_t id, const std::string& peer) {
    uint8_t bytes[kFooterSize];
    absl::StatusOr<size_t> got = ReadFull(fd, bytes, sizeof bytes, "read footer");
    absl::StatusOr<DataFooter> footer = !got.ok() ? absl::StatusOr<DataFooter>(got.status())
                                        : *got < kFooterSize ? absl::DataLossError("the connection ended before the footer")
                                                             : DecodeFooter(bytes, sizeof bytes);
    if (footer.ok()) return *footer;
    Log(LogLevel::kWarning, kComponent, "transfer %d from %s: no usable footer (%s); its verdict cannot name the "
        "sender's source", id, peer, footer.status().message());
    return std::nullopt;
  }

  void SendTrailer(int fd, const DataTrailer& trailer) {
    auto bytes = EncodeTrailer(trailer);
    (void)WriteAll(fd, bytes.data(), bytes.size(), "send trailer");  // the sender may be gone
  }

  // The payload into a new file (or nowhere, for discard) through the write
  // pipeline; a transfer that did not end ok leaves no file. *file_name: the file
  // made, empty when none.
  PipelineResult ReceiveInto(int fd, const TransferPlan& plan, std::string* file_name) {
    const proto::OpenTransferRequest& request = plan.request;
    std::unique_ptr<BlockWriter> writer;
    PipelineResult result;
    if (!target_->discard()) {
      std::string name = TransferFileName(request.run_id(), request.iteration(), request.stream());
      auto created = target_->Create(name, plan.mode, plan.sync, file_name);
      if (!created.ok()) {
        result.end = PipelineEnd::kFailed;
        result.status = created.status();
        result.error_code = ErrnoOf(created.status());
      } else {
        writer = std::move(*created);
      }
    }
    if (result.end == PipelineEnd::kOk) {
      SetReceiveTimeout(fd, absl::ToDoubleSeconds(options_.idle_timeout));
      SocketSource source(fd);
      PipelineOptions pipeline;
      pipeline.sync_every = plan.sync.kind == SyncPolicy::kEvery ? plan.sync.every_bytes : 0;
      pipeline.checksum = request.checksum();
      pipeline.interval_s = request.interval_s();
      pipeline.cancel = &stopping_;
      result = RunPipeline(source, writer.get(), request.size(), pipeline);
      writer.reset();  // closes the file if the pipeline did not finish it
    }
    if (result.end != PipelineEnd::kOk && !file_name->empty()) {
      if (absl::Status s = target_->Remove(*file_name); !s.ok()) {
        Log(LogLevel::kError, kComponent, "%s", s.message());
      }
    }
    return result;
  }

  void Serve(int fd, const std::string& source) {
    const std::string peer = PeerName(fd);
    const int64_t accepted_ns = MonoNanos();
    const int64_t accepted_wall = WallNanos();
    std::optional<TransferPlan> admitted = Admit(fd, peer, accepted_ns);
    connections_.Admitted(source);
    if (!admitted) return;
    SetReceiveTimeout(fd, 10);  // the payload: a sender silent this long is gone
    const TransferPlan& plan = *admitted;
    const proto::OpenTransferRequest& request = plan.request;

    SessionFacts facts;
    facts.host = host_;
    facts.peer = peer;
    facts.accepted_wall_ns = accepted_wall;
    facts.discard = target_->discard();
    if (auto interface = InterfaceOfSocket(fd); interface.ok()) {
      facts.mtu = interface->mtu;
      facts.link_mbps = interface->link_mbps;
    }
    if (request.link_mbps() > 0) facts.link_mbps = request.link_mbps();  // the sender's --link-speed
    facts.mss = SocketMss(fd);
    proto::TransferReport report = AdmittedRow(plan, facts);
    if (plan.direction == Direction::kRead) {
      ServeReadOn(fd, plan, accepted_ns, facts, report);
    } else {
      ServeWrite(fd, plan, peer, accepted_ns, facts, report);
    }
    const Status status = Parse<Status>(report.status()).value_or(Status::kFailed);
    Count(status == Status::kOk       ? &ReceiverCounters::ok
          : status == Status::kFailed ? &ReceiverCounters::failed
                                      : &ReceiverCounters::aborted);
    if (status == Status::kOk) {
      Log(LogLevel::kDebug, kComponent, "transfer %d %s %s: %s in %.3f s, %.1f MB/s", plan.id,
          plan.direction == Direction::kRead ? "to" : "from", peer, FormatSize(report.bytes()), report.duration_s(),
          report.mb_per_s());
    } else {
      Log(LogLevel::kWarning, kComponent, "transfer %d %s %s %s: %s", plan.id,
          plan.direction == Direction::kRead ? "to" : "from", peer, report.status(), report.error());
    }
    if (options_.reports != nullptr) {
      if (absl::Status s = options_.reports->Submit(report); !s.ok()) {
        Log(LogLevel::kError, kComponent, "cannot keep the report of transfer %d: %s", plan.id,
            s.message());
      }
    }
    table_.Complete(plan.id, std::move(report));
  }

  // A write: the payload into the target, the footer, the trailer, cleanup, figures.
  void ServeWrite(int fd, const TransferPlan& plan, const std::string& peer, int64_t accepted_ns,
                  const SessionFacts& facts, proto::TransferReport& report) {
    const proto::OpenTransferRequest& request = plan.request;
    if (request.window_bytes() > 0) SetSocketBuffer(fd, SO_RCVBUF, request.window_bytes());
    std::string file_name;
    PipelineResult result = ReceiveInto(fd, plan, &file_name);
    std::optional<DataFooter> footer;
    if (result.end == PipelineEnd::kOk && request.sends_footer()) footer = ReadFooter(fd, plan.id, peer);
    SendTrailer(fd, TrailerFor(result));
    if (result.end == PipelineEnd::kFailed) DrainBriefly(fd);

    if (result.end == PipelineEnd::kOk && !file_name.empty()) {
      if (plan.cleanup == Cleanup::kEach) {
        (void)target_->Remove(file_name);
      } else if (plan.cleanup == Cleanup::kEnd) {
        table_.KeepUntilRunEnds(request.run_id(), file_name);
      }
    }
    AddFigures(result, accepted_ns, facts.link_mbps, footer, &report);
  }

  // A read: the file to the client (read_session.h); this thread's CPU is the row's.
  void ServeReadOn(int fd, const TransferPlan& plan, int64_t accepted_ns, const SessionFacts& facts,
                   proto::TransferReport& report) {
    const proto::OpenTransferRequest& request = plan.request;
    if (request.window_bytes() > 0) SetSocketBuffer(fd, SO_SNDBUF, request.window_bytes());
    // A client that stops taking bytes is gone after --idle-timeout, as a silent sender is.
    SetSendTimeout(fd, absl::ToDoubleSeconds(options_.idle_timeout));
    const CpuTime cpu_start = ThreadCpuTime();
    ServedRead served = ServeRead(fd, plan, *target_, &stopping_);
    const CpuTime cpu = ThreadCpuTime() - cpu_start;
    if (!served.push.trailer) {
      if (ErrnoOf(served.push.status) == EAGAIN) {
        served.push.status = absl::DeadlineExceededError("the client took no data within --idle-timeout");
      }
      // Megabytes may still wait in the socket for a client that reads nothing: reset
      // the connection at close instead of holding them (and the client) until it does.
      const linger reset{1, 0};
      ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &reset, sizeof reset);
    }
    report.clear_write_mode();
    report.clear_sync_policy();
    report.set_cache(request.cache());
    report.set_read_mode(Name(plan.read_mode));
    if (served.resident_pct >= 0) report.set_cache_resident_pct(served.resident_pct);
    AddReadAgentFigures(served.push, accepted_ns, request.size(), request.checksum(), facts.link_mbps, &report);
    report.set_cpu_user_s(cpu.user_s);
    report.set_cpu_sys_s(cpu.sys_s);
  }

  // After a failure mid-stream the sender is still sending; reading (and dropping)
  // for a moment lets it finish its writes and read the trailer instead of meeting a
  // reset that would throw the trailer away.
  void DrainBriefly(int fd) {
    ::shutdown(fd, SHUT_WR);
    SetReceiveTimeout(fd, 0.25);
    static thread_local uint8_t sink[1 << 16];
    int64_t deadline = MonoNanos() + 2'000'000'000LL;
    while (MonoNanos() < deadline && !stopping_.load()) {
      ssize_t n = ::recv(fd, sink, sizeof sink, 0);
      if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) break;
    }
  }

  const ReceiverOptions options_;
  const std::string host_;
  std::unique_ptr<Target> target_;
  TransferTable table_;
  Fd data_listener_;
  uint16_t data_port_ = 0;
  std::unique_ptr<PmtuResponder> pmtu_responder_;
  uint16_t control_port_ = 0;
  ServerSecurity security_;
  std::unique_ptr<grpc::Server> server_;
  std::thread accept_thread_;
  std::atomic<bool> stopping_{false};

  ConnectionThreads connections_{kMaxConnections, kMaxUnadmittedPerSource};
  LogThrottle refusal_log_{10, 10.0};
  absl::Mutex stop_mu_;
  bool stopped_ ABSL_GUARDED_BY(stop_mu_) = false;

  mutable absl::Mutex counters_mu_;
  ReceiverCounters counters_ ABSL_GUARDED_BY(counters_mu_);
};

}  // namespace

absl::StatusOr<std::unique_ptr<Receiver>> Receiver::Start(const ReceiverOptions& options) {
  if (options.token.empty()) return absl::InvalidArgumentError("receiver needs a token");
  auto receiver = std::make_unique<ReceiverImpl>(options);
  if (absl::Status s = receiver->Init(); !s.ok()) return s;
  return std::unique_ptr<Receiver>(std::move(receiver));
}

}  // namespace nasperf
