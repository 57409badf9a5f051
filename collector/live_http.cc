#include "collector/live_http.h"

#include <sys/stat.h>

#include <memory>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "collector/live_page.h"
#include "common/fd.h"
#include "report/html.h"
#include "report/table.h"

namespace nasperf {
namespace {

// /report reads the last 1000 rows within the last MiB of each CSV (TailBounds' defaults),
// and is rebuilt at most this often.
constexpr absl::Duration kReportMinAge = absl::Seconds(3);

// The report of what has arrived: built on its own thread from the store's tail (so
// neither a store of any size nor the build holds up the server's thread), kept, and
// rebuilt only when the store changed and the last one is kReportMinAge old.
class ReportCache {
 public:
  explicit ReportCache(std::string out_dir) : out_dir_(std::move(out_dir)), thread_([this] { Loop(); }) {}
  ~ReportCache() {
    {
      absl::MutexLock lock(&mu_);
      stop_ = true;
    }
    thread_.join();
  }
  ReportCache(const ReportCache&) = delete;
  ReportCache& operator=(const ReportCache&) = delete;

  // Any thread; `done` is called on this one (a report kept) or the builder's.
  void Get(HttpDone done) {
    const std::string stamp = Stamp();
    std::optional<HttpReply> kept;
    {
      absl::MutexLock lock(&mu_);
      if (built_ && (stamp == built_stamp_ || absl::Now() - built_at_ < kReportMinAge)) {
        kept = reply_;
      } else {
        waiting_.push_back(std::move(done));
      }
    }
    if (kept) done(std::move(*kept));
  }

 private:
  // The store's state: the size and change time of each CSV.
  std::string Stamp() const {
    std::string stamp;
    for (const char* name : {"/transfers.csv", "/samples.csv"}) {
      struct stat st {};
      if (::stat((out_dir_ + name).c_str(), &st) == 0)
        absl::StrAppend(&stamp, st.st_size, ".", st.st_mtim.tv_sec, ".", st.st_mtim.tv_nsec, ";");
    }
    return stamp;
  }

  void Loop() {
    while (true) {
      {
        absl::MutexLock lock(&mu_);
        mu_.Await(absl::Condition(this, &ReportCache::HasWork));
        if (stop_) break;
      }
      const std::string stamp = Stamp();
      HttpReply reply = Build();
      std::vector<HttpDone> waiting;
      {
        absl::MutexLock lock(&mu_);
        reply_ = reply;
        built_ = true;
        built_stamp_ = stamp;
        built_at_ = absl::Now();
        waiting.swap(waiting_);
      }
      for (HttpDone& done : waiting) done(reply);
    }
    absl::MutexLock lock(&mu_);
    for (HttpDone& done : waiting_) done({503, "text/plain; charset=utf-8", "the collector is stopping\n"});
  }

  bool HasWork() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stop_ || !waiting_.empty(); }

  HttpReply Build() const {
    absl::StatusOr<ResultTable> table = LoadResultsTail(out_dir_, TailBounds{});
    absl::StatusOr<std::string> html =
        table.ok() ? RenderHtmlReportFor(*table, std::nullopt, absl::StrCat("nasperf ", NASPERF_VERSION))
                   : absl::StatusOr<std::string>(table.status());
    if (!html.ok())
      return {503, "text/plain; charset=utf-8", absl::StrCat("no report yet: ", html.status().message(), "\n")};
    return {200, "text/html; charset=utf-8", *std::move(html)};
  }

  const std::string out_dir_;
  absl::Mutex mu_;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  bool built_ ABSL_GUARDED_BY(mu_) = false;
  HttpReply reply_ ABSL_GUARDED_BY(mu_);
  std::string built_stamp_ ABSL_GUARDED_BY(mu_);
  absl::Time built_at_ ABSL_GUARDED_BY(mu_);
  std::vector<HttpDone> waiting_ ABSL_GUARDED_BY(mu_);
  std::thread thread_;  // last: starts once the rest is set
};

// /metrics, the live page and its data; /report is ReportCache's.
HttpReply Route(const std::string& path, const LiveBoard& board) {
  if (path == "/metrics") return {200, "text/plain; version=0.0.4; charset=utf-8", board.Metrics()};
  if (path == "/live.json") return {200, "application/json", board.Json()};
  if (path == "/") return {200, "text/html; charset=utf-8", LivePageHtml(), LivePagePolicy()};
  return {404, "text/plain; charset=utf-8", "not found: /, /metrics, /live.json, /report\n"};
}

}  // namespace

absl::StatusOr<std::unique_ptr<HttpServer>> StartLiveHttp(const LiveHttpOptions& o, const LiveBoard& board) {
  HttpOptions options;
  options.listen = o.listen;
  if (options.listen.host.empty()) options.listen.host = "127.0.0.1";
  options.open_paths = {"/"};  // the live page holds no data: it asks for the token itself
  options.deferred_paths = {"/report"};
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
  auto reports = std::make_shared<ReportCache>(o.out_dir);
  return HttpServer::Start(
      options, [&board](const std::string& path) { return Route(path, board); },
      [reports](const std::string&, HttpDone done) { reports->Get(std::move(done)); });
}

}  // namespace nasperf
