// The pieces every nasperf subcommand shares: the flags defined once (token, TLS,
// port file, link speed, reporting), their conversion into the libraries' types, and
// one way to stop on a signal. Called on the main thread while a command starts; a
// bad value is one line on stderr and exit 2 (UsageError), never an exception.
#pragma once

#include <signal.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "collector/live_feed.h"
#include "collector/spool.h"
#include "common/policy.h"
#include "common/token.h"
#include "common/units.h"
#include "wire/tls.h"

namespace nasperf::cli {

inline constexpr int kUsageError = 2;

// A flag value that failed to parse: "nasperf COMMAND: FLAG: MESSAGE", exit 2.
[[noreturn]] void UsageError(const std::string& command, const std::string& flag, absl::string_view message);

// "nasperf COMMAND: MESSAGE" on stderr; returns 1, the exit status of a failed command.
int Fail(const std::string& command, const absl::Status& status);

// A word flag (--cleanup, --write-mode, ...) as its type; a usage error otherwise.
template <typename T>
T EnumFlag(const std::string& command, const std::string& flag, const std::string& text) {
  auto value = Parse<T>(text);
  if (!value.ok()) UsageError(command, flag, value.status().message());
  return *value;
}

uint64_t SizeFlag(const std::string& command, const std::string& flag, const std::string& text);
absl::Duration DurationFlag(const std::string& command, const std::string& flag, const std::string& text);
HostPort AddressFlag(const std::string& command, const std::string& flag, const std::string& text,
                     uint16_t default_port, bool allow_zero);

void AddLinkSpeedFlag(CLI::App* cmd, std::string& speed);
// --link-speed in Mb/s; 0 when not given.
uint32_t LinkSpeedFlag(const std::string& command, const std::string& text);

// SIGINT/SIGTERM, blocked in every thread started after Block(), delivered to
// Wait() alone: every long-running command stops the same way.
class StopSignals {
 public:
  static StopSignals Block();
  // Blocks until one arrives; returns its number.
  int Wait() const;

 private:
  sigset_t set_;
};

// Ctrl-C or SIGTERM for a command that runs transfers: blocks both first (call it
// before any thread starts), then a watcher sets the flag returned and says so; the
// command aborts its transfers, records them as aborted and exits 130.
const std::atomic<bool>* StopOnSignal(const std::string& command, const char* what);

// --token-file, the same on every command.
void AddTokenFlag(CLI::App* cmd, std::string& file);
// The token, or a one-line error and exit 1. Servers make one when there is none.
TokenSource TokenFlag(const std::string& command, const std::string& file, bool generate_if_missing);
// A server's start banner line on its token; a new one is shown once, for `clients`.
void SayToken(const std::string& command, const TokenSource& token, const char* clients);

void AddPortFileFlag(CLI::App* cmd, std::string& file);
absl::Status WritePortFile(const std::string& path, const std::string& content);

// How a client trusts its peers (wire/tls.h): pinned keys by default.
void AddClientTlsFlags(CLI::App* cmd, ClientTls& t);
// The command's one PeerTrust, shared by all its clients; exit 1 when it cannot be made.
std::shared_ptr<const PeerTrust> TrustFlags(const std::string& cmd, const ClientTls& t);
// A server's own certificate instead of the generated one.
void AddServerTlsFlags(CLI::App* cmd, ServerTls& t);

// Flags every agent shares for reporting to a collector and for TLS toward peers.
struct ReportingFlags {
  std::string collector, spool = DefaultSpoolRoot();
  ClientTls tls;
};
void AddReportingFlags(CLI::App* cmd, ReportingFlags& f);
// A spooling sink toward --collector, or null without one. `trust`: the command's
// one PeerTrust (TrustFlags), shared with its other clients.
absl::StatusOr<std::unique_ptr<SpoolingSink>> StartReporting(const std::string& cmd, const ReportingFlags& f,
                                                             const std::string& token,
                                                             std::shared_ptr<const PeerTrust> trust);
// Live updates toward --collector (its live page and /metrics), or null without one;
// `spool` (may be null) says how many reports wait.
std::unique_ptr<LiveFeed> StartLiveFeed(const std::string& cmd, const ReportingFlags& f, const std::string& token,
                                        std::shared_ptr<const PeerTrust> trust, const SpoolingSink* spool);
// Waits up to `wait` for the spool to empty and says what is left, one line; returns
// the number of reports left.
size_t ReportSpool(const std::string& cmd, SpoolingSink& spool, absl::Duration wait);

}  // namespace nasperf::cli
