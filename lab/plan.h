// A lab plan (`nasperf lab PLAN.toml`): hosts with their agents, the transfers of
// each run, how many runs, and where the rows go. Parse() reads and validates the
// whole file and names the file and line of the first problem; the result is plain
// data. Pure functions, thread-safe.
#ifndef NASPERF_LAB_PLAN_H_
#define NASPERF_LAB_PLAN_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/fd.h"
#include "common/policy.h"
#include "proto/nasperf.pb.h"
#include "transport/registry.h"

namespace nasperf {

struct PlanHost {
  std::string name;
  HostPort agent{"", kAgentPort};
  std::string target;           // what its agent must write into; empty = any
  std::optional<uint32_t> mtu;  // expected interface MTU; checked before the runs
  // `nasperf lab --ssh`: how to start the agent when none answers (ssh/remote_start.h).
  std::string ssh;  // [user@]host[:port]
  std::string ssh_identity, ssh_known_hosts;
  std::string nasperf;                   // the binary on that host; empty: upload this one (ssh/deploy.h)
  std::vector<std::string> agent_flags;  // more flags for an agent started over SSH
  // observe = true: its agent watches its target (or observe_dir under it) while the lab
  // runs (lab/observations.h), so each copy arriving there also gets a row of role nas:
  // the NAS's side of any copy whose far end runs no nasperf.
  bool observe = false;
  std::string observe_dir;
  int line = 0;
};

struct PlanTransfer {
  std::string from;  // a host name: its agent sends (or, for a read, takes)
  // A transport with an agent on the far end (TransportCaps::agent): a host name.
  // One that logs in over SSH (TransportCaps::ssh_login): `[user@]host[:port]:/dir`,
  // checked by its entry's parse. A share's (TransportCaps::url): its URL. A
  // directory on the sending host (TransportCaps::local_dir): its absolute path, where
  // the sending agent's --allow-path must let it write.
  std::string to;
  std::string transport = DefaultTransport();  // transport = "…" (transport/registry.h)
  // Files on the sending agent's host (not the controller's, unlike [[host]]'s keys
  // of the same name): its key and its known_hosts for the login. Empty: its defaults.
  std::string ssh_identity, ssh_known_hosts;
  // A share's URL in `to` (TransportCaps::url: the entry's to_form),
  // and its login's file on the sending agent's host (TransportCaps::credentials_file).
  std::string credentials;
  // The share transport's own flags (transport_flags = ["--FLAG", "VALUE"]),
  // checked by its declarations at the plan check and again by the sending agent.
  std::vector<std::string> transport_flags;
  uint64_t size = 0;      // generated data, or
  std::string file;       // a file on the sending host, or
  int files = 0;          // many files per transfer (common/file_set.h), of
  std::string file_size;  // sizes as --file-size takes them
  int files_per_dir = 0;  // --files-per-dir: a new directory each this many
  int streams = 1;
  std::string write_mode = "buffered";
  std::string sync_policy = "end";
  std::string pattern = "random";
  bool verify = false;
  std::string direction = "write";  // read: `to` streams a file it lays out to `from`
  // Reads: the NAS's page cache before each run, and through it or direct (O_DIRECT).
  // Empty: not named; the agent reads cold and buffered, or as a share's client does
  // (a transport without TransportCaps::read_cache refuses a named one).
  std::string cache;
  std::string read_mode;
  int line = 0;

  // `to` names a [[host]] whose agent takes the bytes (else it is an SSH login, and
  // the far end has no agent: no Hello, no path check, no receiver rows).
  bool ToIsHost() const { return TransportFor(transport).caps.agent; }
};

struct PlanCollector {
  std::string out = "./nasperf-results";  // the embedded collector writes here
  HostPort listen{"", 0};                 // the embedded collector's address (port 0: any)
  std::string address;                    // an external collector HOST:PORT instead
  // The embedded collector's live view (collector/live_http.h), as `collector --http`.
  std::optional<HostPort> http;
  std::string http_token_file;
  bool http_tls = false;
};

struct Plan {
  std::string path;
  std::string label;
  int runs = 1;
  int warmup = 0;
  absl::Duration pause = absl::ZeroDuration();
  bool stop_on_failure = true;     // on_failure = "stop" (default) or "continue"
  std::optional<Cleanup> cleanup;  // unset: the receivers' default
  double interval_s = 1.0;
  bool interval_set = false;  // the plan names it; else the lab adapts it (SampleIntervalFor)
  uint32_t link_mbps = 0;     // link_speed: for line_rate_pct on shaped links
  absl::Duration start_delay = absl::Milliseconds(250);  // barrier: go -> first byte
  PlanCollector collector;
  std::vector<PlanHost> hosts;
  std::vector<PlanTransfer> transfers;

  const PlanHost* FindHost(const std::string& name) const;
};

// The sampling interval for a run after one whose shortest transfer took
// `shortest_s`: about 10 samples in it, so its timeline is a curve, never below
// kMinIntervalS nor above `most_s` (the plan's default); whole milliseconds.
double SampleIntervalFor(double shortest_s, double most_s);

// A transfer's run as a lab job carries it (SenderJob.spec): the transfer's keys and
// the plan's label, cleanup and link speed. Its `to` stays empty for a transport with
// an agent there (the controller puts the [[host]]'s address and pinned key in); the
// run id, interval and placement are the controller's, per run.
proto::RunSpec SpecOf(const Plan& plan, const PlanTransfer& t);

// Parses TOML text; `path` only names the file in messages ("plan.toml:12: ...").
absl::StatusOr<Plan> ParsePlan(const std::string& text, const std::string& path);
absl::StatusOr<Plan> LoadPlan(const std::string& path);

}  // namespace nasperf

#endif  // NASPERF_LAB_PLAN_H_
