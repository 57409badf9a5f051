#include "collector/live_http.h"

#include <optional>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "collector/live_page.h"
#include "common/fd.h"
#include "report/html.h"
#include "report/table.h"

namespace nasperf {
namespace {

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

}  // namespace

absl::StatusOr<std::unique_ptr<HttpServer>> StartLiveHttp(const LiveHttpOptions& o, const LiveBoard& board) {
  HttpOptions options;
  options.listen = o.listen;
  if (options.listen.host.empty()) options.listen.host = "127.0.0.1";
  options.open_paths = {"/"};  // the live page holds no data: it asks for the token itself
  if (!o.token_file.empty()) {
    const std::string what = absl::StrCat(o.what, "-token-file ", o.token_file);
    absl::StatusOr<std::string> token = ReadPrivateFile(o.token_file, what, 4096);
    if (!token.ok()) return token.status();
    options.token = std::string(absl::StripAsciiWhitespace(*token));
    if (options.token.size() < 16) {
      return absl::InvalidArgumentError(absl::StrCat(what, ": a token of at least 16 characters, please"));
    }
  } else if (!IsLoopbackHost(options.listen.host)) {
    return absl::InvalidArgumentError(absl::StrCat(o.what, " ", FormatHostPort(options.listen),
                                                   " is not loopback: give ", o.what,
                                                   "-token-file too (what Prometheus's authorization "
                                                   "setting sends)"));
  }
  if (o.tls) {
    if (o.identity.plaintext)
      return absl::InvalidArgumentError(absl::StrCat(o.what, "-tls and --plaintext exclude each other"));
    absl::StatusOr<ServerIdentity> id = LoadServerIdentity(o.identity);
    if (!id.ok()) return id.status();
    options.tls_key_pem = id->key_pem;
    options.tls_cert_pem = id->cert_pem;
  }
  const std::string out_dir = o.out_dir;
  return HttpServer::Start(options, [&board, out_dir](const std::string& path) { return Route(path, board, out_dir); });
}

}  // namespace nasperf
