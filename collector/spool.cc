#include "collector/spool.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "common/clock.h"
#include "common/fd.h"
#include "common/log.h"
#include "common/token.h"

namespace nasperf {
namespace {

constexpr char kComponent[] = "spool";
constexpr char kSuffix[] = ".report";

std::vector<std::string> SpooledFiles(const std::string& dir) {
  std::vector<std::string> names;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return names;
  while (dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (absl::EndsWith(name, kSuffix) && name[0] != '.') names.push_back(name);
  }
  ::closedir(d);
  std::sort(names.begin(), names.end());  // names start with the time: oldest first
  return names;
}

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return ErrnoStatus(errno, absl::StrCat("open ", path));
  struct stat st {};
  if (fstat(fd.get(), &st) != 0) return ErrnoStatus(errno, absl::StrCat("stat ", path));
  std::string data(static_cast<size_t>(st.st_size), '\0');
  auto n = ReadFull(fd.get(), data.data(), data.size(), absl::StrCat("read ", path));
  if (!n.ok()) return n.status();
  data.resize(*n);
  return data;
}

}  // namespace

std::string DefaultSpoolRoot() {
  const char* state = std::getenv("XDG_STATE_HOME");
  if (state != nullptr && *state != '\0') return absl::StrCat(state, "/nasperf/spool");
  const char* home = std::getenv("HOME");
  return absl::StrCat(home != nullptr ? home : ".", "/.local/state/nasperf/spool");
}

SpoolingSink::SpoolingSink(std::unique_ptr<CollectorClient> client, std::string dir)
    : client_(std::move(client)), dir_(std::move(dir)) {}

absl::StatusOr<std::unique_ptr<SpoolingSink>> SpoolingSink::Start(std::unique_ptr<CollectorClient> client,
                                                                  const std::string& spool_root) {
  std::string leaf = absl::StrReplaceAll(FormatHostPort(client->address()), {{"/", "_"}, {":", "_"}});
  std::string dir = absl::StrCat(spool_root, "/", leaf);
  if (absl::Status s = MakeDirectories(dir, 0700); !s.ok()) return s;
  std::unique_ptr<SpoolingSink> sink(new SpoolingSink(std::move(client), dir));
  sink->thread_ = std::thread([raw = sink.get()] { raw->DeliveryLoop(); });
  return sink;
}

SpoolingSink::~SpoolingSink() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

absl::Status SpoolingSink::Submit(const proto::TransferReport& report) {
  std::string data;
  if (!report.SerializeToString(&data)) return absl::InternalError("cannot serialize a report");
  std::string name = absl::StrFormat("%020d-%s%s", WallNanos(), RandomHex(6), kSuffix);
  std::string path = absl::StrCat(dir_, "/", name);
  // Again each time: an agent sharing this spool root removes the directory when it
  // is empty and no job of its own reports there (lab/agent.cc).
  if (absl::Status s = MakeDirectories(dir_, 0700); !s.ok()) return s;
  if (absl::Status s = ReplaceFile(path, data, 0600, /*durable=*/true); !s.ok()) return s;
  absl::MutexLock lock(&mu_);
  ++wakeups_;
  idle_ = false;
  return absl::OkStatus();
}

size_t SpoolingSink::Pending() const { return SpooledFiles(dir_).size(); }

size_t SpoolingSink::Drain(absl::Duration wait) {
  {
    absl::MutexLock lock(&mu_);
    auto idle = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return idle_ && wakeups_ == 0; };
    mu_.AwaitWithTimeout(absl::Condition(&idle), wait);
  }
  return Pending();
}

bool SpoolingSink::DeliverAll() {
  for (const std::string& name : SpooledFiles(dir_)) {
    std::string path = absl::StrCat(dir_, "/", name);
    auto data = ReadFile(path);
    if (!data.ok()) continue;  // another agent delivered it meanwhile
    proto::TransferReport report;
    if (!report.ParseFromString(*data)) {
      Log(LogLevel::kError, kComponent, "%s is not a report; moved aside", path);
      ::rename(path.c_str(), absl::StrCat(path, ".bad").c_str());
      continue;
    }
    auto delivered = client_->Report(report);
    if (!delivered.ok()) {
      if (absl::IsInvalidArgument(delivered.status())) {
        // The collector will never take this one: keep it for a human, move on.
        Log(LogLevel::kError, kComponent, "cannot deliver %s: %s; moved aside as .rejected", path,
            delivered.status().message());
        ::rename(path.c_str(), absl::StrCat(path, ".rejected").c_str());
        continue;
      }
      if (!outage_logged_) {
        Log(LogLevel::kWarning, kComponent, "%s; reports wait in %s and are resent", delivered.status().message(),
            dir_);
        outage_logged_ = true;
      }
      return false;
    }
    ::unlink(path.c_str());
    if (outage_logged_) {
      Log(LogLevel::kInfo, kComponent, "collector %s reachable again", collector());
      outage_logged_ = false;
    }
  }
  return true;
}

void SpoolingSink::DeliveryLoop() {
  absl::Duration backoff = absl::Milliseconds(200);
  while (true) {
    {
      absl::MutexLock lock(&mu_);
      if (stop_) return;
      wakeups_ = 0;
    }
    bool reachable = DeliverAll();
    absl::Duration pause = reachable ? absl::Seconds(2) : backoff;
    backoff = reachable ? absl::Milliseconds(200) : std::min(backoff * 2, absl::Seconds(5));
    // Idle only once the directory was empty after a successful pass (read outside
    // the lock: Submit must not wait on a directory scan).
    bool empty = reachable && SpooledFiles(dir_).empty();
    absl::MutexLock lock(&mu_);
    idle_ = empty && wakeups_ == 0;
    auto wake = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stop_ || wakeups_ > 0; };
    // Also wakes on a timer: another agent may spool files here, a collector may return.
    mu_.AwaitWithTimeout(absl::Condition(&wake), pause);
  }
}

}  // namespace nasperf
