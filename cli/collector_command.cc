// nasperf collector and flush: the flags of the row store and their wiring.
#include <cstdio>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "cli/commands.h"
#include "cli/flags.h"
#include "collector/collector.h"
#include "collector/live_board.h"
#include "collector/live_http.h"
#include "common/log.h"
#include "wire/grpc_auth.h"

namespace nasperf::cli {
namespace {

// ----------------------------------------------------------------- collector

struct CollectorFlags {
  std::string out = "./nasperf-results", listen = ":7700", token_file, port_file, max_store = "20GiB";
  std::string http, http_token_file;
  bool http_tls = false;
  ServerTls tls;
};

CLI::App* AddCollector(CLI::App& app, CollectorFlags& f) {
  auto* cmd = app.add_subcommand("collector", "Collect every agent's rows into DIR/transfers.csv and samples.csv");
  cmd->add_option("--out", f.out, "Directory for the CSV files (appended; a restart continues them)")
      ->capture_default_str();
  cmd->add_option("--listen", f.listen, "gRPC address ADDR:PORT")->capture_default_str();
  AddTokenFlag(cmd, f.token_file);
  AddServerTlsFlags(cmd, f.tls);
  cmd->add_flag("--plaintext", f.tls.plaintext,
                "No TLS: tokens and rows cross the network readable (reporters need it too)");
  AddPortFileFlag(cmd, f.port_file);
  cmd->add_option("--http", f.http,
                  "Also serve /metrics (Prometheus) and a live page on ADDR:PORT (default port 7701; loopback "
                  "unless given a token)");
  cmd->add_flag("--http-tls", f.http_tls,
                "HTTPS on --http, with the control port's key (this host's, or --tls-cert/--tls-key); "
                "Prometheus then needs scheme: https and the certificate (docs/guides/live.md)");
  cmd->add_option("--http-token-file", f.http_token_file,
                  "A file (mode 600) with the bearer token every HTTP request but the page itself must carry; "
                  "needed for a non-loopback --http");
  cmd->add_option("--max-store", f.max_store,
                  "Refuse rows once the CSV files would grow past this (0 = no limit); reporters keep them spooled")
      ->capture_default_str();
  return cmd;
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
  std::string files_warning;
  if (absl::Status s = RaiseServerFileLimit(&files_warning); !s.ok()) return Fail(cmd, s);
  if (!files_warning.empty())
    std::fprintf(stderr, "nasperf %s: warning: %s\n", cmd.c_str(), TerminalSafe(files_warning).c_str());
  LiveBoard board;
  std::unique_ptr<HttpServer> http;
  if (!f.http.empty()) {
    LiveHttpOptions live;
    live.listen = AddressFlag(cmd, "--http", f.http, kHttpPort, /*allow_zero=*/true);
    live.token_file = f.http_token_file;
    live.tls = f.http_tls;
    live.identity = f.tls;
    live.out_dir = f.out;
    auto started = StartLiveHttp(live, board);
    if (!started.ok()) return Fail(cmd, started.status());
    http = std::move(*started);
    options.live = &board;
  }
  auto collector = Collector::Start(options);
  if (!collector.ok()) return Fail(cmd, collector.status());
  std::printf("nasperf collector: port %u, %s\n", (*collector)->port(), (*collector)->security().summary.c_str());
  if (http) {
    std::printf("nasperf collector: live page %s://%s/ and /metrics%s\n", f.http_tls ? "https" : "http",
                http->address().c_str(), f.http_token_file.empty() ? "" : " (bearer token)");
  }
  SayToken(cmd, token, "every agent");
  std::fflush(stdout);
  if (!f.port_file.empty()) {
    if (absl::Status s =
            WritePortFile(f.port_file, absl::StrCat("port=", (*collector)->port(), "\n",
                                                    http ? absl::StrCat("http_port=", http->port(), "\n") : ""));
        !s.ok()) {
      return Fail(cmd, s);
    }
  }
  const int signal_number = signals.Wait();
  (*collector)->Shutdown();
  if (http) http->Stop();
  CollectorCounters c = (*collector)->counters();
  std::printf(
      "nasperf collector: stopping (signal %d); %llu rows written, %llu duplicates ignored, %llu reports refused\n",
      signal_number, static_cast<unsigned long long>(c.rows), static_cast<unsigned long long>(c.duplicates),
      static_cast<unsigned long long>(c.refused));
  return 0;
}

// ----------------------------------------------------------------- flush

struct FlushFlags {
  std::string wait = "30s", token_file;
  ReportingFlags reporting;
};

CLI::App* AddFlush(CLI::App& app, FlushFlags& f) {
  auto* cmd = app.add_subcommand("flush", "Send the reports spooled for a collector now");
  AddReportingFlags(cmd, f.reporting);
  cmd->get_option("--collector")->required();
  cmd->add_option("--wait", f.wait, "Give up after this long")->capture_default_str();
  AddTokenFlag(cmd, f.token_file);
  return cmd;
}

int RunFlush(const FlushFlags& f) {
  const TokenSource token = TokenFlag("flush", f.token_file, /*generate_if_missing=*/false);
  auto spool = StartReporting("flush", f.reporting, token.token, TrustFlags("flush", f.reporting.tls));
  if (!spool.ok()) return Fail("flush", spool.status());
  return ReportSpool("flush", **spool, DurationFlag("flush", "--wait", f.wait)) == 0 ? 0 : 1;
}

}  // namespace

Command AddCollectorCommand(CLI::App& app) { return CommandOf<CollectorFlags>(app, AddCollector, RunCollector); }

Command AddFlushCommand(CLI::App& app) { return CommandOf<FlushFlags>(app, AddFlush, RunFlush); }

}  // namespace nasperf::cli
