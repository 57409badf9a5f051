#include "sender/sender.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>

#include <map>
#include <set>

#include <algorithm>
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
#include "common/clock.h"
#include "common/log.h"
#include "common/policy.h"
#include "common/stats.h"
#include "common/token.h"
#include "common/units.h"
#include "datapath/rows.h"
#include "measure/cache_knee.h"
#include "measure/netinfo.h"
#include "measure/verdict.h"
#include "sender/local_copy.h"
#include "sender/loop_journal.h"
#include "transport/registry.h"
#include "transport/transport.h"

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
    std::fprintf(out_, "%s\n", TerminalSafe(text).c_str());  // labels and errors may come from peers
    std::fflush(out_);
  }
  void Progress(const std::string& text) {
    absl::MutexLock lock(&mu_);
    std::fprintf(out_, "\r%s\033[K", TerminalSafe(text).c_str());
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

struct LoopContext {
  const SenderOptions& options;
  const RunContext& context;  // hooks and a lab's placement
  Transport& transport;
  std::string run_id;
  std::string local_host;
  uint64_t length = 0;
  LocalCopy* local = nullptr;  // reads: where the bytes land; null for a write
  int64_t start_ns = 0;        // when the first copy began: the loop's time left is reckoned from it
  int first_copy = 0;          // a resumed loop's first (sender/loop_journal.h), else 0
};

// The loop's time left, from what the copies so far took (pauses included): `done`
// copies of `total`, the current one partly. Negative while nothing moved yet.
double LoopSecondsLeft(const LoopContext& loop, int k, double fraction_of_copy, int64_t now) {
  const int total = loop.options.warmup + loop.options.runs;
  const double fraction = std::clamp(fraction_of_copy, 0.0, 1.0);
  const double done = k - loop.first_copy + fraction;  // since this process began it
  if (done <= 0) return -1;
  const double per_copy = NanosToSeconds(now - loop.start_ns) / done;
  // After the first copy the pauses so far are in per_copy; during it, none is yet.
  const double pauses = k == loop.first_copy ? absl::ToDoubleSeconds(loop.options.pause) * (total - k - 1) : 0;
  return per_copy * (total - k - fraction) + pauses;
}

// Where the loop is, for a collector's live page.
proto::LiveUpdate LiveUpdateOf(const LoopContext& loop, int k, uint64_t sent, uint64_t goal, double mb_per_s,
                               int64_t now) {
  const SenderOptions& o = loop.options;
  const RunContext& c = loop.context;
  proto::LiveUpdate u;
  u.set_run_id(loop.run_id);
  u.set_label(o.label);
  u.set_host(c.host_name.empty() ? loop.local_host : c.host_name);
  u.set_role(Name(Role::kSender));
  u.set_transport(o.transport);
  u.set_direction(Name(o.direction));
  u.set_copy(k + 1);
  u.set_copies(o.warmup + o.runs);
  u.set_warmup(k < o.warmup);
  u.set_bytes(sent);
  u.set_copy_bytes(goal);
  u.set_mb_per_s(mb_per_s);
  const double fraction = goal > 0 ? static_cast<double>(sent) / static_cast<double>(goal) : 0;
  u.set_left_s(LoopSecondsLeft(loop, k, fraction, now));
  if (c.lab_copies > 0) {  // one copy of a lab's loop: the lab's place in it
    u.set_copy(c.lab_copy);
    u.set_copies(c.lab_copies);
    u.set_left_s(c.lab_left_after_s >= 0 && u.left_s() >= 0 ? c.lab_left_after_s + u.left_s() : -1);
  }
  return u;
}

// The cells every transport shares.
TransferResult StartRow(const LoopContext& loop, int iteration, bool warmup, int stream) {
  const SenderOptions& o = loop.options;
  TransferResult out;
  proto::TransferReport& row = out.sender;
  row.set_run_id(loop.run_id);
  row.set_label(o.label);
  row.set_iteration(iteration);
  row.set_stream(stream);
  row.set_role(Name(Role::kSender));
  row.set_host(loop.context.host_name.empty() ? loop.local_host : loop.context.host_name);
  row.set_transport(o.transport);
  row.set_started_at_unix_ns(WallNanos());
  row.set_sync_policy(SyncPolicyName(o.sync_policy));
  row.set_direction(Name(o.direction));
  row.set_warmup(warmup);
  row.set_status(Name(Status::kFailed));
  return out;
}

// A write's payload: the --tree's files, the --file, or bytes generated for this slot.
absl::StatusOr<std::unique_ptr<PayloadSource>> MakeSource(const LoopContext& loop, const TransferSlot& slot) {
  const SenderOptions& o = loop.options;
  if (!o.tree.empty()) return TreeSource(o.tree, o.tree_files);
  if (!o.file.empty()) return FileSource(o.file, o.file_fd.get());
  uint64_t seed = std::hash<std::string>()(loop.run_id) ^ (static_cast<uint64_t>(slot.iteration) << 20) ^
                  static_cast<uint64_t>(slot.stream);
  return GeneratedSource(o.pattern, seed);
}

// A write: the payload source, then the transport's push.
void PushStream(const LoopContext& loop, const TransferSlot& slot, std::atomic<uint64_t>* progress,
                TransferResult& out) {
  const SenderOptions& o = loop.options;
  absl::StatusOr<std::unique_ptr<PayloadSource>> source = MakeSource(loop, slot);
  if (!source.ok()) {
    out.sender.set_error(std::string(source.status().message()));
    return;
  }
  PushOptions push;
  push.checksum = o.verify;
  push.interval_s = o.interval_s;
  push.progress = progress;
  push.cancel = loop.context.cancel;
  VerdictFigures cpu;
  push.cpu_seen = &cpu;
  loop.transport.Push(slot, **source, push, out);
  // The transports judge the row from their own figures; each end's CPU quota (the
  // kernel's word that a container's or service's CPU limit held it) is judged here.
  JudgeCpuQuotas(cpu, out.sender);
}

// With --verify, a read is ok only when both ends hashed the same bytes.
void CompareChecksums(TransferResult& out) {
  proto::TransferReport& row = out.sender;
  const bool verified = out.receiver && !out.receiver->checksum().empty() && out.receiver->checksum() == row.checksum();
  row.set_verified(verified);
  if (!verified) {
    row.set_status(Name(Status::kFailed));
    row.set_error(absl::StrCat("checksum mismatch: got ", row.checksum(), ", the NAS read ",
                               out.receiver ? out.receiver->checksum() : "(no row)"));
  }
}

// A read: no payload is built; the local copy (or nothing) takes what the far end
// streams, and is kept or removed per --cleanup.
void PullStream(const LoopContext& loop, const TransferSlot& slot, TransferResult& out) {
  const SenderOptions& o = loop.options;
  proto::TransferReport& row = out.sender;
  loop.local->FillRow(row);
  std::string name;
  auto writer = loop.local->Create(TransferFileName(slot.run_id, slot.iteration, slot.stream), slot.length, &name);
  if (!writer.ok()) {
    row.set_error(std::string(writer.status().message()));
    return;
  }
  PipelineOptions pipeline;
  pipeline.sync_every = loop.local->sync_every();
  pipeline.checksum = o.verify;
  pipeline.interval_s = o.interval_s;
  pipeline.cancel = loop.context.cancel;  // Ctrl-C: the row says aborted
  loop.transport.Pull(slot, writer->get(), pipeline, out);
  writer->reset();
  if (row.status() == Name(Status::kOk) && o.verify) CompareChecksums(out);
  loop.local->Settle(name, row.status() == Name(Status::kOk));
}

// One stream's transfer of one iteration, its CPU time measured on this thread
// (which does all of the stream's work).
TransferResult RunStream(const LoopContext& loop, int iteration, bool warmup, int stream,
                         std::atomic<uint64_t>* progress) {
  TransferResult out = StartRow(loop, iteration, warmup, stream);
  const CpuTime cpu_start = ThreadCpuTime();
  const TransferSlot slot{loop.run_id, iteration, warmup, stream, loop.length};
  if (loop.local != nullptr) {
    PullStream(loop, slot, out);
  } else {
    PushStream(loop, slot, progress, out);
  }
  const CpuTime cpu = ThreadCpuTime() - cpu_start;
  out.sender.set_cpu_user_s(cpu.user_s);
  out.sender.set_cpu_sys_s(cpu.sys_s);
  return out;
}

std::string IterationName(int iteration, bool warmup) {
  return warmup ? absl::StrCat("w", iteration) : absl::StrCat(iteration);
}

std::string TableHeader() {
  return absl::StrFormat("%6s %6s %11s %11s %13s %10s %8s %12s  %s", "iter", "stream", "bytes", "send MB/s",
                         "durable MB/s", "1st byte", "sync s", "verdict", "status");
}

// The row that knows when the data was durable: the receiver's, or over SSH the
// sender's own when it waited for a remote fsync (no agent row exists there).
const proto::TransferReport* DurableRow(const TransferResult& r) {
  if (r.receiver) return &*r.receiver;
  const proto::TransferReport& s = r.sender;
  const TransportEntry* transport = FindTransport(s.transport());
  auto sync = ParseSyncPolicy(s.sync_policy());
  if (transport != nullptr && !transport->caps.agent && sync.ok() && sync->kind != SyncPolicy::kNone) return &s;
  return nullptr;
}

std::string TableLine(const TransferResult& r) {
  const proto::TransferReport& s = r.sender;
  auto num = [](bool has, double v, const char* format) { return has ? absl::StrFormat(format, v) : std::string("-"); };
  const proto::TransferReport* rx = DurableRow(r);
  std::string status = s.status() == Name(Status::kOk) ? "ok" : absl::StrCat(s.status(), ": ", s.error());
  return absl::StrFormat("%6s %6d %11s %11s %13s %10s %8s %12s  %s", IterationName(s.iteration(), s.warmup()),
                         s.stream(), s.has_bytes() ? FormatSize(s.bytes()) : "-",
                         num(s.has_mb_per_s(), s.mb_per_s(), "%.1f"),
                         num(rx && rx->has_mb_per_s(), rx ? rx->mb_per_s() : 0, "%.1f"),
                         num(s.has_first_byte_s(), s.first_byte_s() * 1e3, "%.2fms"),
                         num(rx && rx->has_sync_s(), rx ? rx->sync_s() : 0, "%.3f"),
                         s.bottleneck().empty() ? "-" : s.bottleneck(), status);
}

// The row of the end that wrote a many-files transfer's files: the agent's, else ours.
const proto::TransferReport& FilesRow(const TransferResult& r) {
  return r.receiver && r.receiver->has_files() ? *r.receiver : r.sender;
}

// A many-files transfer's figures in a line: "200 whole, 1450.8 files/s; create to
// close p50 0.54 ms, p90 0.82 ms, p99 1.1 ms, max 3.0 ms; metadata 78 % of the time".
std::string DescribeFileSet(const proto::TransferReport& row) {
  std::string text = absl::StrFormat("%d whole", row.files());
  if (row.has_files_per_s()) absl::StrAppendFormat(&text, ", %.1f files/s", row.files_per_s());
  if (row.has_file_p50_s()) {
    absl::StrAppendFormat(&text, "; create to close p50 %.2f ms, p90 %.2f ms, p99 %.2f ms, max %.2f ms",
                          row.file_p50_s() * 1e3, row.file_p90_s() * 1e3, row.file_p99_s() * 1e3,
                          row.file_max_s() * 1e3);
  }
  if (row.has_metadata_pct())
    absl::StrAppendFormat(&text, "; the files' own work %.0f %% of the time", row.metadata_pct());
  return text;
}

std::string SummaryLine(const char* name, const std::vector<double>& values) {
  Summary s = Summarize(values);
  if (s.n == 0) return absl::StrFormat("  %-14s %4d", name, 0);
  return absl::StrFormat("  %-14s %4d %10.1f %10.1f %10.1f %10.1f %10.1f", name, s.n, s.median, s.mean, s.min, s.max,
                         s.stddev);
}

}  // namespace

namespace {

// The bytes of each transfer: --size, or the file's length (checked readable now,
// so a bad file fails before the loop).
absl::StatusOr<uint64_t> PayloadLength(const SenderOptions& options) {
  uint64_t length = options.size;
  if (!options.file.empty()) {
    auto probe = FileSource(options.file, options.file_fd.get());
    if (!probe.ok()) return probe.status();
    struct stat st {};
    if (::fstat(probe->get()->file_fd(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size == 0) {
      return absl::InvalidArgumentError(absl::StrCat(options.file, " is not a non-empty regular file"));
    }
    length = static_cast<uint64_t>(st.st_size);
  }
  // A read of an existing file on the NAS learns its length from the NAS.
  if (length == 0 && options.remote_file.empty())
    return absl::InvalidArgumentError("nothing to send: give --size or --file");
  return length;
}

std::string RunHeadline(const SenderOptions& options, const LoopContext& loop) {
  if (options.direction == Direction::kRead) {
    return absl::StrFormat(
        "run %s%s: %d x %s read from the NAS, %s, %d stream%s, into %s%s", loop.run_id,
        options.label.empty() ? "" : absl::StrCat(" \"", options.label, "\""), options.runs, FormatSize(loop.length),
        TransportFor(options.transport).caps.read_cache ? absl::StrCat("cache ", Name(options.cache))
                                                        : absl::StrCat("over ", options.transport),
        options.streams, options.streams == 1 ? "" : "s",
        options.local_target.empty() ? "nothing (discard)"
                                     : absl::StrCat(options.local_target, ", write ", Name(options.write_mode),
                                                    ", sync ", SyncPolicyName(options.sync_policy)),
        options.warmup > 0 ? absl::StrCat(", ", options.warmup, " warm-up") : "");
  }
  return absl::StrFormat(
      "run %s%s: %d x %s%s, %d stream%s, %s, sync %s%s", loop.run_id,
      options.label.empty() ? "" : absl::StrCat(" \"", options.label, "\""), options.runs, FormatSize(loop.length),
      !options.tree.empty()
          ? absl::StrCat(" of ", options.file_sizes->size(), " files from ", options.tree,
                         options.tree_left_out > 0
                             ? absl::StrCat(" (", options.tree_left_out, " empty files, links and others left out)")
                             : "")
      : options.file_sizes
          ? absl::StrCat(" generated in ", options.file_sizes->size(), " files of ", options.file_size_text)
      : options.file.empty() ? " generated"
                             : absl::StrCat(" of ", options.file),
      options.streams, options.streams == 1 ? "" : "s",
      TransportFor(options.transport).caps.write_modes ? absl::StrCat("write ", Name(options.write_mode))
                                                       : absl::StrCat("over ", options.transport),
      SyncPolicyName(options.sync_policy), options.warmup > 0 ? absl::StrCat(", ", options.warmup, " warm-up") : "");
}

// --resume, journal without rows: the copy the killed loop was at, recorded once as
// aborted on both ends (the far end's row as it kept it; its partial file it removed
// when the connection broke). The aborted rows carry the transfer ids the journal
// kept, so a sink that has them already keeps one. Returns the copy to go on at: the
// same copy again, unless the NAS kept an ok row of it (the sender was killed after
// the transfer but before its rows were taken): a copy with a row stored never runs
// twice.
absl::StatusOr<int> RecordInterrupted(const LoopContext& loop, const LoopState& state, ReportSink& sink,
                                      Console& console) {
  const SenderOptions& o = loop.options;
  const bool warmup = state.copy < o.warmup;
  const int iteration = state.copy - o.warmup + 1 + loop.context.iteration_offset;
  if (state.recorded || state.transfers.empty()) {
    console.Line(absl::StrFormat("resuming run %s at copy %d of %d%s", loop.run_id, state.copy + 1, o.warmup + o.runs,
                                 state.recorded ? " (its aborted rows are stored)" : ""));
    return state.copy;
  }
  std::vector<TransferResult> rows;
  bool nas_kept_ok = false;
  for (const auto& [stream, id] : state.transfers) {
    TransferResult& r = rows.emplace_back(StartRow(loop, iteration, warmup, stream));
    r.sender.set_transfer_id(id);
    r.sender.set_status(Name(Status::kAborted));
    const TransferSlot slot{loop.run_id, iteration, warmup, stream, loop.length};
    r.receiver = loop.transport.RowOfInterrupted(slot, id);
    nas_kept_ok = nas_kept_ok || (r.receiver && r.receiver->status() == Name(Status::kOk));
  }
  for (TransferResult& r : rows) {
    r.sender.set_error(nas_kept_ok ? "the sender was killed before it stored this row; the NAS's rows of the copy "
                                     "are kept and --resume did not run it again"
                                   : "the sender stopped mid-copy (killed); --resume ran the copy again");
    if (absl::Status s = sink.Submit(r.sender); !s.ok()) return s;
    if (r.receiver) {
      if (absl::Status s = sink.Submit(*r.receiver); !s.ok()) return s;
    }
    console.Line(absl::StrFormat("resuming run %s at copy %d of %d: stream %d's transfer %d recorded as aborted%s",
                                 loop.run_id, state.copy + 1, o.warmup + o.runs, r.sender.stream(),
                                 r.sender.transfer_id(),
                                 r.receiver ? absl::StrCat(" (the NAS's row: ", r.receiver->status(), ")") : ""));
  }
  return nas_kept_ok ? state.copy + 1 : state.copy;
}

// --resume: where the killed loop goes on. A journal with rows: the copy ran to its
// end and its rows were taken; they are stored (again: the sink keeps each once) and
// the copy is never run again.
absl::StatusOr<int> ResumeAt(const LoopContext& loop, const LoopState& state, ReportSink& sink, Console& console) {
  if (!state.rows_taken) return RecordInterrupted(loop, state, sink, console);
  for (const proto::TransferReport& row : state.rows) {
    if (absl::Status s = sink.Submit(row); !s.ok()) return s;
  }
  const SenderOptions& o = loop.options;
  console.Line(absl::StrFormat("resuming run %s: copy %d of %d ran to its end; its %d rows are stored once%s",
                               loop.run_id, state.copy + 1, o.warmup + o.runs, state.rows.size(),
                               state.next < o.warmup + o.runs ? absl::StrCat(", going on at copy ", state.next + 1)
                                                              : ", and it was the loop's last"));
  return state.next;
}

// One iteration: every stream on its own thread at once, and (on a terminal) a
// progress line twice a second until they are done. `k` counts from 0, warm-ups first.
std::vector<TransferResult> RunIteration(const LoopContext& loop, Console& console, int k) {
  const SenderOptions& options = loop.options;
  const RunContext& context = loop.context;
  const bool warmup = k < options.warmup;
  // warm-ups get -W+1..0, measured runs 1..N (shifted in a lab run)
  const int iteration = k - options.warmup + 1 + context.iteration_offset;
  std::vector<std::atomic<uint64_t>> progress(options.streams);
  std::vector<TransferResult> results(options.streams);
  absl::Notification done;
  std::thread ticker;
  if (context.progress || context.live != nullptr) {
    ticker = std::thread([&] {
      const uint64_t goal = loop.length * static_cast<uint64_t>(options.streams);
      int64_t last = MonoNanos();
      uint64_t last_sent = 0;
      while (!done.WaitForNotificationWithTimeout(absl::Milliseconds(500))) {
        uint64_t sent = 0;
        for (auto& p : progress) sent += p.load(std::memory_order_relaxed);
        const int64_t now = MonoNanos();
        const double rate = MegabytesPerSecond(sent - std::min(sent, last_sent), NanosToSeconds(now - last));
        last = now;
        last_sent = sent;
        const proto::LiveUpdate update = LiveUpdateOf(loop, k, sent, goal, rate, now);
        if (context.live != nullptr) context.live->Offer(update);
        if (!context.progress) continue;
        console.Progress(absl::StrFormat(
            "  %s %d/%d: %s of %s, %.1f MB/s%s", warmup ? "warm-up" : "run", warmup ? k + 1 : k - options.warmup + 1,
            warmup ? options.warmup : options.runs, FormatSize(sent), FormatSize(goal), rate,
            update.left_s() >= 0 ? absl::StrFormat(", loop done in %.0fs", update.left_s()) : ""));
      }
    });
  }
  std::vector<std::thread> threads;
  for (int s = 0; s < options.streams; ++s) {
    threads.emplace_back(
        [&, s] { results[s] = RunStream(loop, iteration, warmup, context.first_stream + s, &progress[s]); });
  }
  for (auto& t : threads) t.join();
  done.Notify();
  if (ticker.joinable()) ticker.join();
  console.ClearProgress();
  return results;
}

// What the summary needs from the measured rows.
struct Tally {
  std::vector<double> send_rates, durable_rates;
  std::vector<double> files_rates;  // many-files transfers' files/s
  std::map<std::string, int> verdicts;
  // CPU seconds and bytes per end, for CPU s/GB.
  double sender_cpu_s = 0, receiver_cpu_s = 0, sender_bytes = 0, receiver_bytes = 0;
  int startup_runs = 0;  // measured transfers that also paid the session's start-up
  // The NAS's devices in words (disk_detail) on the last transfer judged disk: which
  // device under the target held it back.
  std::string disk_detail;

  void Count(const TransferResult& r) {
    if (r.sender.has_cpu_user_s()) {
      sender_cpu_s += r.sender.cpu_user_s() + r.sender.cpu_sys_s();
      sender_bytes += static_cast<double>(r.sender.bytes());
    }
    if (r.receiver && r.receiver->has_cpu_user_s()) {
      receiver_cpu_s += r.receiver->cpu_user_s() + r.receiver->cpu_sys_s();
      receiver_bytes += static_cast<double>(r.receiver->bytes());
    }
    send_rates.push_back(r.sender.mb_per_s());
    if (FilesRow(r).has_files_per_s()) files_rates.push_back(FilesRow(r).files_per_s());
    if (r.startup) ++startup_runs;
    const proto::TransferReport* durable = DurableRow(r);
    if (durable != nullptr && durable->has_mb_per_s()) durable_rates.push_back(durable->mb_per_s());
    if (!r.sender.bottleneck().empty()) ++verdicts[r.sender.bottleneck()];
    if (r.sender.bottleneck() == Name(Bottleneck::kDisk) && r.receiver && !r.receiver->disk_detail().empty()) {
      disk_detail = r.receiver->disk_detail();
    }
  }
};

void PrintSummary(Console& console, const SenderOptions& options, const Tally& tally, int failed) {
  std::vector<std::string> mix;
  for (const auto& [verdict, count] : tally.verdicts) mix.push_back(absl::StrCat(verdict, " ", count));
  console.Line("");
  console.Line(absl::StrFormat("summary: %d transfers measured%s, %d failed", tally.send_rates.size(),
                               options.warmup > 0 ? " (warm-ups not counted)" : "", failed));
  console.Line(
      absl::StrFormat("  %-14s %4s %10s %10s %10s %10s %10s", "MB/s", "n", "median", "mean", "min", "max", "stddev"));
  console.Line(SummaryLine("send (e2e)", tally.send_rates));
  console.Line(
      SummaryLine(TransportFor(options.transport).caps.agent ? "durable (rx)" : "durable (sync)", tally.durable_rates));
  if (!tally.files_rates.empty()) console.Line(SummaryLine("files/s", tally.files_rates));
  if (tally.sender_bytes > 0) {
    std::string cpu = absl::StrFormat("  CPU s/GB: sender %.2f", tally.sender_cpu_s / (tally.sender_bytes / 1e9));
    if (tally.receiver_bytes > 0) {
      absl::StrAppendFormat(&cpu, ", receiver %.2f", tally.receiver_cpu_s / (tally.receiver_bytes / 1e9));
    }
    console.Line(cpu + " (user + system, the threads that moved the bytes)");
  }
  if (tally.startup_runs > 0) {
    const char* summary = TransportFor(options.transport).startup_summary;
    console.Line(absl::StrFormat("  start-up: %d of these %s%s", tally.startup_runs,
                                 summary != nullptr ? summary : "paid the transport's start-up",
                                 options.warmup > 0 ? "" : "; --warmup 1 leaves it out of the figures"));
  }
  if (mix.empty()) return;
  console.Line(absl::StrCat("  bottleneck: ", absl::StrJoin(mix, ", ")));
  for (const auto& [verdict, count] : tally.verdicts) {
    if (verdict != Name(Bottleneck::kBalanced))
      console.Line(absl::StrCat("    ", verdict, ": ", VerdictMeaning(verdict)));
    if (verdict == Name(Bottleneck::kDisk) && !tally.disk_detail.empty()) {
      console.Line(absl::StrCat("      the NAS's devices (last such run): ", tally.disk_detail));
    }
  }
}

}  // namespace

namespace {

// A transfer's table line, its cache cliff, and each role's first left-out figure
// (`notes_said`: the roles already explained in this run).
void SayTransfer(Console& console, const TransferResult& r, std::set<std::string>& notes_said) {
  console.Line(TableLine(r));
  if (const auto knee = r.receiver ? KneeOfRow(*r.receiver) : std::nullopt) {
    console.Line(absl::StrCat("         cache cliff: ", DescribeKnee(*knee)));
  }
  if (const std::string stalls = r.receiver ? DescribeStalls(*r.receiver) : ""; !stalls.empty()) {
    console.Line(absl::StrCat("         stalls: ", stalls));
  }
  if (FilesRow(r).has_files()) console.Line(absl::StrCat("         files: ", DescribeFileSet(FilesRow(r))));
  for (const proto::TransferReport* row : {&r.sender, r.receiver ? &*r.receiver : nullptr}) {
    if (row != nullptr && !row->notes().empty() && notes_said.insert(row->role()).second) {
      console.Line(absl::StrCat("  warning (", row->role(), " row, said once): ", row->notes()));
    }
  }
}

// A --file source that is not cached and whose disk reads slower than the path can
// carry sets the pace of every run: say so before the first one.
void WarnIfSourceIsSlow(const std::string& file, const Fd* opened, std::optional<double> ceiling_mb_per_s) {
  if (!ceiling_mb_per_s) return;
  auto probe = ProbeSource(file, opened);
  if (!probe.ok()) {
    Log(LogLevel::kWarning, kComponent, "could not look at the source before the runs: %s", probe.status().message());
    return;
  }
  if (std::string warning = SlowSourceWarning(file, *probe, *ceiling_mb_per_s); !warning.empty()) {
    Log(LogLevel::kWarning, kComponent, "%s", warning);
  }
}

}  // namespace

namespace {

// Test-only (tests/integration/test_sender_resume.sh): NASPERF_FAULT=POINT:COPY (COPY
// counted from 1) makes the sender SIGKILL itself at that point of that copy, so each
// place a loop can be killed is tested without timing.
void FaultPoint(const char* point, int k) {
  static const char* const fault = std::getenv("NASPERF_FAULT");
  if (fault != nullptr && absl::StrCat(point, ":", k + 1) == fault) ::raise(SIGKILL);
}

// A copy's rows to the sink, journal first (sender/loop_journal.h): taken durably with
// the copy to go on at (`next`), then submitted, a line each and the summary's tally.
absl::Status StoreCopy(const LoopContext& loop, Console& console, ReportSink& sink,
                       std::vector<TransferResult>& results, int k, int next, SenderOutcome& outcome, Tally& tally,
                       std::set<std::string>& notes_said) {
  const SenderOptions& options = loop.options;
  if (loop.context.journal != nullptr) {
    std::vector<const proto::TransferReport*> rows;
    for (const TransferResult& r : results) {
      rows.push_back(&r.sender);
      if (r.receiver) rows.push_back(&*r.receiver);
    }
    if (absl::Status s = loop.context.journal->RowsTaken(rows, next); !s.ok()) return s;
  }
  FaultPoint("taken", k);
  for (TransferResult& r : results) {
    if (absl::Status s = sink.Submit(r.sender); !s.ok()) return s;
    FaultPoint("row", k);
    if (r.receiver) {
      if (absl::Status s = sink.Submit(*r.receiver); !s.ok()) return s;
    }
    ++outcome.transfers;
    SayTransfer(console, r, notes_said);
    if (r.sender.status() != Name(Status::kOk)) {
      ++outcome.failed;
    } else if (k >= options.warmup) {
      tally.Count(r);
    }
  }
  FaultPoint("stored", k);
  return absl::OkStatus();
}

}  // namespace

// The copies, from the first (or a resumed loop's) to the last: rows to the sink, a line
// each, the journal kept, and the live page told when the loop is over.
absl::Status RunCopies(LoopContext& loop, Console& console, ReportSink& sink, SenderOutcome& outcome, Tally& tally) {
  const SenderOptions& options = loop.options;
  const RunContext& context = loop.context;
  std::set<std::string> notes_said;  // roles whose left-out figure was explained: once per run
  const int total = options.warmup + options.runs;
  if (context.resumed != nullptr) {
    absl::StatusOr<int> first = ResumeAt(loop, *context.resumed, sink, console);
    if (!first.ok()) return first.status();
    loop.first_copy = *first;
  }
  loop.start_ns = MonoNanos();
  bool ended = true;  // false: cancelled, so the journal stays for --resume
  int k = loop.first_copy;
  for (; k < total; ++k) {
    if (context.journal != nullptr && k == loop.first_copy) {
      if (absl::Status s = context.journal->BeginCopy(k); !s.ok()) return s;
    }
    std::vector<TransferResult> results = RunIteration(loop, console, k);
    FaultPoint("ran", k);
    const bool stop = std::any_of(results.begin(), results.end(), [](const TransferResult& r) { return r.stop_loop; });
    const bool cancelled = !stop && context.cancel != nullptr && context.cancel->load();
    // A cancelled copy's aborted rows are stored and a resumed loop runs it again, once.
    const int next = stop ? total : cancelled ? k : k + 1;
    if (absl::Status s = StoreCopy(loop, console, sink, results, k, next, outcome, tally, notes_said); !s.ok()) {
      return s;
    }
    if (stop) {
      Log(LogLevel::kError, kComponent, "stopping: %s", results.front().sender.error());
      break;
    }
    if (cancelled) {
      ended = false;
      if (context.journal != nullptr) (void)context.journal->Recorded();
      break;
    }
    // The journal moves on with the rows, before the pause: a loop killed from here on
    // goes on at the next copy.
    if (context.journal != nullptr && k + 1 < total) {
      if (absl::Status s = context.journal->BeginCopy(k + 1); !s.ok()) return s;
    }
    FaultPoint("pause", k);
    if (k + 1 < total && options.pause > absl::ZeroDuration()) absl::SleepFor(options.pause);
  }
  if (ended && context.journal != nullptr) {
    if (absl::Status s = context.journal->Remove(); !s.ok()) console.Line(absl::StrCat("warning: ", s.message()));
  }
  // A lab's job ends its copy, not the lab's loop, unless it is the lab's last.
  if (context.live != nullptr && context.lab_copy == context.lab_copies) {
    proto::LiveUpdate last = LiveUpdateOf(loop, std::min(k, total - 1), 0, 0, 0, MonoNanos());
    last.set_left_s(0);
    last.set_ended(true);
    context.live->Offer(last);
  }
  return absl::OkStatus();
}

absl::StatusOr<SenderOutcome> RunSender(const SenderOptions& options, const RunContext& context, ReportSink& sink,
                                        std::FILE* out) {
  absl::StatusOr<std::string> word = ParseRunTransport(options.transport);
  if (!word.ok()) return word.status();
  absl::StatusOr<std::unique_ptr<Transport>> transport = TransportFor(*word).make(options, context);
  if (!transport.ok()) return transport.status();
  return RunSenderWith(options, context, **transport, sink, out);
}

absl::StatusOr<SenderOutcome> RunSenderWith(const SenderOptions& options, const RunContext& context,
                                            Transport& transport, ReportSink& sink, std::FILE* out) {
  Console console(out);
  absl::StatusOr<uint64_t> length = PayloadLength(options);
  if (!length.ok()) return length.status();
  std::unique_ptr<LocalCopy> local;
  if (options.direction == Direction::kRead) {
    auto opened = LocalCopy::Open(options.local_target, options.write_mode, options.sync_policy,
                                  options.cleanup.value_or(Cleanup::kEach));
    if (!opened.ok()) return opened.status();
    local = std::move(*opened);
  }
  LoopContext loop{options,         context, transport,  options.run_id.empty() ? NewRunId() : options.run_id,
                   LocalHostName(), *length, local.get()};
  if (absl::Status started =
          transport.Start(loop.run_id, *length, [&](const std::string& line) { console.Line(line); });
      !started.ok()) {
    return started;
  }
  loop.length = transport.Length(loop.length);
  if (local != nullptr) {
    // A read's length is the far end's word: nothing is written before it fits here.
    if (absl::Status room = local->CheckRoomForRun(loop.length, options.streams, options.warmup + options.runs);
        !room.ok()) {
      transport.Finish(loop.run_id);
      return room;
    }
  }
  console.Line(RunHeadline(options, loop));
  if (!options.file.empty()) WarnIfSourceIsSlow(options.file, options.file_fd.get(), transport.CeilingMBps());
  if (options.file.empty() && options.pattern == Pattern::kZero) {
    Log(LogLevel::kWarning, kComponent,
        "--pattern zero: compressing file systems (ZFS lz4, btrfs zstd) store zeros almost for "
        "free, so these numbers may say nothing about the disks");
  }
  console.Line(TableHeader());

  SenderOutcome outcome;
  outcome.run_id = loop.run_id;
  Tally tally;
  if (absl::Status s = RunCopies(loop, console, sink, outcome, tally); !s.ok()) return s;
  transport.Finish(loop.run_id);
  if (local != nullptr) local->Finish();
  PrintSummary(console, options, tally, outcome.failed);
  return outcome;
}

}  // namespace nasperf
