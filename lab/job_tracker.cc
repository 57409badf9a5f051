#include "lab/job_tracker.h"

#include <set>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/clock.h"
#include "common/fd.h"
#include "common/policy.h"
#include "transport/registry.h"

namespace nasperf {
namespace {

// A job as it moves through the run.
struct Tracked {
  LabJob* job;
  bool started = false, finished = false;
  int unanswered = 0;
};

class Tracker {
 public:
  Tracker(std::vector<LabJob>& jobs, const JobTrackerOptions& options) : o_(options) {
    for (LabJob& job : jobs) tracked_.push_back(Tracked{&job});
  }

  void Run() {
    for (Tracked& t : tracked_) Start(t);
    WaitAtBarrier();
    const int64_t start_at = WallNanos() + absl::ToInt64Nanoseconds(o_.start_delay);
    for (Tracked& t : tracked_) {
      if (t.started && !t.finished) (void)t.job->agent->Go(t.job->job.job_id(), start_at);
    }
    WaitUntilDone();
  }

 private:
  bool Interrupted() const { return o_.interrupted(); }
  std::string FailedOrAborted() const { return Name(Interrupted() ? Status::kAborted : Status::kFailed); }

  void Start(Tracked& t) {
    absl::Status s = t.job->agent->StartSender(t.job->job);
    if (s.ok()) {
      t.started = true;
    } else {
      MarkLost(t, Name(Status::kFailed), std::string(s.message()));
    }
  }

  // Every stream of every job holds, connected, until all are.
  void WaitAtBarrier() {
    const absl::Time ready_by = absl::Now() + o_.ready_timeout;
    for (Tracked& t : tracked_) {
      while (t.started && !t.finished && !Interrupted() && absl::Now() < ready_by) {
        auto state = Wait(t, /*until_ready=*/true);
        if (!state.ok()) {
          if (++t.unanswered >= o_.unanswered_before_dead) {
            MarkLost(t, Name(Status::kFailed), std::string(state.status().message()));
          }
          absl::SleepFor(o_.retry_pause);
          continue;
        }
        t.unanswered = 0;
        if (state->done()) {  // failed before the barrier (e.g. refused): the agent handed its rows over
          Absorb(t, *state);
          break;
        }
        if (state->ready() >= state->streams()) break;
      }
    }
  }

  // Until every job is done, an agent stops answering, or the run is interrupted
  // (then the agents abort and their jobs end soon).
  void WaitUntilDone() {
    bool pending = true;
    while (pending) {
      pending = false;
      (void)Interrupted();  // the first true makes the caller abort every agent
      for (Tracked& t : tracked_) {
        if (!t.started || t.finished) continue;
        auto state = Wait(t, /*until_ready=*/false);
        if (!state.ok()) {
          if (++t.unanswered >= o_.unanswered_before_dead || absl::IsNotFound(state.status())) {
            MarkLost(t, FailedOrAborted(), absl::StrCat("agent stopped answering mid-run: ", state.status().message()));
          } else {
            pending = true;
            absl::SleepFor(o_.retry_pause);
          }
          continue;
        }
        t.unanswered = 0;
        if (state->done()) {
          Absorb(t, *state);
        } else {
          pending = true;
        }
      }
    }
  }

  absl::StatusOr<proto::JobState> Wait(Tracked& t, bool until_ready) {
    return t.job->agent->WaitJob(t.job->job.job_id(), until_ready, absl::ToDoubleSeconds(o_.wait_per_call));
  }

  // A finished job's rows (the agent forgets the job once it handed them over).
  void Absorb(Tracked& t, const proto::JobState& state) {
    t.job->agent_rows.assign(state.reports().begin(), state.reports().end());
    if (!state.error().empty()) MarkLost(t, FailedOrAborted(), state.error());
    t.finished = true;
  }

  // Rows for the streams the agent never reported.
  void MarkLost(Tracked& t, const std::string& status, const std::string& error) {
    const proto::SenderJob& job = t.job->job;
    std::set<int> reported;
    for (const auto& r : t.job->agent_rows) {
      if (r.role() == Name(Role::kSender)) reported.insert(r.stream());
    }
    for (int s = 0; s < job.spec().streams(); ++s) {
      const int stream = job.first_stream() + s;
      if (reported.count(stream) == 0) t.job->lost_rows.push_back(LostRow(job, stream, status, error));
    }
    t.finished = true;
  }

  const JobTrackerOptions& o_;
  std::vector<Tracked> tracked_;
};

// The rows' peer, as the job's transport says it (TransportConfig::Peer); the
// controller made the job (Lab::JobFor), so it parses; else its `to` as written.
std::string PeerOf(const proto::RunSpec& spec) {
  const std::vector<std::string> words(spec.transport_flags().begin(), spec.transport_flags().end());
  absl::StatusOr<ParsedFlags> flags = ParseTransportFlagWords(spec.transport(), words);
  const TransportEntry* entry = FindTransport(ParseRunTransport(spec.transport()).value_or(DefaultTransport()));
  if (!flags.ok() || entry == nullptr || entry->parse == nullptr) return spec.to();
  std::string field;
  auto config = entry->parse(spec.to(), *flags, Origin::kPlan, &field);
  return config.ok() ? (*config)->Peer() : spec.to();
}

}  // namespace

proto::TransferReport LostRow(const proto::SenderJob& job, int stream, const std::string& status,
                              const std::string& error) {
  proto::TransferReport row;
  const proto::RunSpec& spec = job.spec();
  row.set_run_id(spec.run_id());
  row.set_label(spec.label());
  row.set_iteration(job.iteration());
  row.set_stream(stream);
  row.set_role(Name(Role::kSender));
  row.set_host(job.host_name());
  row.set_peer(PeerOf(spec));
  row.set_transport(ParseRunTransport(spec.transport()).value_or(DefaultTransport()));
  row.set_started_at_unix_ns(WallNanos());
  row.set_write_mode(spec.write_mode());
  row.set_sync_policy(spec.sync());
  row.set_warmup(job.warmup());
  row.set_status(status);
  row.set_error(error);
  return row;
}

std::vector<LabJob> RunJobs(std::vector<LabJob> jobs, const JobTrackerOptions& options) {
  Tracker(jobs, options).Run();
  return jobs;
}

}  // namespace nasperf
