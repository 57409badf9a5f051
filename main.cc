// nasperf: one binary, git/iperf3-style subcommands. This file only parses flags
// and wires the libraries together; every subcommand's work lives in its folder.
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <utility>

#include "CLI/CLI.hpp"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "collector/collector.h"
#include "collector/collector_client.h"
#include "collector/csv_sink.h"
#include "collector/spool.h"
#include "common/grpc_auth.h"
#include "common/log.h"
#include "common/payload.h"
#include "common/policy.h"
#include "common/tls.h"
#include "common/token.h"
#include "common/units.h"
#include "common/validate.h"
#include "lab/agent.h"
#include "lab/controller.h"
#include "lab/plan.h"
#include "lab/remote_start.h"
#include "receiver/receiver.h"
#include "receiver/target.h"
#include "report/analysis.h"
#include "report/html.h"
#include "report/table.h"
#include "sender/path_check.h"
#include "sender/sender.h"

namespace nasperf {
namespace {

constexpr int kUsageError = 2;

// A flag value in human units that failed to parse: one line naming the flag, exit 2.
[[noreturn]] void UsageError(const std::string& command, const std::string& flag,
                             absl::string_view message) {
  std::fprintf(stderr, "nasperf %s: %s: %s\n", command.c_str(), flag.c_str(),
               std::string(message).c_str());
  std::exit(kUsageError);
}

// A word flag (--cleanup, --write-mode, ...) as its type; a usage error otherwise.
template <typename T>
T EnumFlag(const std::string& command, const std::string& flag, const std::string& text) {
  auto value = Parse<T>(text);
  if (!value.ok()) UsageError(command, flag, value.status().message());
  return *value;
}

uint64_t SizeFlag(const std::string& command, const std::string& flag, const std::string& text) {
  auto size = ParseSize(text);
  if (!size.ok()) UsageError(command, flag, size.status().message());
  return *size;
}

absl::Duration DurationFlag(const std::string& command, const std::string& flag,
                            const std::string& text) {
  auto d = ParseDuration(text);
  if (!d.ok()) UsageError(command, flag, d.status().message());
  return *d;
}

void AddLinkSpeedFlag(CLI::App* cmd, std::string& speed) {
  cmd->add_option("--link-speed", speed,
                  "Link speed, e.g. 10gbit: what line_rate_pct and the TCP ceiling are measured against "
                  "(when the NIC reports none, or a shaper sets the real rate)");
}

// --link-speed in Mb/s; 0 when not given.
uint32_t LinkSpeedFlag(const std::string& command, const std::string& text) {
  if (text.empty()) return 0;
  auto speed = ParseLinkSpeed(text);
  if (!speed.ok()) UsageError(command, "--link-speed", speed.status().message());
  return *speed;
}

HostPort AddressFlag(const std::string& command, const std::string& flag, const std::string& text,
                     uint16_t default_port, bool allow_zero) {
  auto hp = ParseHostPort(text, default_port, allow_zero);
  if (!hp.ok()) UsageError(command, flag, hp.status().message());
  return *hp;
}

int Fail(const std::string& command, const absl::Status& status) {
  std::fprintf(stderr, "nasperf %s: %s\n", command.c_str(), std::string(status.message()).c_str());
  return 1;
}

// SIGINT/SIGTERM, blocked in every thread started after Block(), delivered to
// Wait() alone: every long-running command stops the same way. A shell that starts
// us in the background leaves SIGINT ignored; a blocked signal still reaches
// sigwait, but only with the default disposition back in place.
class StopSignals {
 public:
  static StopSignals Block() {
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    StopSignals s;
    sigemptyset(&s.set_);
    sigaddset(&s.set_, SIGINT);
    sigaddset(&s.set_, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &s.set_, nullptr);
    return s;
  }
  // Blocks until one arrives; returns its number.
  int Wait() const {
    int signal_number = 0;
    sigwait(&set_, &signal_number);
    return signal_number;
  }

 private:
  sigset_t set_;
};

// Ctrl-C or SIGTERM for a command that runs transfers: blocks both first (call it
// before any thread starts), then a watcher sets the flag returned and says so; the
// command aborts its transfers, records them as aborted and exits 130.
const std::atomic<bool>* StopOnSignal(const std::string& command, const char* what) {
  const StopSignals signals = StopSignals::Block();
  static std::atomic<bool> stop{false};
  std::thread([signals, command, what] {
    std::fprintf(stderr, "nasperf %s: stopping (signal %d): %s\n", command.c_str(), signals.Wait(), what);
    stop.store(true);
  }).detach();
  return &stop;
}

// --token-file, the same on every command.
void AddTokenFlag(CLI::App* cmd, std::string& file) {
  cmd->add_option("--token-file", file,
                  "File holding the shared token (else NASPERF_TOKEN, else ~/.config/nasperf/token, "
                  "which receivers, agents and collectors make at first start)");
}

// The token, or a one-line error and exit 1. Servers make one when there is none.
TokenSource TokenFlag(const std::string& command, const std::string& file, bool generate_if_missing) {
  auto token = LoadToken(file, generate_if_missing);
  if (!token.ok()) std::exit(Fail(command, token.status()));
  return *token;
}

// A server's start banner line on its token; a new one is shown once, for `clients`.
void SayToken(const std::string& command, const TokenSource& token, const char* clients) {
  if (token.generated) {
    std::printf("nasperf %s: generated a token in %s; on %s run:\n  export NASPERF_TOKEN=%s\n", command.c_str(),
                token.origin.c_str(), clients, token.token.c_str());
  } else {
    std::printf("nasperf %s: token from %s\n", command.c_str(), token.origin.c_str());
  }
}

void AddPortFileFlag(CLI::App* cmd, std::string& file) {
  cmd->add_option("--port-file", file, "Write the listening port(s) to this file once listening (for scripts)");
}

absl::Status WritePortFile(const std::string& path, const std::string& content) {
  return ReplaceFile(path, content, 0644, /*durable=*/false);
}

// ------------------------------------------------------------------ TLS

// How a client trusts its peers (common/tls.h): pinned keys by default.
void AddClientTlsFlags(CLI::App* cmd, ClientTls& t) {
  cmd->add_flag("--accept-new-agent-key", t.accept_new,
                "Pin the TLS key of a peer not yet in known_agents (a changed key is still refused)");
  cmd->add_option("--known-agents", t.known_agents, "File of pinned TLS keys (default ~/.config/nasperf/known_agents)");
  cmd->add_option("--tls-ca", t.ca, "Trust peers whose certificate this PEM CA signed, instead of pinning");
  cmd->add_flag("--plaintext", t.plaintext,
                "No TLS: the token and every control message cross the network readable (peers need it too)");
}

std::shared_ptr<const PeerTrust> TrustFlags(const std::string& cmd, const ClientTls& t) {
  auto trust = PeerTrust::Create(t);
  if (!trust.ok()) std::exit(Fail(cmd, trust.status()));
  if (t.plaintext) std::fprintf(stderr, "nasperf %s: --plaintext: the token crosses the network readable\n", cmd.c_str());
  return *trust;
}

// A server's own certificate instead of the generated one.
void AddServerTlsFlags(CLI::App* cmd, ServerTls& t) {
  cmd->add_option("--tls-cert", t.cert, "PEM certificate for the control port (default: a generated one, pinned by clients)");
  cmd->add_option("--tls-key", t.key, "PEM private key for --tls-cert");
}

void AddFingerprint(CLI::App& app) {
  app.add_subcommand("fingerprint", "Print this host's TLS key fingerprint (made if missing), to compare with what a client pins");
}

int RunFingerprint() {
  auto id = LoadOrCreateIdentity();
  if (!id.ok()) return Fail("fingerprint", id.status());
  std::printf("%s %s\n", id->fingerprint.c_str(), id->path.c_str());
  return 0;
}

// ------------------------------------------------------------------ reporting

// Flags every agent shares for reporting to a collector and for TLS toward peers.
struct ReportingFlags {
  std::string collector, spool = DefaultSpoolRoot();
  ClientTls tls;
};

void AddReportingFlags(CLI::App* cmd, ReportingFlags& f) {
  cmd->add_option("--collector", f.collector, "Report every row to this collector HOST[:PORT] (default port 7700)");
  cmd->add_option("--spool", f.spool, "Where reports wait while the collector is unreachable")->capture_default_str();
  AddClientTlsFlags(cmd, f.tls);
}

// A spooling sink toward --collector, or null without one. `trust`: the command's
// one PeerTrust (TrustFlags), shared with its other clients.
absl::StatusOr<std::unique_ptr<SpoolingSink>> StartReporting(const std::string& cmd, const ReportingFlags& f,
                                                             const std::string& token,
                                                             std::shared_ptr<const PeerTrust> trust) {
  if (f.collector.empty()) return std::unique_ptr<SpoolingSink>();
  HostPort address = AddressFlag(cmd, "--collector", f.collector, kCollectorPort, false);
  return SpoolingSink::Start(std::make_unique<CollectorClient>(address, token, std::move(trust)), f.spool);
}

// Waits a little for the spool to empty and says what is left, one line.
size_t ReportSpool(const std::string& cmd, SpoolingSink& spool, absl::Duration wait) {
  size_t left = spool.Drain(wait);
  if (left == 0) {
    std::printf("nasperf %s: every report delivered to collector %s\n", cmd.c_str(), spool.collector().c_str());
  } else {
    std::printf("nasperf %s: %zu report%s still spooled in %s; the next nasperf with --collector %s sends "
                "them, or run: nasperf flush --collector %s\n",
                cmd.c_str(), left, left == 1 ? "" : "s", spool.dir().c_str(), spool.collector().c_str(),
                spool.collector().c_str());
  }
  std::fflush(stdout);
  return left;
}

// ------------------------------------------------------------------ receiver

struct ReceiverFlags {
  std::string target, listen = ":7600", token_file, min_free = "1GiB", max_size = "0",
                      cleanup = "each", ticket_ttl = "30s", idle_timeout = "60s", port_file;
  uint16_t data_port = 0;
  int max_transfers = 64;
  bool stop_with_stdin = false, serve_existing_files = false;
  ServerTls tls;
  std::vector<std::string> allow_source;  // agent: directories whose files a job may send
  ReportingFlags reporting;
};

// The receiver's flags, shared by `nasperf receiver` and `nasperf agent`.
void AddReceiverOptions(CLI::App* cmd, ReceiverFlags& f) {
  cmd->add_option("--listen", f.listen, "Control address ADDR:PORT (gRPC); data uses PORT+1")->capture_default_str();
  cmd->add_option("--data-port", f.data_port, "Data port (default: control port + 1)");
  AddTokenFlag(cmd, f.token_file);
  cmd->add_option("--min-free", f.min_free, "Refuse a transfer that would leave less free space than this; 'off' disables the check")->capture_default_str();
  cmd->add_option("--max-size", f.max_size, "Largest transfer accepted (0 = no limit)")->capture_default_str();
  cmd->add_option("--cleanup", f.cleanup, "Default when the sender does not ask: each|end|never")->capture_default_str()
      ->check(CLI::IsMember(Names<Cleanup>()));
  cmd->add_option("--ticket-ttl", f.ticket_ttl, "How long an unused data ticket stays valid")->capture_default_str();
  cmd->add_option("--idle-timeout", f.idle_timeout, "Abort a transfer whose sender sends nothing for this long")->capture_default_str();
  cmd->add_option("--max-transfers", f.max_transfers, "Transfers open at once")->capture_default_str()->check(CLI::Range(1, 1024));
  AddPortFileFlag(cmd, f.port_file);
  cmd->add_flag("--serve-existing-files", f.serve_existing_files,
                "Let token holders read existing files of --target (sender --direction read --remote-file); "
                "without it reads get only files nasperf lays out itself");
  cmd->add_flag("--stop-with-stdin", f.stop_with_stdin,
                "Stop when stdin closes (how `sender --to user@host:/dir` and `lab --ssh` tie it to their SSH channel)");
  AddServerTlsFlags(cmd, f.tls);
  AddReportingFlags(cmd, f.reporting);
}

void AddReceiver(CLI::App& app, ReceiverFlags& f) {
  auto* cmd = app.add_subcommand("receiver", "Run the receiver agent on the NAS: writes incoming streams into --target");
  cmd->add_option("--target", f.target, "Directory on the array/pool to write into, or 'discard' (network only)")->required();
  AddReceiverOptions(cmd, f);
}

void AddAgent(CLI::App& app, ReceiverFlags& f) {
  auto* cmd = app.add_subcommand("agent", "Long-running agent for `nasperf lab`: a receiver, and sender work on request");
  f.target = kDiscardTarget;
  cmd->add_option("--target", f.target, "Directory the receiver writes into, or 'discard' (a host that only sends)")
      ->capture_default_str();
  cmd->add_option("--allow-source", f.allow_source,
                  "A directory whose files lab jobs may send (repeatable); without it, generated data only");
  AddReceiverOptions(cmd, f);
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
    AgentOptions agent_options;
    agent_options.token = options.token;
    agent_options.spool_root = f.reporting.spool;
    agent_options.trust = trust;
    agent_options.console = stdout;
    for (const std::string& dir : f.allow_source) {
      auto canonical = CanonicalDirectory(dir);
      if (!canonical.ok()) UsageError(cmd, "--allow-source", canonical.status().message());
      agent_options.allowed_sources.push_back(*canonical);
    }
    agent = AgentService::Create(agent_options);
    options.extra_services.push_back(agent->service());
  }
  auto receiver = Receiver::Start(options);
  if (!receiver.ok()) return Fail(cmd, receiver.status());
  std::printf("nasperf %s: control port %u, data port %u, target %s\n", cmd.c_str(),
              (*receiver)->control_port(), (*receiver)->data_port(), options.target.c_str());
  std::printf("nasperf %s: %s\n", cmd.c_str(), (*receiver)->security().summary.c_str());
  if (*spool) {
    std::printf("nasperf %s: reporting to collector %s (spool %s)\n", cmd.c_str(), (*spool)->collector().c_str(),
                (*spool)->dir().c_str());
  }
  SayToken(cmd, token, "the sender");
  std::fflush(stdout);
  if (!f.port_file.empty()) {
    std::string ports = absl::StrCat("control=", (*receiver)->control_port(), "\ndata=",
                                     (*receiver)->data_port(), "\n");
    if (absl::Status s = WritePortFile(f.port_file, ports); !s.ok()) return Fail(cmd, s);
  }
  const int signal_number = signals.Wait();
  std::printf("nasperf %s: stopping (signal %d)\n", cmd.c_str(), signal_number);
  std::fflush(stdout);
  if (agent) agent->Shutdown();  // aborts sender jobs first: their receivers then see short streams
  (*receiver)->Shutdown();
  if (*spool) ReportSpool(cmd, **spool, absl::Seconds(5));
  ReceiverCounters c = (*receiver)->counters();
  std::printf("nasperf %s: %llu ok, %llu failed, %llu aborted, %llu connections refused, %llu timed out "
              "before a header, %llu over the connection limits\n",
              cmd.c_str(), static_cast<unsigned long long>(c.ok), static_cast<unsigned long long>(c.failed),
              static_cast<unsigned long long>(c.aborted), static_cast<unsigned long long>(c.refused),
              static_cast<unsigned long long>(c.timed_out), static_cast<unsigned long long>(c.over_limit));
  return 0;
}

// ------------------------------------------------------------------ sender

struct SenderFlags {
  std::string to, file, size, pattern = "random", pause = "0s", label, run_id,
                     write_mode = "buffered", sync = "end", cleanup, out = "./nasperf-results",
                     interval = "1s", token_file, link_speed, window;
  std::string transport = "native", identity, known_hosts, ssh_config, deploy_binary;
  std::string direction = "write", cache, remote_file, local_target;
  uint16_t ssh_port = 0;
  bool accept_new_host_key = false;
  int runs = 1, warmup = 0, streams = 1;
  bool verify = false, no_progress = false, direct_fallback = false;
  ReportingFlags reporting;
};

void AddSender(CLI::App& app, SenderFlags& f) {
  auto* cmd = app.add_subcommand("sender", "Push files or generated data to a receiver (or over scp/sftp to any SSH server) in timed runs");
  cmd->add_option("--to", f.to,
                  "Receiver HOST[:PORT] (control port, default 7600); [user@]host:/dir: start a receiver there over "
                  "SSH for this run (nothing installed on the NAS); scp/sftp: [user@]host:/remote/dir")->required();
  cmd->add_option("--transport", f.transport, "native (the receiver agent), or scp/sftp to any SSH server (no agent)")
      ->capture_default_str()->check(CLI::IsMember(Names<TransportKind>()));
  cmd->add_option("--ssh-port", f.ssh_port, "SSH port (default: ~/.ssh/config's, else 22)")->check(CLI::Range(1, 65535));
  cmd->add_option("--identity", f.identity, "SSH private key file to log in with (default: ssh-agent, then ~/.ssh/id_*)");
  cmd->add_option("--known-hosts", f.known_hosts, "known_hosts file to check the SSH host key against (default ~/.ssh/known_hosts)");
  cmd->add_option("--ssh-config", f.ssh_config, "ssh_config file to read (default ~/.ssh/config and /etc/ssh/ssh_config)");
  cmd->add_flag("--accept-new-host-key", f.accept_new_host_key, "Record an unknown SSH host key (a changed one is still refused)");
  cmd->add_option("--deploy-binary", f.deploy_binary,
                  "With --to user@host:/dir: the static nasperf to upload (default: this one, if it is the static build)");
  cmd->add_option("--direction", f.direction,
                  "write: push to the NAS; read: the NAS streams a file of its target to us (native transport)")
      ->capture_default_str()->check(CLI::IsMember(Names<Direction>()));
  cmd->add_option("--cache", f.cache,
                  "Reads: the NAS's page cache before each run: cold (the file's pages dropped) or warm (read once first); "
                  "default cold");
  cmd->add_option("--remote-file", f.remote_file,
                  "Reads: read this existing file in the receiver's target (a name, no '/'); default: the NAS lays out "
                  "a file of --size, untimed, and removes it after the run");
  cmd->add_option("--local-target", f.local_target,
                  "Reads: write what arrives into this directory (--write-mode, --sync, --cleanup apply); default: discard");
  auto* file = cmd->add_option("--file", f.file, "Send this file (zero-copy unless --verify)");
  auto* size = cmd->add_option("--size", f.size, "Send this much generated data, e.g. 45GiB");
  file->excludes(size);
  cmd->add_option("--pattern", f.pattern, "Generated data: random (incompressible) or zero")->capture_default_str()
      ->check(CLI::IsMember({"random", "zero"}));
  cmd->add_option("--runs", f.runs, "Measured iterations")->capture_default_str()->check(CLI::Range(1, 100000));
  cmd->add_option("--warmup", f.warmup, "Warm-up iterations first (recorded, marked, not in statistics)")->capture_default_str()
      ->check(CLI::Range(0, 1000));
  cmd->add_option("--streams", f.streams, "Parallel streams per iteration")->capture_default_str()->check(CLI::Range(1, kMaxStreams));
  cmd->add_option("--pause", f.pause, "Pause between iterations, e.g. 30s")->capture_default_str();
  cmd->add_option("--label", f.label, "Configuration label for comparisons (e.g. cache-on)");
  cmd->add_option("--run-id", f.run_id, "Run id (default: time + random)");
  cmd->add_option("--write-mode", f.write_mode, "Receiver write mode: buffered|direct|dsync")->capture_default_str()
      ->check(CLI::IsMember(Names<WriteMode>()));
  cmd->add_option("--sync", f.sync, "Sync policy: none|end|every=SIZE (sftp: fsync@openssh.com when offered; scp: none)")->capture_default_str();
  cmd->add_option("--cleanup", f.cleanup, "Delete received files: each|end|never (default: the receiver's; over scp/sftp each)")
      ->check(CLI::IsMember(Names<Cleanup>()));
  cmd->add_flag("--verify", f.verify, "Compare XXH3 checksums end to end");
  cmd->add_flag("--direct-fallback", f.direct_fallback, "With --write-mode direct: write buffered (and say so) when the target refuses O_DIRECT");
  cmd->add_option("--out", f.out, "Directory for transfers.csv and samples.csv")->capture_default_str();
  cmd->add_option("--interval", f.interval, "Per-interval samples every DUR (0 = none)")->capture_default_str();
  AddTokenFlag(cmd, f.token_file);
  cmd->add_flag("--no-progress", f.no_progress, "No live progress line");
  AddLinkSpeedFlag(cmd, f.link_speed);
  cmd->add_option("--window", f.window, "Fixed TCP socket buffers at both ends, e.g. 16MiB (default: 2 x bandwidth-delay product when autotuning falls short)");
  AddReportingFlags(cmd, f.reporting);
}

// The SSH login for --to [user@]host:/dir: destination, keys, host-key policy.
SshOptions MakeSshLogin(const SenderFlags& f) {
  SshOptions ssh;
  auto destination = ParseSshDestination(f.to);
  if (!destination.ok()) UsageError("sender", "--to", destination.status().message());
  ssh.to = *destination;
  ssh.port = f.ssh_port;
  ssh.identity = f.identity;
  ssh.known_hosts = f.known_hosts;
  ssh.config_file = f.ssh_config;
  ssh.accept_new_host_key = f.accept_new_host_key;
  ssh.prompt = isatty(STDIN_FILENO) != 0;
  return ssh;
}

// --transport scp|sftp: the SSH login and the transport's knobs; the flags that need
// the agent are refused.
SshOptions MakeSshOptions(const SenderFlags& f, TransportKind transport) {
  const std::string cmd = "sender";
  SshOptions ssh = MakeSshLogin(f);
  ssh.sftp = transport == TransportKind::kSftp;
  // Benchmark knobs (docs/PERFORMANCE.md): bytes per SFTP write (at most
  // kMaxSftpWrite) and writes in flight (1 = plain sftp_write).
  if (const char* size = std::getenv("NASPERF_SFTP_WRITE"); size != nullptr) {
    auto parsed = ParseSize(size);
    if (!parsed.ok() || *parsed == 0 || *parsed > kMaxSftpWrite) {
      UsageError(cmd, "NASPERF_SFTP_WRITE", absl::StrCat("must be a size from 1 to ", kMaxSftpWrite, " bytes"));
    }
    ssh.sftp_write_size = *parsed;
  }
  if (const char* depth = std::getenv("NASPERF_SFTP_IN_FLIGHT"); depth != nullptr) {
    int parsed = std::atoi(depth);
    if (parsed < 1 || parsed > 256) UsageError(cmd, "NASPERF_SFTP_IN_FLIGHT", "must be 1 to 256");
    ssh.sftp_writes_in_flight = static_cast<size_t>(parsed);
  }
  if (f.verify) UsageError(cmd, "--verify", "needs the receiver agent (--transport native); compare files with cmp or sha256sum");
  if (EnumFlag<WriteMode>(cmd, "--write-mode", f.write_mode) != WriteMode::kBuffered) {
    UsageError(cmd, "--write-mode", "needs the receiver agent (--transport native)");
  }
  return ssh;
}

// --to [user@]host:/dir with the native transport: a receiver started over SSH.
bool DeploysReceiver(const SenderFlags& f) {
  if (f.transport != "native") return false;
  auto destination = ParseSshDestination(f.to);
  return destination.ok() && absl::StartsWith(destination->dir, "/");
}

// --direction and the flags only a read takes (--cache, --remote-file, --local-target).
void SetDirection(const SenderFlags& f, SenderOptions& o) {
  const std::string cmd = "sender";
  o.direction = EnumFlag<Direction>(cmd, "--direction", f.direction);
  if (o.direction == Direction::kRead) {
    if (o.transport == TransportKind::kScp) UsageError(cmd, "--direction", "read over SSH needs --transport sftp");
    if (o.transport == TransportKind::kSftp) {
      if (f.remote_file.empty()) UsageError(cmd, "--remote-file", "a read over sftp pulls an existing file: give its name");
      if (!f.cache.empty()) {
        UsageError(cmd, "--cache", "needs the receiver agent: over sftp the server's page cache is not nasperf's to control");
      }
    }
    if (!f.file.empty()) {
      UsageError(cmd, "--file", "is what a write sends; a read reads --remote-file, or a file of --size the NAS lays out");
    }
    if (f.size.empty() == f.remote_file.empty()) UsageError(cmd, "--size", "a read needs --size SIZE or --remote-file NAME");
    if (!f.remote_file.empty()) {
      if (absl::Status s = CheckFileName("--remote-file", f.remote_file); !s.ok()) UsageError(cmd, "--remote-file", s.message());
    }
    o.cache = f.cache.empty() ? CacheState::kCold : EnumFlag<CacheState>(cmd, "--cache", f.cache);
    o.remote_file = f.remote_file;
    o.local_target = f.local_target;
  } else {
    for (auto [given, flag] : {std::pair{!f.cache.empty(), "--cache"}, {!f.remote_file.empty(), "--remote-file"},
                               {!f.local_target.empty(), "--local-target"}}) {
      if (given) UsageError(cmd, flag, "only with --direction read");
    }
  }
}

absl::StatusOr<SenderOptions> MakeSenderOptions(const SenderFlags& f) {
  const std::string cmd = "sender";
  SenderOptions o;
  o.transport = EnumFlag<TransportKind>(cmd, "--transport", f.transport);
  const bool deploys = DeploysReceiver(f);
  if (deploys) {
    o.ssh = MakeSshLogin(f);  // the receiver's login; the data goes native
  } else if (o.transport == TransportKind::kNative) {
    o.to = AddressFlag(cmd, "--to", f.to, kAgentPort, false);
    for (auto [given, flag] : {std::pair{f.ssh_port != 0, "--ssh-port"}, {!f.identity.empty(), "--identity"},
                               {!f.known_hosts.empty(), "--known-hosts"}, {!f.ssh_config.empty(), "--ssh-config"},
                               {f.accept_new_host_key, "--accept-new-host-key"}}) {
      if (given) UsageError(cmd, flag, "only with --to [user@]host:/dir or --transport scp|sftp");
    }
  } else {
    o.ssh = MakeSshOptions(f, o.transport);
  }
  if (!f.deploy_binary.empty() && !deploys) UsageError(cmd, "--deploy-binary", "only with --to [user@]host:/dir");
  if (deploys && (f.reporting.tls.plaintext || !f.reporting.tls.ca.empty())) {
    UsageError(cmd, f.reporting.tls.plaintext ? "--plaintext" : "--tls-ca",
               "not with --to [user@]host:/dir: the receiver started there serves TLS with the key it shows over SSH");
  }
  o.file = f.file;
  SetDirection(f, o);
  if (f.file.empty() && f.size.empty() && f.remote_file.empty()) UsageError(cmd, "--size", "give --size SIZE or --file PATH");
  if (!f.size.empty()) {
    o.size = SizeFlag(cmd, "--size", f.size);
    if (o.size == 0) UsageError(cmd, "--size", "must be more than 0");
  }
  o.pattern = *ParsePattern(f.pattern);
  o.runs = f.runs;
  o.warmup = f.warmup;
  o.streams = f.streams;
  o.pause = DurationFlag(cmd, "--pause", f.pause);
  o.label = f.label;
  o.run_id = f.run_id;
  if (!f.run_id.empty()) {
    // It becomes part of file names on the target (over SSH nothing else checks it).
    if (absl::Status valid = CheckRunId(f.run_id); !valid.ok()) UsageError(cmd, "--run-id", valid.message());
  }
  o.write_mode = EnumFlag<WriteMode>(cmd, "--write-mode", f.write_mode);
  auto sync = ParseSyncPolicy(f.sync);
  if (!sync.ok()) UsageError(cmd, "--sync", sync.status().message());
  o.sync_policy = *sync;
  if (!f.cleanup.empty()) o.cleanup = EnumFlag<Cleanup>(cmd, "--cleanup", f.cleanup);
  o.verify = f.verify;
  o.direct_fallback = f.direct_fallback;
  o.interval_s = absl::ToDoubleSeconds(DurationFlag(cmd, "--interval", f.interval));
  if (absl::Status s = CheckInterval(o.interval_s); !s.ok()) UsageError(cmd, "--interval", s.message());
  o.progress = !f.no_progress && isatty(STDOUT_FILENO);
  o.link_mbps = LinkSpeedFlag(cmd, f.link_speed);
  if (!f.window.empty()) {
    o.window_bytes = SizeFlag(cmd, "--window", f.window);
    if (o.window_bytes < 64 * 1024 || o.window_bytes > (512ULL << 20)) {
      UsageError(cmd, "--window", "must be between 64KiB and 512MiB");
    }
  }
  // A receiver started over SSH gets a token of its own (RunSenderCommand); the
  // shared one is needed only toward a collector then.
  if ((o.transport == TransportKind::kNative && !deploys) || !f.reporting.collector.empty()) {
    o.token = TokenFlag(cmd, f.token_file, /*generate_if_missing=*/false).token;
  }
  if (o.transport == TransportKind::kNative || !f.reporting.collector.empty()) o.trust = TrustFlags(cmd, f.reporting.tls);
  return o;
}

// Prints where the rows went and turns the outcome into the exit status.
int FinishSender(const absl::StatusOr<SenderOutcome>& outcome, const CsvSink* csv, SpoolingSink* spool) {
  if (!outcome.ok()) return Fail("sender", outcome.status());
  if (csv != nullptr) {
    std::printf("\nresults: %s\n         %s\n", csv->transfers_path().c_str(), csv->samples_path().c_str());
  }
  if (spool != nullptr) ReportSpool("sender", *spool, absl::Seconds(10));
  if (outcome->failed > 0) {
    std::fprintf(stderr, "nasperf sender: %d of %d transfers failed (see the error column)\n",
                 outcome->failed, outcome->transfers);
    return 1;
  }
  return 0;
}

// For --to [user@]host:/dir: starts a receiver there over SSH (uploading the static
// binary when needed) and points the native loop at it, with a token of its own.
absl::StatusOr<std::unique_ptr<RemoteAgent>> StartDeployedReceiver(const SenderFlags& f, SenderOptions& options) {
  RemoteAgentOptions r;
  r.ssh = options.ssh;
  r.role = "receiver";
  r.deploy_binary = f.deploy_binary;
  r.target = options.ssh.to.dir;
  r.token = RandomHex(32);
  auto remote = RemoteAgent::Start(r, [](const std::string& line) {
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
  });
  if (!remote.ok()) return remote.status();
  std::printf("ssh %s: receiver started (pid %d) on %s, target %s\n", options.ssh.to.host.c_str(),
              (*remote)->remote_pid(), FormatHostPort((*remote)->address()).c_str(), r.target.c_str());
  std::fflush(stdout);
  options.to = (*remote)->address();
  options.receiver_fingerprint = (*remote)->fingerprint();
  options.token = r.token;
  return remote;
}

int RunSenderCommand(const SenderFlags& f) {
  const std::atomic<bool>* stop = StopOnSignal("sender", "aborting the transfers");
  auto options = MakeSenderOptions(f);
  if (!options.ok()) return Fail("sender", options.status());
  options->cancel = stop;
  auto spool = StartReporting("sender", f.reporting, options->token, options->trust);
  if (!spool.ok()) return Fail("sender", spool.status());
  std::unique_ptr<CsvSink> csv;
  ReportSink* sink = spool->get();
  if (sink == nullptr) {
    auto opened = CsvSink::Open(f.out);
    if (!opened.ok()) return Fail("sender", opened.status());
    csv = std::move(*opened);
    sink = csv.get();
  }
  std::unique_ptr<RemoteAgent> deployed;
  if (DeploysReceiver(f)) {
    auto started = StartDeployedReceiver(f, *options);
    if (!started.ok()) return Fail("sender", started.status());
    deployed = std::move(*started);
  }
  absl::StatusOr<SenderOutcome> outcome = RunSender(*options, *sink, stdout);
  if (absl::IsUnavailable(outcome.status()) && !f.reporting.tls.plaintext &&
      options->transport == TransportKind::kNative && deployed == nullptr) {
    outcome = absl::UnavailableError(absl::StrCat(
        outcome.status().message(), " (if the receiver runs with --plaintext, pass --plaintext too)"));
  }
  if (deployed != nullptr) {
    absl::Status stopped = deployed->Stop();
    if (stopped.ok()) {
      std::printf("ssh %s: receiver stopped\n", options->ssh.to.host.c_str());
      std::fflush(stdout);
    } else {
      std::fprintf(stderr, "nasperf sender: %s\n", std::string(stopped.message()).c_str());
      if (outcome.ok()) outcome = stopped;
    }
  }
  const int rc = FinishSender(outcome, csv.get(), spool->get());
  return stop->load() ? 130 : rc;
}

// ------------------------------------------------------------------ probe

struct ProbeFlags {
  std::string to, token_file, link_speed;
  ClientTls tls;
};

void AddProbe(CLI::App& app, ProbeFlags& f) {
  auto* cmd = app.add_subcommand("probe", "Check the path to a receiver (MTU, path MTU, MSS, link); exit 1 on a problem");
  cmd->add_option("to", f.to, "Receiver HOST[:PORT] (control port, default 7600)")->required();
  AddTokenFlag(cmd, f.token_file);
  AddLinkSpeedFlag(cmd, f.link_speed);
  AddClientTlsFlags(cmd, f.tls);
}

int RunProbeCommand(const ProbeFlags& f) {
  const std::string cmd = "probe";
  ProbeOptions o;
  o.to = AddressFlag(cmd, "to", f.to, kAgentPort, false);
  o.link_mbps = LinkSpeedFlag(cmd, f.link_speed);
  const TokenSource token = TokenFlag(cmd, f.token_file, /*generate_if_missing=*/false);
  o.token = token.token;
  o.trust = TrustFlags(cmd, f.tls);
  auto verdict = RunProbe(o, stdout);
  if (!verdict.ok()) return Fail(cmd, verdict.status());
  return *verdict;
}

// ------------------------------------------------------------------ collector

struct CollectorFlags {
  std::string out = "./nasperf-results", listen = ":7700", token_file, port_file, max_store = "20GiB";
  ServerTls tls;
};

void AddCollector(CLI::App& app, CollectorFlags& f) {
  auto* cmd = app.add_subcommand("collector", "Collect every agent's rows into DIR/transfers.csv and samples.csv");
  cmd->add_option("--out", f.out, "Directory for the CSV files (appended; a restart continues them)")->capture_default_str();
  cmd->add_option("--listen", f.listen, "gRPC address ADDR:PORT")->capture_default_str();
  AddTokenFlag(cmd, f.token_file);
  AddServerTlsFlags(cmd, f.tls);
  cmd->add_flag("--plaintext", f.tls.plaintext, "No TLS: tokens and rows cross the network readable (reporters need it too)");
  AddPortFileFlag(cmd, f.port_file);
  cmd->add_option("--max-store", f.max_store,
                  "Refuse rows once the CSV files would grow past this (0 = no limit); reporters keep them spooled")
      ->capture_default_str();
}

int RunCollector(const CollectorFlags& f) {
  const std::string cmd = "collector";
  CollectorOptions options;
  options.out_dir = f.out;
  options.listen = AddressFlag(cmd, "--listen", f.listen, kCollectorPort, /*allow_zero=*/true);
  options.tls = f.tls;
  options.console = stdout;
  options.max_store_bytes = SizeFlag(cmd, "--max-store", f.max_store);
  const TokenSource token = TokenFlag(cmd, f.token_file, /*generate_if_missing=*/true);
  options.token = token.token;
  const StopSignals signals = StopSignals::Block();
  auto collector = Collector::Start(options);
  if (!collector.ok()) return Fail(cmd, collector.status());
  std::printf("nasperf collector: port %u, %s\n", (*collector)->port(), (*collector)->security().summary.c_str());
  SayToken(cmd, token, "every agent");
  std::fflush(stdout);
  if (!f.port_file.empty()) {
    if (absl::Status s = WritePortFile(f.port_file, absl::StrCat("port=", (*collector)->port(), "\n")); !s.ok()) {
      return Fail(cmd, s);
    }
  }
  const int signal_number = signals.Wait();
  (*collector)->Shutdown();
  CollectorCounters c = (*collector)->counters();
  std::printf("nasperf collector: stopping (signal %d); %llu rows written, %llu duplicates ignored, %llu reports refused\n",
              signal_number, static_cast<unsigned long long>(c.rows), static_cast<unsigned long long>(c.duplicates),
              static_cast<unsigned long long>(c.refused));
  return 0;
}

// ------------------------------------------------------------------ lab

struct LabFlags {
  std::string plan, token_file, run_id;
  std::string deploy_binary;
  bool check = false, ssh = false;
  ClientTls tls;
};

void AddLab(CLI::App& app, LabFlags& f) {
  auto* cmd = app.add_subcommand("lab", "Run a multi-host plan: agents on many hosts start together, one CSV");
  cmd->add_option("plan", f.plan, "The plan, a TOML file (see README: Multi-host lab runs)")->required();
  AddTokenFlag(cmd, f.token_file);
  cmd->add_option("--run-id", f.run_id, "Run id shared by every transfer of this lab (default: time + random)");
  cmd->add_flag("--check", f.check, "Only parse the plan and print what it would run");
  cmd->add_flag("--ssh", f.ssh, "Start the agent of a host with ssh = \"[user@]host[:port]\" over SSH when none answers; stop it at the end");
  cmd->add_option("--deploy-binary", f.deploy_binary,
                  "With --ssh: the static nasperf to upload to hosts without nasperf = ... (default: this one, if static)");
  AddClientTlsFlags(cmd, f.tls);
}

int RunLabCommand(const LabFlags& f) {
  const std::string cmd = "lab";
  auto plan = LoadPlan(f.plan);
  if (!plan.ok()) return Fail(cmd, plan.status());
  if (f.check) {
    std::printf("plan %s: %zu hosts, %zu transfers, %d runs (+%d warm-up), on_failure %s\n", f.plan.c_str(),
                plan->hosts.size(), plan->transfers.size(), plan->runs, plan->warmup,
                plan->stop_on_failure ? "stop" : "continue");
    return 0;
  }
  const TokenSource token = TokenFlag(cmd, f.token_file, /*generate_if_missing=*/false);
  LabOptions options;
  options.stop = StopOnSignal(cmd, "aborting every transfer");
  options.token = token.token;
  options.run_id = f.run_id;
  options.ssh = f.ssh;
  options.deploy_binary = f.deploy_binary;
  if (!f.deploy_binary.empty() && !f.ssh) UsageError("lab", "--deploy-binary", "only with --ssh");
  options.trust = TrustFlags(cmd, f.tls);
  auto outcome = RunLab(*plan, options);
  if (!outcome.ok()) return Fail(cmd, outcome.status());
  if (outcome->interrupted) return 130;
  return outcome->failed > 0 ? 1 : 0;
}

// ------------------------------------------------------------------ flush

struct FlushFlags {
  std::string wait = "30s", token_file;
  ReportingFlags reporting;
};

void AddFlush(CLI::App& app, FlushFlags& f) {
  auto* cmd = app.add_subcommand("flush", "Send the reports spooled for a collector now");
  AddReportingFlags(cmd, f.reporting);
  cmd->get_option("--collector")->required();
  cmd->add_option("--wait", f.wait, "Give up after this long")->capture_default_str();
  AddTokenFlag(cmd, f.token_file);
}

int RunFlush(const FlushFlags& f) {
  const TokenSource token = TokenFlag("flush", f.token_file, /*generate_if_missing=*/false);
  auto spool = StartReporting("flush", f.reporting, token.token, TrustFlags("flush", f.reporting.tls));
  if (!spool.ok()) return Fail("flush", spool.status());
  return ReportSpool("flush", **spool, DurationFlag("flush", "--wait", f.wait)) == 0 ? 0 : 1;
}

// ------------------------------------------------------------------ report, compare

const std::vector<std::string>& GroupingColumns() {
  static const auto* columns = new std::vector<std::string>{
      "label", "write_mode", "sync_policy", "transport", "mtu", "path_mtu", "mss", "link_mbps",
      "host", "peer", "run_id", "direction", "cache"};
  return *columns;
}

struct ReportFlags {
  std::vector<std::string> inputs, where;
  std::string role, html, by = "label", baseline;
  bool json = false;
};

void AddReportInputs(CLI::App* cmd, ReportFlags& f, const std::string& role_help) {
  cmd->add_option("inputs", f.inputs, "Result directories (holding transfers.csv, samples.csv) or CSV files; merged")
      ->required();
  cmd->add_option("--role", f.role, role_help)->check(CLI::IsMember(Names<Role>()));
  cmd->add_flag("--json", f.json, "Print JSON instead of a table");
  cmd->add_option("--where", f.where, "Only rows with COLUMN=VALUE, e.g. label=cache (repeatable: all must hold)");
}

// The results the inputs hold, narrowed by --where.
absl::StatusOr<ResultTable> LoadReportInputs(const ReportFlags& f) {
  auto table = LoadResults(f.inputs);
  if (!table.ok() || f.where.empty()) return table;
  return FilterRows(*table, f.where);
}

void AddReport(CLI::App& app, ReportFlags& f) {
  auto* cmd = app.add_subcommand("report", "Per label and role: n, median, mean, spread and bottlenecks; --html writes charts");
  AddReportInputs(cmd, f, "Only this role's rows: receiver (durable MB/s) or sender (end-to-end MB/s); default both");
  cmd->add_option("--html", f.html, "Also write a self-contained HTML report with charts to FILE");
}

void AddCompare(CLI::App& app, ReportFlags& f) {
  auto* cmd = app.add_subcommand("compare", "Every label (or --by column) against a baseline: difference, 95% CI, p-value, verdict");
  AddReportInputs(cmd, f, "Compare this role's MB/s: receiver (durable) or sender (end-to-end); default receiver "
                          "when there are receiver rows");
  cmd->add_option("--by", f.by, "Column to group by")->capture_default_str()->check(CLI::IsMember(GroupingColumns()));
  cmd->add_option("--baseline", f.baseline, "Group the others are compared against (default: the first in file order)");
}

// --role: one role, or both when not given.
std::optional<Role> RoleFlag(const std::string& command, const std::string& text) {
  if (text.empty()) return std::nullopt;
  return EnumFlag<Role>(command, "--role", text);
}

int RunReport(const ReportFlags& f) {
  const std::string cmd = "report";
  auto table = LoadReportInputs(f);
  if (!table.ok()) return Fail(cmd, table.status());
  const std::optional<Role> role = RoleFlag(cmd, f.role);
  auto report = SummarizeResults(*table, role);
  if (!report.ok()) return Fail(cmd, report.status());
  std::fputs((f.json ? ReportJson(*report) : ReportText(*report)).c_str(), stdout);
  if (!f.html.empty()) {
    if (absl::Status s = WriteHtmlReportFor(*table, role, f.html, "nasperf " NASPERF_VERSION); !s.ok()) {
      return Fail(cmd, s);
    }
    if (!f.json) std::printf("html report: %s\n", f.html.c_str());
  }
  return 0;
}

int RunCompare(const ReportFlags& f) {
  const std::string cmd = "compare";
  auto table = LoadReportInputs(f);
  if (!table.ok()) return Fail(cmd, table.status());
  auto compare = Compare(*table, f.by, f.baseline, RoleFlag(cmd, f.role));
  if (!compare.ok()) return Fail(cmd, compare.status());
  std::fputs((f.json ? CompareJson(*compare) : CompareText(*compare)).c_str(), stdout);
  return 0;
}

// ------------------------------------------------------------------ demo

struct DemoFlags {
  std::string size = "256MiB", dir;
  int runs = 5;
};

void AddDemo(CLI::App& app, DemoFlags& f) {
  auto* cmd = app.add_subcommand("demo", "Receiver + sender on loopback: a few runs into a temporary target");
  cmd->add_option("--size", f.size, "Size of each transfer")->capture_default_str();
  cmd->add_option("--runs", f.runs, "Measured iterations (one warm-up comes first)")->capture_default_str()->check(CLI::Range(1, 100));
  cmd->add_option("--dir", f.dir, "Where to put the target and the results (default: a new temporary directory)");
}

int RunDemo(const DemoFlags& f) {
  const std::string cmd = "demo";
  std::string dir = f.dir;
  if (dir.empty()) {
    char pattern[] = "/tmp/nasperf-demo-XXXXXX";
    if (mkdtemp(pattern) == nullptr) return Fail(cmd, absl::InternalError("mkdtemp failed"));
    dir = pattern;
  }
  std::error_code ec;
  std::filesystem::create_directories(dir + "/target", ec);
  if (ec) return Fail(cmd, absl::InternalError(absl::StrCat("mkdir ", dir, "/target: ", ec.message())));

  ReceiverOptions rx;
  rx.target = dir + "/target";
  rx.listen = {"127.0.0.1", 0};
  rx.token = RandomHex(16);
  rx.min_free = 0;
  auto receiver = Receiver::Start(rx);
  if (!receiver.ok()) return Fail(cmd, receiver.status());
  std::printf("nasperf demo: receiver on 127.0.0.1:%u writing into %s\n\n", (*receiver)->control_port(),
              rx.target.c_str());

  SenderOptions tx;
  tx.to = {"127.0.0.1", (*receiver)->control_port()};
  tx.token = rx.token;
  tx.trust = TrustFlags(cmd, {});
  tx.receiver_fingerprint = (*receiver)->security().fingerprint;  // TLS, pinned to the receiver it just started
  tx.size = SizeFlag(cmd, "--size", f.size);
  tx.runs = f.runs;
  tx.warmup = 1;
  tx.pause = absl::Milliseconds(200);
  tx.label = "demo";
  tx.verify = true;
  tx.interval_s = 0.25;
  tx.progress = isatty(STDOUT_FILENO);
  auto sink = CsvSink::Open(dir + "/results");
  if (!sink.ok()) return Fail(cmd, sink.status());
  int rc = FinishSender(RunSender(tx, **sink, stdout), sink->get(), nullptr);
  (*receiver)->Shutdown();
  std::printf("\nThe sender's rows time what a user waits for (first byte to the receiver's answer);\n"
              "the receiver's rows time first byte to data on disk (fdatasync done).\n");
  const std::string results = dir + "/results";
  const std::string html = results + "/report.html";
  auto table = LoadResults({results});
  absl::Status written = table.ok() ? WriteHtmlReportFor(*table, std::nullopt, html, "nasperf " NASPERF_VERSION) : table.status();
  if (!written.ok()) {
    Fail(cmd, absl::InternalError(absl::StrCat("no HTML report: ", written.message())));
    return rc != 0 ? rc : 1;
  }
  std::printf("\nreport:  %s (charts; open it in a browser; or: nasperf report %s)\n", html.c_str(),
              results.c_str());
  return rc;
}

}  // namespace
}  // namespace nasperf

int main(int argc, char** argv) {
  using namespace nasperf;
  signal(SIGPIPE, SIG_IGN);
  CLI::App app{"nasperf: how fast does your NAS really take data over the network?"};
  app.require_subcommand(1);
  // A service (the .deb's systemd unit) keeps its settings in a file: `nasperf --config
  // F agent`, with F's [agent] (or [receiver]) table holding `flag = value` lines.
  app.set_config("--config", "", "Read flags from this TOML file: a [agent] or [receiver] table of `flag = value` (no --)");
  app.allow_config_extras(CLI::config_extras_mode::error);  // a misspelt key is an error, not ignored
  app.set_version_flag("--version", std::string("nasperf ") + NASPERF_VERSION + " (" NASPERF_BUILD_INFO ")");
  bool verbose = false;
  app.add_flag("-v,--verbose", verbose, "Log each transfer on the receiver");
  ReceiverFlags receiver_flags, agent_flags;
  LabFlags lab_flags;
  SenderFlags sender_flags;
  DemoFlags demo_flags;
  CollectorFlags collector_flags;
  FlushFlags flush_flags;
  ProbeFlags probe_flags;
  ReportFlags report_flags, compare_flags;
  AddReceiver(app, receiver_flags);
  AddSender(app, sender_flags);
  AddAgent(app, agent_flags);
  AddLab(app, lab_flags);
  AddCollector(app, collector_flags);
  AddFlush(app, flush_flags);
  AddFingerprint(app);
  AddProbe(app, probe_flags);
  AddDemo(app, demo_flags);
  AddReport(app, report_flags);
  AddCompare(app, compare_flags);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::string where;
    for (const CLI::App* sub : app.get_subcommands()) where = absl::StrCat(" ", sub->get_name());
    std::fprintf(stderr, "nasperf%s: %s (see --help)\n", where.c_str(), e.what());
    return kUsageError;
  }
  if (verbose) SetLogLevel(LogLevel::kDebug);
  if (app.got_subcommand("receiver")) return RunReceiver(receiver_flags);
  if (app.got_subcommand("sender")) return RunSenderCommand(sender_flags);
  if (app.got_subcommand("agent")) return RunReceiver(agent_flags, /*as_agent=*/true);
  if (app.got_subcommand("lab")) return RunLabCommand(lab_flags);
  if (app.got_subcommand("demo")) return RunDemo(demo_flags);
  if (app.got_subcommand("collector")) return RunCollector(collector_flags);
  if (app.got_subcommand("flush")) return RunFlush(flush_flags);
  if (app.got_subcommand("probe")) return RunProbeCommand(probe_flags);
  if (app.got_subcommand("fingerprint")) return RunFingerprint();
  if (app.got_subcommand("report")) return RunReport(report_flags);
  if (app.got_subcommand("compare")) return RunCompare(compare_flags);
  return kUsageError;
}
