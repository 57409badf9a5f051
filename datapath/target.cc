#include "datapath/target.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/clock.h"
#include "common/payload.h"
#include "common/policy.h"
#include "common/token.h"
#include "common/units.h"

namespace nasperf {

namespace {

// Writes blocks to a file; O_DIRECT blocks are aligned by the pipeline, and the
// unaligned tail of the last block goes through the page cache after O_DIRECT is
// switched off, so a file of any length ends up exactly that long.
class FileWriter : public BlockWriter {
 public:
  FileWriter(Fd fd, std::string path, WriteMode mode, SyncPolicy sync)
      : fd_(std::move(fd)), path_(std::move(path)), mode_(mode), sync_(sync) {}

  absl::Status Write(const uint8_t* data, size_t size, bool last) override {
    size_t direct_part = size;
    if (mode_ == WriteMode::kDirect && size % kPipelineAlignment != 0) {
      direct_part = size - size % kPipelineAlignment;
    }
    if (absl::Status s = WriteAll(fd_.get(), data, direct_part, absl::StrCat("write ", path_)); !s.ok()) {
      return s;
    }
    if (direct_part == size) return absl::OkStatus();
    int flags = fcntl(fd_.get(), F_GETFL);
    if (flags < 0 || fcntl(fd_.get(), F_SETFL, flags & ~O_DIRECT) != 0) {
      return ErrnoStatus(errno, absl::StrCat("clear O_DIRECT on ", path_));
    }
    return WriteAll(fd_.get(), data + direct_part, size - direct_part, absl::StrCat("write ", path_));
  }

  bool TakesPipe() const override { return mode_ == WriteMode::kBuffered; }

  absl::Status WriteFromPipe(int pipe_fd, size_t size) override {
    for (size_t left = size; left > 0;) {
      ssize_t n = ::splice(pipe_fd, nullptr, fd_.get(), nullptr, left, SPLICE_F_MOVE);
      if (n < 0 && errno == EINTR) continue;
      // 0 would mean the pipe ran dry: the caller put `size` bytes in, so it cannot.
      if (n <= 0) return ErrnoStatus(n < 0 ? errno : EIO, absl::StrCat("write ", path_));
      left -= static_cast<size_t>(n);
    }
    return absl::OkStatus();
  }

  absl::Status SyncData() override {
    if (::fdatasync(fd_.get()) != 0) return ErrnoStatus(errno, absl::StrCat("fdatasync ", path_));
    return absl::OkStatus();
  }

  absl::Status Finish() override {
    if (sync_.kind != SyncPolicy::kNone) {
      if (absl::Status s = SyncData(); !s.ok()) return s;
    }
    int fd = fd_.release();
    if (::close(fd) != 0) return ErrnoStatus(errno, absl::StrCat("close ", path_));
    return absl::OkStatus();
  }

 private:
  Fd fd_;
  std::string path_;
  WriteMode mode_;
  SyncPolicy sync_;
};

int OpenFlags(WriteMode mode) {
  int flags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
  if (mode == WriteMode::kDirect) flags |= O_DIRECT;
  if (mode == WriteMode::kDsync) flags |= O_DSYNC;
  return flags;
}

// The pipeline's writer into a set of files in the target, one after another: a block
// that spans a boundary ends one file and begins the next.
class FileSetWriter : public BlockWriter {
 public:
  FileSetWriter(int dir, std::string dir_path, std::string name, std::shared_ptr<const std::vector<uint64_t>> sizes,
                uint64_t files_per_dir, WriteMode mode, SyncPolicy sync, FileSetTally* tally,
                std::vector<std::string>* created)
      : dir_(dir),
        dir_path_(std::move(dir_path)),
        name_(std::move(name)),
        sizes_(std::move(sizes)),
        files_per_dir_(files_per_dir),
        mode_(mode),
        sync_(sync),
        tally_(*tally),
        created_(*created) {}
  // The last directory is listed after its files (cleanup removes in order), whole or not.
  ~FileSetWriter() override { ListDirectory(); }

  absl::Status Write(const uint8_t* data, size_t size, bool) override {
    while (size > 0) {
      if (!fd_.valid()) {
        if (absl::Status s = CreateNext(); !s.ok()) return s;
      }
      const size_t n = static_cast<size_t>(std::min<uint64_t>(size, (*sizes_)[next_] - at_));
      if (absl::Status s = WriteAll(fd_.get(), data, n, absl::StrCat("write ", Path())); !s.ok()) return s;
      at_ += n;
      data += n;
      size -= n;
      if (at_ == (*sizes_)[next_]) {
        if (absl::Status s = CloseFile(); !s.ok()) return s;
      }
    }
    return absl::OkStatus();
  }

  absl::Status SyncData() override { return absl::OkStatus(); }  // each file is synced at its end

  absl::Status Finish() override {
    ListDirectory();
    if (fd_.valid() || next_ != sizes_->size()) {
      return absl::DataLossError(absl::StrCat("the set ended at file ", next_ + 1, " of ", sizes_->size()));
    }
    return absl::OkStatus();
  }

 private:
  std::string Path() const { return absl::StrCat(dir_path_, "/", created_.back()); }

  absl::Status CreateNext() {
    if (next_ >= sizes_->size()) return absl::OutOfRangeError("more bytes than the file set holds");
    created_ns_ = MonoNanos();
    if (files_per_dir_ > 0 && next_ % files_per_dir_ == 0) {
      if (absl::Status s = MakeDirectory(next_ / files_per_dir_); !s.ok()) return s;
    }
    const std::string leaf = SetFileName(name_, next_);
    std::string name = files_per_dir_ > 0 ? subdir_name_ + leaf : leaf;  // subdir_name_ ends in '/'
    fd_ = Fd(::openat(files_per_dir_ > 0 ? subdir_.get() : dir_, leaf.c_str(), OpenFlags(mode_), 0644));
    if (!fd_.valid()) return ErrnoStatus(errno, absl::StrCat("create ", dir_path_, "/", name));
    tally_.metadata_ns += MonoNanos() - created_ns_;
    created_.push_back(std::move(name));
    ++tally_.created;
    at_ = 0;
    return absl::OkStatus();
  }

  // The set's directory `index`, new (mkdirat fails on anything there), its files
  // created beneath the descriptor of what was made; the one before it is listed.
  absl::Status MakeDirectory(uint64_t index) {
    ListDirectory();
    std::string name = SetDirName(name_, index);
    if (::mkdirat(dir_, name.c_str(), 0755) != 0)
      return ErrnoStatus(errno, absl::StrCat("mkdir ", dir_path_, "/", name));
    ++tally_.dirs_created;
    subdir_name_ = name + "/";
    subdir_ = Fd(::openat(dir_, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!subdir_.valid()) return ErrnoStatus(errno, absl::StrCat("open ", dir_path_, "/", name));
    return absl::OkStatus();
  }

  // The directory being filled goes on the created list, after its files: "NAME/".
  void ListDirectory() {
    if (subdir_name_.empty()) return;
    created_.push_back(std::move(subdir_name_));
    subdir_name_.clear();
    subdir_ = Fd();
  }

  // Its fsync (bytes and metadata alike), then its close.
  absl::Status CloseFile() {
    const int64_t written_ns = MonoNanos();
    if (sync_.kind != SyncPolicy::kNone && ::fdatasync(fd_.get()) != 0) {
      return ErrnoStatus(errno, absl::StrCat("fdatasync ", Path()));
    }
    const int64_t synced_ns = MonoNanos();
    if (::close(fd_.release()) != 0) return ErrnoStatus(errno, absl::StrCat("close ", Path()));
    const int64_t closed_ns = MonoNanos();
    tally_.sync_ns += synced_ns - written_ns;
    tally_.metadata_ns += closed_ns - synced_ns;
    ++tally_.whole;
    tally_.latency_s.push_back(static_cast<double>(closed_ns - created_ns_) / 1e9);
    tally_.closed_ns.push_back(closed_ns);
    ++next_;
    return absl::OkStatus();
  }

  const int dir_;
  const std::string dir_path_, name_;
  const std::shared_ptr<const std::vector<uint64_t>> sizes_;
  const uint64_t files_per_dir_;  // 0: every file beside the others in the target
  const WriteMode mode_;
  const SyncPolicy sync_;
  FileSetTally& tally_;
  std::vector<std::string>& created_;
  Fd fd_;
  Fd subdir_;                // --files-per-dir: the directory being filled
  std::string subdir_name_;  // its entry for the created list, until listed
  size_t next_ = 0;          // the file being written, or the next to create
  uint64_t at_ = 0;          // bytes of it written
  int64_t created_ns_ = 0;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Target>> Target::Open(const std::string& spec) {
  std::unique_ptr<Target> target(new Target());
  target->modes_ = {WriteMode::kBuffered, WriteMode::kDirect, WriteMode::kDsync};
  if (spec == kDiscardTarget) {
    target->discard_ = true;
    target->path_ = kDiscardTarget;
    return target;
  }
  target->path_ = spec;
  target->dir_ = Fd(::open(spec.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!target->dir_.valid()) return ErrnoStatus(errno, absl::StrCat("target ", spec));
  struct statfs fs {};
  target->in_memory_ =
      ::fstatfs(target->dir_.get(), &fs) == 0 && (fs.f_type == TMPFS_MAGIC || fs.f_type == RAMFS_MAGIC);

  // Probe O_DIRECT with a real aligned write: some file systems (tmpfs) refuse the
  // open, others only the write.
  std::string probe = absl::StrCat(".nasperf-probe-", RandomHex(6));
  Fd fd(::openat(target->dir_.get(), probe.c_str(), OpenFlags(WriteMode::kDirect), 0600));
  int err = fd.valid() ? 0 : errno;
  if (fd.valid()) {
    void* block = std::aligned_alloc(kPipelineAlignment, kPipelineAlignment);
    std::memset(block, 0, kPipelineAlignment);
    if (::write(fd.get(), block, kPipelineAlignment) != static_cast<ssize_t>(kPipelineAlignment)) {
      err = errno;
    }
    std::free(block);
    ::unlinkat(target->dir_.get(), probe.c_str(), 0);
  } else if (errno == EACCES || errno == EPERM || errno == EROFS) {
    return ErrnoStatus(errno, absl::StrCat("target ", spec, " is not writable"));
  }
  if (err != 0) {
    target->direct_refusal_ = absl::StrCat(
        "target ", spec, " does not accept O_DIRECT (", strerror(err),
        "; ramfs, tmpfs before Linux 6.6 and some FUSE file systems refuse it): use --write-mode buffered or dsync");
    target->modes_ = {WriteMode::kBuffered, WriteMode::kDsync};
  }
  return target;
}

bool Target::Supports(WriteMode mode) const {
  for (WriteMode m : modes_) {
    if (m == mode) return true;
  }
  return false;
}

std::string Target::Unsupported(WriteMode mode) const {
  if (mode == WriteMode::kDirect && !direct_refusal_.empty()) return direct_refusal_;
  return absl::StrCat("write mode ", Name(mode), " is not allowed on this receiver");
}

absl::StatusOr<uint64_t> Target::FreeBytes() const {
  if (discard_) return 0;
  struct statvfs st {};
  if (fstatvfs(dir_.get(), &st) != 0) return ErrnoStatus(errno, absl::StrCat("statvfs ", path_));
  return static_cast<uint64_t>(st.f_bavail) * st.f_frsize;
}

absl::Status Target::CheckRoom(uint64_t size, uint64_t reserved, uint64_t min_free) const {
  if (discard_) return absl::OkStatus();
  absl::StatusOr<uint64_t> free = FreeBytes();
  if (!free.ok()) return free.status();
  const uint64_t available = *free > reserved ? *free - reserved : 0;
  if (size <= available && available - size >= min_free) return absl::OkStatus();
  return absl::ResourceExhaustedError(
      absl::StrCat("not enough free space on ", path_, ": ", FormatSize(size), " requested, ", FormatSize(available),
                   reserved > 0 ? " free after transfers in flight" : " free",
                   min_free > 0 ? absl::StrCat(", --min-free ", FormatSize(min_free)) : ""));
}

absl::StatusOr<std::unique_ptr<BlockWriter>> Target::Create(const std::string& name, WriteMode mode,
                                                            const SyncPolicy& sync, std::string* created_name) {
  if (name.empty() || name.find('/') != std::string::npos || name[0] == '.') {
    return absl::InvalidArgumentError(absl::StrCat("refusing file name \"", name, "\""));
  }
  std::string stem = name;
  std::string extension;
  if (size_t dot = name.rfind('.'); dot != std::string::npos) {
    stem = name.substr(0, dot);
    extension = name.substr(dot);
  }
  for (int attempt = 0; attempt < 1000; ++attempt) {
    std::string candidate = attempt == 0 ? name : absl::StrCat(stem, ".", attempt, extension);
    Fd fd(::openat(dir_.get(), candidate.c_str(), OpenFlags(mode), 0644));
    if (!fd.valid() && errno == EEXIST) continue;
    std::string full = absl::StrCat(path_, "/", candidate);
    if (!fd.valid()) return ErrnoStatus(errno, absl::StrCat("create ", full));
    *created_name = candidate;
    return std::unique_ptr<BlockWriter>(new FileWriter(std::move(fd), full, mode, sync));
  }
  return absl::AlreadyExistsError(absl::StrCat("too many files named ", name, " in ", path_));
}

absl::StatusOr<std::unique_ptr<BlockWriter>> Target::CreateSet(const std::string& name,
                                                               std::shared_ptr<const std::vector<uint64_t>> sizes,
                                                               uint64_t files_per_dir, WriteMode mode,
                                                               const SyncPolicy& sync, FileSetTally* tally,
                                                               std::vector<std::string>* created) {
  if (discard_) return absl::FailedPreconditionError("a discard target writes no files");
  if (name.empty() || name.find('/') != std::string::npos || name[0] == '.') {
    return absl::InvalidArgumentError(absl::StrCat("refusing file name \"", name, "\""));
  }
  if (mode == WriteMode::kDirect) return absl::InvalidArgumentError("many files are not written with O_DIRECT");
  return std::unique_ptr<BlockWriter>(
      new FileSetWriter(dir_.get(), path_, name, std::move(sizes), files_per_dir, mode, sync, tally, created));
}

absl::StatusOr<Fd> Target::OpenForRead(const std::string& name, uint64_t* size) const {
  if (discard_)
    return absl::FailedPreconditionError("a discard receiver has no files to read: start it with --target DIR");
  if (name.empty() || name == "." || name == ".." || name.find('/') != std::string::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("refusing to read \"", name, "\": give a file name in the target, no '/'"));
  }
  const std::string full = absl::StrCat(path_, "/", name);
  Fd fd(::openat(dir_.get(), name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK));
  if (!fd.valid()) {
    return ErrnoStatus(
        errno, errno == ELOOP ? absl::StrCat("read ", full, " (a symlink: refused)") : absl::StrCat("read ", full));
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return ErrnoStatus(errno, absl::StrCat("stat ", full));
  if (!S_ISREG(st.st_mode)) return absl::InvalidArgumentError(absl::StrCat(full, " is not a regular file"));
  if (st.st_size == 0) return absl::InvalidArgumentError(absl::StrCat(full, " is empty"));
  // O_NONBLOCK kept a FIFO from blocking the open; a regular file reads the same without it.
  if (::fcntl(fd.get(), F_SETFL, 0) != 0) return ErrnoStatus(errno, absl::StrCat("fcntl ", full));
  *size = static_cast<uint64_t>(st.st_size);
  return fd;
}

absl::Status Target::LayOut(const std::string& name, uint64_t size, uint64_t seed, bool* written) {
  *written = false;
  uint64_t existing = 0;
  if (auto fd = OpenForRead(name, &existing); fd.ok() && existing == size) return absl::OkStatus();
  std::string created;
  auto writer = Create(name, WriteMode::kBuffered, SyncPolicy{SyncPolicy::kEnd, 0}, &created);
  if (!writer.ok()) return writer.status();
  if (created != name) {
    (void)Remove(created);
    return absl::AlreadyExistsError(absl::StrCat(path_, "/", name, " exists with another size"));
  }
  PatternSource pattern(Pattern::kRandom, seed);
  for (uint64_t done = 0; done < size;) {
    const size_t piece = static_cast<size_t>(std::min<uint64_t>(PatternSource::kChunk, size - done));
    if (absl::Status s = (*writer)->Write(pattern.Next(done, piece), piece, done + piece == size); !s.ok()) {
      (void)Remove(name);
      return s;
    }
    done += piece;
  }
  if (absl::Status s = (*writer)->Finish(); !s.ok()) {
    (void)Remove(name);
    return s;
  }
  *written = true;
  return absl::OkStatus();
}

absl::Status Target::Remove(const std::string& name) {
  const size_t slash = name.find('/');
  if (slash == std::string::npos || slash + 1 == name.size()) {  // a file, or a set's "DIR/"
    const std::string entry = name.substr(0, slash);
    if (::unlinkat(dir_.get(), entry.c_str(), slash == std::string::npos ? 0 : AT_REMOVEDIR) != 0 && errno != ENOENT) {
      return ErrnoStatus(errno, absl::StrCat("remove ", path_, "/", name));
    }
    return absl::OkStatus();
  }
  // A set's "DIR/FILE": beneath the directory as it is now, never through a symlink.
  const std::string dir = name.substr(0, slash), file = name.substr(slash + 1);
  Fd sub(::openat(dir_.get(), dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!sub.valid()) {
    if (errno == ENOENT) return absl::OkStatus();
    return ErrnoStatus(errno, absl::StrCat("remove ", path_, "/", name));
  }
  if (::unlinkat(sub.get(), file.c_str(), 0) != 0 && errno != ENOENT) {
    return ErrnoStatus(errno, absl::StrCat("remove ", path_, "/", name));
  }
  return absl::OkStatus();
}

}  // namespace nasperf
