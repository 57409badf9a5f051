// nasperf receiver, agent and fingerprint: the flags of the NAS end and their wiring.
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cli/commands.h"
#include "cli/flags.h"
#include "common/fd.h"
#include "common/log.h"
#include "lab/agent.h"
#include "receiver/receiver.h"
#include "transport/registry.h"
#include "wire/grpc_auth.h"

namespace nasperf::cli {
namespace {

// ----------------------------------------------------------------- receiver

struct ReceiverFlags {
  std::string target, listen = ":7600", token_file, min_free = "1GiB", max_size = "0", cleanup = Name(Cleanup::kEach),
                      ticket_ttl = "30s", idle_timeout = "60s", port_file;
  uint16_t data_port = 0;
  int max_transfers = 64;
  bool stop_with_stdin = false, serve_existing_files = false;
  ServerTls tls;
  std::vector<std::string> allow_source;  // agent: directories whose files a job may send
  std::vector<std::string> allow_path;    // agent: directories beneath which a job may write files
  ReportingFlags reporting;
};

// The receiver's flags, shared by `nasperf receiver` and `nasperf agent`.
void AddReceiverOptions(CLI::App* cmd, ReceiverFlags& f) {
  cmd->add_option("--listen", f.listen, "Control address ADDR:PORT (gRPC); data uses PORT+1")->capture_default_str();
  cmd->add_option("--data-port", f.data_port, "Data port (default: control port + 1)");
  AddTokenFlag(cmd, f.token_file);
  cmd->add_option("--min-free", f.min_free,
                  "Refuse a transfer that would leave less free space than this; 'off' disables the check")
      ->capture_default_str();
  cmd->add_option("--max-size", f.max_size, "Largest transfer accepted (0 = no limit)")->capture_default_str();
  cmd->add_option("--cleanup", f.cleanup, "Default when the sender does not ask: each|end|never")
      ->capture_default_str()
      ->check(CLI::IsMember(Names<Cleanup>()));
  cmd->add_option("--ticket-ttl", f.ticket_ttl, "How long an unused data ticket stays valid")->capture_default_str();
  cmd->add_option("--idle-timeout", f.idle_timeout, "Abort a transfer whose sender sends nothing for this long")
      ->capture_default_str();
  cmd->add_option("--max-transfers", f.max_transfers, "Transfers open at once")
      ->capture_default_str()
      ->check(CLI::Range(1, 1024));
  AddPortFileFlag(cmd, f.port_file);
  cmd->add_flag("--serve-existing-files", f.serve_existing_files,
                "Let token holders read existing files of --target (sender --direction read --remote-file); "
                "without it reads get only files nasperf lays out itself");
  cmd->add_flag(
      "--stop-with-stdin", f.stop_with_stdin,
      "Stop when stdin closes (how `sender --to user@host:/dir` and `lab --ssh` tie it to their SSH channel)");
  AddServerTlsFlags(cmd, f.tls);
  AddReportingFlags(cmd, f.reporting);
}

CLI::App* AddReceiver(CLI::App& app, ReceiverFlags& f) {
  auto* cmd =
      app.add_subcommand("receiver", "Run the receiver agent on the NAS: writes incoming streams into --target");
  cmd->add_option("--target", f.target, "Directory on the array/pool to write into, or 'discard' (network only)")
      ->required();
  AddReceiverOptions(cmd, f);
  return cmd;
}

CLI::App* AddAgent(CLI::App& app, ReceiverFlags& f) {
  auto* cmd =
      app.add_subcommand("agent", "Long-running agent for `nasperf lab`: a receiver, and sender work on request");
  f.target = kDiscardTarget;
  cmd->add_option("--target", f.target, "Directory the receiver writes into, or 'discard' (a host that only sends)")
      ->capture_default_str();
  cmd->add_option("--allow-source", f.allow_source,
                  "A directory whose files lab jobs may send (repeatable); without it, generated data only");
  cmd->add_option("--allow-path", f.allow_path,
                  "A directory on this host in which lab jobs whose `to` is a directory here (a mount point or a "
                  "local disk) may create files: DIR or a directory under it (repeatable); without it, such jobs "
                  "are refused");
  AddReceiverOptions(cmd, f);
  return cmd;
}

// --stop-with-stdin: once stdin reaches its end (the SSH channel that started us
// closed), the same orderly stop as SIGTERM.
void StopWhenStdinCloses() {
  std::thread([] {
    char ignored[256];
    while (true) {
      ssize_t n = ::read(STDIN_FILENO, ignored, sizeof ignored);
      if (n == 0 || (n < 0 && errno != EINTR)) break;
    }
    ::kill(::getpid(), SIGTERM);
  }).detach();
}

// The agent's own options: its token and trust, and the directories its operator lets
// jobs read files from (--allow-source) and write files in (--allow-path), each opened now.
AgentOptions AgentOptionsOf(const std::string& cmd, const ReceiverFlags& f, const std::string& token,
                            std::shared_ptr<const PeerTrust> trust) {
  AgentOptions agent_options;
  agent_options.token = token;
  agent_options.spool_root = f.reporting.spool;
  agent_options.trust = std::move(trust);
  agent_options.target = f.target;
  agent_options.console = stdout;
  for (const auto& [flag, dirs, into] : {std::tuple{"--allow-source", &f.allow_source, &agent_options.allowed_sources},
                                         std::tuple{"--allow-path", &f.allow_path, &agent_options.allowed_paths}}) {
    for (const std::string& dir : *dirs) {
      auto allowed = OpenAllowedDirectory(dir);
      if (!allowed.ok()) UsageError(cmd, flag, allowed.status().message());
      into->push_back(*std::move(allowed));
    }
  }
  return agent_options;
}

// `nasperf receiver`, and with as_agent `nasperf agent` (the same receiver plus the
// Agent service on its control port).
int RunReceiver(const ReceiverFlags& f, bool as_agent = false) {
  const std::string cmd = as_agent ? "agent" : "receiver";
  ReceiverOptions options;
  options.target = f.target;
  options.listen = AddressFlag(cmd, "--listen", f.listen, kAgentPort, /*allow_zero=*/true);
  options.data_port = f.data_port;
  if (f.min_free == "off") {
    options.check_free = false;
  } else {
    options.min_free = SizeFlag(cmd, "--min-free", f.min_free);
  }
  options.max_size = SizeFlag(cmd, "--max-size", f.max_size);
  options.cleanup = EnumFlag<Cleanup>(cmd, "--cleanup", f.cleanup);
  options.ticket_ttl = DurationFlag(cmd, "--ticket-ttl", f.ticket_ttl);
  options.idle_timeout = DurationFlag(cmd, "--idle-timeout", f.idle_timeout);
  options.max_transfers = f.max_transfers;
  options.serve_existing_files = f.serve_existing_files;
  const TokenSource token = TokenFlag(cmd, f.token_file, /*generate_if_missing=*/true);
  options.token = token.token;
  options.tls = f.tls;
  options.tls.plaintext = f.reporting.tls.plaintext;

  const StopSignals signals = StopSignals::Block();
  if (f.stop_with_stdin) StopWhenStdinCloses();
  const std::shared_ptr<const PeerTrust> trust = TrustFlags(cmd, f.reporting.tls);
  auto spool = StartReporting(cmd, f.reporting, options.token, trust);
  if (!spool.ok()) return Fail(cmd, spool.status());
  options.reports = spool->get();
  std::unique_ptr<AgentService> agent;
  if (as_agent) {
    const AgentOptions agent_options = AgentOptionsOf(cmd, f, options.token, trust);
    agent = AgentService::Create(agent_options);
    options.extra_services.push_back(agent->service());
    options.transports = BuiltTransportWords();
  }
  std::string files_warning;
  if (absl::Status s = RaiseServerFileLimit(&files_warning); !s.ok()) return Fail(cmd, s);
  if (!files_warning.empty())
    std::fprintf(stderr, "nasperf %s: warning: %s\n", cmd.c_str(), TerminalSafe(files_warning).c_str());
  auto receiver = Receiver::Start(options);
  if (!receiver.ok()) return Fail(cmd, receiver.status());
  std::printf("nasperf %s: control port %u, data port %u, target %s\n", cmd.c_str(), (*receiver)->control_port(),
              (*receiver)->data_port(), options.target.c_str());
  std::printf("nasperf %s: %s\n", cmd.c_str(), (*receiver)->security().summary.c_str());
  if (*spool) {
    std::printf("nasperf %s: reporting to collector %s (spool %s)\n", cmd.c_str(), (*spool)->collector().c_str(),
                (*spool)->dir().c_str());
  }
  SayToken(cmd, token, "the sender");
  std::fflush(stdout);
  if (!f.port_file.empty()) {
    std::string ports =
        absl::StrCat("control=", (*receiver)->control_port(), "\ndata=", (*receiver)->data_port(), "\n");
    if (absl::Status s = WritePortFile(f.port_file, ports); !s.ok()) return Fail(cmd, s);
  }
  const int signal_number = signals.Wait();
  std::printf("nasperf %s: stopping (signal %d)\n", cmd.c_str(), signal_number);
  std::fflush(stdout);
  if (agent) agent->Shutdown();  // aborts sender jobs first: their receivers then see short streams
  (*receiver)->Shutdown();
  if (*spool) ReportSpool(cmd, **spool, absl::Seconds(5));
  ReceiverCounters c = (*receiver)->counters();
  std::printf(
      "nasperf %s: %llu ok, %llu failed, %llu aborted, %llu connections refused, %llu timed out "
      "before a header, %llu over the connection limits\n",
      cmd.c_str(), static_cast<unsigned long long>(c.ok), static_cast<unsigned long long>(c.failed),
      static_cast<unsigned long long>(c.aborted), static_cast<unsigned long long>(c.refused),
      static_cast<unsigned long long>(c.timed_out), static_cast<unsigned long long>(c.over_limit));
  return 0;
}

CLI::App* AddFingerprint(CLI::App& app) {
  return app.add_subcommand(
      "fingerprint", "Print this host's TLS key fingerprint (made if missing), to compare with what a client pins");
}

int RunFingerprint() {
  auto id = LoadOrCreateIdentity();
  if (!id.ok()) return Fail("fingerprint", id.status());
  std::printf("%s %s\n", id->fingerprint.c_str(), id->path.c_str());
  return 0;
}

}  // namespace

Command AddReceiverCommand(CLI::App& app) {
  return CommandOf<ReceiverFlags>(app, AddReceiver, [](const ReceiverFlags& f) { return RunReceiver(f); });
}

Command AddAgentCommand(CLI::App& app) {
  return CommandOf<ReceiverFlags>(app, AddAgent,
                                  [](const ReceiverFlags& f) { return RunReceiver(f, /*as_agent=*/true); });
}

Command AddFingerprintCommand(CLI::App& app) { return {AddFingerprint(app), RunFingerprint}; }

}  // namespace nasperf::cli
