#include "lab/controller.h"

#include <fcntl.h>
#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "collector/collector.h"
#include "collector/collector_client.h"
#include "collector/live_http.h"
#include "collector/spool.h"
#include "common/clock.h"
#include "common/csv.h"
#include "common/fd.h"
#include "common/policy.h"
#include "common/stats.h"
#include "common/token.h"
#include "common/units.h"
#include "lab/agent_client.h"
#include "lab/console.h"
#include "lab/job_tracker.h"
#include "lab/preflight.h"
#include "lab/tally.h"
#include "proto/nasperf.grpc.pb.h"
#include "sender/sender.h"
#include "ssh/remote_start.h"
#include "wire/grpc_auth.h"
#include "wire/receiver_client.h"
#include "wire/validate.h"

namespace nasperf {
namespace {

class Lab {
 public:
  Lab(const Plan& plan, const LabOptions& options) : plan_(plan), o_(options) {}

  absl::StatusOr<LabOutcome> Run() {
    for (const PlanHost& host : plan_.hosts) ConnectAgent(host, "");
    absl::Status checked = StartRemoteAgents();
    if (checked.ok()) checked = Preflight();
    // The collector starts only for a lab that will run: one stopped by its checks
    // leaves no results directory of empty CSVs behind.
    if (checked.ok()) checked = StartCollector();
    if (!checked.ok()) {
      StopRemoteAgents();
      StopCollector();
      return checked;
    }
    outcome_.run_id = o_.run_id.empty() ? NewRunId() : o_.run_id;
    if (absl::Status observing = StartObservers(); !observing.ok()) {
      StopObservers(/*keep_rows=*/false);
      StopRemoteAgents();
      StopCollector();
      return observing;
    }
    console_.Banner(outcome_.run_id, plan_);
    const int total = plan_.warmup + plan_.runs;
    for (int k = 0; k < total && !Interrupted(); ++k) {
      const bool warmup = k < plan_.warmup;
      const int iteration = k - plan_.warmup + 1;
      bool failed = RunOnce(iteration, warmup, k + 1, total);
      ++outcome_.runs_done;
      if (Interrupted()) break;
      if (failed && plan_.stop_on_failure) {
        Line("stopping: a transfer failed and the plan says on_failure = \"stop\"");
        outcome_.stopped = true;
        break;
      }
      if (k + 1 < total) PauseInterruptibly();
    }
    if (outcome_.interrupted) Line("interrupted: every agent aborted its transfers; their rows say \"aborted\"");
    if (plan_.cleanup == Cleanup::kEnd) EndRunOnReceivers();
    outcome_.transfers = totals_.sender_rows;
    outcome_.failed = totals_.failed;
    outcome_.aborted = totals_.aborted;
    console_.Summary(outcome_, totals_, plan_.collector.out);
    StopObservers(/*keep_rows=*/true);
    WaitForRows();
    StopRemoteAgents();
    StopCollector();
    return outcome_;
  }

 private:
  void Line(const std::string& text) { console_.Line(text); }
  bool Interrupted() {
    if (o_.stop != nullptr && o_.stop->load() && !outcome_.interrupted) {
      outcome_.interrupted = true;
      for (auto& [name, agent] : agents_) (void)agent->Abort(outcome_.run_id);
    }
    return outcome_.interrupted;
  }

  // ------------------------------------------------------------ trust

  // fingerprint: the key this host's agent must show; empty: o_.trust decides, and
  // the key it accepts is what the other agents are told to expect (PinFor).
  void ConnectAgent(const PlanHost& host, const std::string& fingerprint) {
    agents_[host.name] = nasperf::ConnectAgent(host, o_.token, o_.trust.get(), fingerprint);
    pins_[host.name] = fingerprint;
  }
  ReceiverClient ClientFor(const PlanHost& host) {
    return ReceiverClient(host.agent, o_.token, o_.trust, pins_[host.name]);
  }
  // After a call to the host's agent succeeded: the key it showed.
  std::string PinFor(const PlanHost& host) {
    std::string& pin = pins_[host.name];
    if (pin.empty() && o_.trust != nullptr) pin = o_.trust->PinnedFingerprint(FormatHostPort(host.agent));
    return pin;
  }

  // ------------------------------------------------------------ collector

  absl::Status StartCollector() {
    HostPort report_to;
    if (plan_.collector.address.empty()) {
      CollectorOptions c;
      c.out_dir = plan_.collector.out;
      c.listen = plan_.collector.listen;
      c.token = o_.token;
      c.tls.plaintext = o_.trust == nullptr || o_.trust->plaintext();
      if (plan_.collector.http) {
        LiveHttpOptions live;
        live.listen = *plan_.collector.http;
        live.token_file = plan_.collector.http_token_file;
        live.tls = plan_.collector.http_tls;
        live.identity = c.tls;
        live.out_dir = c.out_dir;
        live.what = "[collector] http";
        auto http = StartLiveHttp(live, live_board_);
        if (!http.ok()) return http.status();
        http_ = std::move(*http);
        c.live = &live_board_;
        Line(absl::StrFormat("live view: %s://%s/ and /metrics", live.tls ? "https" : "http", http_->address()));
      }
      auto collector = Collector::Start(c);
      if (!collector.ok()) return collector.status();
      collector_ = std::move(*collector);
      collector_fingerprint_ = collector_->security().fingerprint;
      collector_for_agents_ = absl::StrCat(":", collector_->port());  // agents use the address they were called from
      report_to = {"127.0.0.1", collector_->port()};
      outcome_.transfers_csv = collector_->transfers_path();
      Line(absl::StrFormat("collector: embedded on port %d, writing %s", collector_->port(), outcome_.transfers_csv));
    } else {
      collector_for_agents_ = plan_.collector.address;
      report_to = *ParseHostPort(plan_.collector.address, kCollectorPort);
      Line(absl::StrCat("collector: ", plan_.collector.address));
    }
    auto spool = SpoolingSink::Start(
        std::make_unique<CollectorClient>(report_to, o_.token, o_.trust, collector_fingerprint_), DefaultSpoolRoot());
    if (!spool.ok()) return spool.status();
    own_rows_ = std::move(*spool);
    return absl::OkStatus();
  }

  // The agents deliver their rows through their spools; the CSV is complete when
  // the collector has seen every one (or 30 s passed).
  void WaitForRows() {
    if (own_rows_) own_rows_->Drain(absl::Seconds(10));
    if (!collector_) return;
    const absl::Time deadline = absl::Now() + absl::Seconds(30);
    uint64_t seen = 0;
    while (absl::Now() < deadline) {
      // Rows, not duplicates: two spools delivering the same file count one row twice.
      seen = collector_->counters().rows;
      if (seen >= expected_rows_) return;
      absl::SleepFor(absl::Milliseconds(100));
    }
    Line(
        absl::StrFormat("warning: the collector has %d of %d rows; the agents keep the rest in their spools "
                        "(nasperf flush --collector ...)",
                        seen, expected_rows_));
  }

  void StopCollector() {
    own_rows_.reset();
    if (collector_) collector_->Shutdown();
    if (http_) http_->Stop();
  }

  // ------------------------------------------------------------ observers

  // Hosts with observe = true: their agents watch while every run goes. One that cannot
  // be reached or refuses stops the lab before any transfer.
  absl::Status StartObservers() {
    for (const PlanHost& host : plan_.hosts) {
      if (!host.observe) continue;
      proto::ObserveRequest request;
      request.set_subdir(host.observe_dir);
      request.set_label(plan_.label);
      request.set_run_id(outcome_.run_id);
      request.set_link_mbps(plan_.link_mbps);
      request.set_interval_s(plan_.interval_s);
      auto reply = agents_[host.name]->Observe(request);
      if (!reply.ok()) return reply.status();  // it names the host and says what was asked
      observations_[host.name] = reply->observation_id();
      Line(absl::StrCat("observing: ", host.name, " watches ", reply->dir(), " while the runs go"));
    }
    return absl::OkStatus();
  }

  // Each observation's rows (role nas) go to the collector with the runs' rows.
  void StopObservers(bool keep_rows) {
    for (const auto& [name, id] : observations_) {
      auto rows = agents_[name]->StopObserving(id);
      if (!rows.ok()) {
        Line(absl::StrCat("warning: observer ", name, ": ", rows.status().message()));
        continue;
      }
      if (!keep_rows) continue;
      int kept = 0;
      for (const proto::TransferReport& row : *rows) {
        if (own_rows_ && own_rows_->Submit(row).ok()) ++kept;
      }
      expected_rows_ += static_cast<uint64_t>(kept);
      Line(absl::StrCat("observer ", name, ": ", rows->size(), " copies measured on the NAS (rows of role nas)"));
      for (const proto::TransferReport& row : *rows) Line(ObservedCopyLine(row));
    }
    observations_.clear();
  }

  // ------------------------------------------------------------ --ssh

  // Hosts with `ssh = ...` whose agent does not answer get one started over SSH.
  absl::Status StartRemoteAgents() {
    if (!o_.ssh) return absl::OkStatus();
    std::vector<std::string> problems;
    for (const PlanHost& host : plan_.hosts) {
      if (host.ssh.empty()) continue;
      auto answer = ClientFor(host).Hello();
      if (answer.ok()) continue;
      if (absl::IsUnauthenticated(answer.status())) {  // an agent answers, but not as it should: start none
        problems.push_back(absl::StrCat("host ", host.name, ": ", answer.status().message()));
        continue;
      }
      auto login = LabSshOptions(host.ssh, host.ssh_identity, host.ssh_known_hosts);
      if (!login.ok()) {
        problems.push_back(absl::StrCat("host ", host.name, ": ", login.status().message()));
        continue;
      }
      RemoteAgentOptions r;
      r.ssh = *login;
      r.nasperf = host.nasperf;
      r.deploy_binary = o_.deploy_binary;
      r.listen = FormatHostPort(host.agent);
      r.target = host.target;
      r.flags = host.agent_flags;
      r.token = o_.token;
      auto started =
          RemoteAgent::Start(r, [&](const std::string& line) { Line(absl::StrCat("  ", host.name, ": ", line)); });
      if (!started.ok()) {
        problems.push_back(absl::StrCat("host ", host.name, ": ", started.status().message()));
        continue;
      }
      Line(absl::StrFormat("  %s: started `%s agent` over ssh %s (pid %d)", host.name, (*started)->binary(), host.ssh,
                           (*started)->remote_pid()));
      ConnectAgent(host, (*started)->fingerprint());
      remote_.push_back(std::move(*started));  // listening: Start waited for its port
    }
    if (problems.empty()) return absl::OkStatus();
    return absl::FailedPreconditionError(
        absl::StrCat("cannot start agents over ssh; nothing ran:\n  ", absl::StrJoin(problems, "\n  ")));
  }

  void StopRemoteAgents() {
    for (auto& agent : remote_) {
      if (absl::Status s = agent->Stop(); !s.ok()) Line(absl::StrCat("warning: ", s.message()));
    }
    if (!remote_.empty())
      Line(absl::StrFormat("stopped %d agent%s started over ssh", remote_.size(), remote_.size() == 1 ? "" : "s"));
    remote_.clear();
  }

  // ------------------------------------------------------------ checks

  // A transfer into a directory of its sending host: that agent opens it beneath its
  // --allow-path (and its file beneath --allow-source), as its job will.
  std::vector<std::string> LocalDirProblems(const std::string& name, const PlanTransfer& t) {
    proto::CheckPathRequest request;
    request.set_local_dir(t.to);
    request.set_file(t.file);
    auto checked = agents_[t.from]->CheckPath(request);
    if (checked.ok()) return {};
    return {absl::StrCat(name, ": checked on ", t.from, ": ", checked.status().message())};
  }

  absl::Status Preflight() {
    std::vector<std::string> problems;
    auto add = [&problems](std::vector<std::string> more) {
      problems.insert(problems.end(), more.begin(), more.end());
    };
    std::map<std::string, proto::HelloReply> hellos;
    Line("checks:");
    for (const PlanHost& host : plan_.hosts) {
      auto hello = ClientFor(host).Hello();
      if (!hello.ok()) {
        problems.push_back(absl::StrCat("host ", host.name, ": ", hello.status().message()));
        continue;
      }
      add(HostProblems(host, *hello, NASPERF_VERSION));
      hellos[host.name] = *hello;
      PinFor(host);
      console_.HostChecked(host, *hello);
    }
    std::map<std::string, uint64_t> bytes_per_run;  // per receiving host
    for (size_t i = 0; i < plan_.transfers.size(); ++i) {
      const PlanTransfer& t = plan_.transfers[i];
      const std::string name = absl::StrCat("transfer ", i + 1, " (", t.from, " -> ", t.to, ")");
      if (hellos.count(t.from) > 0) add(SenderProblems(name, t, hellos[t.from]));
      // An SSH login or a share is first tried by the transport's own start, on the
      // agent, in the first run: its problems come back as that run's failed rows. A
      // directory on the sending host is asked of its agent's --allow-path now.
      if (!t.ToIsHost()) {
        if (TransportFor(t.transport).caps.local_dir && hellos.count(t.from) > 0) add(LocalDirProblems(name, t));
        continue;
      }
      const PlanHost& to = *plan_.FindHost(t.to);
      if (hellos.count(t.from) == 0 || hellos.count(t.to) == 0) continue;  // already a problem
      proto::CheckPathRequest request;
      request.set_to(FormatHostPort(to.agent));
      request.set_receiver_fingerprint(PinFor(to));
      request.set_link_mbps(plan_.link_mbps);
      request.set_file(t.file);
      auto path = agents_[t.from]->CheckPath(request);
      if (!path.ok()) {
        problems.push_back(absl::StrCat(name, ": checked on ", t.from, ": ", path.status().message()));
        continue;
      }
      add(TransferProblems(name, t, *plan_.FindHost(t.from), to, hellos[t.to], *path));
      uint64_t size = t.file.empty() ? t.size : path->file_size();
      bytes_per_run[t.to] += size * static_cast<uint64_t>(t.streams);
      console_.PathChecked(name, t, *path);
    }
    add(CapacityProblems(plan_, hellos, bytes_per_run));
    if (problems.empty()) return absl::OkStatus();
    return absl::FailedPreconditionError(absl::StrCat(problems.size(), " problem", problems.size() == 1 ? "" : "s",
                                                      " before the first run; nothing ran:\n  ",
                                                      absl::StrJoin(problems, "\n  ")));
  }

  // ------------------------------------------------------------ one run

  proto::SenderJob JobFor(const PlanTransfer& t, const std::string& job_id, int first_stream, int iteration,
                          bool warmup) {
    proto::SenderJob job;
    job.set_job_id(job_id);
    proto::RunSpec& spec = *job.mutable_spec();
    spec = SpecOf(plan_, t);
    if (t.ToIsHost()) {  // the [[host]]'s agent, as this controller reached and pinned it
      const PlanHost& to = *plan_.FindHost(t.to);
      spec.set_to(FormatHostPort(to.agent));
      spec.set_receiver_fingerprint(PinFor(to));
      job.set_receiver_name(t.to);
    }
    spec.set_run_id(outcome_.run_id);
    spec.set_interval_s(interval_s_);
    job.set_first_stream(first_stream);
    job.set_iteration(iteration);
    job.set_warmup(warmup);
    job.set_lab_copy(lab_copy_);
    job.set_lab_copies(plan_.warmup + plan_.runs);
    job.set_lab_left_after_s(LeftAfterThisRun());
    job.set_collector(collector_for_agents_);
    job.set_collector_fingerprint(collector_fingerprint_);
    job.set_host_name(t.from);
    return job;
  }

  // The lab's time left after the run at lab_copy_, from the runs so far (pauses
  // included); negative before the first ended.
  double LeftAfterThisRun() const {
    const int done = lab_copy_ - 1;
    if (done <= 0) return -1;
    const double per_run = NanosToSeconds(MonoNanos() - first_run_ns_) / done;
    return per_run * (plan_.warmup + plan_.runs - lab_copy_);
  }

  // Returns true when a transfer did not end "ok".
  bool RunOnce(int iteration, bool warmup, int k, int total) {
    lab_copy_ = k;
    if (k == 1) first_run_ns_ = MonoNanos();
    std::vector<LabJob> jobs;
    int next_stream = 0;
    for (size_t i = 0; i < plan_.transfers.size(); ++i) {
      const PlanTransfer& t = plan_.transfers[i];
      LabJob job;
      job.transfer = &t;
      job.agent = agents_[t.from].get();
      job.job = JobFor(t, absl::StrCat(outcome_.run_id, "-", iteration, "-t", i + 1), next_stream, iteration, warmup);
      next_stream += t.streams;
      jobs.push_back(std::move(job));
    }
    JobTrackerOptions tracking;
    tracking.start_delay = plan_.start_delay;
    tracking.interrupted = [this] { return Interrupted(); };
    jobs = RunJobs(std::move(jobs), tracking);
    for (const LabJob& job : jobs) {
      expected_rows_ += job.agent_rows.size() + job.lost_rows.size();
      for (const proto::TransferReport& row : job.lost_rows) {
        if (own_rows_) (void)own_rows_->Submit(row);
      }
    }
    const RunTally run = TallyRun(jobs);
    totals_.Add(run, warmup);
    console_.Run(run, warmup, warmup ? k : k - plan_.warmup, warmup ? plan_.warmup : plan_.runs, iteration);
    AdaptInterval(run);
    for (const ReceiverTally& receiver : run.receivers) AppendLabRow(iteration, warmup, receiver, run.start_skew_ms);
    return run.failed > 0;
  }

  // A transfer shorter than a few intervals has no timeline (issue 30): unless the plan
  // names the interval, the next run samples about 10 times in this run's shortest.
  void AdaptInterval(const RunTally& run) {
    if (plan_.interval_set || !run.shortest_s) return;
    const double next = SampleIntervalFor(*run.shortest_s, plan_.interval_s);
    if (next == interval_s_) return;
    interval_s_ = next;
    Line(
        absl::StrFormat("  sampling every %.0f ms from the next run (the shortest transfer took %.3f s; `interval` "
                        "in the plan fixes it)",
                        next * 1000, *run.shortest_s));
  }

  // DIR/lab-runs.csv beside transfers.csv: one row per run and receiver. A row that
  // cannot be written is said once on the console (the transfer rows are elsewhere).
  void AppendLabRow(int iteration, bool warmup, const ReceiverTally& receiver, std::optional<double> skew_ms) {
    if (!collector_) return;
    const std::string header =
        CsvLine({"run_id", "label", "iteration", "warmup", "receiver", "transfers", "send_mb_per_s", "durable_mb_per_s",
                 "start_skew_ms", "complete", "all_mb_per_s", "while_all_mb_per_s", "window_s", "peak_mb_per_s",
                 "median_mb_per_s"});
    // The NAS's intake (measure/intake.h); the two sums before it stay for scripts that
    // read them by place, and mean what they always did.
    const std::optional<IntakeFigures>& f = receiver.intake;
    auto figure = [&](bool known, double v) { return known ? absl::StrFormat("%.3f", v) : std::string(); };
    const std::string row = CsvLine(
        {CsvText(outcome_.run_id), CsvText(plan_.label), absl::StrCat(iteration), warmup ? "true" : "false",
         CsvText(receiver.name), absl::StrCat(receiver.transfers), absl::StrFormat("%.3f", receiver.send_mb_per_s),
         absl::StrFormat("%.3f", receiver.durable_mb_per_s), skew_ms ? absl::StrFormat("%.3f", *skew_ms) : "",
         receiver.complete ? "true" : "false", figure(f.has_value(), f ? f->all_mb_per_s : 0),
         figure(f && f->overlapped, f ? f->while_all_mb_per_s : 0), figure(f && f->overlapped, f ? f->window_s : 0),
         figure(f && f->TimelineIsCurve(), f ? f->peak_mb_per_s : 0),
         figure(f && f->TimelineIsCurve(), f ? f->median_mb_per_s : 0)});
    absl::Status written = AppendLines(plan_.collector.out + "/lab-runs.csv", header, row);
    if (!written.ok() && !lab_rows_failed_) {
      lab_rows_failed_ = true;
      Line(absl::StrCat("warning: lab-runs.csv: ", written.message(), " (transfers.csv has every row)"));
    }
  }

  void PauseInterruptibly() {
    const absl::Time until = absl::Now() + plan_.pause;
    while (absl::Now() < until && !Interrupted())
      absl::SleepFor(std::min(absl::Milliseconds(100), until - absl::Now()));
  }

  void EndRunOnReceivers() {
    std::map<std::string, bool> done;
    for (const PlanTransfer& t : plan_.transfers) {
      if (!t.ToIsHost() || done[t.to]) continue;  // over SSH the transport cleaned up
      done[t.to] = true;
      if (auto ended = ClientFor(*plan_.FindHost(t.to)).EndRun(outcome_.run_id); !ended.ok())
        Line(absl::StrCat("warning: cleanup: ", ended.status().message()));
    }
  }

  const Plan& plan_;
  const LabOptions& o_;
  double interval_s_ = plan_.interval_s;  // what the next run samples at (AdaptInterval)
  LabOutcome outcome_;
  LabConsole console_{o_.console};
  LabTotals totals_;
  std::map<std::string, std::unique_ptr<AgentConnection>> agents_;
  LiveBoard live_board_;  // before the collector and its HTTP side, which use it: gone after them
  std::unique_ptr<Collector> collector_;
  std::unique_ptr<SpoolingSink> own_rows_;
  std::vector<std::unique_ptr<RemoteAgent>> remote_;
  std::string collector_for_agents_;
  // The TLS keys the agents must show each other and the collector's, by host name;
  // an agent gets them with each job (SenderJob.*_fingerprint).
  std::map<std::string, std::string> pins_;
  bool lab_rows_failed_ = false;
  std::string collector_fingerprint_;
  uint64_t expected_rows_ = 0;
  std::map<std::string, std::string> observations_;  // host name -> observation id
  int lab_copy_ = 0;                                 // the run going on, 1-based, warm-ups first
  int64_t first_run_ns_ = 0;                         // when the first run began
  std::unique_ptr<HttpServer> http_;                 // the embedded collector's live view ([collector] http)
};

}  // namespace

absl::StatusOr<LabOutcome> RunLab(const Plan& plan, const LabOptions& options) {
  Lab lab(plan, options);
  return lab.Run();
}

}  // namespace nasperf
