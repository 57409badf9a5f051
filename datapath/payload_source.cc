#include "datapath/payload_source.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "common/clock.h"
#include "common/fd.h"
#include "common/huge_buffer.h"
#include "common/units.h"
#include "measure/page_cache.h"

namespace nasperf {
namespace {

class Generated : public PayloadSource {
 public:
  Generated(Pattern pattern, uint64_t seed) : pattern_(pattern, seed) {}
  absl::StatusOr<const uint8_t*> Chunk(uint64_t offset, size_t size) override { return pattern_.Next(offset, size); }

 private:
  PatternSource pattern_;
};

class File : public PayloadSource {
 public:
  File(Fd fd, std::string path)
      : fd_(std::move(fd)), path_(std::move(path)), buffer_(static_cast<uint8_t*>(std::aligned_alloc(4096, kChunk))) {
    posix_fadvise(fd_.get(), 0, 0, POSIX_FADV_SEQUENTIAL);
  }
  ~File() override { std::free(buffer_); }
  absl::StatusOr<const uint8_t*> Chunk(uint64_t offset, size_t size) override {
    size_t done = 0;
    while (done < size) {
      ssize_t n = ::pread(fd_.get(), buffer_ + done, size - done, static_cast<off_t>(offset + done));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return ErrnoStatus(errno, absl::StrCat("read ", path_));
      if (n == 0) return absl::OutOfRangeError(absl::StrCat(path_, " shrank while being sent"));
      done += static_cast<size_t>(n);
    }
    return buffer_;
  }
  int file_fd() const override { return fd_.get(); }

 private:
  Fd fd_;
  std::string path_;
  uint8_t* buffer_;
};

// O_DIRECT wants buffers, offsets and lengths in whole blocks; 4 KiB covers every
// logical block size a NAS disk has.
constexpr size_t kDirectBlock = 4096;
static_assert(PayloadSource::kChunk % kDirectBlock == 0);

// An O_DIRECT file (--read-mode direct). The kernel reads no further ahead than asked
// past the page cache, so a reader thread keeps up to kDepth chunks read ahead while
// the loop sends the current one, as fio at queue depth 1 keeps the disk busy; the
// loop's wait in Chunk() is then the disk's pace. Chunks are asked for in order from
// offset 0 (the push loop's contract); the reader stops at the file's size, or when
// the source is destroyed. Never spliced: how a kernel splices an O_DIRECT file varies
// (6.5 copies it; older ones may use the page cache), and the point is to miss it.
class DirectFile : public PayloadSource {
 public:
  DirectFile(Fd fd, std::string path) : fd_(std::move(fd)), path_(std::move(path)), memory_(kDepth * kChunk) {
    struct stat st {};
    size_ = ::fstat(fd_.get(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
    for (size_t i = 0; i < kDepth && memory_.data() != nullptr; ++i) slots_[i].data = memory_.data() + i * kChunk;
    reader_ = std::thread([this] { ReadAhead(); });
  }
  ~DirectFile() override {
    {
      absl::MutexLock lock(&mu_);
      stopping_ = true;
    }
    reader_.join();
  }
  absl::StatusOr<const uint8_t*> Chunk(uint64_t offset, size_t size) override {
    absl::MutexLock lock(&mu_);
    if (held_) {  // the previous chunk is sent: its buffer may be read into again
      ++taken_;
      held_ = false;
    }
    if (offset != taken_ * kChunk) return absl::InternalError("direct reads are sequential from offset 0");
    mu_.Await(absl::Condition(
        +[](DirectFile* f) { return f->read_ > f->taken_ || f->reader_done_; }, this));
    if (read_ == taken_)
      return reader_status_.ok() ? absl::OutOfRangeError(absl::StrCat(path_, " shrank while being sent"))
                                 : reader_status_;
    const Slot& slot = slots_[taken_ % kDepth];
    if (slot.bytes < size) return absl::OutOfRangeError(absl::StrCat(path_, " shrank while being sent"));
    held_ = true;
    return slot.data;
  }

 private:
  static constexpr size_t kDepth = 4;
  struct Slot {
    uint8_t* data = nullptr;
    size_t bytes = 0;  // what the read gave (short only at the file's end)
  };

  void ReadAhead() {
    for (uint64_t index = 0;; ++index) {
      {
        absl::MutexLock lock(&mu_);
        mu_.Await(absl::Condition(
            +[](DirectFile* f) { return f->stopping_ || f->read_ - f->taken_ < kDepth; }, this));
        if (stopping_ || index * kChunk >= size_) break;
      }
      // Only this thread touches slots_[index % kDepth] until read_ passes it.
      Slot& slot = slots_[index % kDepth];
      absl::StatusOr<size_t> got = ReadBlocks(index * kChunk, slot.data);
      absl::MutexLock lock(&mu_);
      if (!got.ok()) {
        reader_status_ = got.status();
        break;
      }
      slot.bytes = *got;
      ++read_;
      if (*got < kChunk) break;  // the file's end
    }
    absl::MutexLock lock(&mu_);
    reader_done_ = true;
  }

  // Whole blocks from `offset`: a full chunk, or what is left of the file.
  absl::StatusOr<size_t> ReadBlocks(uint64_t offset, uint8_t* into) const {
    if (into == nullptr) return absl::ResourceExhaustedError(absl::StrCat("no memory to read ", path_, " into"));
    const uint64_t left = size_ - offset;
    const size_t want = static_cast<size_t>(std::min<uint64_t>(kChunk, left));
    const size_t ask = (want + kDirectBlock - 1) / kDirectBlock * kDirectBlock;
    size_t done = 0;
    while (done < want) {
      ssize_t n = ::pread(fd_.get(), into + done, ask - done, static_cast<off_t>(offset + done));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return ErrnoStatus(errno, absl::StrCat("read ", path_));
      if (n == 0) break;
      done += static_cast<size_t>(n);
    }
    return done;
  }

  const Fd fd_;
  const std::string path_;
  uint64_t size_ = 0;
  HugeBuffer memory_;  // the slots' buffers: whole 1 MiB reads at the disk (common/huge_buffer.h)
  Slot slots_[kDepth];
  absl::Mutex mu_;
  uint64_t read_ ABSL_GUARDED_BY(mu_) = 0;   // chunks read so far
  uint64_t taken_ ABSL_GUARDED_BY(mu_) = 0;  // chunks the loop is done with
  bool held_ ABSL_GUARDED_BY(mu_) = false;   // the loop holds chunk taken_
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool reader_done_ ABSL_GUARDED_BY(mu_) = false;
  absl::Status reader_status_ ABSL_GUARDED_BY(mu_);
  std::thread reader_;
};

class Tree : public PayloadSource {
 public:
  Tree(Fd dir, std::string path, std::shared_ptr<const std::vector<TreeFile>> files)
      : dir_(std::move(dir)), path_(std::move(path)), files_(std::move(files)), buffer_(kChunk) {}
  absl::StatusOr<const uint8_t*> Chunk(uint64_t offset, size_t size) override {
    if (offset != next_offset_ || size > kChunk) return absl::InternalError("tree reads are sequential from offset 0");
    size_t done = 0;
    while (done < size) {
      if (!open_.valid()) {
        if (absl::Status s = OpenNext(); !s.ok()) return s;
      }
      const uint64_t file_size = (*files_)[index_].size;
      const size_t want = static_cast<size_t>(std::min<uint64_t>(size - done, file_size - at_));
      ssize_t n = ::pread(open_.get(), buffer_.data() + done, want, static_cast<off_t>(at_));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return ErrnoStatus(errno, absl::StrCat("read ", Name()));
      if (n == 0) return absl::OutOfRangeError(absl::StrCat(Name(), " shrank while being sent"));
      done += static_cast<size_t>(n);
      at_ += static_cast<uint64_t>(n);
      if (at_ == file_size) {
        open_ = Fd();
        ++index_;
      }
    }
    next_offset_ += size;
    return buffer_.data();
  }

 private:
  std::string Name() const { return absl::StrCat(path_, "/", (*files_)[index_].path); }

  absl::Status OpenNext() {
    if (index_ >= files_->size()) return absl::OutOfRangeError(absl::StrCat(path_, ": no more files to send"));
    const TreeFile& file = (*files_)[index_];
    absl::StatusOr<Fd> fd = OpenBeneath(dir_.get(), file.path);
    if (!fd.ok()) return absl::Status(fd.status().code(), absl::StrCat(Name(), ": ", fd.status().message()));
    struct stat st {};
    if (::fstat(fd->get(), &st) != 0) return ErrnoStatus(errno, absl::StrCat("stat ", Name()));
    if (static_cast<uint64_t>(st.st_dev) != file.device || static_cast<uint64_t>(st.st_ino) != file.inode ||
        static_cast<uint64_t>(st.st_size) != file.size) {
      return absl::FailedPreconditionError(absl::StrCat(Name(), " changed since the tree was walked (", file.size,
                                                        " bytes then, ", st.st_size,
                                                        " now, or another file under its name)"));
    }
    posix_fadvise(fd->get(), 0, 0, POSIX_FADV_SEQUENTIAL);
    open_ = *std::move(fd);
    at_ = 0;
    return absl::OkStatus();
  }

  Fd dir_;
  std::string path_;
  std::shared_ptr<const std::vector<TreeFile>> files_;
  std::vector<uint8_t> buffer_;
  uint64_t next_offset_ = 0;  // the offset the next Chunk() must ask for
  size_t index_ = 0;          // the file being read, or to open next
  Fd open_;                   // files_[index_] once opened and checked
  uint64_t at_ = 0;           // bytes of it read
};

}  // namespace

std::unique_ptr<PayloadSource> GeneratedSource(Pattern pattern, uint64_t seed) {
  return std::make_unique<Generated>(pattern, seed);
}

namespace {

absl::StatusOr<Fd> OpenSourceFile(const std::string& path, const Fd* opened) {
  Fd fd(opened != nullptr ? ::fcntl(opened->get(), F_DUPFD_CLOEXEC, 0) : ::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return ErrnoStatus(errno, absl::StrCat("open ", path));
  return fd;
}

}  // namespace

absl::StatusOr<std::unique_ptr<PayloadSource>> FileSource(const std::string& path, const Fd* opened) {
  auto fd = OpenSourceFile(path, opened);
  if (!fd.ok()) return fd.status();
  return FileSource(*std::move(fd), path, /*direct=*/false);
}

std::unique_ptr<PayloadSource> FileSource(Fd fd, const std::string& path, bool direct) {
  if (direct) return std::make_unique<DirectFile>(std::move(fd), path);
  return std::make_unique<File>(std::move(fd), path);
}

absl::StatusOr<std::unique_ptr<PayloadSource>> TreeSource(const std::string& dir,
                                                          std::shared_ptr<const std::vector<TreeFile>> files) {
  if (files == nullptr) return absl::InternalError("a tree source needs its files");
  Fd top(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!top.valid()) return ErrnoStatus(errno, absl::StrCat("open ", dir));
  return std::make_unique<Tree>(std::move(top), dir, std::move(files));
}

namespace {

constexpr int64_t kProbeTimeNs = 2'000'000'000;  // a very slow disk is slow enough after this long

// MB/s reading [0, length) of the open file `source` from the disk, bypassing the
// cache where the file system allows (a buffered read otherwise: then those bytes
// are cached afterwards). O_DIRECT comes from reopening the descriptor's own inode
// through /proc, so the name is never looked up again.
absl::StatusOr<double> DiskReadMBps(const Fd& source, const std::string& path, uint64_t length) {
  Fd fd(::open(absl::StrCat("/proc/self/fd/", source.get()).c_str(), O_RDONLY | O_CLOEXEC | O_DIRECT));
  if (!fd.valid()) fd = Fd(::fcntl(source.get(), F_DUPFD_CLOEXEC, 0));
  if (!fd.valid()) return ErrnoStatus(errno, absl::StrCat("open ", path));
  // Huge pages, as the direct reader's (DirectFile): the probe's reads reach the disk
  // as whole 1 MiB requests, as the run's will.
  HugeBuffer buffer(PayloadSource::kChunk);
  if (buffer.data() == nullptr) return absl::ResourceExhaustedError(absl::StrCat("no memory to read ", path, " into"));
  const int64_t start = MonoNanos();
  uint64_t done = 0;
  while (done < length && MonoNanos() - start < kProbeTimeNs) {
    ssize_t n = ::pread(fd.get(), buffer.data(), PayloadSource::kChunk, static_cast<off_t>(done));
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

absl::StatusOr<SourceProbe> ProbeSource(const std::string& path, const Fd* opened) {
  auto opened_fd = OpenSourceFile(path, opened);
  if (!opened_fd.ok()) return opened_fd.status();
  const Fd& fd = *opened_fd;
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return ErrnoStatus(errno, absl::StrCat("stat ", path));
  const uint64_t length = std::min<uint64_t>(static_cast<uint64_t>(st.st_size), kProbeBytes);
  SourceProbe probe;
  if (length == 0) return probe;
  auto resident = ResidentPct(fd.get(), length, path);
  if (!resident.ok()) return resident.status();
  probe.resident_pct = *resident;
  if (probe.resident_pct >= 50) return probe;
  auto rate = DiskReadMBps(fd, path, length);
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
