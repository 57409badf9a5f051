#include "cli/flags.h"

#include <pthread.h>
#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <thread>
#include <utility>

#include "collector/collector_client.h"
#include "common/fd.h"
#include "common/log.h"

namespace nasperf::cli {

[[noreturn]] void UsageError(const std::string& command, const std::string& flag, absl::string_view message) {
  std::fprintf(stderr, "nasperf %s: %s: %s\n", command.c_str(), flag.c_str(), TerminalSafe(message).c_str());
  std::exit(kUsageError);
}

uint64_t SizeFlag(const std::string& command, const std::string& flag, const std::string& text) {
  auto size = ParseSize(text);
  if (!size.ok()) UsageError(command, flag, size.status().message());
  return *size;
}

absl::Duration DurationFlag(const std::string& command, const std::string& flag, const std::string& text) {
  auto d = ParseDuration(text);
  if (!d.ok()) UsageError(command, flag, d.status().message());
  return *d;
}

void AddLinkSpeedFlag(CLI::App* cmd, std::string& speed) {
  cmd->add_option("--link-speed", speed,
                  "Link speed, e.g. 10gbit: what line_rate_pct and the TCP ceiling are measured against "
                  "(when the NIC reports none, or a shaper sets the real rate)");
}

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

// The error exit: the message may quote a peer (its gRPC error, its version) or a file.
// Line breaks stay: a lab's preflight lists one problem per line.
int Fail(const std::string& command, const absl::Status& status) {
  std::fprintf(stderr, "nasperf %s: %s\n", command.c_str(),
               TerminalSafe(status.message(), /*keep_newlines=*/true).c_str());
  return 1;
}

// A shell that starts us in the background leaves SIGINT ignored; a blocked signal
// still reaches sigwait, but only with the default disposition back in place.
StopSignals StopSignals::Block() {
  signal(SIGINT, SIG_DFL);
  signal(SIGTERM, SIG_DFL);
  StopSignals s;
  sigemptyset(&s.set_);
  sigaddset(&s.set_, SIGINT);
  sigaddset(&s.set_, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &s.set_, nullptr);
  return s;
}

int StopSignals::Wait() const {
  int signal_number = 0;
  sigwait(&set_, &signal_number);
  return signal_number;
}

const std::atomic<bool>* StopOnSignal(const std::string& command, const char* what) {
  const StopSignals signals = StopSignals::Block();
  static std::atomic<bool> stop{false};
  std::thread([signals, command, what] {
    std::fprintf(stderr, "nasperf %s: stopping (signal %d): %s\n", command.c_str(), signals.Wait(), what);
    stop.store(true);
  }).detach();
  return &stop;
}

void AddTokenFlag(CLI::App* cmd, std::string& file) {
  cmd->add_option("--token-file", file,
                  "File holding the shared token (else NASPERF_TOKEN, else ~/.config/nasperf/token, "
                  "which receivers, agents and collectors make at first start)");
}

TokenSource TokenFlag(const std::string& command, const std::string& file, bool generate_if_missing) {
  auto token = LoadToken(file, generate_if_missing);
  if (!token.ok()) std::exit(Fail(command, token.status()));
  return *token;
}

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
  if (t.plaintext)
    std::fprintf(stderr, "nasperf %s: --plaintext: the token crosses the network readable\n", cmd.c_str());
  return *trust;
}

void AddServerTlsFlags(CLI::App* cmd, ServerTls& t) {
  cmd->add_option("--tls-cert", t.cert,
                  "PEM certificate for the control port (default: a generated one, pinned by clients)");
  cmd->add_option("--tls-key", t.key, "PEM private key for --tls-cert");
}

// ------------------------------------------------------------------ reporting

void AddReportingFlags(CLI::App* cmd, ReportingFlags& f) {
  cmd->add_option("--collector", f.collector, "Report every row to this collector HOST[:PORT] (default port 7700)");
  cmd->add_option("--spool", f.spool, "Where reports wait while the collector is unreachable")->capture_default_str();
  AddClientTlsFlags(cmd, f.tls);
}

absl::StatusOr<std::unique_ptr<SpoolingSink>> StartReporting(const std::string& cmd, const ReportingFlags& f,
                                                             const std::string& token,
                                                             std::shared_ptr<const PeerTrust> trust) {
  if (f.collector.empty()) return std::unique_ptr<SpoolingSink>();
  HostPort address = AddressFlag(cmd, "--collector", f.collector, kCollectorPort, false);
  return SpoolingSink::Start(std::make_unique<CollectorClient>(address, token, std::move(trust)), f.spool);
}

std::unique_ptr<LiveFeed> StartLiveFeed(const std::string& cmd, const ReportingFlags& f, const std::string& token,
                                        std::shared_ptr<const PeerTrust> trust, const SpoolingSink* spool) {
  if (f.collector.empty()) return nullptr;
  HostPort address = AddressFlag(cmd, "--collector", f.collector, kCollectorPort, false);
  std::function<size_t()> spooled;
  if (spool != nullptr) spooled = [spool] { return spool->Pending(); };
  return std::make_unique<LiveFeed>(std::make_unique<CollectorClient>(address, token, std::move(trust)),
                                    std::move(spooled));
}

size_t ReportSpool(const std::string& cmd, SpoolingSink& spool, absl::Duration wait) {
  size_t left = spool.Drain(wait);
  if (left == 0) {
    std::printf("nasperf %s: every report delivered to collector %s\n", cmd.c_str(), spool.collector().c_str());
  } else {
    std::printf(
        "nasperf %s: %zu report%s still spooled in %s; the next nasperf with --collector %s sends "
        "them, or run: nasperf flush --collector %s\n",
        cmd.c_str(), left, left == 1 ? "" : "s", spool.dir().c_str(), spool.collector().c_str(),
        spool.collector().c_str());
  }
  std::fflush(stdout);
  return left;
}

}  // namespace nasperf::cli
