// The path transport (`--transport path --to /mnt/nas/dir`): files written and read
// in a directory of a mounted (or local) file system, through the OS's own client
// (the kernel's SMB or NFS client, sshfs, rclone) or straight to a local disk, the
// NAS's own baseline. The share shell (transport/share.h) runs it: this file is the
// driver, a RemoteFs of POSIX calls beneath one directory descriptor (openat, never the
// path string again), and the entry. The user's directory is opened here; a lab job's
// (a plan's `to`) only by the agent, beneath its --allow-path (TakeDirectory). The
// rows' share_protocol is the mount (measure/mounts.h). Threading: the share shell's;
// the directory descriptor is shared read-only by the streams' sessions, each file is
// one stream's.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "common/clock.h"
#include "common/fd.h"
#include "common/huge_buffer.h"
#include "common/log.h"
#include "common/policy.h"
#include "common/token.h"
#include "common/units.h"
#include "datapath/rows.h"
#include "measure/disk_stats.h"
#include "measure/mounts.h"
#include "measure/netinfo.h"
#include "transport/registry.h"
#include "transport/remote_fs.h"
#include "transport/share.h"
#include "transport/share_config.h"

namespace nasperf {
namespace {

constexpr size_t kDirectAlign = 4096;                  // O_DIRECT's buffer, offset and length
constexpr size_t kBounce = size_t{1} << 20;            // the aligned copy of one chunk
constexpr size_t kMaxToChars = 4096;                   // PATH_MAX
constexpr uint64_t kMaxResident = uint64_t{16} << 30;  // mincore's look at a read's file: its first 16 GiB

// `to` as any origin may give it: an absolute path of printable characters, no ".."
// component, at most PATH_MAX.
absl::Status CheckToText(const std::string& to) {
  if (to.empty() || to.front() != '/')
    return absl::InvalidArgumentError("must be an absolute directory (/mnt/nas/dir)");
  if (to.size() > kMaxToChars)
    return absl::InvalidArgumentError(absl::StrCat("longer than ", kMaxToChars, " characters"));
  if (TerminalSafe(to) != to) {
    return absl::InvalidArgumentError("holds characters that are not printable");
  }
  for (absl::string_view part : absl::StrSplit(to, '/')) {
    if (part == "..") return absl::InvalidArgumentError("holds a \"..\" component");
  }
  return absl::OkStatus();
}

// The directory, opened once: every file is reached beneath this descriptor.
absl::StatusOr<Fd> OpenDir(const std::string& to) {
  Fd fd(::open(to.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd.valid()) {
    return ErrnoStatus(errno, to);
  }
  return fd;
}

// A name the shell hands in: one component (a transfer's file, --remote-file).
absl::Status CheckName(const std::string& where, const std::string& name) {
  if (name.empty() || name == "." || name == ".." || name.find('/') != std::string::npos) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": \"", TerminalSafe(name), "\" is not a file name"));
  }
  return absl::OkStatus();
}

// One open file. Direct writes go through an aligned copy, `bounce` (kBounce bytes,
// its file system's, used by one file at a time); a tail that is not a multiple of
// 4 KiB is written after O_DIRECT is cleared (fsync takes it with the rest).
class PathFile : public RemoteFile {
 public:
  PathFile(Fd fd, std::string where, uint8_t* bounce)
      : fd_(std::move(fd)), where_(std::move(where)), direct_(bounce != nullptr), bounce_(bounce) {}
  ~PathFile() override { (void)Close(); }

  absl::Status PWrite(const uint8_t* data, size_t size, uint64_t offset) override {
    if (!direct_) return WriteAll(data, size, offset);
    for (size_t done = 0; done < size;) {
      const size_t n = std::min(kBounce, size - done);
      std::memcpy(bounce_, data + done, n);
      const size_t aligned = n - n % kDirectAlign;
      if (aligned > 0) {
        if (absl::Status st = WriteAll(bounce_, aligned, offset + done); !st.ok()) return st;
      }
      if (aligned < n) {
        if (absl::Status st = EndDirect(); !st.ok()) return st;
        if (absl::Status st = WriteAll(bounce_ + aligned, n - aligned, offset + done + aligned); !st.ok()) return st;
      }
      done += n;
    }
    return absl::OkStatus();
  }

  absl::StatusOr<size_t> PRead(uint8_t* data, size_t size, uint64_t offset) override {
    for (;;) {
      const ssize_t n = ::pread(fd_.get(), data, size, static_cast<off_t>(offset));
      if (n >= 0) return static_cast<size_t>(n);
      if (errno != EINTR) return ErrnoStatus(errno, absl::StrCat("read ", where_));
    }
  }

  absl::Status Sync() override {
    if (::fsync(fd_.get()) != 0) return ErrnoStatus(errno, absl::StrCat("fsync ", where_));
    return absl::OkStatus();
  }

  // close(2)'s own error counts: a network file system's client reports a late
  // write error there.
  absl::Status Close() override {
    if (!fd_.valid()) return absl::OkStatus();
    if (::close(fd_.release()) != 0 && errno != EINTR) return ErrnoStatus(errno, absl::StrCat("close ", where_));
    return absl::OkStatus();
  }

 private:
  absl::Status WriteAll(const uint8_t* data, size_t size, uint64_t offset) {
    for (size_t done = 0; done < size;) {
      const ssize_t n = ::pwrite(fd_.get(), data + done, size - done, static_cast<off_t>(offset + done));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        const int err = errno;
        if (err == EINVAL && direct_) {
          return absl::FailedPreconditionError(
              absl::StrCat("write ", where_, ": the file system refuses O_DIRECT (", std::strerror(err), ")"));
        }
        absl::Status st = ErrnoStatus(err, absl::StrCat("write ", where_, " at byte ", offset + done));
        if (err == ENOSPC || err == EDQUOT) return absl::ResourceExhaustedError(st.message());
        return st;
      }
      if (n == 0) return absl::DataLossError(absl::StrCat("write ", where_, ": wrote nothing"));
      done += static_cast<size_t>(n);
    }
    return absl::OkStatus();
  }

  absl::Status EndDirect() {
    const int flags = ::fcntl(fd_.get(), F_GETFL);
    if (flags < 0 || ::fcntl(fd_.get(), F_SETFL, flags & ~O_DIRECT) != 0) {
      return ErrnoStatus(errno, absl::StrCat("fcntl ", where_, " (clearing O_DIRECT for the tail)"));
    }
    direct_ = false;
    return absl::OkStatus();
  }

  Fd fd_;
  const std::string where_;
  bool direct_;
  uint8_t* const bounce_;  // null when the file was not opened O_DIRECT
};

// A name beneath the directory: "FILE", or a set's "DIR/FILE" (--files-per-dir), DIR
// opened beneath the directory's descriptor without following a symlink.
struct Beneath {
  Fd sub;  // DIR, when there is one
  std::string leaf;
  int dir(int top) const { return sub.valid() ? sub.get() : top; }
};

// The directory as a RemoteFs: every path is a name in it (or in a set's directory).
class PathFs : public RemoteFs {
 public:
  PathFs(int dir_fd, std::string where, int write_flags)
      : dir_fd_(dir_fd), where_(std::move(where)), write_flags_(write_flags) {}
  const std::string& Where() const override { return where_; }

  absl::StatusOr<std::unique_ptr<RemoteFile>> Create(const std::string& name) override {
    absl::StatusOr<Beneath> at = Resolve(name);
    if (!at.ok()) return at.status();
    uint8_t* bounce = nullptr;
    if ((write_flags_ & O_DIRECT) != 0) {
      // One per stream, not per file: a photo folder's thousand files would each map
      // and touch 2 MiB. Huge pages reach the disk in whole 1 MiB writes (HugeBuffer).
      // Taken before the file is made, so a lack of memory leaves no empty file behind.
      if (!bounce_) bounce_ = std::make_unique<HugeBuffer>(kBounce);
      if (bounce_->data() == nullptr) return absl::ResourceExhaustedError("no memory for the O_DIRECT buffer");
      bounce = bounce_->data();
    }
    const int flags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | write_flags_;
    // 0600: the bytes may be a file only root may read (an agent's --allow-source), and
    // the directory may be shared.
    Fd fd(::openat(at->dir(dir_fd_), at->leaf.c_str(), flags, 0600));
    if (!fd.valid()) {
      const int err = errno;
      if (err == EEXIST) {
        return absl::AlreadyExistsError(absl::StrCat(where_, ": ", name, " already exists; nasperf never overwrites"));
      }
      if (err == EINVAL && (write_flags_ & O_DIRECT) != 0) {
        return absl::FailedPreconditionError(
            absl::StrCat(where_, ": the file system refuses O_DIRECT (", std::strerror(err), ")"));
      }
      return ErrnoStatus(err, absl::StrCat("create ", PathInDir(where_, name)));
    }
    return std::unique_ptr<RemoteFile>(new PathFile(std::move(fd), PathInDir(where_, name), bounce));
  }

  absl::StatusOr<std::unique_ptr<RemoteFile>> Open(const std::string& name) override {
    absl::StatusOr<Fd> fd = OpenToRead(name);
    if (!fd.ok()) return fd.status();
    return std::unique_ptr<RemoteFile>(new PathFile(*std::move(fd), PathInDir(where_, name), nullptr));
  }

  // Non-blocking until it is known to be a regular file: in a shared directory someone
  // could have put a FIFO under the name, whose open would hang the job.
  absl::StatusOr<Fd> OpenToRead(const std::string& name) const {
    if (absl::Status ok = CheckName(where_, name); !ok.ok()) return ok;
    const std::string where = PathInDir(where_, name);
    Fd fd(::openat(dir_fd_, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
    if (!fd.valid()) return ErrnoStatus(errno, absl::StrCat("open ", where));
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0) return ErrnoStatus(errno, absl::StrCat("fstat ", where));
    if (!S_ISREG(st.st_mode)) return absl::FailedPreconditionError(absl::StrCat(where, " is not a regular file"));
    if (::fcntl(fd.get(), F_SETFL, O_RDONLY) != 0) return ErrnoStatus(errno, absl::StrCat("fcntl ", where));
    return fd;
  }

  absl::StatusOr<uint64_t> FreeBytes(const std::string&) override {
    struct statvfs st {};
    if (::fstatvfs(dir_fd_, &st) != 0) return ErrnoStatus(errno, absl::StrCat("statvfs ", where_));
    // ramfs and some FUSE file systems say they have no blocks at all: unknown, not full.
    if (st.f_blocks == 0) return absl::UnimplementedError("the file system reports no size");
    if (st.f_frsize != 0 && st.f_bavail > UINT64_MAX / st.f_frsize) return UINT64_MAX;
    return uint64_t{st.f_bavail} * st.f_frsize;
  }

  absl::Status CanSync() override { return absl::OkStatus(); }

  absl::Status Unlink(const std::string& name) override {
    absl::StatusOr<Beneath> at = Resolve(name);
    if (!at.ok()) return at.status();
    if (::unlinkat(at->dir(dir_fd_), at->leaf.c_str(), 0) != 0) {
      return ErrnoStatus(errno, absl::StrCat("cleanup: remove ", PathInDir(where_, name)));
    }
    return absl::OkStatus();
  }

  absl::Status Mkdir(const std::string& name) override {
    if (absl::Status ok = CheckName(where_, name); !ok.ok()) return ok;
    if (::mkdirat(dir_fd_, name.c_str(), 0700) != 0) {
      return ErrnoStatus(errno, absl::StrCat("mkdir ", PathInDir(where_, name)));
    }
    return absl::OkStatus();
  }

  absl::Status Rmdir(const std::string& name) override {
    if (absl::Status ok = CheckName(where_, name); !ok.ok()) return ok;
    if (::unlinkat(dir_fd_, name.c_str(), AT_REMOVEDIR) != 0) {
      return ErrnoStatus(errno, absl::StrCat("cleanup: remove ", PathInDir(where_, name)));
    }
    return absl::OkStatus();
  }

  // "" is the directory itself (the session's dir()).
  absl::StatusOr<RemoteStat> Stat(const std::string& name) override {
    struct stat st {};
    if (name.empty()) {
      if (::fstat(dir_fd_, &st) != 0) return ErrnoStatus(errno, absl::StrCat(where_, " (fstat)"));
    } else {
      if (absl::Status ok = CheckName(where_, name); !ok.ok()) return ok;
      if (::fstatat(dir_fd_, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
        return ErrnoStatus(errno, absl::StrCat(PathInDir(where_, name), " on ", where_));
      }
    }
    return RemoteStat{S_ISDIR(st.st_mode), S_ISREG(st.st_mode), static_cast<uint64_t>(st.st_size)};
  }

 private:
  absl::StatusOr<Beneath> Resolve(const std::string& name) const {
    Beneath at;
    const size_t slash = name.find('/');
    at.leaf = slash == std::string::npos ? name : name.substr(slash + 1);
    if (absl::Status ok = CheckName(where_, at.leaf); !ok.ok()) return ok;
    if (slash == std::string::npos) return at;
    const std::string dir = name.substr(0, slash);
    if (absl::Status ok = CheckName(where_, dir); !ok.ok()) return ok;
    at.sub = Fd(::openat(dir_fd_, dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!at.sub.valid()) return ErrnoStatus(errno, absl::StrCat("open ", PathInDir(where_, dir)));
    return at;
  }

  const int dir_fd_;  // the driver's, borrowed
  const std::string where_;
  const int write_flags_;               // O_DIRECT or O_DSYNC (--write-mode)
  std::unique_ptr<HugeBuffer> bounce_;  // O_DIRECT's aligned copy, made with the first file
};

// The share of `fd`'s first `length` bytes (at most kMaxResident looked at) in this
// machine's page cache, by mincore over a read-only mapping.
absl::StatusOr<double> ResidentPct(int fd, uint64_t length) {
  const size_t span = static_cast<size_t>(std::min(length, kMaxResident));
  if (span == 0) return 0.0;
  void* map = ::mmap(nullptr, span, PROT_READ, MAP_SHARED, fd, 0);
  if (map == MAP_FAILED) return ErrnoStatus(errno, "mmap (to ask mincore)");
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> pages((span + page - 1) / page);
  const int rc = ::mincore(map, span, pages.data());
  const int err = errno;
  ::munmap(map, span);
  if (rc != 0) return ErrnoStatus(err, "mincore");
  const size_t resident =
      static_cast<size_t>(std::count_if(pages.begin(), pages.end(), [](unsigned char c) { return (c & 1) != 0; }));
  return 100.0 * static_cast<double>(resident) / static_cast<double>(pages.size());
}

// A read of one file, with this client's cached pages of it dropped first (written
// back, then posix_fadvise DONTNEED) and what stayed measured (mincore).
class PathReader : public ShareReader {
 public:
  PathReader(Fd fd, std::string where, uint64_t length)
      : fd_(std::move(fd)), where_(std::move(where)), length_(length) {
    DropCache();
  }

  absl::StatusOr<size_t> Read(uint8_t* data, size_t size) override {
    if (first_request_ns_ == 0) first_request_ns_ = MonoNanos();
    if (at_ >= length_) return 0;
    const size_t want = static_cast<size_t>(std::min<uint64_t>(size, length_ - at_));
    for (;;) {
      const ssize_t n = ::read(fd_.get(), data, want);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return ErrnoStatus(errno, absl::StrCat("read ", where_, " at byte ", at_));
      if (n == 0) {
        return absl::DataLossError(
            absl::StrCat(where_, " ended at byte ", at_, " of ", length_, " (the file shrank while it was read)"));
      }
      at_ += static_cast<uint64_t>(n);
      return static_cast<size_t>(n);
    }
  }
  int64_t first_request_ns() const override { return first_request_ns_; }
  void Close() override { fd_.Reset(); }

  void FillReadRow(proto::TransferReport& row) const override {
    if (!resident_pct_) {
      AppendNote(absl::StrCat("the client's cached pages could not be dropped or checked (", why_,
                              "): the read may have come from this machine's RAM"),
                 row);
      return;
    }
    row.set_cache_resident_pct(*resident_pct_);
    row.set_cache(Name(*resident_pct_ < 1.0 ? CacheState::kCold : CacheState::kWarm));
    if (*resident_pct_ >= 1.0) {
      AppendNote(
          absl::StrFormat("%.0f%% of the file stayed in this client's page cache after the drop", *resident_pct_), row);
    }
  }

 private:
  void DropCache() {
    // Dirty pages are not dropped: write them back first (untimed: before the clock).
    if (::fdatasync(fd_.get()) != 0 && errno != EINVAL) {
      why_ = absl::StrCat("fdatasync: ", std::strerror(errno));
      return;
    }
    if (const int rc = ::posix_fadvise(fd_.get(), 0, 0, POSIX_FADV_DONTNEED); rc != 0) {
      why_ = absl::StrCat("posix_fadvise: ", std::strerror(rc));
      return;
    }
    absl::StatusOr<double> pct = ResidentPct(fd_.get(), length_);
    if (!pct.ok()) {
      why_ = std::string(pct.status().message());
      return;
    }
    resident_pct_ = *pct;
  }

  Fd fd_;
  const std::string where_;
  const uint64_t length_;
  uint64_t at_ = 0;
  int64_t first_request_ns_ = 0;
  std::optional<double> resident_pct_;
  std::string why_;
};

// One stream's view of the directory (the descriptor is the driver's).
class PathSession : public ShareSession {
 public:
  PathSession(int dir_fd, const std::string& where, int write_flags) : fs_(dir_fd, where, write_flags) {}
  RemoteFs& fs() override { return fs_; }
  const std::string& dir() const override { return dir_; }
  bool usable() const override { return true; }
  absl::StatusOr<std::unique_ptr<ShareReader>> OpenReader(const std::string& name, uint64_t length) override {
    absl::StatusOr<Fd> fd = fs_.OpenToRead(name);
    if (!fd.ok()) return fd.status();
    return std::unique_ptr<ShareReader>(new PathReader(*std::move(fd), PathInDir(fs_.Where(), name), length));
  }

 private:
  PathFs fs_;
  const std::string dir_;  // "": the shell's paths are names in the directory
};

int WriteFlags(WriteMode mode) {
  switch (mode) {
    case WriteMode::kDirect:
      return O_DIRECT;
    case WriteMode::kDsync:
      return O_DSYNC;
    case WriteMode::kBuffered:
      break;
  }
  return 0;
}

// What is a path's alone in a share run: the directory, the mount, the write mode.
class PathDriver : public ShareDriverOf<PathSession> {
 public:
  PathDriver(const RunOptions& options, std::shared_ptr<const Fd> dir, std::string where, MountFacts mount)
      : options_(options),
        dir_(std::move(dir)),
        where_(std::move(where)),
        mount_(std::move(mount)),
        mode_(options.direction == Direction::kRead ? WriteMode::kBuffered : options.write_mode) {
    // Found through the descriptor (/proc/self/fd), never the path again.
    if (!mount_.network()) local_devices_ = DevicesToWatch(absl::StrCat("/proc/self/fd/", dir_->get()));
  }

  absl::StatusOr<std::unique_ptr<PathSession>> ConnectSession(int /*stream*/, const ConsoleLine* say) override {
    if (say != nullptr && mode_ == WriteMode::kDirect) {  // Start's: O_DIRECT is tried once, before any row
      if (absl::Status st = ProbeDirect(*say); !st.ok()) return st;
    }
    return std::make_unique<PathSession>(dir_->get(), where_, WriteFlags(mode_));
  }
  const char* name() const override { return "path"; }
  std::string host() const override { return mount_.network() ? mount_.Host() : ""; }
  std::string peer() const override { return mount_.Peer(); }

  std::string ProtocolCellOf(PathSession&) const override { return mount_.Describe(); }
  const std::vector<BlockDevice>* LocalDevices() const override { return local_devices_ ? &*local_devices_ : nullptr; }

  std::string StartLineOf(PathSession&, const std::string& free_text, const SyncPolicy& sync) const override {
    std::string how;
    switch (mode_) {
      case WriteMode::kDirect:
        how = "O_DIRECT writes";
        break;
      case WriteMode::kDsync:
        how = "O_DSYNC writes";
        break;
      case WriteMode::kBuffered:
        how = sync.kind == SyncPolicy::kNone ? "buffered writes, no fsync (times end at the last write: the "
                                               "client's cache may hold the bytes)"
                                             : "buffered writes, fsync as --sync says";
        break;
    }
    return absl::StrFormat("path %s (%s, from %s): %s, %s", where_, mount_.Describe(), mount_.Peer(), free_text, how);
  }

  void FillPushRow(proto::TransferReport& row) const override {
    row.set_write_mode(Name(mode_));
    if (fell_back_) AppendNote("the file system refuses O_DIRECT: written buffered (--direct-fallback)", row);
    if (row.status() != Name(Status::kOk) || mode_ != WriteMode::kBuffered || row.sync_policy() != "none") return;
    if (!mount_.network()) {
      AppendNote(
          "sync none on a local file system: the figure is this machine's page cache taking the bytes, not "
          "its disk",
          row);
    } else if (row.has_link_mbps() && row.has_mtu() &&
               row.mb_per_s() > TcpGoodputCeilingMBps(row.link_mbps(), row.mtu())) {
      AppendNote(absl::StrFormat("client cache: the writes ended at %.1f MB/s, faster than the link carries "
                                 "(%.1f MB/s): the client's cache took the bytes, not the NAS",
                                 row.mb_per_s(), TcpGoodputCeilingMBps(row.link_mbps(), row.mtu())),
                 row);
    }
  }

 private:
  // A new file opened O_DIRECT and one aligned block written, then removed: a file
  // system that refuses either is refused in one line (or, with --direct-fallback,
  // written buffered).
  absl::Status ProbeDirect(const ConsoleLine& say) {
    const std::string name = absl::StrCat(".nasperf-direct-probe-", RandomHex(8));  // no one can take it first
    PathFs fs(dir_->get(), where_, O_DIRECT);
    absl::StatusOr<std::unique_ptr<RemoteFile>> file = fs.Create(name);
    absl::Status st = file.status();
    if (file.ok()) {
      std::vector<uint8_t> block(kDirectAlign, 0);
      st = (*file)->PWrite(block.data(), block.size(), 0);
      (void)(*file)->Close();
      (void)fs.Unlink(name);
    }
    if (st.ok() || !absl::IsFailedPrecondition(st)) return st;
    if (!options_.direct_fallback) {
      return absl::FailedPreconditionError(absl::StrCat("--write-mode direct: ", where_, " (", mount_.Describe(),
                                                        ") refuses O_DIRECT; use --write-mode dsync or buffered, "
                                                        "or --direct-fallback"));
    }
    say(absl::StrCat(where_, " (", mount_.Describe(), ") refuses O_DIRECT: writing buffered (--direct-fallback)"));
    mode_ = WriteMode::kBuffered;
    fell_back_ = true;
    return absl::OkStatus();
  }

  const RunOptions& options_;
  const std::shared_ptr<const Fd> dir_;  // the user's, or the one the agent's --allow-path check opened
  const std::string where_;
  const MountFacts mount_;
  std::optional<std::vector<BlockDevice>> local_devices_;  // a local file system's (no server)
  // Set at Start (its Connect), before any stream's thread reads them.
  WriteMode mode_;
  bool fell_back_ = false;
};

// A path run's config: the share's, and for a lab job the directory its agent opened
// beneath --allow-path (TakeDirectory). Made once, read-only after.
class PathConfig : public ShareConfig {
 public:
  PathConfig(const ShareConfig& share, std::string peer, bool user)
      : ShareConfig(share.share(), share.Peer()), peer_(std::move(peer)), user_(user) {}
  std::string Peer() const override { return peer_; }
  absl::Status TakeDirectory(const std::string& path, std::shared_ptr<const Fd> dir) override {
    if (path != share().url) return absl::InvalidArgumentError(absl::StrCat(path, " is not the run's `to`"));
    absl::StatusOr<MountFacts> mount = MountOf(dir->get());
    if (mount.ok()) peer_ = mount->Peer();
    dir_ = std::move(dir);
    return absl::OkStatus();
  }
  // The agent's descriptor; null for the user's run (its `to` is opened at make).
  const std::shared_ptr<const Fd>& dir() const { return dir_; }
  bool user() const { return user_; }

 private:
  std::string peer_;
  const bool user_;
  std::shared_ptr<const Fd> dir_;
};

absl::StatusOr<std::unique_ptr<Transport>> MakePathTransport(const RunOptions& options, const RunContext& context) {
  absl::StatusOr<const PathConfig*> config = ConfigOf<PathConfig>(options);
  if (!config.ok()) return config.status();
  const std::string& to = (*config)->share().url;
  if (absl::Status text = CheckToText(to); !text.ok())
    return absl::InvalidArgumentError(absl::StrCat("--to ", to, ": ", text.message()));
  std::shared_ptr<const Fd> dir = (*config)->dir();
  if (dir == nullptr) {  // only the user's `to` is ever opened by its name
    if (!(*config)->user()) {
      return absl::FailedPreconditionError(
          absl::StrCat(to, ": a lab job's directory was not opened beneath the agent's --allow-path"));
    }
    absl::StatusOr<Fd> opened = OpenDir(to);
    if (!opened.ok()) return opened.status();
    dir = std::make_shared<const Fd>(*std::move(opened));
  }
  absl::StatusOr<MountFacts> mount = MountOf(dir->get());
  if (!mount.ok()) return absl::Status(mount.status().code(), absl::StrCat(to, ": ", mount.status().message()));
  return NewShareTransport(std::make_unique<PathDriver>(options, std::move(dir), to, *std::move(mount)), options,
                           context);
}

// The entry's parse: `to` an absolute directory, with the same text checks from any
// origin. The user's is opened and its mount named now (the rows' peer: the mount's
// source, or "local"). A plan's or a peer's is never opened here: a root agent must not
// make files where a token holder says, so the agent opens it beneath its --allow-path
// (transport/run_spec.cc, TakeDirectory) or refuses the job. A worker's: refused.
absl::StatusOr<std::unique_ptr<TransportConfig>> ParsePathConfig(const std::string& to, const ParsedFlags& flags,
                                                                 Origin origin, std::string* bad_field) {
  *bad_field = "--to";
  if (origin == Origin::kWorker) return absl::InvalidArgumentError("transport path runs no worker");
  if (absl::Status text = CheckToText(to); !text.ok()) return text;
  std::string peer = to;
  if (origin == Origin::kUser) {
    absl::StatusOr<Fd> dir = OpenDir(to);
    if (!dir.ok()) return dir.status();
    absl::StatusOr<MountFacts> mount = MountOf(dir->get());
    if (mount.ok()) peer = mount->Peer();
  }
  auto made = MakeShareConfig(to, flags, nullptr, peer, bad_field);
  if (!made.ok()) return made.status();
  const auto& share = static_cast<const ShareConfig&>(**made);
  return std::unique_ptr<TransportConfig>(new PathConfig(share, peer, origin == Origin::kUser));
}

// A local file system is the NAS's own baseline (the seeds' dd on the NAS): its
// verdicts judge this machine's disk and CPU, not a client's side of a network.
std::string PathVerdictScope(const RunOptions& options) {
  if (options.config == nullptr || options.config->Peer() != kLocalPeer) return "";
  return "  verdicts: this machine's own disks and CPU (a local file system: no network, the NAS's own baseline; "
         "compare it with the network runs' rows by label)";
}

}  // namespace

TransportEntry PathTransportEntry() {
  TransportCaps caps;
  caps.write_modes = true;  // O_DIRECT, O_DSYNC
  caps.dsync_writes = true;
  caps.verify = true;          // read back (RemoteFsRun)
  caps.reads = true;           // this client's cached pages dropped first (PathReader)
  caps.reads_laid_out = true;  // RemoteFsRun::LayOutReadFile
  caps.barrier = true;         // the share shell's Push
  caps.file_sets = true;       // RemoteFsRun::WriteSet
  caps.local_dir = true;       // a lab job's `to` only beneath the agent's --allow-path
  TransportEntry entry{"path",
                       "a directory of a mounted (or local) file system, through the OS's own client (no agent; "
                       "fsync for --sync)",
                       caps, &MakePathTransport};
  entry.to_form = "/absolute/dir (a mount point or a directory in one)";
  entry.parse = &ParsePathConfig;
  entry.verdict_scope = &PathVerdictScope;
  return entry;
}

}  // namespace nasperf
