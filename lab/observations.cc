#include "lab/observations.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <mutex>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/notification.h"
#include "common/fd.h"
#include "common/log.h"
#include "lab/agent.h"
#include "watch/copy_watcher.h"

namespace nasperf {
namespace {

constexpr char kComponent[] = "observe";
constexpr size_t kMaxSubdirBytes = 1024;

// target/subdir opened as an O_PATH descriptor, when subdir is relative, without "." or
// "..", and every component on the way is a directory, not a link, walked beneath the
// target's descriptor (OpenDirectoryBeneath): a peer names a place under the target,
// nothing else, and the watch gets that directory, not what a name points to later.
absl::StatusOr<Fd> DirUnder(const std::string& target, const std::string& subdir, std::string* dir) {
  *dir = target;
  Fd top(open(target.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));  // --target as the agent's user gave it
  if (!top.valid()) return ErrnoStatus(errno, absl::StrCat("open the agent's target ", target));
  if (subdir.empty()) return top;
  if (subdir.size() > kMaxSubdirBytes || subdir.front() == '/') {
    return absl::InvalidArgumentError("subdir must be a relative path under the agent's target");
  }
  for (absl::string_view part : absl::StrSplit(subdir, '/')) {
    if (part.empty() || part == "." || part == ".." || part.find('\0') != absl::string_view::npos) {
      return absl::InvalidArgumentError("subdir must be a relative path under the agent's target, without . or ..");
    }
  }
  absl::StatusOr<Fd> under = OpenDirectoryBeneath(top.get(), subdir);
  if (!under.ok()) return absl::NotFoundError(absl::StrCat("no directory ", subdir, " under the agent's target"));
  absl::StrAppend(dir, "/", subdir);
  return under;
}

// Rows of one observation, as they end; bounded.
class KeepRows : public ReportSink {
 public:
  absl::Status Submit(const proto::TransferReport& report) override {
    absl::MutexLock lock(&mu_);
    if (rows_.size() >= kMaxObservedRows) {
      ++left_out_;
      return absl::ResourceExhaustedError(absl::StrCat("more than ", kMaxObservedRows, " copies in one observation"));
    }
    rows_.push_back(report);
    return absl::OkStatus();
  }
  std::vector<proto::TransferReport> Take() {
    absl::MutexLock lock(&mu_);
    return std::move(rows_);
  }

 private:
  absl::Mutex mu_;
  std::vector<proto::TransferReport> rows_ ABSL_GUARDED_BY(mu_);
  size_t left_out_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace

struct Observations::Observation {
  std::string id, dir;
  Fd dir_fd;  // the directory watched, opened beneath the target (options.dir_fd)
  WatchOptions options;
  std::atomic<bool> stop{false};
  KeepRows sink;
  std::thread thread;
  absl::Time started = absl::Now();
  std::string error;                        // the watch's end, when it failed; written by its thread
  std::vector<proto::TransferReport> rows;  // after Stop
  bool stopped = false;                     // under Observations::mu_
  std::once_flag joined;
  absl::Notification ready;  // the tree is watched, or the watch failed first

  // Any number of callers, from any thread: the first joins, the others wait for it.
  void Join() {
    std::call_once(joined, [this] {
      stop = true;
      if (thread.joinable()) thread.join();
    });
  }
  ~Observation() { Join(); }
};

Observations::Observations(std::string target) : target_(std::move(target)) {}

Observations::~Observations() { Shutdown(); }

// Past its time an observation stops by itself; one nobody stopped an hour after that
// is forgotten, rows and all, so its slot is free again.
void Observations::Sweep() {
  for (auto it = observations_.begin(); it != observations_.end();) {
    const absl::Duration age = absl::Now() - it->second->started;
    if (age > kMaxObservationTime) it->second->stop = true;
    it = age > kMaxObservationTime + absl::Hours(1) ? observations_.erase(it) : std::next(it);
  }
}

absl::StatusOr<proto::ObserveReply> Observations::Start(const proto::ObserveRequest& request) {
  if (target_.empty() || target_ == "discard") {
    return absl::FailedPreconditionError("this agent has no target directory to observe (--target DIR)");
  }
  auto o = std::make_shared<Observation>();
  absl::StatusOr<Fd> dir = DirUnder(target_, request.subdir(), &o->dir);
  if (!dir.ok()) return dir.status();
  o->dir_fd = *std::move(dir);
  o->options.dir = o->dir;
  o->options.dir_fd = o->dir_fd.get();
  if (!request.label().empty()) o->options.label = request.label();
  o->options.run_id = request.run_id();
  if (request.interval_s() > 0) o->options.interval_s = std::clamp(request.interval_s(), 0.1, 3600.0);
  if (request.idle_s() > 0) o->options.idle_s = std::clamp(request.idle_s(), 0.5, 3600.0);
  o->options.link_mbps = request.link_mbps();
  o->options.stop = &o->stop;
  o->options.stop_ends_copies = true;  // stopped when the peer's run is done
  o->options.ready = [raw = o.get()] { raw->ready.Notify(); };
  {
    absl::MutexLock lock(&mu_);
    Sweep();
    if (observations_.size() >= kMaxObservations) {
      return absl::ResourceExhaustedError(
          absl::StrCat("this agent already observes ", kMaxObservations, " directories: stop one first"));
    }
    o->id = absl::StrCat("observe-", next_id_++);
    observations_[o->id] = o;
  }
  Observation* raw = o.get();
  o->thread = std::thread([raw] {
    absl::StatusOr<WatchSummary> summary = RunWatch(raw->options, raw->sink);
    if (!summary.ok()) {
      raw->error = std::string(summary.status().message());
      Log(LogLevel::kWarning, kComponent, "%s: %s", raw->id, raw->error);
    }
    if (!raw->ready.HasBeenNotified()) raw->ready.Notify();
  });
  // The peer's copies start after this reply: the watch must already see them.
  if (!o->ready.WaitForNotificationWithTimeout(absl::Seconds(30))) {
    Log(LogLevel::kWarning, kComponent, "%s: the watch is not up after 30 s", o->id);
  }
  Log(LogLevel::kInfo, kComponent, "%s: watching %s", o->id, o->dir);
  proto::ObserveReply reply;
  reply.set_observation_id(o->id);
  reply.set_dir(o->dir);
  return reply;
}

absl::Status Observations::Stop(const std::string& id, uint32_t first_report, size_t max_bytes,
                                proto::JobState* reply) {
  std::shared_ptr<Observation> o;
  {
    absl::MutexLock lock(&mu_);
    auto it = observations_.find(id);
    if (it == observations_.end()) return absl::NotFoundError(absl::StrCat("no observation ", id));
    o = it->second;
  }
  // Stopping joins the watch's thread (it ends within its poll period): outside mu_.
  o->Join();
  absl::MutexLock lock(&mu_);
  if (!o->stopped) {
    o->rows = o->sink.Take();
    o->stopped = true;
  }
  reply->set_done(true);
  reply->set_error(o->error);
  if (PageOfRows(o->rows, first_report, max_bytes, reply)) observations_.erase(id);
  return absl::OkStatus();
}

void Observations::Shutdown() {
  std::map<std::string, std::shared_ptr<Observation>> all;
  {
    absl::MutexLock lock(&mu_);
    all.swap(observations_);
  }
  for (auto& [id, o] : all) o->Join();
}

}  // namespace nasperf
