#include "receiver/receiver.h"

#include <atomic>
#include <chrono>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/log.h"
#include "datapath/target.h"
#include "grpcpp/grpcpp.h"
#include "measure/netinfo.h"
#include "measure/pmtu.h"
#include "receiver/control_service.h"
#include "receiver/data_listener.h"
#include "receiver/transfer_table.h"
#include "wire/grpc_auth.h"

namespace nasperf {

namespace {

constexpr char kComponent[] = "receiver";

// Puts the two halves together: the target and the ticket table they share, the
// data listener, the path-MTU responder beside it and the gRPC server that carries
// the control service (and any extra service, e.g. the lab's Agent).
class ReceiverImpl final : public Receiver {
 public:
  explicit ReceiverImpl(const ReceiverOptions& options)
      : options_(options), table_(options.ticket_ttl, options.max_transfers) {}

  ~ReceiverImpl() override { Shutdown(); }

  absl::Status Init() {
    auto target = Target::Open(options_.target);
    if (!target.ok()) return target.status();
    target_ = std::move(*target);
    const std::string host = LocalHostName();

    HostPort data{options_.listen.host, options_.data_port};
    if (data.port == 0 && options_.listen.port != 0) {
      data.port = static_cast<uint16_t>(options_.listen.port + 1);
    }
    auto listener = ListenTcp(data);
    if (!listener.ok()) return listener.status();
    auto port = LocalPort(listener->get());
    if (!port.ok()) return port.status();
    data_port_ = *port;
    // Path MTU probes are a convenience: a receiver without them still serves.
    if (auto responder = PmtuResponder::StartBesides(listener->get()); responder.ok()) {
      pmtu_responder_ = std::move(*responder);
    } else {
      Log(LogLevel::kWarning, kComponent, "no path MTU probes: %s", responder.status().message());
    }
    data_ = std::make_unique<DataListener>(options_, host, *target_, table_, std::move(*listener));
    control_ = std::make_unique<ControlService>(options_, host, *target_, table_, data_port_, pmtu_responder_.get());

    grpc::ServerBuilder builder;
    ConfigureServer(&builder, Limits());
    std::string listen_host = options_.listen.host.empty() ? "0.0.0.0" : options_.listen.host;
    int selected = 0;
    auto security = ServerCredentials(options_.tls);
    if (!security.ok()) return security.status();
    security_ = std::move(*security);
    RequireTokenFirst(&security_, options_.token, kComponent);
    builder.AddListeningPort(FormatHostPort({listen_host, options_.listen.port}), security_.credentials, &selected);
    builder.RegisterService(control_.get());
    for (grpc::Service* service : options_.extra_services) builder.RegisterService(service);
    server_ = builder.BuildAndStart();
    if (server_ == nullptr || selected == 0) {
      return absl::UnavailableError(absl::StrCat(
          "cannot listen on ", FormatHostPort({listen_host, options_.listen.port}), " for control (port in use?)"));
    }
    control_port_ = static_cast<uint16_t>(selected);
    data_->Start();
    return absl::OkStatus();
  }

  uint16_t control_port() const override { return control_port_; }
  const ServerSecurity& security() const override { return security_; }
  uint16_t data_port() const override { return data_port_; }
  ReceiverCounters counters() const override { return data_ ? data_->counters() : ReceiverCounters{}; }

  void Shutdown() override {
    if (stopping_.exchange(true)) {
      absl::MutexLock lock(&stop_mu_);
      stop_mu_.Await(absl::Condition(this, &ReceiverImpl::Stopped));
      return;
    }
    if (data_) data_->Stop();
    pmtu_responder_.reset();
    if (server_) server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
    if (target_ && !target_->discard()) {
      for (const std::string& name : table_.TakeAllRunFiles()) (void)target_->Remove(name);
    }
    absl::MutexLock lock(&stop_mu_);
    stopped_ = true;
  }

 private:
  bool Stopped() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(stop_mu_) { return stopped_; }

  // Small requests (kMaxControlRequestBytes). Threads: every transfer may hold one in
  // a FetchReport wait, and an agent's controller holds a few more (WaitJob long
  // polls, Observe, the calls of its jobs' senders); past them a call gets
  // RESOURCE_EXHAUSTED at once. Memory: the transports' buffers, where gRPC holds a
  // request whole before it checks its size (a plaintext flood of 16 MiB requests
  // reached the quota and stayed there); requests parsed by handlers are bounded by
  // the threads instead.
  ServerLimits Limits() const {
    return ServerLimits{"nasperf-control", kMaxControlRequestBytes, options_.max_transfers + 64, int64_t{64} << 20};
  }

  const ReceiverOptions options_;
  std::unique_ptr<Target> target_;
  TransferTable table_;
  uint16_t data_port_ = 0;
  std::unique_ptr<PmtuResponder> pmtu_responder_;
  std::unique_ptr<DataListener> data_;
  std::unique_ptr<ControlService> control_;
  uint16_t control_port_ = 0;
  ServerSecurity security_;
  std::unique_ptr<grpc::Server> server_;
  std::atomic<bool> stopping_{false};
  absl::Mutex stop_mu_;
  bool stopped_ ABSL_GUARDED_BY(stop_mu_) = false;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Receiver>> Receiver::Start(const ReceiverOptions& options) {
  if (options.token.empty()) return absl::InvalidArgumentError("receiver needs a token");
  auto receiver = std::make_unique<ReceiverImpl>(options);
  if (absl::Status s = receiver->Init(); !s.ok()) return s;
  return std::unique_ptr<Receiver>(std::move(receiver));
}

}  // namespace nasperf
