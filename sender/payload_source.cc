#include "sender/payload_source.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/clock.h"
#include "common/fd.h"
#include "common/page_cache.h"
#include "common/units.h"

namespace nasperf {
namespace {

class Generated : public PayloadSource {
 public:
  Generated(Pattern pattern, uint64_t seed) : pattern_(pattern, seed) {}
  absl::StatusOr<const uint8_t*> Chunk(uint64_t offset, size_t size) override {
    return pattern_.Next(offset, size);
  }

 private:
  PatternSource pattern_;
};

// O_DIRECT wants buffers, offsets and lengths in whole blocks; 4 KiB covers every
// logical block size a NAS disk has.
constexpr size_t kDirectBlock = 4096;
static_assert(PayloadSource::kChunk % kDirectBlock == 0);

class File : public PayloadSource {
 public:
  File(Fd fd, std::string path, bool direct)
      : fd_(std::move(fd)), path_(std::move(path)), direct_(direct),
        buffer_(static_cast<uint8_t*>(std::aligned_alloc(kDirectBlock, kChunk))) {
    if (!direct_) posix_fadvise(fd_.get(), 0, 0, POSIX_FADV_SEQUENTIAL);
  }
  ~File() override { std::free(buffer_); }
  absl::StatusOr<const uint8_t*> Chunk(uint64_t offset, size_t size) override {
    // Direct reads ask for whole blocks (the last chunk of a file rounded up); the
    // file's end answers them short, at exactly its length.
    const size_t ask = direct_ ? (size + kDirectBlock - 1) / kDirectBlock * kDirectBlock : size;
    size_t done = 0;
    while (done < size) {
      ssize_t n = ::pread(fd_.get(), buffer_ + done, ask - done, static_cast<off_t>(offset + done));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return ErrnoStatus(errno, absl::StrCat("read ", path_));
      if (n == 0) return absl::OutOfRangeError(absl::StrCat(path_, " shrank while being sent"));
      done += static_cast<size_t>(n);
    }
    return buffer_;
  }
  // Not for splicing when direct: how a kernel splices an O_DIRECT file varies (6.5
  // copies it; older ones may go through the page cache), and the point is to miss it.
  int file_fd() const override { return direct_ ? -1 : fd_.get(); }

 private:
  Fd fd_;
  std::string path_;
  bool direct_;
  uint8_t* buffer_;
};

}  // namespace

std::unique_ptr<PayloadSource> GeneratedSource(Pattern pattern, uint64_t seed) {
  return std::make_unique<Generated>(pattern, seed);
}

absl::StatusOr<std::unique_ptr<PayloadSource>> FileSource(const std::string& path) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return ErrnoStatus(errno, absl::StrCat("open ", path));
  return FileSource(std::move(fd), path, /*direct=*/false);
}

std::unique_ptr<PayloadSource> FileSource(Fd fd, const std::string& path, bool direct) {
  return std::unique_ptr<PayloadSource>(new File(std::move(fd), path, direct));
}

namespace {

constexpr int64_t kProbeTimeNs = 2'000'000'000;  // a very slow disk is slow enough after this long

// MB/s reading [0, length) from the disk, bypassing the cache where the file system
// allows (a buffered read otherwise: then those bytes are cached afterwards).
absl::StatusOr<double> DiskReadMBps(const std::string& path, uint64_t length) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_DIRECT));
  if (!fd.valid()) fd = Fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return ErrnoStatus(errno, absl::StrCat("open ", path));
  std::unique_ptr<uint8_t, decltype(&std::free)> buffer(
      static_cast<uint8_t*>(std::aligned_alloc(4096, PayloadSource::kChunk)), &std::free);
  const int64_t start = MonoNanos();
  uint64_t done = 0;
  while (done < length && MonoNanos() - start < kProbeTimeNs) {
    ssize_t n = ::pread(fd.get(), buffer.get(), PayloadSource::kChunk, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoStatus(errno, absl::StrCat("read ", path));
    if (n == 0) break;
    done += static_cast<uint64_t>(n);
  }
  const double seconds = NanosToSeconds(MonoNanos() - start);
  if (done == 0 || seconds <= 0) return absl::UnavailableError("nothing read");
  return MegabytesPerSecond(done, seconds);
}

}  // namespace

absl::StatusOr<SourceProbe> ProbeSource(const std::string& path) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return ErrnoStatus(errno, absl::StrCat("open ", path));
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return ErrnoStatus(errno, absl::StrCat("stat ", path));
  const uint64_t length = std::min<uint64_t>(static_cast<uint64_t>(st.st_size), kProbeBytes);
  SourceProbe probe;
  if (length == 0) return probe;
  auto resident = ResidentPct(fd.get(), length, path);
  if (!resident.ok()) return resident.status();
  probe.resident_pct = *resident;
  if (probe.resident_pct >= 50) return probe;
  auto rate = DiskReadMBps(path, length);
  if (!rate.ok()) return rate.status();
  probe.disk_mb_per_s = *rate;
  return probe;
}

std::string SlowSourceWarning(const std::string& path, const SourceProbe& probe, double ceiling_mb_per_s) {
  if (!probe.disk_mb_per_s || *probe.disk_mb_per_s >= ceiling_mb_per_s) return "";
  return absl::StrFormat(
      "the source %s is not in the page cache (%.0f%% of its start) and its disk gave %.1f MB/s in a quick read, "
      "below this path's %.1f MB/s: the source may set the pace (pre-read it with `cat %s >/dev/null`, use the "
      "generated payload with --size, or move it to a faster disk)",
      path, probe.resident_pct, *probe.disk_mb_per_s, ceiling_mb_per_s, path);
}

}  // namespace nasperf
