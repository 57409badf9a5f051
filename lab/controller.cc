#include "lab/controller.h"

#include <algorithm>
#include <fcntl.h>
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
#include "collector/spool.h"
#include "common/clock.h"
#include "common/csv.h"
#include "common/fd.h"
#include "common/grpc_auth.h"
#include "common/policy.h"
#include "common/receiver_client.h"
#include "common/stats.h"
#include "common/units.h"
#include "common/validate.h"
#include "lab/preflight.h"
#include "lab/remote_start.h"
#include "proto/nasperf.grpc.pb.h"
#include "sender/sender.h"

namespace nasperf {
namespace {

constexpr absl::Duration kReadyTimeout = absl::Seconds(20);
constexpr int kUnansweredBeforeDead = 3;   // consecutive failed calls to an agent mid-run
constexpr uint32_t kMaxRowsPerJob = 1024;  // 64 streams make 128; more is a broken or hostile agent

// The Agent service of one host: token and deadline on every call, errors name the host.
class AgentClient {
 public:
  // fingerprint: the key the agent must show (started over SSH); empty: trust decides.
  AgentClient(const PlanHost& host, const std::string& token, const PeerTrust* trust, const std::string& fingerprint)
      : name_(host.name), address_(FormatHostPort(host.agent)), token_(token),
        stub_(proto::Agent::NewStub(NewChannel(address_, trust, fingerprint))) {}

  absl::Status StartSender(const proto::SenderJob& job) {
    proto::StartSenderReply reply;
    return Call("start a transfer", absl::Seconds(10), [&](grpc::ClientContext* c) {
      return stub_->StartSender(c, job, &reply);
    });
  }
  absl::Status Go(const std::string& job_id, int64_t start_at) {
    proto::GoRequest request;
    request.set_job_id(job_id);
    request.set_start_at_unix_ns(start_at);
    proto::GoReply reply;
    return Call("release the barrier", absl::Seconds(5), [&](grpc::ClientContext* c) {
      return stub_->Go(c, request, &reply);
    });
  }
  absl::StatusOr<proto::JobState> WaitJob(const std::string& job_id, bool until_ready, double wait_s) {
    proto::WaitJobRequest request;
    request.set_job_id(job_id);
    request.set_until_ready(until_ready);
    request.set_wait_s(wait_s);
    proto::JobState state;
    absl::Status s = Call("wait for a transfer", absl::Seconds(wait_s + 10), [&](grpc::ClientContext* c) {
      return stub_->WaitJob(c, request, &state);
    });
    if (!s.ok()) return s;
    if (!state.done()) return state;
    // A finished job's rows come in pages; each is checked as it arrives.
    if (state.total_reports() > kMaxRowsPerJob) {
      return absl::DataLossError(absl::StrCat("agent claims ", state.total_reports(), " rows for one job"));
    }
    request.set_wait_s(0);
    while (static_cast<uint32_t>(state.reports_size()) < state.total_reports()) {
      request.set_first_report(static_cast<uint32_t>(state.reports_size()));
      proto::JobState page;
      s = Call("fetch a transfer's rows", absl::Seconds(10), [&](grpc::ClientContext* c) {
        return stub_->WaitJob(c, request, &page);
      });
      if (!s.ok()) return s;
      if (page.reports_size() == 0) return absl::DataLossError("agent sent an empty page of rows");
      for (auto& r : *page.mutable_reports()) *state.add_reports() = std::move(r);
    }
    for (const proto::TransferReport& r : state.reports()) {
      if (absl::Status bad = CheckReport(r); !bad.ok()) {
        return absl::DataLossError(absl::StrCat("agent sent a bad row: ", bad.message()));
      }
    }
    return state;
  }
  absl::Status Abort(const std::string& run_id) {
    proto::AbortRequest request;
    request.set_run_id(run_id);
    proto::AbortReply reply;
    return Call("abort", absl::Seconds(5), [&](grpc::ClientContext* c) { return stub_->Abort(c, request, &reply); });
  }
  absl::StatusOr<proto::CheckPathReply> CheckPath(const proto::CheckPathRequest& request) {
    proto::CheckPathReply reply;
    absl::Status s = Call("check the path", absl::Seconds(30), [&](grpc::ClientContext* c) {
      return stub_->CheckPath(c, request, &reply);
    });
    if (!s.ok()) return s;
    return reply;
  }
  const std::string& address() const { return address_; }

 private:
  template <typename Rpc>
  absl::Status Call(const char* what, absl::Duration deadline, Rpc rpc) {
    grpc::ClientContext context;
    PrepareCall(&context, token_, deadline);
    grpc::Status status = rpc(&context);
    if (status.ok()) return absl::OkStatus();
    if (status.error_code() == grpc::StatusCode::UNIMPLEMENTED) {
      return absl::FailedPreconditionError(absl::StrCat(
          "host ", name_, ": ", address_, " runs `nasperf receiver`, not `nasperf agent`"));
    }
    absl::Status s = FromGrpc(status, absl::StrCat("host ", name_, ": agent"), address_);
    return absl::Status(s.code(), absl::StrCat(s.message(), " (", what, ")"));
  }

  std::string name_, address_, token_;
  std::unique_ptr<proto::Agent::Stub> stub_;
};

// One transfer of the plan as it runs in one lab run.
struct RunningTransfer {
  size_t index = 0;
  const PlanTransfer* plan = nullptr;
  std::string job_id;
  int first_stream = 0;
  bool started = false, finished = false;
  int unanswered = 0;
  std::vector<proto::TransferReport> reports;  // sender and receiver rows
};

class Lab {
 public:
  Lab(const Plan& plan, const LabOptions& options) : plan_(plan), o_(options) {}

  absl::StatusOr<LabOutcome> Run() {
    for (const PlanHost& host : plan_.hosts) ConnectAgent(host, "");
    if (absl::Status s = StartCollector(); !s.ok()) return s;
    absl::Status checked = StartRemoteAgents();
    if (checked.ok()) checked = Preflight();
    if (!checked.ok()) {
      StopRemoteAgents();
      StopCollector();
      return checked;
    }
    outcome_.run_id = o_.run_id.empty() ? NewRunId() : o_.run_id;
    Line(absl::StrFormat("lab %s%s: %d transfer%s per run, %d run%s%s%s", outcome_.run_id,
                         plan_.label.empty() ? "" : absl::StrCat(" \"", plan_.label, "\""), plan_.transfers.size(),
                         plan_.transfers.size() == 1 ? "" : "s", plan_.runs, plan_.runs == 1 ? "" : "s",
                         plan_.warmup > 0 ? absl::StrCat(" after ", plan_.warmup, " warm-up") : "",
                         plan_.pause > absl::ZeroDuration() ? absl::StrCat(", pause ", absl::FormatDuration(plan_.pause)) : ""));
    const int total = plan_.warmup + plan_.runs;
    for (int k = 0; k < total && !Interrupted(); ++k) {
      const bool warmup = k < plan_.warmup;
      const int iteration = k - plan_.warmup + 1;
      bool failed = RunOnce(iteration, warmup, k + 1, total);
      ++outcome_.runs_done;
      if (Interrupted()) break;
      if (failed && plan_.on_failure == "stop") {
        Line("stopping: a transfer failed and the plan says on_failure = \"stop\"");
        outcome_.stopped = true;
        break;
      }
      if (k + 1 < total) PauseInterruptibly();
    }
    if (outcome_.interrupted) Line("interrupted: every agent aborted its transfers; their rows say \"aborted\"");
    if (plan_.cleanup == Name(Cleanup::kEnd)) EndRunOnReceivers();
    PrintSummary();
    WaitForRows();
    StopRemoteAgents();
    StopCollector();
    return outcome_;
  }

 private:
  void Line(const std::string& text) {
    std::fprintf(o_.console, "%s\n", text.c_str());
    std::fflush(o_.console);
  }
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
    agents_[host.name] = std::make_unique<AgentClient>(host, o_.token, o_.trust.get(), fingerprint);
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
      report_to = *ParseHostPort(plan_.collector.address, 7700);
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
    Line(absl::StrFormat("warning: the collector has %d of %d rows; the agents keep the rest in their spools "
                         "(nasperf flush --collector ...)", seen, expected_rows_));
  }

  void StopCollector() {
    own_rows_.reset();
    if (collector_) collector_->Shutdown();
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
      RemoteAgentOptions r;
      r.ssh = host.ssh;
      r.identity = host.ssh_identity;
      r.known_hosts = host.ssh_known_hosts;
      r.nasperf = host.nasperf;
      r.listen = FormatHostPort(host.agent);
      r.target = host.target;
      r.agent_flags = host.agent_flags;
      r.token = o_.token;
      auto started = RemoteAgent::Start(r);
      if (!started.ok()) {
        problems.push_back(absl::StrCat("host ", host.name, ": ", started.status().message()));
        continue;
      }
      Line(absl::StrFormat("  %s: started `%s agent` over ssh %s (pid %d)", host.name, host.nasperf, host.ssh,
                           (*started)->remote_pid()));
      ConnectAgent(host, (*started)->fingerprint());
      remote_.push_back(std::move(*started));
      ReceiverClient client = ClientFor(host);
      const absl::Time deadline = absl::Now() + absl::Seconds(15);
      while (!client.Hello().ok() && absl::Now() < deadline) absl::SleepFor(absl::Milliseconds(100));
    }
    if (problems.empty()) return absl::OkStatus();
    return absl::FailedPreconditionError(absl::StrCat("cannot start agents over ssh; nothing ran:\n  ",
                                                      absl::StrJoin(problems, "\n  ")));
  }

  void StopRemoteAgents() {
    for (auto& agent : remote_) {
      if (absl::Status s = agent->Stop(); !s.ok()) Line(absl::StrCat("warning: ", s.message()));
    }
    if (!remote_.empty()) Line(absl::StrFormat("stopped %d agent%s started over ssh", remote_.size(), remote_.size() == 1 ? "" : "s"));
    remote_.clear();
  }

  // ------------------------------------------------------------ checks

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
      Line(absl::StrFormat("  %-10s %-21s nasperf %s on %s, target %s%s", host.name, FormatHostPort(host.agent),
                           hello->version(), hello->host(), hello->target(),
                           hello->target() == kDiscardTarget ? "" : absl::StrCat(" (", FormatSize(hello->free_bytes()), " free)")));
    }
    std::map<std::string, uint64_t> bytes_per_run;  // per receiving host
    for (size_t i = 0; i < plan_.transfers.size(); ++i) {
      const PlanTransfer& t = plan_.transfers[i];
      const PlanHost& to = *plan_.FindHost(t.to);
      const std::string name = absl::StrCat("transfer ", i + 1, " (", t.from, " -> ", t.to, ")");
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
      Line(absl::StrCat("  ", t.from, " -> ", t.to, ": ", path->line()));
      for (const std::string& warning : path->warnings()) Line(absl::StrCat("  warning: ", name, ": ", warning));
    }
    add(CapacityProblems(plan_, hellos, bytes_per_run));
    if (problems.empty()) return absl::OkStatus();
    return absl::FailedPreconditionError(absl::StrCat(
        problems.size(), " problem", problems.size() == 1 ? "" : "s", " before the first run; nothing ran:\n  ",
        absl::StrJoin(problems, "\n  ")));
  }

  // ------------------------------------------------------------ one run

  proto::SenderJob JobFor(const RunningTransfer& rt, int iteration, bool warmup) {
    const PlanTransfer& t = *rt.plan;
    proto::SenderJob job;
    job.set_job_id(rt.job_id);
    job.set_to(FormatHostPort(plan_.FindHost(t.to)->agent));
    job.set_receiver_fingerprint(PinFor(*plan_.FindHost(t.to)));
    job.set_size(t.size);
    job.set_file(t.file);
    job.set_pattern(t.pattern);
    job.set_streams(t.streams);
    job.set_first_stream(rt.first_stream);
    job.set_run_id(outcome_.run_id);
    job.set_label(plan_.label);
    job.set_iteration(iteration);
    job.set_warmup(warmup);
    job.set_write_mode(t.write_mode);
    job.set_sync_policy(t.sync_policy);
    job.set_cleanup(plan_.cleanup);
    job.set_verify(t.verify);
    job.set_interval_s(plan_.interval_s);
    job.set_link_mbps(plan_.link_mbps);
    job.set_collector(collector_for_agents_);
    job.set_collector_fingerprint(collector_fingerprint_);
    job.set_host_name(t.from);
    job.set_receiver_name(t.to);
    return job;
  }

  // Rows for streams the agent never reported: it was unreachable or died mid-run.
  void MarkLost(RunningTransfer& rt, int iteration, bool warmup, const std::string& status, const std::string& error) {
    const PlanTransfer& t = *rt.plan;
    std::map<int, bool> reported;
    for (const auto& r : rt.reports) if (r.role() == Name(Role::kSender)) reported[r.stream()] = true;
    for (int s = 0; s < t.streams; ++s) {
      if (reported.count(rt.first_stream + s)) continue;
      proto::TransferReport row;
      row.set_run_id(outcome_.run_id);
      row.set_label(plan_.label);
      row.set_iteration(iteration);
      row.set_stream(rt.first_stream + s);
      row.set_role(Name(Role::kSender));
      row.set_host(t.from);
      row.set_peer(FormatHostPort(plan_.FindHost(t.to)->agent));
      row.set_transport(Name(TransportKind::kNative));
      row.set_started_at_unix_ns(WallNanos());
      row.set_write_mode(t.write_mode);
      row.set_sync_policy(t.sync_policy);
      row.set_warmup(warmup);
      row.set_status(status);
      row.set_error(error);
      if (own_rows_) (void)own_rows_->Submit(row);
      ++expected_rows_;
      rt.reports.push_back(row);
    }
    rt.finished = true;
  }

  // A finished job's rows (the agent forgets the job once it handed them over).
  void Absorb(RunningTransfer& rt, const proto::JobState& state, int iteration, bool warmup) {
    for (const auto& r : state.reports()) rt.reports.push_back(r);
    expected_rows_ += static_cast<uint64_t>(state.reports_size());
    if (!state.error().empty()) {
      MarkLost(rt, iteration, warmup, outcome_.interrupted ? "aborted" : "failed", state.error());
    }
    rt.finished = true;
  }

  // Returns true when a transfer did not end "ok".
  bool RunOnce(int iteration, bool warmup, int k, int total) {
    std::vector<RunningTransfer> running(plan_.transfers.size());
    int next_stream = 0;
    for (size_t i = 0; i < running.size(); ++i) {
      RunningTransfer& rt = running[i];
      rt.index = i;
      rt.plan = &plan_.transfers[i];
      rt.first_stream = next_stream;
      next_stream += rt.plan->streams;
      rt.job_id = absl::StrCat(outcome_.run_id, "-", iteration, "-t", i + 1);
      absl::Status s = agents_[rt.plan->from]->StartSender(JobFor(rt, iteration, warmup));
      if (s.ok()) {
        rt.started = true;
      } else {
        MarkLost(rt, iteration, warmup, "failed", std::string(s.message()));
      }
    }
    // The barrier: every stream of every transfer holds, opened, until all are.
    const absl::Time ready_by = absl::Now() + kReadyTimeout;
    for (RunningTransfer& rt : running) {
      while (rt.started && !rt.finished && !Interrupted() && absl::Now() < ready_by) {
        auto state = agents_[rt.plan->from]->WaitJob(rt.job_id, /*until_ready=*/true, 0.5);
        if (!state.ok()) {
          if (++rt.unanswered >= kUnansweredBeforeDead) {
            MarkLost(rt, iteration, warmup, "failed", std::string(state.status().message()));
          }
          absl::SleepFor(absl::Milliseconds(200));
          continue;
        }
        rt.unanswered = 0;
        if (state->done()) {  // failed before the barrier (e.g. refused): the agent handed its rows over
          Absorb(rt, *state, iteration, warmup);
          break;
        }
        if (state->ready() >= state->streams()) break;
      }
    }
    const int64_t start_at = WallNanos() + absl::ToInt64Nanoseconds(plan_.start_delay);
    for (RunningTransfer& rt : running) {
      if (rt.started && !rt.finished) (void)agents_[rt.plan->from]->Go(rt.job_id, start_at);
    }
    // Until every job is done, an agent stops answering, or Ctrl-C (then every agent aborts).
    bool pending = true;
    while (pending) {
      pending = false;
      Interrupted();
      for (RunningTransfer& rt : running) {
        if (!rt.started || rt.finished) continue;
        auto state = agents_[rt.plan->from]->WaitJob(rt.job_id, /*until_ready=*/false, 0.5);
        if (!state.ok()) {
          if (++rt.unanswered >= kUnansweredBeforeDead || absl::IsNotFound(state.status())) {
            MarkLost(rt, iteration, warmup, outcome_.interrupted ? "aborted" : "failed",
                     absl::StrCat("agent stopped answering mid-run: ", state.status().message()));
          } else {
            pending = true;
            absl::SleepFor(absl::Milliseconds(300));
          }
          continue;
        }
        rt.unanswered = 0;
        if (!state->done()) {
          pending = true;
          continue;
        }
        Absorb(rt, *state, iteration, warmup);
      }
    }
    return Print(running, iteration, warmup, k, total);
  }

  // Per transfer, then per receiver: the aggregate is the sum over its concurrent senders.
  bool Print(const std::vector<RunningTransfer>& running, int iteration, bool warmup, int k, int total) {
    bool any_failed = false;
    int64_t first = 0, last = 0;
    int starts = 0;
    struct Sum { double send = 0, durable = 0; int transfers = 0; bool complete = true; };
    std::map<std::string, Sum> per_receiver;
    std::vector<std::string> lines;
    for (const RunningTransfer& rt : running) {
      const PlanTransfer& t = *rt.plan;
      double send = 0, durable = 0;
      bool ok = true;
      std::string error;
      int rx_rows = 0;
      for (const auto& r : rt.reports) {
        if (r.role() == Name(Role::kReceiver)) {
          if (r.has_mb_per_s()) durable += r.mb_per_s();
          ++rx_rows;
          continue;
        }
        ++outcome_.transfers;
        if (r.status() == Name(Status::kAborted)) ++outcome_.aborted;
        if (r.status() != Name(Status::kOk)) {
          ++outcome_.failed;
          ok = false;
          if (error.empty()) error = absl::StrCat(r.status(), ": ", r.error());
          continue;
        }
        send += r.mb_per_s();
        if (r.has_first_byte_s()) {
          int64_t at = r.started_at_unix_ns() + static_cast<int64_t>(r.first_byte_s() * 1e9);
          first = starts == 0 ? at : std::min(first, at);
          last = starts == 0 ? at : std::max(last, at);
          ++starts;
        }
      }
      any_failed = any_failed || !ok;
      Sum& sum = per_receiver[t.to];
      sum.send += send;
      sum.durable += durable;
      sum.complete = sum.complete && ok && rx_rows == t.streams;
      ++sum.transfers;
      lines.push_back(absl::StrFormat("  %-22s %2d stream%s %10s  send %9s  durable %9s  %s",
                                      absl::StrCat(t.from, " -> ", t.to), t.streams, t.streams == 1 ? " " : "s",
                                      t.file.empty() ? FormatSize(t.size) : "file",
                                      // a partly failed transfer shows what its ok streams moved (the aggregate counts it)
                                      ok || send > 0 ? absl::StrFormat("%.1f MB/s", send) : "-",
                                      (ok || durable > 0) && rx_rows > 0 ? absl::StrFormat("%.1f MB/s", durable) : "-",
                                      ok ? "ok" : error));
    }
    const double skew_ms = starts >= 2 ? static_cast<double>(last - first) / 1e6 : 0;
    Line(absl::StrFormat("%s %d/%d (iteration %d): start skew %s", warmup ? "warm-up" : "run", warmup ? k : k - plan_.warmup,
                         warmup ? plan_.warmup : plan_.runs, iteration,
                         starts >= 2 ? absl::StrFormat("%.2f ms", skew_ms) : "-"));
    for (const std::string& line : lines) Line(line);
    for (const auto& [name, sum] : per_receiver) {
      Line(absl::StrFormat("  %-22s %2d transfer%s          send %9.1f MB/s  durable %9.1f MB/s  aggregate%s",
                           absl::StrCat("= ", name), sum.transfers, sum.transfers == 1 ? " " : "s", sum.send,
                           sum.durable, sum.complete ? "" : " (not every transfer finished)"));
      if (!warmup && sum.complete) aggregates_[name].push_back(sum.send);
      AppendLabRow(iteration, warmup, name, sum.transfers, sum.send, sum.durable, skew_ms, starts >= 2, sum.complete);
    }
    if (!warmup && starts >= 2) skews_.push_back(skew_ms);
    return any_failed;
  }

  // DIR/lab-runs.csv beside transfers.csv: one row per run and receiver. A row that
  // cannot be written is said once on the console (the transfer rows are elsewhere).
  void AppendLabRow(int iteration, bool warmup, const std::string& receiver, int transfers, double send,
                    double durable, double skew_ms, bool has_skew, bool complete) {
    if (!collector_) return;
    const std::string header = CsvLine({"run_id", "label", "iteration", "warmup", "receiver", "transfers",
                                        "send_mb_per_s", "durable_mb_per_s", "start_skew_ms", "complete"});
    const std::string row =
        CsvLine({CsvText(outcome_.run_id), CsvText(plan_.label), absl::StrCat(iteration), warmup ? "true" : "false",
                 CsvText(receiver), absl::StrCat(transfers), absl::StrFormat("%.3f", send),
                 absl::StrFormat("%.3f", durable), has_skew ? absl::StrFormat("%.3f", skew_ms) : "",
                 complete ? "true" : "false"});
    absl::Status written = AppendLines(plan_.collector.out + "/lab-runs.csv", header, row);
    if (!written.ok() && !lab_rows_failed_) {
      lab_rows_failed_ = true;
      Line(absl::StrCat("warning: lab-runs.csv: ", written.message(), " (transfers.csv has every row)"));
    }
  }

  void PauseInterruptibly() {
    const absl::Time until = absl::Now() + plan_.pause;
    while (absl::Now() < until && !Interrupted()) absl::SleepFor(std::min(absl::Milliseconds(100), until - absl::Now()));
  }

  void EndRunOnReceivers() {
    std::map<std::string, bool> done;
    for (const PlanTransfer& t : plan_.transfers) {
      if (done[t.to]) continue;
      done[t.to] = true;
      if (auto ended = ClientFor(*plan_.FindHost(t.to)).EndRun(outcome_.run_id); !ended.ok()) Line(absl::StrCat("warning: cleanup: ", ended.status().message()));
    }
  }

  void PrintSummary() {
    Line("");
    Line(absl::StrFormat("summary: %d run%s, %d transfer rows, %d failed (%d aborted)", outcome_.runs_done,
                         outcome_.runs_done == 1 ? "" : "s", outcome_.transfers, outcome_.failed, outcome_.aborted));
    if (!skews_.empty()) {
      Summary s = Summarize(skews_);
      Line(absl::StrFormat("  start skew: median %.2f ms, max %.2f ms", s.median, s.max));
    }
    for (const auto& [name, values] : aggregates_) {
      Summary s = Summarize(values);
      Line(absl::StrFormat("  %s aggregate send MB/s: median %.1f, min %.1f, max %.1f (n %d)", name, s.median, s.min,
                           s.max, s.n));
    }
    if (!outcome_.transfers_csv.empty()) {
      Line(absl::StrFormat("results: %s (nasperf report %s)", outcome_.transfers_csv, plan_.collector.out));
    }
  }

  const Plan& plan_;
  const LabOptions& o_;
  LabOutcome outcome_;
  std::map<std::string, std::unique_ptr<AgentClient>> agents_;
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
  std::vector<double> skews_;
  std::map<std::string, std::vector<double>> aggregates_;
};

}  // namespace

absl::StatusOr<LabOutcome> RunLab(const Plan& plan, const LabOptions& options) {
  Lab lab(plan, options);
  return lab.Run();
}

}  // namespace nasperf
