#include "receiver/read_session.h"

#include <functional>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/clock.h"
#include "common/policy.h"
#include "datapath/payload_source.h"
#include "datapath/rows.h"
#include "datapath/stream_pusher.h"
#include "measure/page_cache.h"
#include "wire/validate.h"

namespace nasperf {

constexpr char kLaidOutPrefix[] = "nasperf-read-";

std::string ReadFileName(const std::string& run_id, int stream) {
  return absl::StrCat(kLaidOutPrefix, run_id, "-", stream, ".dat");
}

absl::Status ExistingFilesNotServed(const std::string& name) {
  return absl::PermissionDeniedError(
      absl::StrCat("this receiver does not serve existing files (", name,
                   "): start it with --serve-existing-files to let token holders read files in its target"));
}

absl::StatusOr<proto::PrepareReadReply> PrepareRead(Target& target, const proto::PrepareReadRequest& request,
                                                    bool reuse_existing, const LayOutAdmission& admit, bool* laid_out) {
  *laid_out = false;
  if (absl::Status s = CheckRunId(request.run_id()); !s.ok()) return s;
  if (request.stream() < 0 || request.stream() > 1023) return absl::InvalidArgumentError("stream out of range");
  auto cache = Parse<CacheState>(request.cache());
  if (!cache.ok()) return cache.status();
  auto read_mode = ParseOr(request.read_mode(), ReadMode::kBuffered);
  if (!read_mode.ok()) return read_mode.status();
  const int64_t start = MonoNanos();
  proto::PrepareReadReply reply;
  if (request.remote_file().empty()) {
    if (request.size() == 0) return absl::InvalidArgumentError("size must be positive");
    reply.set_file(ReadFileName(request.run_id(), request.stream()));
    uint64_t existing = 0;
    const bool there = target.OpenForRead(reply.file(), &existing).ok();
    if (there && !reuse_existing) return ExistingFilesNotServed(reply.file());
    if (!there) {
      if (absl::Status s = admit(request.size()); !s.ok()) return s;
    }
    const uint64_t seed = std::hash<std::string>()(request.run_id()) ^ static_cast<uint64_t>(request.stream());
    if (absl::Status s = target.LayOut(reply.file(), request.size(), seed, laid_out); !s.ok()) return s;
  } else {
    if (absl::Status s = CheckFileName("--remote-file", request.remote_file()); !s.ok()) return s;
    reply.set_file(request.remote_file());
  }
  uint64_t length = 0;
  absl::StatusOr<Fd> fd = target.OpenForRead(reply.file(), &length);
  if (!fd.ok()) return fd.status();
  const std::string path = absl::StrCat(target.path(), "/", reply.file());
  absl::Status cached =
      *cache == CacheState::kCold ? DropCachedPages(fd->get(), path) : ReadThrough(fd->get(), length, path);
  if (!cached.ok()) return cached;
  if (*cache == CacheState::kCold || *read_mode == ReadMode::kDirect) {
    reply.set_caveat(ColdCacheCaveat(fd->get(), *read_mode));
  }
  reply.set_length(length);
  reply.set_laid_out(*laid_out);
  reply.set_setup_s(NanosToSeconds(MonoNanos() - start));
  return reply;
}

ServedRead ServeRead(int sock, const TransferPlan& plan, const Target& target, const std::atomic<bool>* cancel) {
  ServedRead served;
  const proto::OpenTransferRequest& request = plan.request;
  uint64_t length = 0;
  absl::StatusOr<Fd> fd = target.OpenForRead(request.read_file(), &length);
  if (fd.ok() && length != request.size()) {
    fd = absl::FailedPreconditionError(
        absl::StrCat(request.read_file(), " changed size: ", length, " bytes, ", request.size(), " planned"));
  }
  if (!fd.ok()) {
    served.push.status = fd.status();
    return served;
  }
  const std::string path = absl::StrCat(target.path(), "/", request.read_file());
  if (auto resident = ResidentPct(fd->get(), length, path); resident.ok()) served.resident_pct = *resident;
  const bool direct = plan.read_mode == ReadMode::kDirect;
  if (direct) {
    if (absl::Status s = ReadPastCache(fd->get(), path); !s.ok()) {
      served.push.status = s;
      return served;
    }
  }
  std::unique_ptr<PayloadSource> source = FileSource(std::move(*fd), path, direct);
  PushOptions options;
  options.checksum = request.checksum();
  options.interval_s = request.interval_s();
  options.cancel = cancel;
  served.push.start_wall_ns = WallNanos();
  served.push.start_ns = MonoNanos();
  SendOverConnection(sock, *source, length, /*send_footer=*/true, options, served.push);
  return served;
}

}  // namespace nasperf
