// nasperf watch: the flags of the copy watcher (watch/copy_watcher.h) and its wiring to
// the CSV files and a collector.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/flags.h"
#include "collector/csv_sink.h"
#include "collector/spool.h"
#include "common/fd.h"
#include "common/log.h"
#include "watch/copy_watcher.h"

namespace nasperf::cli {
namespace {

struct WatchFlags {
  std::string dir, out, label = "watch", run_id, interval = "1s", idle = "3s", min_size = "1MiB", link_speed, nic,
                        token_file;
  ReportingFlags reporting;
};

CLI::App* AddWatch(CLI::App& app, WatchFlags& f) {
  auto* cmd = app.add_subcommand(
      "watch",
      "On the NAS: measure every copy any tool makes into DIR (SMB, NFS, scp, rsync), a row each as it ends, "
      "until Ctrl-C");
  cmd->add_option("dir", f.dir, "The directory copies land in (a share's path); subdirectories too")->required();
  cmd->add_option("--out", f.out,
                  "Directory for transfers.csv and samples.csv (default: results, unless "
                  "--collector)");
  AddReportingFlags(cmd, f.reporting);
  AddTokenFlag(cmd, f.token_file);
  cmd->add_option("--label", f.label, "Label of the rows")->capture_default_str();
  cmd->add_option("--run-id", f.run_id, "Run id (default: time + random)");
  cmd->add_option("--interval", f.interval, "A sample of each copy every DUR")->capture_default_str();
  cmd->add_option("--idle", f.idle, "A copy whose file has not grown for DUR has ended (NFS never closes)")
      ->capture_default_str();
  cmd->add_option("--min-size", f.min_size, "Smaller copies are counted, not rowed")->capture_default_str();
  AddLinkSpeedFlag(cmd, f.link_speed);
  cmd->add_option("--nic", f.nic, "The interface copies arrive on (default: all but lo, their speeds added)");
  return cmd;
}

// Rows to the CSV files and to a collector, when both are asked for.
class TeeSink : public ReportSink {
 public:
  explicit TeeSink(std::vector<ReportSink*> sinks) : sinks_(std::move(sinks)) {}
  absl::Status Submit(const proto::TransferReport& report) override {
    absl::Status first;
    for (ReportSink* sink : sinks_) first.Update(sink->Submit(report));
    return first;
  }

 private:
  std::vector<ReportSink*> sinks_;
};

int RunWatchCommand(const WatchFlags& f) {
  const std::string cmd = "watch";
  WatchOptions o;
  o.dir = f.dir;
  o.label = f.label;
  o.run_id = f.run_id;
  o.interval_s = absl::ToDoubleSeconds(DurationFlag(cmd, "--interval", f.interval));
  o.idle_s = absl::ToDoubleSeconds(DurationFlag(cmd, "--idle", f.idle));
  if (o.interval_s < 0.1 || o.interval_s > 3600) UsageError(cmd, "--interval", "from 100ms to 1h");
  if (o.idle_s < 0.5 || o.idle_s > 3600) UsageError(cmd, "--idle", "from 500ms to 1h");
  o.min_bytes = SizeFlag(cmd, "--min-size", f.min_size);
  o.link_mbps = LinkSpeedFlag(cmd, f.link_speed);
  o.nic = f.nic;
  // A descriptor per copy in progress (its size after a cleanup removed it): up to 1024.
  if (absl::StatusOr<uint64_t> files = RaiseFileLimit(); !files.ok()) {
    std::fprintf(stderr, "nasperf watch: warning: %s\n", TerminalSafe(files.status().message()).c_str());
  }
  const std::atomic<bool>* stop = StopOnSignal(cmd, "writing the copies in progress as aborted");
  o.stop = stop;
  o.line = [](const std::string& line) {
    std::printf("%s\n", TerminalSafe(line).c_str());  // file names are anyone's
    std::fflush(stdout);
  };
  std::unique_ptr<SpoolingSink> spool;
  if (!f.reporting.collector.empty()) {
    const std::string token = TokenFlag(cmd, f.token_file, /*generate_if_missing=*/false).token;
    auto started = StartReporting(cmd, f.reporting, token, TrustFlags(cmd, f.reporting.tls));
    if (!started.ok()) return Fail(cmd, started.status());
    spool = std::move(*started);
  }
  std::unique_ptr<CsvSink> csv;
  if (!f.out.empty() || spool == nullptr) {
    auto opened = CsvSink::Open(f.out.empty() ? "results" : f.out);
    if (!opened.ok()) return Fail(cmd, opened.status());
    csv = std::move(*opened);
  }
  std::vector<ReportSink*> sinks;
  if (csv) sinks.push_back(csv.get());
  if (spool) sinks.push_back(spool.get());
  TeeSink sink(sinks);
  absl::StatusOr<WatchSummary> summary = RunWatch(o, sink);
  if (csv) std::printf("results: %s\n         %s\n", csv->transfers_path().c_str(), csv->samples_path().c_str());
  if (spool) ReportSpool(cmd, *spool, absl::Seconds(10));
  if (!summary.ok()) return Fail(cmd, summary.status());
  std::printf("nasperf watch: %d %s measured, %d small or too quick to time counted only, %d %s not stored\n",
              summary->rows, summary->rows == 1 ? "copy" : "copies", summary->small, summary->submit_errors,
              summary->submit_errors == 1 ? "row" : "rows");
  if (summary->submit_errors > 0) return 1;
  return 0;  // Ctrl-C or SIGTERM is how a watch ends
}

}  // namespace

Command AddWatchCommand(CLI::App& app) { return CommandOf<WatchFlags>(app, AddWatch, RunWatchCommand); }

}  // namespace nasperf::cli
