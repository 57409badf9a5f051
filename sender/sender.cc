#include "sender/sender.h"

#include <sys/stat.h>
#include <unistd.h>

#include <map>

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "common/checksum.h"
#include "common/clock.h"
#include "common/log.h"
#include "common/netinfo.h"
#include "common/stats.h"
#include "common/token.h"
#include "common/units.h"
#include "common/verdict.h"
#include "sender/path_check.h"
#include "sender/receiver_client.h"
#include "sender/stream_pusher.h"

namespace nasperf {

namespace {

constexpr char kComponent[] = "sender";

// Console output from several threads: whole lines, and a progress line (on a TTY)
// that is cleared before any other line.
class Console {
 public:
  explicit Console(std::FILE* out) : out_(out) {}
  void Line(const std::string& text) {
    absl::MutexLock lock(&mu_);
    ClearProgressLocked();
    std::fprintf(out_, "%s\n", text.c_str());
    std::fflush(out_);
  }
  void Progress(const std::string& text) {
    absl::MutexLock lock(&mu_);
    std::fprintf(out_, "\r%s\033[K", text.c_str());
    std::fflush(out_);
    progress_shown_ = true;
  }
  void ClearProgress() {
    absl::MutexLock lock(&mu_);
    ClearProgressLocked();
  }

 private:
  void ClearProgressLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (progress_shown_) std::fprintf(out_, "\r\033[K");
    progress_shown_ = false;
  }
  absl::Mutex mu_;
  std::FILE* out_;
  bool progress_shown_ ABSL_GUARDED_BY(mu_) = false;
};

struct StreamResult {
  proto::TransferReport sender;
  std::optional<proto::TransferReport> receiver;
  bool stop_loop = false;  // a refusal that every later transfer would meet too
};

bool IsConfigurationError(const absl::Status& s) {
  switch (s.code()) {
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kUnauthenticated:
    case absl::StatusCode::kPermissionDenied:
      return true;
    default:
      return false;
  }
}

std::string TrailerError(const DataTrailer& t) {
  if (t.error_code == EACCES && t.bytes_written == 0) {
    return "the receiver refused the data connection (ticket expired or already used)";
  }
  std::string what = t.status == TrailerStatus::kAborted ? "aborted the transfer" : "failed";
  return absl::StrCat("receiver ", what, ": ", t.error_code ? strerror(t.error_code) : "unknown error");
}

double Pct(int64_t part, int64_t whole) {
  return whole > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0;
}

struct LoopContext {
  const SenderOptions& options;
  ReceiverClient& client;
  std::string run_id;
  std::string local_host;
  uint64_t length = 0;
  PathFacts path = {};
  uint64_t window_bytes = 0;          // --window, or sized to the path; 0 = autotuning
};

StreamResult RunStream(const LoopContext& loop, int iteration, bool warmup, int stream,
                       std::atomic<uint64_t>* progress) {
  const SenderOptions& o = loop.options;
  StreamResult out;
  proto::TransferReport& row = out.sender;
  row.set_run_id(loop.run_id);
  row.set_label(o.label);
  row.set_iteration(iteration);
  row.set_stream(stream);
  row.set_role("sender");
  row.set_host(o.host_name.empty() ? loop.local_host : o.host_name);
  row.set_peer(FormatHostPort(o.to));
  row.set_transport("native");
  row.set_started_at_unix_ns(WallNanos());
  row.set_write_mode(o.write_mode);
  row.set_sync_policy(o.sync_policy);
  row.set_warmup(warmup);
  row.set_status("failed");
  if (loop.path.mtu) row.set_mtu(*loop.path.mtu);
  if (loop.path.path_mtu) row.set_path_mtu(*loop.path.path_mtu);
  if (loop.path.link_mbps) row.set_link_mbps(*loop.path.link_mbps);

  proto::OpenTransferRequest request;
  request.set_run_id(loop.run_id);
  request.set_label(o.label);
  request.set_iteration(iteration);
  request.set_stream(stream);
  request.set_size(loop.length);
  request.set_write_mode(o.write_mode);
  request.set_sync_policy(o.sync_policy);
  request.set_cleanup(o.cleanup);
  if (loop.path.path_mtu) request.set_path_mtu(*loop.path.path_mtu);
  request.set_link_mbps(o.link_mbps);
  request.set_window_bytes(loop.window_bytes);
  request.set_checksum(o.verify);
  request.set_warmup(warmup);
  request.set_interval_s(o.interval_s);
  request.set_sender_host(loop.local_host);
  absl::StatusOr<proto::OpenTransferReply> open = loop.client.OpenTransfer(request);
  // A lab's barrier counts every stream, opened or refused, so one refusal never
  // holds the others back; a refused stream just ends after it.
  const absl::Status released = o.before_first_byte ? o.before_first_byte() : absl::OkStatus();
  if (!open.ok()) {
    row.set_error(std::string(open.status().message()));
    out.stop_loop = IsConfigurationError(open.status());
    return out;
  }

  std::unique_ptr<PayloadSource> source;
  if (o.file.empty()) {
    uint64_t seed = std::hash<std::string>()(loop.run_id) ^ (static_cast<uint64_t>(iteration) << 20) ^
                    static_cast<uint64_t>(stream);
    source = GeneratedSource(o.pattern, seed);
  } else {
    auto file = FileSource(o.file);
    if (!file.ok()) {
      row.set_error(std::string(file.status().message()));
      return out;
    }
    source = std::move(*file);
  }

  if (!released.ok()) {
    row.set_transfer_id(open->transfer_id());
    row.set_status(absl::IsCancelled(released) ? "aborted" : "failed");
    row.set_error(std::string(released.message()));
    return out;  // the ticket is never used; the receiver lets it expire
  }
  PushTarget target;
  target.data = {o.to.host, static_cast<uint16_t>(open->data_port())};
  target.transfer_id = open->transfer_id();
  std::copy(open->ticket().begin(), open->ticket().end(), target.ticket.begin());
  target.length = loop.length;
  PushOptions push;
  push.checksum = o.verify;
  push.interval_s = o.interval_s;
  push.progress = progress;
  push.window_bytes = loop.window_bytes;
  push.max_segment = PathMaxSegment(loop.path);
  push.cancel = o.cancel;
  PushResult r = PushNative(target, *source, push);

  row.set_transfer_id(open->transfer_id());
  row.set_peer(FormatHostPort(target.data));
  row.set_started_at_unix_ns(r.start_wall_ns);
  row.set_bytes(r.bytes_sent);
  if (r.mss) row.set_mss(*r.mss);
  if (r.has_checksum) row.set_checksum(ChecksumHex(r.checksum));
  for (const IntervalSample& s : r.samples) {
    proto::Sample* sample = row.add_samples();
    sample->set_t_s(s.t_s);
    sample->set_bytes(s.bytes);
    sample->set_interval_s(s.interval_s);
  }

  // The receiver's own row: it exists whenever the data connection got that far.
  if (r.trailer || r.bytes_sent > 0) {
    auto fetched = loop.client.FetchReport(open->transfer_id(), absl::Seconds(30));
    if (fetched.ok()) {
      out.receiver = *fetched;
      if (!o.receiver_name.empty()) out.receiver->set_host(o.receiver_name);
    } else if (!absl::IsNotFound(fetched.status())) {
      Log(LogLevel::kWarning, kComponent, "no receiver row for transfer %d: %s",
          open->transfer_id(), fetched.status().message());
    }
  }

  if (!r.trailer) {
    if (absl::IsCancelled(r.status)) row.set_status("aborted");
    row.set_error(std::string(r.status.message()));
    return out;
  }
  const DataTrailer& t = *r.trailer;
  if (t.status != TrailerStatus::kOk) {
    row.set_status(t.status == TrailerStatus::kAborted ? "aborted" : "failed");
    row.set_error(out.receiver && !out.receiver->error().empty()
                      ? absl::StrCat("receiver: ", out.receiver->error())
                      : TrailerError(t));
    return out;
  }
  int64_t duration = r.ack_ns - r.first_byte_ns;
  row.set_duration_s(NanosToSeconds(duration));
  row.set_mb_per_s(MegabytesPerSecond(r.bytes_sent, NanosToSeconds(duration)));
  row.set_first_byte_s(NanosToSeconds(r.first_byte_ns - r.start_ns));
  row.set_write_s(NanosToSeconds(r.last_byte_ns - r.first_byte_ns));
  row.set_sync_s(NanosToSeconds(r.ack_ns - r.last_byte_ns));
  if (auto ceiling = loop.path.CeilingMBps()) row.set_line_rate_pct(100 * row.mb_per_s() / *ceiling);
  double source_pct = Pct(r.source_ns, duration);
  if (source->sendfile_fd() < 0 || o.verify) row.set_source_wait_pct(source_pct);
  int64_t receiver_span = t.durable_ns > 0 ? static_cast<int64_t>(t.durable_ns) : duration;
  row.set_bottleneck(Verdict(Pct(t.net_wait_ns, receiver_span),
                             Pct(t.disk_wait_ns + t.sync_ns, receiver_span),
                             row.has_source_wait_pct() ? source_pct : -1));
  if (t.bytes_written != loop.length) {
    row.set_error(absl::StrCat("receiver wrote ", t.bytes_written, " of ", loop.length, " bytes"));
    return out;
  }
  if (o.verify) {
    bool verified = t.has_checksum && r.has_checksum && t.checksum == r.checksum;
    row.set_verified(verified);
    if (!verified) {
      row.set_error(absl::StrCat("checksum mismatch: sent ", ChecksumHex(r.checksum), ", receiver got ",
                                 t.has_checksum ? ChecksumHex(t.checksum) : "none"));
      return out;
    }
  }
  row.set_status("ok");
  return out;
}

std::string IterationName(int iteration, bool warmup) {
  return warmup ? absl::StrCat("w", iteration) : absl::StrCat(iteration);
}

std::string TableHeader() {
  return absl::StrFormat("%6s %6s %11s %11s %13s %10s %8s %9s  %s", "iter", "stream", "bytes",
                         "send MB/s", "durable MB/s", "1st byte", "sync s", "verdict", "status");
}

std::string TableLine(const StreamResult& r) {
  const proto::TransferReport& s = r.sender;
  auto num = [](bool has, double v, const char* format) {
    return has ? absl::StrFormat(format, v) : std::string("-");
  };
  const proto::TransferReport* rx = r.receiver ? &*r.receiver : nullptr;
  std::string status = s.status() == "ok" ? "ok" : absl::StrCat(s.status(), ": ", s.error());
  return absl::StrFormat(
      "%6s %6d %11s %11s %13s %10s %8s %9s  %s", IterationName(s.iteration(), s.warmup()),
      s.stream(), s.has_bytes() ? FormatSize(s.bytes()) : "-",
      num(s.has_mb_per_s(), s.mb_per_s(), "%.1f"),
      num(rx && rx->has_mb_per_s(), rx ? rx->mb_per_s() : 0, "%.1f"),
      num(s.has_first_byte_s(), s.first_byte_s() * 1e3, "%.2fms"),
      num(rx && rx->has_sync_s(), rx ? rx->sync_s() : 0, "%.3f"),
      s.bottleneck().empty() ? "-" : s.bottleneck(), status);
}

std::string SummaryLine(const char* name, const std::vector<double>& values) {
  Summary s = Summarize(values);
  if (s.n == 0) return absl::StrFormat("  %-14s %4d", name, 0);
  return absl::StrFormat("  %-14s %4d %10.1f %10.1f %10.1f %10.1f %10.1f", name, s.n, s.median,
                         s.mean, s.min, s.max, s.stddev);
}

}  // namespace

std::string NewRunId() {
  return absl::StrCat(absl::FormatTime("%Y%m%d-%H%M%S", absl::Now(), absl::UTCTimeZone()), "-",
                      RandomHex(2));
}

absl::StatusOr<SenderOutcome> RunSender(const SenderOptions& options, ReportSink& sink,
                                        std::FILE* out) {
  Console console(out);
  ReceiverClient client(options.to, options.token, options.credentials);
  absl::StatusOr<proto::HelloReply> hello = client.Hello();
  if (!hello.ok()) return hello.status();

  LoopContext loop{options, client, options.run_id.empty() ? NewRunId() : options.run_id,
                   LocalHostName(), options.size};
  if (!options.file.empty()) {
    auto probe = FileSource(options.file);  // fail before the loop on an unreadable file
    if (!probe.ok()) return probe.status();
    struct stat st {};
    if (::stat(options.file.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size == 0) {
      return absl::InvalidArgumentError(absl::StrCat(options.file, " is not a non-empty regular file"));
    }
    loop.length = static_cast<uint64_t>(st.st_size);
  }
  if (loop.length == 0) return absl::InvalidArgumentError("nothing to send: give --size or --file");

  console.Line(absl::StrFormat(
      "receiver %s (nasperf %s) at %s: target %s%s, write modes %s", hello->host(), hello->version(),
      FormatHostPort(options.to), hello->target(),
      hello->target() == "discard" ? "" : absl::StrCat(", ", FormatSize(hello->free_bytes()), " free"),
      absl::StrJoin(hello->write_modes(), "/")));
  auto path = CheckPath(options.to, *hello, options.link_mbps);
  if (!path.ok()) return path.status();
  loop.path = *path;
  loop.window_bytes = options.window_bytes > 0 ? options.window_bytes : AutoWindowBytes(loop.path);
  console.Line(PathLine(loop.path));
  for (const std::string& warning : PathWarnings(loop.path)) {
    Log(LogLevel::kWarning, kComponent, "%s", warning);
  }
  if (uint32_t mss = PathMaxSegment(loop.path)) {
    console.Line(absl::StrFormat("mss: data connections capped at %d bytes to fit the path MTU %d",
                                 mss, *loop.path.path_mtu));
  }
  if (loop.window_bytes > 0) {
    console.Line(absl::StrFormat("window: %s socket buffers (%s)", FormatSize(loop.window_bytes),
                                 options.window_bytes > 0 ? "--window" : "2 x bandwidth-delay product"));
  }
  console.Line(absl::StrFormat(
      "run %s%s: %d x %s%s, %d stream%s, write %s, sync %s%s", loop.run_id,
      options.label.empty() ? "" : absl::StrCat(" \"", options.label, "\""), options.runs,
      FormatSize(loop.length), options.file.empty() ? " generated" : absl::StrCat(" of ", options.file),
      options.streams, options.streams == 1 ? "" : "s", options.write_mode, options.sync_policy,
      options.warmup > 0 ? absl::StrCat(", ", options.warmup, " warm-up") : ""));
  if (options.file.empty() && options.pattern == Pattern::kZero) {
    Log(LogLevel::kWarning, kComponent,
        "--pattern zero: compressing file systems (ZFS lz4, btrfs zstd) store zeros almost for "
        "free, so these numbers may say nothing about the disks");
  }
  console.Line(TableHeader());

  SenderOutcome outcome;
  outcome.run_id = loop.run_id;
  std::vector<double> send_rates, durable_rates;
  std::map<std::string, int> verdicts;
  const int total = options.warmup + options.runs;
  for (int k = 0; k < total; ++k) {
    const bool warmup = k < options.warmup;
    // warm-ups get -W+1..0, measured runs 1..N (shifted in a lab run)
    const int iteration = k - options.warmup + 1 + options.iteration_offset;
    std::vector<std::atomic<uint64_t>> progress(options.streams);
    std::vector<StreamResult> results(options.streams);
    absl::Notification done;
    std::thread ticker;
    if (options.progress) {
      ticker = std::thread([&] {
        const uint64_t goal = loop.length * static_cast<uint64_t>(options.streams);
        const int64_t start = MonoNanos();
        while (!done.WaitForNotificationWithTimeout(absl::Milliseconds(500))) {
          uint64_t sent = 0;
          for (auto& p : progress) sent += p.load(std::memory_order_relaxed);
          double elapsed = NanosToSeconds(MonoNanos() - start);
          double rate = MegabytesPerSecond(sent, elapsed);
          double eta = rate > 0 ? static_cast<double>(goal - std::min(goal, sent)) / (rate * 1e6) : 0;
          console.Progress(absl::StrFormat("  %s %d/%d: %s of %s, %.1f MB/s, ETA %.0fs",
                                           warmup ? "warm-up" : "run", warmup ? k + 1 : k - options.warmup + 1,
                                           warmup ? options.warmup : options.runs, FormatSize(sent),
                                           FormatSize(goal), rate, eta));
        }
      });
    }
    std::vector<std::thread> threads;
    for (int s = 0; s < options.streams; ++s) {
      threads.emplace_back([&, s] {
        results[s] = RunStream(loop, iteration, warmup, options.first_stream + s, &progress[s]);
      });
    }
    for (auto& t : threads) t.join();
    done.Notify();
    if (ticker.joinable()) ticker.join();
    console.ClearProgress();

    bool stop = false;
    for (StreamResult& r : results) {
      if (absl::Status s = sink.Submit(r.sender); !s.ok()) return s;
      if (r.receiver) {
        if (absl::Status s = sink.Submit(*r.receiver); !s.ok()) return s;
      }
      ++outcome.transfers;
      console.Line(TableLine(r));
      stop = stop || r.stop_loop;
      if (r.sender.status() != "ok") {
        ++outcome.failed;
        continue;
      }
      if (warmup) continue;
      send_rates.push_back(r.sender.mb_per_s());
      if (r.receiver && r.receiver->has_mb_per_s()) durable_rates.push_back(r.receiver->mb_per_s());
      ++verdicts[r.sender.bottleneck()];
    }
    if (stop) {
      Log(LogLevel::kError, kComponent, "stopping: %s", results.front().sender.error());
      break;
    }
    if (options.cancel != nullptr && options.cancel->load()) break;
    if (k + 1 < total && options.pause > absl::ZeroDuration()) absl::SleepFor(options.pause);
  }

  if (options.cleanup == "end") {
    if (auto ended = client.EndRun(loop.run_id); !ended.ok()) {
      Log(LogLevel::kWarning, kComponent, "cleanup at the end failed: %s", ended.status().message());
    }
  }

  std::vector<std::string> mix;
  for (const auto& [verdict, count] : verdicts) mix.push_back(absl::StrCat(verdict, " ", count));
  console.Line("");
  console.Line(absl::StrFormat("summary: %d transfers measured%s, %d failed", send_rates.size(),
                               options.warmup > 0 ? " (warm-ups not counted)" : "", outcome.failed));
  console.Line(absl::StrFormat("  %-14s %4s %10s %10s %10s %10s %10s", "MB/s", "n", "median", "mean",
                               "min", "max", "stddev"));
  console.Line(SummaryLine("send (e2e)", send_rates));
  console.Line(SummaryLine("durable (rx)", durable_rates));
  if (!mix.empty()) console.Line(absl::StrCat("  bottleneck: ", absl::StrJoin(mix, ", ")));
  return outcome;
}

}  // namespace nasperf
