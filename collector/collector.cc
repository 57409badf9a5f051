#include "collector/collector.h"

#include <algorithm>
#include <map>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "collector/csv_sink.h"
#include "common/log.h"
#include "common/policy.h"
#include "common/stats.h"
#include "proto/nasperf.grpc.pb.h"
#include "wire/validate.h"

namespace nasperf {
namespace {

constexpr char kComponent[] = "collector";
// Reports stored at once (docs/DESIGN.md §5). A report past them waits up to
// kBusyWait (less when its deadline is nearer) for a turn, then gets UNAVAILABLE and
// its reporter sends it again later, as after an outage (collector/spool.h).
constexpr int kMaxConcurrentReports = 4;
constexpr absl::Duration kBusyWait = absl::Seconds(5);
// Calls handled at once (gRPC threads): each may hold a parsed request of up to
// kMaxReportBytes (some 70 MB at worst: empty unknown fields from a token holder,
// or from anyone on a --plaintext collector), so this bounds the collector's memory.
// Past it a report gets RESOURCE_EXHAUSTED, which a reporter takes for "too large".
constexpr int kMaxReportThreads = 64;

class CollectorImpl final : public Collector, public proto::Collector::Service {
 public:
  explicit CollectorImpl(const CollectorOptions& options) : options_(options) {}
  ~CollectorImpl() override { Shutdown(); }

  absl::Status Init() {
    auto sink = CsvSink::Open(options_.out_dir, options_.max_store_bytes);
    if (!sink.ok()) return sink.status();
    sink_ = std::move(*sink);
    if (!sink_->open_info().set_aside.empty()) {
      Log(LogLevel::kWarning, kComponent, "a torn last line from an earlier crash was moved to %s",
          sink_->open_info().set_aside.front());
    }
    auto security = ServerCredentials(options_.tls);
    if (!security.ok()) return security.status();
    security_ = std::move(*security);
    RequireTokenFirst(&security_, options_.token, kComponent);
    grpc::ServerBuilder builder;
    // Nothing larger is a report (wire/validate.h): refused before it is parsed.
    // Threads: reports wait up to kBusyWait for one of kMaxConcurrentReports turns;
    // many reporters at once wait in line, and past the threads a report is refused
    // (RESOURCE_EXHAUSTED) rather than parsed. Memory: the transports' buffers.
    ConfigureServer(&builder,
                    ServerLimits{"nasperf-collector", kMaxReportBytes, kMaxReportThreads, int64_t{512} << 20});
    std::string host = options_.listen.host.empty() ? "0.0.0.0" : options_.listen.host;
    int selected = 0;
    builder.AddListeningPort(FormatHostPort({host, options_.listen.port}), security_.credentials, &selected);
    builder.RegisterService(this);
    server_ = builder.BuildAndStart();
    if (server_ == nullptr || selected == 0) {
      return absl::UnavailableError(
          absl::StrCat("cannot listen on ", FormatHostPort({host, options_.listen.port}), " (port in use?)"));
    }
    port_ = static_cast<uint16_t>(selected);
    return absl::OkStatus();
  }

  uint16_t port() const override { return port_; }
  const ServerSecurity& security() const override { return security_; }
  std::string transfers_path() const override { return sink_->transfers_path(); }
  size_t rows_found() const { return sink_->open_info().rows_found; }
  CollectorCounters counters() const override {
    absl::MutexLock lock(&mu_);
    return counters_;
  }
  void Shutdown() override {
    if (server_) server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  }

  grpc::Status Report(grpc::ServerContext* context, const proto::TransferReport* report,
                      proto::ReportAck* ack) override {
    if (grpc::Status s = CheckToken(*context, options_.token, kComponent); !s.ok()) {
      Count(&CollectorCounters::refused);
      return s;
    }
    if (absl::Status s = CheckReport(*report); !s.ok()) {
      Count(&CollectorCounters::refused);
      if (options_.live != nullptr) options_.live->CountReport(LiveBoard::Outcome::kRefused);
      Log(LogLevel::kWarning, kComponent, "refused a report from %s: %s", context->peer(), s.message());
      return ToGrpc(s);
    }
    if (!TakeTurn(*context)) {
      uint64_t held = 0;
      if (busy_.Allow(&held)) {
        Log(LogLevel::kWarning, kComponent, "busy: %d reports being stored; %s sends again later%s",
            kMaxConcurrentReports, context->peer(), LogThrottle::Held(held));
      }
      return grpc::Status(grpc::StatusCode::UNAVAILABLE,
                          absl::StrCat("collector busy storing ", kMaxConcurrentReports, " reports; send again later"));
    }
    bool duplicate = false;
    absl::Status stored = sink_->Append(*report, &duplicate);
    EndTurn();
    if (absl::Status s = stored; !s.ok()) {
      uint64_t held = 0;
      if (store_errors_.Allow(&held)) Log(LogLevel::kError, kComponent, "%s%s", s.message(), LogThrottle::Held(held));
      return grpc::Status(grpc::StatusCode::UNAVAILABLE, std::string(s.message()));
    }
    ack->set_duplicate(duplicate);
    Count(duplicate ? &CollectorCounters::duplicates : &CollectorCounters::rows);
    if (!duplicate) PrintRow(*report);
    if (options_.live != nullptr) {
      options_.live->CountReport(duplicate ? LiveBoard::Outcome::kDuplicate : LiveBoard::Outcome::kStored);
      if (!duplicate) options_.live->AddRow(*report);
    }
    return grpc::Status::OK;
  }

  grpc::Status Live(grpc::ServerContext* context, const proto::LiveUpdate* update, proto::LiveAck*) override {
    if (grpc::Status s = CheckToken(*context, options_.token, kComponent); !s.ok()) return s;
    if (absl::Status s = CheckLiveUpdate(*update); !s.ok()) return ToGrpc(s);
    if (options_.live != nullptr) options_.live->Update(*update);
    return grpc::Status::OK;
  }

 private:
  // A turn to store a report: false when none came free in time.
  bool TakeTurn(const grpc::ServerContext& context) {
    absl::Duration wait = std::min(kBusyWait, absl::FromChrono(context.deadline() - std::chrono::system_clock::now()));
    auto room = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(turns_mu_) { return storing_ < kMaxConcurrentReports; };
    const bool got = turns_mu_.LockWhenWithTimeout(absl::Condition(&room), wait);
    if (got) ++storing_;
    turns_mu_.Unlock();
    return got;
  }
  void EndTurn() {
    absl::MutexLock lock(&turns_mu_);
    --storing_;
  }

  void Count(uint64_t CollectorCounters::*field) {
    absl::MutexLock lock(&mu_);
    ++(counters_.*field);
  }

  void PrintRow(const proto::TransferReport& r) {
    if (options_.console == nullptr) return;
    absl::MutexLock lock(&mu_);
    std::string summary;
    if (r.status() == Name(Status::kOk) && !r.warmup() && r.has_mb_per_s()) {
      // Kept sorted on insert: the running median costs one insertion per row, not a
      // copy and sort of every rate the label has seen.
      auto& rates = rates_[{r.label(), r.role()}];
      rates.insert(std::upper_bound(rates.begin(), rates.end(), r.mb_per_s()), r.mb_per_s());
      summary = absl::StrFormat("  [%s %s: n=%d median %.1f]", r.label().empty() ? "-" : r.label(), r.role(),
                                rates.size(), PercentileSorted(rates, 0.5));
    }
    std::string iteration = r.warmup() ? absl::StrCat("w", r.iteration()) : absl::StrCat(r.iteration());
    std::string rate = r.has_mb_per_s() ? absl::StrFormat("%.1f MB/s", r.mb_per_s()) : "-";
    std::string status = r.status() == Name(Status::kOk) ? "ok" : absl::StrCat(r.status(), ": ", r.error());
    // Host, label and error come from peers: no control characters reach the terminal.
    std::fprintf(options_.console, "%-8s %-16s %-14s %5s/%-2d %12s  %s%s\n", r.role().c_str(),
                 TerminalSafe(r.host()).c_str(), r.label().empty() ? "-" : TerminalSafe(r.label()).c_str(),
                 iteration.c_str(), r.stream(), rate.c_str(), TerminalSafe(status).c_str(),
                 TerminalSafe(summary).c_str());
    std::fflush(options_.console);
  }

  const CollectorOptions options_;
  LogThrottle store_errors_{5, 60.0};
  LogThrottle busy_{5, 60.0};
  absl::Mutex turns_mu_;
  int storing_ ABSL_GUARDED_BY(turns_mu_) = 0;  // reports in sink_->Append, at most kMaxConcurrentReports
  std::unique_ptr<CsvSink> sink_;
  std::unique_ptr<grpc::Server> server_;
  uint16_t port_ = 0;
  ServerSecurity security_;
  mutable absl::Mutex mu_;
  CollectorCounters counters_ ABSL_GUARDED_BY(mu_);
  // ok, measured MB/s per (label, role), ascending
  std::map<std::pair<std::string, std::string>, std::vector<double>> rates_ ABSL_GUARDED_BY(mu_);
};

}  // namespace

absl::StatusOr<std::unique_ptr<Collector>> Collector::Start(const CollectorOptions& options) {
  if (options.token.empty()) return absl::InvalidArgumentError("collector needs a token");
  auto collector = std::make_unique<CollectorImpl>(options);
  if (absl::Status s = collector->Init(); !s.ok()) return s;
  if (options.console != nullptr) {
    std::fprintf(options.console, "nasperf collector: port %u, writing %s (%zu rows already there)\n",
                 collector->port(), collector->transfers_path().c_str(), collector->rows_found());
    std::fflush(options.console);
  }
  return std::unique_ptr<Collector>(std::move(collector));
}

}  // namespace nasperf
