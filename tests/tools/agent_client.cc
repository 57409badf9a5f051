// Test tool: drives a real agent's job one RPC at a time, as a lab controller would,
// so a test can act between the steps (swap a file after the agent checked it, hold
// jobs at the barrier).
//   agent_client HOST:PORT TOKEN ready JOB RECEIVER FILE
//       StartSender: JOB sends FILE once to the receiver's control address (its
//       file kept there: cleanup never), then waits until it stands at the barrier.
//   agent_client HOST:PORT TOKEN go JOB
//       Go now, then waits for the job's rows; prints "ROLE STATUS ERROR" per row.
//   agent_client HOST:PORT TOKEN start JOB RECEIVER STREAMS SIZE PATTERN [COLLECTOR]
//       StartSender only: JOB sends SIZE bytes of generated data (PATTERN: random,
//       zero...) on each of STREAMS streams, reporting to COLLECTOR when given.
//       Prints "accepted", or "refused CODE MESSAGE" and exits 2.
//   agent_client HOST:PORT TOKEN wait-ready JOB
//       Waits (30 s at most) until every stream of JOB stands at the barrier.
//   agent_client HOST:PORT TOKEN go-at JOB SECONDS
//       Go with a start instant SECONDS from now (may be negative); prints "ok", or
//       "refused CODE MESSAGE" and exits 2.
//   agent_client HOST:PORT TOKEN abort
//       Aborts every job of the agent.
// TLS as a nasperf client (this HOME's key is trusted). Exits 0 when the agent did
// each step, 1 with one line why otherwise.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/clock.h"
#include "lab/agent_client.h"
#include "wire/tls.h"

using namespace nasperf;

namespace {

int Fail(const std::string& why) {
  std::fprintf(stderr, "agent_client: %s\n", why.c_str());
  return 1;
}

int Ready(AgentConnection& agent, const std::string& job_id, const std::string& receiver, const std::string& file) {
  proto::SenderJob job;
  proto::RunSpec& spec = *job.mutable_spec();
  job.set_job_id(job_id);
  spec.set_to(receiver);
  spec.set_file(file);
  spec.set_streams(1);
  spec.set_run_id(absl::StrCat("agent-client-", WallNanos()));
  spec.set_label("agent-client");
  job.set_iteration(1);
  spec.set_cleanup("never");
  if (absl::Status started = agent.StartSender(job); !started.ok()) return Fail(std::string(started.message()));
  auto state = agent.WaitJob(job_id, /*until_ready=*/true, 30);
  if (!state.ok()) return Fail(std::string(state.status().message()));
  if (state->ready() < state->streams()) return Fail(absl::StrCat("not ready: ", state->error()));
  std::printf("ready\n");
  return 0;
}

int Go(AgentConnection& agent, const std::string& job_id) {
  if (absl::Status went = agent.Go(job_id, WallNanos()); !went.ok()) return Fail(std::string(went.message()));
  for (int attempt = 0; attempt < 4; ++attempt) {
    auto state = agent.WaitJob(job_id, /*until_ready=*/false, 30);
    if (!state.ok()) return Fail(std::string(state.status().message()));
    if (!state->done()) continue;
    if (!state->error().empty()) return Fail(state->error());
    for (const proto::TransferReport& row : state->reports()) {
      std::printf("%s %s %s\n", row.role().c_str(), row.status().c_str(), row.error().c_str());
    }
    return 0;
  }
  return Fail("the job did not finish in 120 s");
}

// "refused CODE MESSAGE", exit 2: the agent answered and said no.
int Refused(const absl::Status& status) {
  std::printf("refused %s %s\n", absl::StatusCodeToString(status.code()).c_str(),
              std::string(status.message()).c_str());
  return 2;
}

int Start(AgentConnection& agent, const std::vector<std::string>& args) {
  proto::SenderJob job;
  proto::RunSpec& spec = *job.mutable_spec();
  int streams = 0;
  uint64_t size = 0;
  if (!absl::SimpleAtoi(args[5], &streams) || !absl::SimpleAtoi(args[6], &size)) return Fail("bad STREAMS or SIZE");
  job.set_job_id(args[3]);
  spec.set_to(args[4]);
  spec.set_streams(streams);
  spec.set_size(size);
  spec.set_run_id(absl::StrCat("agent-client-", WallNanos()));
  spec.set_label("agent-client");
  job.set_iteration(1);
  spec.set_pattern(args[7]);
  if (args.size() > 8) job.set_collector(args[8]);
  if (absl::Status started = agent.StartSender(job); !started.ok()) return Refused(started);
  std::printf("accepted\n");
  return 0;
}

int WaitReady(AgentConnection& agent, const std::string& job_id) {
  auto state = agent.WaitJob(job_id, /*until_ready=*/true, 30);
  if (!state.ok()) return Fail(std::string(state.status().message()));
  if (state->ready() < state->streams()) {
    return Fail(absl::StrCat("not ready: ", state->ready(), " of ", state->streams(), " ", state->error()));
  }
  std::printf("ready\n");
  return 0;
}

int GoAt(AgentConnection& agent, const std::string& job_id, const std::string& seconds) {
  double ahead = 0;
  if (!absl::SimpleAtod(seconds, &ahead)) return Fail("bad SECONDS");
  const int64_t at = WallNanos() + static_cast<int64_t>(ahead * 1e9);
  if (absl::Status went = agent.Go(job_id, at); !went.ok()) return Refused(went);
  std::printf("ok\n");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (args.size() < 3) {
    return Fail(
        "usage: agent_client HOST:PORT TOKEN ready JOB RECEIVER FILE | go JOB | start JOB RECEIVER STREAMS SIZE "
        "PATTERN [COLLECTOR] | wait-ready JOB | go-at JOB SECONDS | abort");
  }
  PlanHost host;
  host.name = "agent";
  auto address = ParseHostPort(args[0], kAgentPort);
  if (!address.ok()) return Fail(std::string(address.status().message()));
  host.agent = *address;
  auto trust = PeerTrust::Create(ClientTls{});
  if (!trust.ok()) return Fail(std::string(trust.status().message()));
  std::unique_ptr<AgentConnection> agent = ConnectAgent(host, args[1], trust->get(), "");
  if (args[2] == "ready" && args.size() == 6) return Ready(*agent, args[3], args[4], args[5]);
  if (args[2] == "go" && args.size() == 4) return Go(*agent, args[3]);
  if (args[2] == "start" && (args.size() == 8 || args.size() == 9)) return Start(*agent, args);
  if (args[2] == "wait-ready" && args.size() == 4) return WaitReady(*agent, args[3]);
  if (args[2] == "go-at" && args.size() == 5) return GoAt(*agent, args[3], args[4]);
  if (args[2] == "abort") {
    if (absl::Status aborted = agent->Abort(""); !aborted.ok()) return Fail(std::string(aborted.message()));
    std::printf("aborted\n");
    return 0;
  }
  return Fail(absl::StrCat("unknown mode ", args[2]));
}
