#include "lab/agent.h"

#include <sched.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <map>
#include <optional>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "collector/collector_client.h"
#include "collector/live_feed.h"
#include "collector/spool.h"
#include "common/clock.h"
#include "common/log.h"
#include "common/policy.h"
#include "lab/observations.h"
#include "proto/nasperf.grpc.pb.h"
#include "sender/sender.h"
#include "transport/path_check.h"
#include "transport/registry.h"
#include "transport/run_spec.h"
#include "wire/columns.h"
#include "wire/receiver_client.h"
#include "wire/validate.h"

namespace nasperf {
namespace {

constexpr char kComponent[] = "agent";
constexpr absl::Duration kBarrierTimeout = absl::Seconds(120);
// How often the time limits are checked (AgentLimits: a job waiting for Go, unread rows).
constexpr absl::Duration kSweepEvery = absl::Seconds(1);
// A spool no job uses any more ends once its reports are delivered; one whose
// collector stays away ends after kSpoolLinger, or at once when more than
// kMaxIdleSpools wait so (its files stay on disk: the next spool for that collector,
// or `nasperf collector flush`, delivers them).
constexpr absl::Duration kSpoolLinger = absl::Minutes(10);
constexpr int kMaxIdleSpools = 8;

struct Job {
  proto::SenderJob request;           // as StartSender took it
  std::string spool_key;              // AgentImpl::spools_; empty: no collector
  std::optional<HostPort> collector;  // where its rows and live updates go; set before its thread starts
  std::atomic<bool> cancel{false};
  absl::Mutex mu;
  int ready ABSL_GUARDED_BY(mu) = 0;
  int64_t go_at_ns ABSL_GUARDED_BY(mu) = 0;
  bool done ABSL_GUARDED_BY(mu) = false;
  std::string error ABSL_GUARDED_BY(mu);
  std::vector<proto::TransferReport> reports ABSL_GUARDED_BY(mu);
  std::thread thread;

  void Cancel() {
    cancel.store(true);
    absl::MutexLock wake(&mu);  // conditions are re-evaluated when mu is released
  }

  // The barrier, on each stream's thread: count in, wait for Go, then sleep until
  // the start instant (the last 2 ms spinning, for a tight start across hosts).
  absl::Status WaitForStart() {
    int64_t go = 0;
    {
      absl::MutexLock lock(&mu);
      ++ready;
      auto released = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) { return go_at_ns != 0 || cancel.load(); };
      if (!mu.AwaitWithTimeout(absl::Condition(&released), kBarrierTimeout)) {
        return absl::DeadlineExceededError("no start signal from the lab controller within 120 s");
      }
      if (cancel.load()) return absl::CancelledError("aborted by the lab controller");
      go = go_at_ns;
      int64_t sleep_ns = go - WallNanos() - 2'000'000;
      if (sleep_ns > 0) {
        auto cancelled = [this] { return cancel.load(); };
        mu.AwaitWithTimeout(absl::Condition(&cancelled), absl::Nanoseconds(sleep_ns));
        if (cancel.load()) return absl::CancelledError("aborted by the lab controller");
      }
    }
    while (WallNanos() < go) sched_yield();
    return absl::OkStatus();
  }
};

// Keeps a job's rows for WaitJob and passes them on toward the collector.
class JobSink : public ReportSink {
 public:
  JobSink(Job* job, ReportSink* onward) : job_(job), onward_(onward) {}
  absl::Status Submit(const proto::TransferReport& report) override {
    {
      absl::MutexLock lock(&job_->mu);
      job_->reports.push_back(report);
    }
    return onward_ != nullptr ? onward_->Submit(report) : absl::OkStatus();
  }

 private:
  Job* job_;
  ReportSink* onward_;
};

class AgentImpl final : public AgentService, public proto::Agent::Service {
 public:
  explicit AgentImpl(const AgentOptions& options)
      : options_(options), observations_(options.target), ledger_(options.limits) {
    null_console_ = std::fopen("/dev/null", "w");
    sweeper_ = std::thread([this] { SweepLoop(); });
  }
  ~AgentImpl() override {
    Shutdown();
    if (null_console_ != nullptr) std::fclose(null_console_);
  }

  grpc::Service* service() override { return this; }

  void Shutdown() override {
    std::vector<std::shared_ptr<Job>> jobs;
    {
      absl::MutexLock lock(&mu_);
      if (shut_down_) return;
      shut_down_ = true;
      for (auto& [id, job] : jobs_) jobs.push_back(job);
      jobs_.clear();
    }
    if (sweeper_.joinable()) sweeper_.join();
    observations_.Shutdown();
    for (auto& job : jobs) job->Cancel();
    for (auto& job : jobs) {
      if (job->thread.joinable()) job->thread.join();
    }
    absl::MutexLock lock(&mu_);
    for (auto& [address, spool] : spools_) {
      size_t left = spool.sink->Drain(absl::Seconds(10));
      if (left > 0) {
        Log(LogLevel::kWarning, kComponent, "%d reports still spooled in %s for collector %s", left, spool.sink->dir(),
            address);
      }
    }
  }

  grpc::Status Observe(grpc::ServerContext* context, const proto::ObserveRequest* request,
                       proto::ObserveReply* reply) override {
    if (grpc::Status s = CheckToken(*context, options_.token, kComponent); !s.ok()) return s;
    if (absl::Status s = CheckPlainText("label", request->label(), 200); !s.ok()) return ToGrpc(s);
    if (!std::isfinite(request->interval_s()) || !std::isfinite(request->idle_s())) {
      return ToGrpc(absl::InvalidArgumentError("observe: interval or idle time is not a number"));
    }
    if (!request->run_id().empty()) {
      if (absl::Status s = CheckRunId(request->run_id()); !s.ok()) return ToGrpc(s);
    }
    absl::StatusOr<proto::ObserveReply> started = observations_.Start(*request);
    if (!started.ok()) return ToGrpc(started.status());
    *reply = *std::move(started);
    return grpc::Status::OK;
  }

  grpc::Status StopObserving(grpc::ServerContext* context, const proto::StopObservingRequest* request,
                             proto::JobState* reply) override {
    if (grpc::Status s = CheckToken(*context, options_.token, kComponent); !s.ok()) return s;
    return ToGrpc(observations_.Stop(request->observation_id(), request->first_report(), kMaxMessageBytes / 2, reply));
  }

  grpc::Status StartSender(grpc::ServerContext* context, const proto::SenderJob* request,
                           proto::StartSenderReply*) override {
    if (grpc::Status s = CheckToken(*context, options_.token, kComponent); !s.ok()) return s;
    // The collector first: what is only parsed is checked before MakeOptions opens and
    // reads the job's files.
    std::optional<HostPort> collector;
    if (!request->collector().empty()) {
      auto address = ParseHostPort(request->collector(), kCollectorPort);
      if (!address.ok()) return ToGrpc(address.status());
      if (address->host.empty()) address->host = PeerHost(*context);  // ":PORT": where the controller runs
      collector = *address;
    }
    RunContext run_context;  // the job's placement; its hooks below, once the job exists
    auto options = MakeOptions(*request, run_context);
    if (!options.ok()) return ToGrpc(options.status());
    auto job = std::make_shared<Job>();
    job->request = *request;
    // Counted first: a refused job makes nothing (no thread, no payload pool, no spool).
    absl::MutexLock lock(&mu_);
    if (shut_down_) return ToGrpc(absl::UnavailableError("the agent is stopping"));
    if (absl::Status admitted = ledger_.Admit(request->job_id(), request->spec().streams(), absl::Now());
        !admitted.ok()) {
      if (absl::IsResourceExhausted(admitted)) RefusalLog(*context, admitted);
      return ToGrpc(admitted);
    }
    ReportSink* onward = nullptr;
    if (collector) {
      auto spool = AcquireSpool(*collector, request->collector_fingerprint(), job.get());
      if (!spool.ok()) {
        ledger_.Remove(request->job_id());
        return ToGrpc(spool.status());
      }
      onward = *spool;
    }
    job->collector = collector;
    jobs_[request->job_id()] = job;
    Job* raw = job.get();
    run_context.cancel = &raw->cancel;
    run_context.before_first_byte = [raw] { return raw->WaitForStart(); };
    job->thread = std::thread(
        [this, raw, options = *options, run_context, onward] { RunJob(raw, options, run_context, onward); });
    return grpc::Status::OK;
  }

  grpc::Status Go(grpc::ServerContext* context, const proto::GoRequest* request, proto::GoReply*) override {
    if (grpc::Status s = CheckToken(*context, options_.token, kComponent); !s.ok()) return s;
    std::shared_ptr<Job> job = Find(request->job_id());
    if (job == nullptr) return ToGrpc(absl::NotFoundError(absl::StrCat("no job ", request->job_id())));
    // A start far ahead would hold the job's streams (threads, payload pools) that long.
    if (absl::Status near =
            CheckGoInstant(absl::FromUnixNanos(request->start_at_unix_ns()), absl::Now(), options_.limits);
        !near.ok()) {
      return ToGrpc(near);
    }
    {
      absl::MutexLock lock(&mu_);
      ledger_.Released(request->job_id());
    }
    absl::MutexLock lock(&job->mu);
    job->go_at_ns = request->start_at_unix_ns();
    return grpc::Status::OK;
  }

  grpc::Status WaitJob(grpc::ServerContext* context, const proto::WaitJobRequest* request,
                       proto::JobState* reply) override {
    if (grpc::Status s = CheckToken(*context, options_.token, kComponent); !s.ok()) return s;
    std::shared_ptr<Job> job = Find(request->job_id());
    if (job == nullptr) return ToGrpc(absl::NotFoundError(absl::StrCat("no job ", request->job_id())));
    const double wait = BoundedWaitSeconds(request->wait_s(), 30);
    const bool until_ready = request->until_ready();
    const int streams = job->request.spec().streams();
    bool done = false;
    {
      absl::MutexLock lock(&job->mu);
      auto reached = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(job->mu) {
        return job->done || (until_ready && job->ready >= streams);
      };
      job->mu.AwaitWithTimeout(absl::Condition(&reached), absl::Seconds(wait));
      reply->set_streams(streams);
      reply->set_ready(job->ready);
      reply->set_done(job->done);
      done = job->done;
      if (done) {
        reply->set_error(job->error);
        done = PageOfRows(job->reports, request->first_report(), kMaxMessageBytes / 2, reply);
      }
    }
    if (done) {  // all handed over: forget the job; whoever removes it joins its thread
      bool removed = false;
      {
        absl::MutexLock lock(&mu_);
        auto it = jobs_.find(request->job_id());
        if (it != jobs_.end() && it->second == job) {
          ForgetLocked(*job);
          jobs_.erase(it);
          removed = true;
        }
      }
      if (removed && job->thread.joinable()) job->thread.join();
    }
    return grpc::Status::OK;
  }

  grpc::Status Abort(grpc::ServerContext* context, const proto::AbortRequest* request,
                     proto::AbortReply* reply) override {
    if (grpc::Status s = CheckToken(*context, options_.token, kComponent); !s.ok()) return s;
    std::vector<std::shared_ptr<Job>> jobs;
    {
      absl::MutexLock lock(&mu_);
      for (auto& [id, job] : jobs_) {
        if (request->run_id().empty() || job->request.spec().run_id() == request->run_id()) jobs.push_back(job);
      }
    }
    for (auto& job : jobs) job->Cancel();
    reply->set_jobs(static_cast<uint32_t>(jobs.size()));
    if (!jobs.empty())
      Log(LogLevel::kInfo, kComponent, "aborting %d job(s) on request of %s", jobs.size(), context->peer());
    return grpc::Status::OK;
  }

  grpc::Status CheckPath(grpc::ServerContext* context, const proto::CheckPathRequest* request,
                         proto::CheckPathReply* reply) override {
    if (grpc::Status s = CheckToken(*context, options_.token, kComponent); !s.ok()) return s;
    if (!request->file().empty()) {
      auto file = OpenAllowedSource(request->file(), options_.allowed_sources);
      if (!file.ok()) return ToGrpc(file.status());
      reply->set_file_size(file->size);
    }
    if (!request->local_dir().empty()) {
      auto dir = OpenAllowedPath(request->local_dir(), options_.allowed_paths);
      if (!dir.ok()) return ToGrpc(dir.status());
      if (request->to().empty()) return grpc::Status::OK;  // no receiver: the directory is the far end
    }
    auto to = ParseHostPort(request->to(), kAgentPort);
    if (!to.ok()) return ToGrpc(to.status());
    if (absl::Status s = CheckFingerprint("receiver_fingerprint", request->receiver_fingerprint()); !s.ok()) {
      return ToGrpc(s);
    }
    ReceiverClient client(*to, options_.token, options_.trust, request->receiver_fingerprint());
    auto hello = client.Hello();
    if (!hello.ok()) return ToGrpc(hello.status());
    auto facts = nasperf::CheckPath(*to, *hello, request->link_mbps());
    if (!facts.ok()) return ToGrpc(facts.status());
    reply->set_line(PathLine(*facts));
    for (const std::string& warning : PathWarnings(*facts)) reply->add_warnings(warning);
    if (facts->mtu) reply->set_mtu(*facts->mtu);
    if (facts->peer_mtu) reply->set_peer_mtu(*facts->peer_mtu);
    if (facts->path_mtu) reply->set_path_mtu(*facts->path_mtu);
    return grpc::Status::OK;
  }

 private:
  std::shared_ptr<Job> Find(const std::string& id) {
    absl::MutexLock lock(&mu_);
    auto it = jobs_.find(id);
    return it == jobs_.end() ? nullptr : it->second;
  }

  // The job's run, checked as a peer's (MakeRunOptions: files only beneath
  // --allow-source, a directory of this host only beneath --allow-path, the token and trust this agent's); its
  // placement in the lab (iteration, streams, hosts, copy) goes into `placement`.
  absl::StatusOr<SenderOptions> MakeOptions(const proto::SenderJob& job, RunContext& placement) const {
    if (job.job_id().empty() || job.job_id().size() > 200) return absl::InvalidArgumentError("bad job id");
    if (job.first_stream() < 0 || job.first_stream() > 100000) return absl::InvalidArgumentError("bad first stream");
    if (!job.has_spec()) return absl::InvalidArgumentError("give a size or a file");  // an older controller
    if (absl::Status s = CheckFingerprint("collector_fingerprint", job.collector_fingerprint()); !s.ok()) return s;
    // The placement's checks before MakeRunOptions, which opens and reads the job's files.
    if (absl::Status s = SetLabCopy(job, placement); !s.ok()) return s;
    std::string field;
    LocalPolicy policy{Origin::kPeer, &options_.allowed_sources, options_.token, options_.trust};
    policy.allowed_paths = &options_.allowed_paths;
    auto o = MakeRunOptions(job.spec(), policy, &field);
    if (!o.ok()) return FieldRefusal(field, o.status());
    o->runs = job.warmup() ? 0 : 1;  // the controller loops the iterations
    o->warmup = job.warmup() ? 1 : 0;
    o->pause = absl::ZeroDuration();
    placement.iteration_offset = job.warmup() ? job.iteration() : job.iteration() - 1;
    placement.first_stream = job.first_stream();
    placement.host_name = job.host_name();
    placement.receiver_name = job.receiver_name();
    return o;
  }

  // "FIELD: why", unless the line names its field already.
  static absl::Status FieldRefusal(const std::string& field, const absl::Status& refused) {
    if (field.empty() || absl::StartsWith(refused.message(), absl::StrCat(field, ":"))) return refused;
    return absl::Status(refused.code(), absl::StrCat(field, ": ", refused.message()));
  }

  // The lab's place for the job's live updates: checked as a live update is.
  static absl::Status SetLabCopy(const proto::SenderJob& job, RunContext& placement) {
    if (job.lab_copies() == 0 && job.lab_copy() == 0) return absl::OkStatus();
    if (job.lab_copies() < 1 || job.lab_copies() > kMaxLiveCopies || job.lab_copy() < 1 ||
        job.lab_copy() > job.lab_copies() || !std::isfinite(job.lab_left_after_s()) ||
        job.lab_left_after_s() > kMaxFigure) {
      return absl::InvalidArgumentError("the job's lab copy, copies or time left are not a loop's");
    }
    placement.lab_copy = job.lab_copy();
    placement.lab_copies = job.lab_copies();
    placement.lab_left_after_s = job.lab_left_after_s();
    return absl::OkStatus();
  }

  // One spool per collector and key, made for the first job that reports there and
  // shared by the jobs after it; `job` holds it until ForgetLocked. MakeOptions
  // checked the fingerprint.
  absl::StatusOr<ReportSink*> AcquireSpool(const HostPort& address, const std::string& fingerprint, Job* job)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    const std::string key = absl::StrCat(FormatHostPort(address), " ", fingerprint);
    auto it = spools_.find(key);
    if (it == spools_.end()) {
      auto sink = SpoolingSink::Start(
          std::make_unique<CollectorClient>(address, options_.token, options_.trust, fingerprint), options_.spool_root);
      if (!sink.ok()) return sink.status();
      it = spools_.emplace(key, SharedSpool{std::move(*sink), 0, absl::InfinitePast()}).first;
    }
    ++it->second.jobs;
    job->spool_key = key;
    return it->second.sink.get();
  }

  // The job leaves the books: its spool loses a user (SweepLoop ends it once idle).
  void ForgetLocked(Job& job) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    ledger_.Remove(job.request.job_id());
    if (job.spool_key.empty()) return;
    auto it = spools_.find(job.spool_key);
    if (it != spools_.end() && --it->second.jobs == 0) it->second.idle_since = absl::Now();
  }

  // A flood of refused jobs must not fill the disk with log lines.
  void RefusalLog(const grpc::ServerContext& context, const absl::Status& refused) {
    static LogThrottle* throttle = new LogThrottle(10, 10.0);
    uint64_t held = 0;
    if (throttle->Allow(&held)) {
      Log(LogLevel::kWarning, kComponent, "refused a job from %s: %s%s", context.peer(), refused.message(),
          LogThrottle::Held(held));
    }
  }

  // Once a kSweepEvery: cancels jobs that waited too long for Go, forgets finished
  // jobs nobody read, and ends spools no job uses once they are delivered (or idle
  // too long, or too many).
  void SweepLoop() {
    while (true) {
      std::vector<std::shared_ptr<Job>> cancel, forget;
      std::vector<std::unique_ptr<SpoolingSink>> ended;
      {
        absl::MutexLock lock(&mu_);
        auto stop = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return shut_down_; };
        mu_.AwaitWithTimeout(absl::Condition(&stop), kSweepEvery);
        if (shut_down_) return;
        const absl::Time now = absl::Now();
        JobLedger::Due due = ledger_.Sweep(now);
        for (const std::string& id : due.cancel) {
          auto it = jobs_.find(id);
          if (it != jobs_.end() && !it->second->cancel.load()) cancel.push_back(it->second);
        }
        for (const std::string& id : due.forget) {
          auto it = jobs_.find(id);
          if (it == jobs_.end()) continue;
          ForgetLocked(*it->second);
          forget.push_back(it->second);
          jobs_.erase(it);
        }
        int idle = 0;
        for (auto& [key, spool] : spools_) idle += spool.jobs == 0 ? 1 : 0;
        for (auto it = spools_.begin(); it != spools_.end();) {
          SharedSpool& spool = it->second;
          if (spool.jobs == 0 &&
              (idle > kMaxIdleSpools || now - spool.idle_since > kSpoolLinger || spool.sink->Pending() == 0)) {
            --idle;
            ended.push_back(std::move(spool.sink));
            it = spools_.erase(it);
          } else {
            ++it;
          }
        }
      }
      for (auto& job : cancel) {
        Log(LogLevel::kWarning, kComponent, "job %s: no Go within %s of StartSender; aborted", job->request.job_id(),
            absl::FormatDuration(options_.limits.wait_for_go));
        job->Cancel();
      }
      for (auto& job : forget) {
        Log(LogLevel::kInfo, kComponent, "job %s: rows never fetched; forgotten", job->request.job_id());
        if (job->thread.joinable()) job->thread.join();
      }
      for (auto& sink : ended) {
        const std::string dir = sink->dir();
        const size_t left = sink->Pending();
        sink.reset();                               // stops its delivery thread
        if (left == 0) (void)::rmdir(dir.c_str());  // only if empty: another agent may share it
      }
    }
  }

  void RunJob(Job* job, SenderOptions options, RunContext context, ReportSink* onward) {
    JobSink sink(job, onward);
    // The job's place for the collector's live page (collector/live_feed.h).
    std::unique_ptr<LiveFeed> live;
    if (job->collector) {
      live = std::make_unique<LiveFeed>(std::make_unique<CollectorClient>(
          *job->collector, options_.token, options_.trust, job->request.collector_fingerprint()));
      context.live = live.get();
    }
    std::FILE* console = options_.console != nullptr ? options_.console : null_console_;
    absl::StatusOr<SenderOutcome> outcome = RunSender(options, context, sink, console);
    {
      absl::MutexLock lock(&mu_);  // its streams are gone: they no longer count
      ledger_.Finished(job->request.job_id(), absl::Now());
    }
    absl::MutexLock lock(&job->mu);
    if (!outcome.ok()) {
      job->error = std::string(outcome.status().message());
      Log(LogLevel::kWarning, kComponent, "job %s: %s", job->request.job_id(), job->error);
    }
    job->done = true;
  }

  const AgentOptions options_;
  Observations observations_;
  std::FILE* null_console_ = nullptr;
  absl::Mutex mu_;
  bool shut_down_ ABSL_GUARDED_BY(mu_) = false;
  std::map<std::string, std::shared_ptr<Job>> jobs_ ABSL_GUARDED_BY(mu_);
  JobLedger ledger_ ABSL_GUARDED_BY(mu_);
  struct SharedSpool {
    std::unique_ptr<SpoolingSink> sink;
    int jobs = 0;  // jobs in jobs_ that report through it
    absl::Time idle_since;
  };
  std::map<std::string, SharedSpool> spools_ ABSL_GUARDED_BY(mu_);
  std::thread sweeper_;
};

}  // namespace

std::unique_ptr<AgentService> AgentService::Create(const AgentOptions& options) {
  return std::make_unique<AgentImpl>(options);
}

bool PageOfRows(const std::vector<proto::TransferReport>& rows, uint32_t first, size_t max_bytes,
                proto::JobState* reply) {
  reply->set_total_reports(static_cast<uint32_t>(rows.size()));
  size_t bytes = 0, i = std::min<size_t>(first, rows.size());
  for (; i < rows.size(); ++i) {
    bytes += rows[i].ByteSizeLong();
    if (reply->reports_size() > 0 && bytes > max_bytes) break;
    *reply->add_reports() = rows[i];
  }
  return i == rows.size();
}

}  // namespace nasperf
