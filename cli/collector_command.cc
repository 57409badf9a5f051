// nasperf collector and flush: the flags of the row store and their wiring.
#include <cstdio>
#include <memory>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "cli/commands.h"
#include "cli/flags.h"
#include "collector/collector.h"
#include "collector/http_server.h"
#include "collector/live_board.h"
#include "collector/live_page.h"
#include "common/fd.h"
#include "common/log.h"
#include "report/html.h"
#include "report/table.h"

namespace nasperf::cli {
namespace {

// ----------------------------------------------------------------- collector

struct CollectorFlags {
  std::string out = "./nasperf-results", listen = ":7700", token_file, port_file, max_store = "20GiB";
  std::string http, http_token_file;
  ServerTls tls;
};

constexpr uint16_t kHttpPort = 7701;

// /metrics, the live page, its data and the report of what has arrived (report/html.h).
HttpReply Route(const std::string& path, const LiveBoard& board, const std::string& out_dir) {
  if (path == "/metrics") return {200, "text/plain; version=0.0.4; charset=utf-8", board.Metrics()};
  if (path == "/live.json") return {200, "application/json", board.Json()};
  if (path == "/") return {200, "text/html; charset=utf-8", LivePageHtml()};
  if (path == "/report") {
    absl::StatusOr<ResultTable> table = LoadResults({out_dir});
    absl::StatusOr<std::string> html =
        table.ok() ? RenderHtmlReportFor(*table, std::nullopt, absl::StrCat("nasperf ", NASPERF_VERSION))
                   : absl::StatusOr<std::string>(table.status());
    if (!html.ok())
      return {503, "text/plain; charset=utf-8", absl::StrCat("no report yet: ", html.status().message(), "\n")};
    return {200, "text/html; charset=utf-8", *html};
  }
  return {404, "text/plain; charset=utf-8", "not found: /, /metrics, /live.json, /report\n"};
}

// --http: loopback by default; any other address only with a bearer token.
absl::StatusOr<std::unique_ptr<HttpServer>> StartHttp(const std::string& cmd, const CollectorFlags& f,
                                                      const LiveBoard& board) {
  HttpOptions options;
  options.listen = AddressFlag(cmd, "--http", f.http, kHttpPort, /*allow_zero=*/true);
  if (options.listen.host.empty()) options.listen.host = "127.0.0.1";
  options.open_paths = {"/"};  // the live page holds no data: it asks for the token itself
  if (!f.http_token_file.empty()) {
    absl::StatusOr<std::string> token =
        ReadPrivateFile(f.http_token_file, absl::StrCat("--http-token-file ", f.http_token_file), 4096);
    if (!token.ok()) return token.status();
    options.token = std::string(absl::StripAsciiWhitespace(*token));
    if (options.token.size() < 16) {
      return absl::InvalidArgumentError(
          absl::StrCat("--http-token-file ", f.http_token_file, ": a token of at least 16 characters, please"));
    }
  } else if (!IsLoopbackHost(options.listen.host)) {
    return absl::InvalidArgumentError(absl::StrCat("--http ", f.http,
                                                   " is not a loopback address: give --http-token-file too (what "
                                                   "Prometheus's authorization setting sends)"));
  }
  const std::string out_dir = f.out;
  return HttpServer::Start(options, [&board, out_dir](const std::string& path) { return Route(path, board, out_dir); });
}

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
  if (absl::StatusOr<uint64_t> files = RaiseFileLimit(); !files.ok()) {
    std::fprintf(stderr, "nasperf %s: warning: %s\n", cmd.c_str(), TerminalSafe(files.status().message()).c_str());
  }
  LiveBoard board;
  std::unique_ptr<HttpServer> http;
  if (!f.http.empty()) {
    auto started = StartHttp(cmd, f, board);
    if (!started.ok()) return Fail(cmd, started.status());
    http = std::move(*started);
    options.live = &board;
  }
  auto collector = Collector::Start(options);
  if (!collector.ok()) return Fail(cmd, collector.status());
  std::printf("nasperf collector: port %u, %s\n", (*collector)->port(), (*collector)->security().summary.c_str());
  if (http) {
    std::printf("nasperf collector: live page http://%s/ and /metrics%s\n", http->address().c_str(),
                f.http_token_file.empty() ? "" : " (bearer token)");
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
