#include "transport/ssh.h"

#include <fcntl.h>
#include <libssh/callbacks.h>
#include <libssh/libssh.h>
#include <libssh/sftp.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "common/checksum.h"
#include "common/clock.h"
#include "common/log.h"
#include "common/policy.h"
#include "common/units.h"
#include "datapath/rows.h"
#include "datapath/target.h"
#include "datapath/write_pipeline.h"
#include "measure/sampler.h"
#include "ssh/ssh_session.h"
#include "transport/remote_fs.h"
#include "transport/share.h"
#include "wire/validate.h"

namespace nasperf {
namespace {

constexpr char kComponent[] = "sender";
// The first bulk transfer over an SSH session pays sshd's buffer growth (see
// SshConnection::FirstTransfer): 2-4x slower than the next over loopback.
constexpr char kStartupNote[] =
    "start-up: the first transfer over this SSH session, slower while sshd grows its buffers "
    "(later runs on the session do not pay it; OpenSSH's scp pays it on every copy); --warmup 1 leaves it out";

// libssh 0.10 has no asynchronous SFTP write (0.11 has), and sftp_write waits one
// round trip for each request's reply, which caps a transfer at write size / RTT no
// matter how fast the link is. OpenSSH's own client keeps many writes in flight;
// so does this: SSH_FXP_WRITE requests (draft-ietf-secsh-filexfer-02 section 6.4)
// go straight onto libssh's SFTP channel, with up to `depth` unanswered, and every
// reply is checked. libssh still does the SSH layer (framing, crypto, windows). The
// request ids come from the sftp session's own counter (sftp.h exposes it), and all
// replies are read before Drain() returns, so sftp_fsync and sftp_close carry on
// as if every write had gone through sftp_write. One instance per open file.
class SftpWritePipeline {
 public:
  SftpWritePipeline(sftp_file file, size_t depth)
      : file_(file), channel_(file->sftp->channel), depth_(std::max<size_t>(depth, 1)) {}

  // Sends one write of data[0, size) at offset; waits for the oldest reply when
  // depth writes are unanswered. The data is copied into libssh's buffers before
  // this returns.
  absl::Status Write(const uint8_t* data, size_t size, uint64_t offset) {
    const uint32_t handle_length = static_cast<uint32_t>(ssh_string_len(file_->handle));
    const uint32_t id = ++file_->sftp->id_counter;
    std::vector<uint8_t>& h = header_;
    h.clear();
    PutU32(h, static_cast<uint32_t>(1 + 4 + 4 + handle_length + 8 + 4 + size));
    h.push_back(SSH_FXP_WRITE);
    PutU32(h, id);
    PutU32(h, handle_length);
    const auto* handle = static_cast<const uint8_t*>(ssh_string_data(file_->handle));
    h.insert(h.end(), handle, handle + handle_length);
    PutU32(h, static_cast<uint32_t>(offset >> 32));
    PutU32(h, static_cast<uint32_t>(offset));
    PutU32(h, static_cast<uint32_t>(size));
    if (ssh_channel_write(channel_, h.data(), static_cast<uint32_t>(h.size())) != static_cast<int>(h.size()) ||
        ssh_channel_write(channel_, data, static_cast<uint32_t>(size)) != static_cast<int>(size)) {
      return absl::UnavailableError("sending an SFTP write failed");
    }
    pending_.push_back(id);
    if (pending_.size() >= depth_) return ReadReply();
    return absl::OkStatus();
  }

  // Reads the replies to every write still unanswered.
  absl::Status Drain() {
    while (!pending_.empty()) {
      if (absl::Status s = ReadReply(); !s.ok()) return s;
    }
    return absl::OkStatus();
  }

 private:
  static void PutU32(std::vector<uint8_t>& out, uint32_t v) {
    for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<uint8_t>(v >> shift));
  }
  static uint32_t GetU32(const uint8_t* p) {
    return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
  }
  absl::Status ReadExact(uint8_t* out, size_t size) {
    while (size > 0) {
      int n = ssh_channel_read(channel_, out, static_cast<uint32_t>(size), 0);
      if (n == SSH_ERROR || (n == 0 && ssh_channel_is_eof(channel_))) {
        return absl::UnavailableError("the SFTP channel closed while replies were due");
      }
      out += n;
      size -= static_cast<size_t>(n);
    }
    return absl::OkStatus();
  }
  // One SSH_FXP_STATUS reply (length, type, id, code, message, language).
  absl::Status ReadReply() {
    uint8_t head[9];
    if (absl::Status s = ReadExact(head, sizeof head); !s.ok()) return s;
    const uint32_t length = GetU32(head);
    const uint8_t type = head[4];
    const uint32_t id = GetU32(head + 5);
    if (length < 5 || length > (1u << 20)) return absl::DataLossError("malformed SFTP reply");
    std::vector<uint8_t> body(length - 5);
    if (absl::Status s = ReadExact(body.data(), body.size()); !s.ok()) return s;
    auto it = std::find(pending_.begin(), pending_.end(), id);
    if (type != SSH_FXP_STATUS || it == pending_.end() || body.size() < 4) {
      return absl::DataLossError(absl::StrCat("unexpected SFTP reply (type ", type, ", id ", id, ")"));
    }
    pending_.erase(it);
    const uint32_t code = GetU32(body.data());
    if (code == SSH_FX_OK) return absl::OkStatus();
    std::string message;
    if (body.size() >= 8) {
      uint32_t message_length = std::min<uint32_t>(GetU32(body.data() + 4), static_cast<uint32_t>(body.size() - 8));
      message.assign(reinterpret_cast<const char*>(body.data() + 8), message_length);
    }
    // SFTP v3 has no "disk full": OpenSSH answers ENOSPC and EDQUOT with a bare Failure.
    std::string reason =
        code == SSH_FX_FAILURE ? "it could not write (disk full or over quota?)" : SftpCodeText(static_cast<int>(code));
    if (!message.empty() && message != "Failure") absl::StrAppend(&reason, " (", message, ")");
    return absl::InternalError(absl::StrCat("the server refused a write: ", reason));
  }

  sftp_file file_;
  ssh_channel channel_;
  size_t depth_;
  std::deque<uint32_t> pending_;
  std::vector<uint8_t> header_;
};

// A failed pipelined write: a lost connection explains it best, else the server's reason.
absl::Status WriteFailure(const SshConnection& c, const std::string& path, uint64_t at, const absl::Status& why) {
  if (!c.connected()) return c.Failure(absl::StrCat("sftp write ", path, " at byte ", at));
  return absl::Status(why.code(),
                      absl::StrCat("sftp write ", path, " near byte ", at, " on ", c.where(), ": ", why.message()));
}

// One open SFTP file as a RemoteFile: writes of at most `write_size` bytes each,
// pipelined when `in_flight` > 1 (SftpWritePipeline). After a pipelined write
// failed, the channel may still owe replies: the session is not used again.
class SftpFile : public RemoteFile {
 public:
  SftpFile(SshConnection& c, sftp_file file, std::string path, size_t write_size, size_t in_flight)
      : c_(c), file_(file), path_(std::move(path)), write_size_(write_size) {
    if (in_flight > 1) pipeline_.emplace(file, in_flight);
  }
  ~SftpFile() override { (void)Close(); }

  // The source's buffer goes to libssh as it is: no copy of our own.
  absl::Status PWrite(const uint8_t* data, size_t size, uint64_t offset) override {
    if (!pipeline_ && offset != position_ && sftp_seek64(file_, offset) != 0) {
      return Failed(c_.Failure(absl::StrCat("sftp seek ", path_, " to byte ", offset)));
    }
    for (size_t done = 0; done < size;) {
      const size_t n = std::min(write_size_, size - done);
      const uint64_t at = offset + done;
      if (pipeline_) {
        if (absl::Status s = pipeline_->Write(data + done, n, at); !s.ok()) {
          return Failed(WriteFailure(c_, path_, at, s));
        }
      } else if (sftp_write(file_, data + done, n) != static_cast<ssize_t>(n)) {
        return Failed(c_.Failure(absl::StrCat("sftp write ", path_, " at byte ", at)));
      }
      done += n;
    }
    position_ = offset + size;
    return absl::OkStatus();
  }

  absl::StatusOr<size_t> PRead(uint8_t* data, size_t size, uint64_t offset) override {
    if (absl::Status s = Drain(); !s.ok()) return s;
    if (sftp_seek64(file_, offset) != 0) return c_.Failure(absl::StrCat("sftp seek ", path_, " to byte ", offset));
    const ssize_t got = sftp_read(file_, data, size);
    if (got < 0) return c_.Failure(absl::StrCat("sftp read ", path_, " at byte ", offset));
    position_ = offset + static_cast<uint64_t>(got);
    return static_cast<size_t>(got);
  }

  absl::Status Settle() override { return Drain(); }

  absl::Status Sync() override {
    if (absl::Status s = Drain(); !s.ok()) return s;
    if (sftp_fsync(file_) != 0) return c_.Failure(absl::StrCat("sftp fsync ", path_));
    return absl::OkStatus();
  }

  // sftp_close reports the server's close(2).
  absl::Status Close() override {
    if (file_ == nullptr) return absl::OkStatus();
    absl::Status status = failed_ ? absl::OkStatus() : Drain();
    if (pipeline_ && failed_) c_.MarkUnreusable();
    if (sftp_close(file_) != SSH_NO_ERROR && status.ok()) status = c_.Failure(absl::StrCat("sftp close ", path_));
    file_ = nullptr;
    return status;
  }

 private:
  absl::Status Drain() {
    if (!pipeline_) return absl::OkStatus();
    if (absl::Status s = pipeline_->Drain(); !s.ok()) return Failed(WriteFailure(c_, path_, position_, s));
    return absl::OkStatus();
  }
  absl::Status Failed(absl::Status s) {
    failed_ = true;
    return s;
  }

  SshConnection& c_;
  sftp_file file_;
  const std::string path_;
  const size_t write_size_;
  uint64_t position_ = 0;
  bool failed_ = false;
  std::optional<SftpWritePipeline> pipeline_;
};

// What one run of scp or sftp logs in with and how its SFTP writes go.
struct SshRun {
  SshOptions login;
  bool sftp = true;  // false: scp (ssh_scp_push_file64)
  SftpKnobs knobs;
};

// A connection's SFTP session as a RemoteFs: sftp's files, and the housekeeping of
// scp's (free space, names, cleanup).
class SftpFs : public RemoteFs {
 public:
  // `files_sync`: false for scp's housekeeping (scp's files cannot be synced).
  SftpFs(SshConnection& c, sftp_session sftp, const SftpKnobs& knobs, bool files_sync)
      : c_(c), sftp_(sftp), knobs_(knobs), files_sync_(files_sync) {}

  const std::string& Where() const override { return c_.where(); }

  absl::StatusOr<std::unique_ptr<RemoteFile>> Create(const std::string& path) override {
    // O_EXCL: a file already there is somebody's data, never overwritten.
    sftp_file file = sftp_open(sftp_, path.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0644);
    if (file == nullptr) {
      if (absl::Status there = NothingAt(path); !there.ok()) return there;
      return c_.Failure(absl::StrCat("sftp open ", path));
    }
    return std::make_unique<SftpFile>(c_, file, path, knobs_.write_size, knobs_.writes_in_flight);
  }

  absl::StatusOr<std::unique_ptr<RemoteFile>> Open(const std::string& path) override {
    sftp_file file = sftp_open(sftp_, path.c_str(), O_RDONLY, 0);
    if (file == nullptr) return c_.Failure(absl::StrCat("sftp open ", path));
    return std::make_unique<SftpFile>(c_, file, path, knobs_.write_size, 1);
  }

  absl::StatusOr<uint64_t> FreeBytes(const std::string& dir) override {
    if (!sftp_extension_supported(sftp_, "statvfs@openssh.com", "2")) {
      return absl::UnimplementedError("no statvfs@openssh.com");
    }
    sftp_statvfs_t fs = sftp_statvfs(sftp_, dir.c_str());
    if (fs == nullptr) return c_.Failure(absl::StrCat("sftp statvfs ", dir));
    const uint64_t free_bytes = fs->f_bavail * fs->f_frsize;
    sftp_statvfs_free(fs);
    return free_bytes;
  }

  absl::Status CanSync() override {
    if (!files_sync_) return absl::UnimplementedError("scp has no way to sync");
    if (sftp_extension_supported(sftp_, "fsync@openssh.com", "1")) return absl::OkStatus();
    return absl::UnimplementedError("the server does not offer fsync@openssh.com");
  }

  absl::Status Unlink(const std::string& path) override {
    if (sftp_unlink(sftp_, path.c_str()) != 0) return c_.Failure(absl::StrCat("cleanup: remove ", path));
    return absl::OkStatus();
  }
  absl::Status Mkdir(const std::string& path) override {
    if (sftp_mkdir(sftp_, path.c_str(), 0755) != 0) return c_.Failure(absl::StrCat("mkdir ", path));
    return absl::OkStatus();
  }
  absl::Status Rmdir(const std::string& path) override {
    if (sftp_rmdir(sftp_, path.c_str()) != 0) return c_.Failure(absl::StrCat("cleanup: remove ", path));
    return absl::OkStatus();
  }

  // stat(2), so a symlink to a directory is one.
  absl::StatusOr<RemoteStat> Stat(const std::string& path) override {
    sftp_attributes there = sftp_stat(sftp_, path.c_str());
    if (there == nullptr) return c_.Failure(path);
    RemoteStat st;
    st.is_dir = there->type == SSH_FILEXFER_TYPE_DIRECTORY;
    st.is_regular = there->type == SSH_FILEXFER_TYPE_REGULAR;
    st.size = there->size;
    sftp_attributes_free(there);
    return st;
  }

  // ALREADY_EXISTS when anything is at `path`: a symlink, even dangling, is there too.
  absl::Status NothingAt(const std::string& path) {
    sftp_attributes there = sftp_lstat(sftp_, path.c_str());
    if (there == nullptr) return absl::OkStatus();
    sftp_attributes_free(there);
    return absl::AlreadyExistsError(absl::StrCat(c_.where(), ": ", path, " already exists; nasperf never overwrites"));
  }

 private:
  SshConnection& c_;
  const sftp_session sftp_;
  const SftpKnobs& knobs_;
  const bool files_sync_;
};

// libssh 0.10 marks its SCP API deprecated (0.11 keeps it); it is still the one way
// to speak the scp protocol through libssh, which is what this baseline measures.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
// One scp upload as a RemoteFile: the bytes in order, then Settle waits for the
// remote scp to exit (ssh_scp_close), i.e. to have closed the file, so a write's clock
// stops at scp's answer that it wrote it. scp cannot sync or read back.
class ScpFile : public RemoteFile {
 public:
  ScpFile(SshConnection& c, ssh_scp scp, std::string path) : c_(c), scp_(scp), path_(std::move(path)) {}
  ~ScpFile() override { (void)Close(); }

  absl::Status PWrite(const uint8_t* data, size_t size, uint64_t offset) override {
    if (offset != written_) return absl::InternalError(absl::StrCat("scp ", path_, ": a write out of order"));
    if (ssh_scp_write(scp_, data, size) != SSH_OK) {
      return c_.Failure(absl::StrCat("scp write ", path_, " at byte ", offset));
    }
    written_ += size;
    return absl::OkStatus();
  }
  absl::StatusOr<size_t> PRead(uint8_t*, size_t, uint64_t) override {
    return absl::UnimplementedError(absl::StrCat("scp ", path_, ": scp cannot read back"));
  }
  absl::Status Settle() override {
    if (closed_) return absl::OkStatus();
    closed_ = true;
    if (ssh_scp_close(scp_) != SSH_OK) return c_.Failure(absl::StrCat("scp close ", path_));
    return absl::OkStatus();
  }
  absl::Status Sync() override { return absl::UnimplementedError("scp has no way to sync"); }
  absl::Status Close() override {
    if (scp_ == nullptr) return absl::OkStatus();
    absl::Status status = Settle();
    ssh_scp_free(scp_);
    scp_ = nullptr;
    return status;
  }

 private:
  SshConnection& c_;
  ssh_scp scp_;
  const std::string path_;
  uint64_t written_ = 0;
  bool closed_ = false;
};

// scp's side of a connection as a RemoteFs: a new file is one scp upload into the
// directory, its length sent first (CreateSized). Names, free space and cleanup go
// through the SFTP session beside it (`beside`; null: the server offers none).
class ScpFs : public RemoteFs {
 public:
  using SftpBeside = std::function<absl::StatusOr<SftpFs*>()>;
  ScpFs(SshConnection& c, const std::string& dir, SftpBeside beside) : c_(c), dir_(dir), beside_(std::move(beside)) {}

  const std::string& Where() const override { return c_.where(); }
  absl::StatusOr<std::unique_ptr<RemoteFile>> Create(const std::string& path) override {
    return absl::InvalidArgumentError(absl::StrCat("scp ", path, ": the file's length goes first"));
  }
  absl::StatusOr<std::unique_ptr<RemoteFile>> CreateSized(const std::string& path, uint64_t length) override;
  absl::StatusOr<std::unique_ptr<RemoteFile>> Open(const std::string& path) override {
    absl::StatusOr<SftpFs*> sftp = Beside();
    if (!sftp.ok()) return sftp.status();
    return (*sftp)->Open(path);
  }
  absl::StatusOr<uint64_t> FreeBytes(const std::string& dir) override {
    absl::StatusOr<SftpFs*> sftp = Beside();
    if (!sftp.ok()) return sftp.status();
    return (*sftp)->FreeBytes(dir);
  }
  absl::Status CanSync() override { return absl::UnimplementedError("scp has no way to sync"); }
  absl::Status Unlink(const std::string& path) override {
    absl::StatusOr<SftpFs*> sftp = Beside();
    if (!sftp.ok()) return sftp.status();
    return (*sftp)->Unlink(path);
  }
  // A set's directories (--files-per-dir) through the SFTP session beside: one per
  // directory, where scp -r would send a D line.
  absl::Status Mkdir(const std::string& path) override {
    absl::StatusOr<SftpFs*> sftp = Beside();
    if (!sftp.ok()) return sftp.status();
    return (*sftp)->Mkdir(path);
  }
  absl::Status Rmdir(const std::string& path) override {
    absl::StatusOr<SftpFs*> sftp = Beside();
    if (!sftp.ok()) return sftp.status();
    return (*sftp)->Rmdir(path);
  }

 private:
  absl::StatusOr<SftpFs*> Beside() {
    absl::StatusOr<SftpFs*> sftp = beside_();
    if (sftp.ok() && *sftp == nullptr)
      return absl::UnimplementedError(absl::StrCat(c_.where(), ": no SFTP next to scp"));
    return sftp;
  }

  SshConnection& c_;
  const std::string& dir_;
  const SftpBeside beside_;
};

absl::StatusOr<std::unique_ptr<RemoteFile>> ScpFs::CreateSized(const std::string& path, uint64_t length) {
  const std::string in_dir = PathInDir(dir_, "");
  if (!absl::StartsWith(path, in_dir) || path.size() == in_dir.size() || path.find('/', in_dir.size()) != path.npos) {
    return absl::InvalidArgumentError(absl::StrCat("scp ", path, ": not a file in ", dir_));
  }
  const std::string name = path.substr(in_dir.size());
  absl::StatusOr<SftpFs*> sftp = beside_();
  if (!sftp.ok()) return sftp.status();
  // scp itself would overwrite: look first.
  if (*sftp != nullptr) {
    if (absl::Status there = (*sftp)->NothingAt(path); !there.ok()) return there;
  }
  ssh_scp scp = ssh_scp_new(c_.session(), SSH_SCP_WRITE, dir_.c_str());
  if (scp == nullptr) return c_.Failure("scp");
  auto failure = [&](absl::string_view what) {
    absl::Status s = c_.Failure(what);
    ssh_scp_free(scp);
    return s;
  };
  if (ssh_scp_init(scp) != SSH_OK) return failure(absl::StrCat("scp to ", dir_));
  if (ssh_scp_push_file64(scp, name.c_str(), length, 0644) != SSH_OK) return failure(absl::StrCat("scp ", path));
  return std::unique_ptr<RemoteFile>(new ScpFile(c_, scp, path));
}
#pragma GCC diagnostic pop

// A remote file as the write pipeline's source, for reads over SFTP: up to
// kReadsInFlight SSH_FXP_READ requests of kReadSize bytes ahead of the one being
// consumed (sftp_async_read_begin/sftp_async_read), as OpenSSH's client keeps many
// reads in flight; each reply lands in a staging buffer the pipeline's reader copies
// out of. A short reply anywhere but at the end is an error, never a silent gap.
class SftpReader : public ShareReader {
 public:
  static constexpr uint32_t kReadSize = 64 << 10;
  static constexpr size_t kReadsInFlight = 16;

  SftpReader(SshConnection& c, sftp_file file, std::string path, uint64_t length)
      : c_(c), file_(file), path_(std::move(path)), length_(length), staged_(kReadSize) {}
  ~SftpReader() override { Close(); }

  absl::StatusOr<size_t> Read(uint8_t* data, size_t size) override {
    if (staged_at_ == staged_size_) {
      absl::Status next = NextReply();
      if (!next.ok()) return next;
      if (staged_size_ == 0) return 0;  // the file's end
    }
    const size_t n = std::min(size, staged_size_ - staged_at_);
    std::memcpy(data, staged_.data() + staged_at_, n);
    staged_at_ += n;
    return n;
  }

  // Not kept: a read's clock over sftp starts at the first byte back, as it always has.
  int64_t first_request_ns() const override { return 0; }
  // Requests still unanswered when the pipeline stopped early: the session owes
  // replies libssh would hand to the next call, so it is not used again.
  void Close() override {
    if (file_ == nullptr) return;
    if (!in_flight_.empty()) c_.MarkUnreusable();
    sftp_close(file_);
    file_ = nullptr;
  }

 private:
  absl::Status NextReply() {
    while (in_flight_.size() < kReadsInFlight && requested_ < length_) {
      const uint32_t size = static_cast<uint32_t>(std::min<uint64_t>(kReadSize, length_ - requested_));
      const int id = sftp_async_read_begin(file_, size);
      if (id < 0) return c_.Failure(absl::StrCat("sftp read ", path_));
      in_flight_.push_back({static_cast<uint32_t>(id), size});
      requested_ += size;
    }
    staged_at_ = staged_size_ = 0;
    if (in_flight_.empty()) return absl::OkStatus();
    const Request request = in_flight_.front();
    const int got = sftp_async_read(file_, staged_.data(), kReadSize, request.id);
    in_flight_.pop_front();
    if (got < 0) return c_.Failure(absl::StrCat("sftp read ", path_));
    received_ += static_cast<uint64_t>(got);
    if (static_cast<uint32_t>(got) != request.size) {
      return absl::DataLossError(absl::StrCat(c_.where(), ": ", path_, " gave ", got, " of ", request.size,
                                              " bytes at offset ", received_ - static_cast<uint64_t>(got),
                                              " (the file shrank, or the server cut the read short)"));
    }
    staged_size_ = static_cast<size_t>(got);
    return absl::OkStatus();
  }

  struct Request {
    uint32_t id;
    uint32_t size;
  };
  SshConnection& c_;
  sftp_file file_;
  const std::string path_;
  const uint64_t length_;
  uint64_t requested_ = 0, received_ = 0;
  std::deque<Request> in_flight_;
  std::vector<uint8_t> staged_;
  size_t staged_at_ = 0, staged_size_ = 0;
};

// One stream's SSH connection as the share shell's session. sftp's files go through
// its SFTP session, scp's through ScpFs; the SFTP session (scp: when the server offers
// one) also looks, lays nothing out and cleans up. After an abandoned read or a failed
// pipelined write the channel may owe replies: the session is then not used again.
class SshShareSession : public ShareSession {
 public:
  // `sftp`: the connection's SFTP session when already open (null: opened on first
  // use, if `sftp_beside`).
  SshShareSession(std::unique_ptr<SshConnection> c, sftp_session sftp, const SshRun& run, bool sftp_beside)
      : c_(std::move(c)), run_(run), sftp_beside_(sftp_beside), scp_(*c_, run.login.to.dir, [this] { return Sftp(); }) {
    if (sftp != nullptr) sftp_.emplace(*c_, sftp, run_.knobs, /*files_sync=*/run_.sftp);
  }

  RemoteFs& fs() override { return run_.sftp ? static_cast<RemoteFs&>(*sftp_) : scp_; }
  RemoteFs* housekeeping() override {
    absl::StatusOr<SftpFs*> fs = Sftp();
    if (!fs.ok()) {
      Log(LogLevel::kWarning, kComponent, "cleanup: %s", fs.status().message());
      return nullptr;
    }
    return *fs;
  }
  // A lost connection removes nothing; else its SFTP session does.
  RemoteFs* AfterTransfer() override { return c_->connected() ? housekeeping() : nullptr; }
  const std::string& dir() const override { return run_.login.to.dir; }
  bool usable() const override { return c_->reusable(); }
  const char* StartupNote() override { return c_->FirstTransfer() ? kStartupNote : nullptr; }

  absl::StatusOr<std::unique_ptr<ShareReader>> OpenReader(const std::string& path, uint64_t length) override {
    absl::StatusOr<sftp_session> sftp = c_->Sftp();
    if (!sftp.ok()) return sftp.status();
    sftp_file file = sftp_open(*sftp, path.c_str(), O_RDONLY, 0);
    if (file == nullptr) return c_->Failure(absl::StrCat("sftp open ", path));
    return std::unique_ptr<ShareReader>(new SftpReader(*c_, file, path, length));
  }

  SshConnection& connection() { return *c_; }

 private:
  // The SFTP session as a RemoteFs, opened on first use; null when scp has none beside it.
  absl::StatusOr<SftpFs*> Sftp() {
    if (sftp_) return &*sftp_;
    if (!sftp_beside_) return nullptr;
    absl::StatusOr<sftp_session> sftp = c_->Sftp();
    if (!sftp.ok()) return sftp.status();
    sftp_.emplace(*c_, *sftp, run_.knobs, /*files_sync=*/run_.sftp);
    return &*sftp_;
  }

  const std::unique_ptr<SshConnection> c_;
  const SshRun& run_;
  const bool sftp_beside_;
  std::optional<SftpFs> sftp_;
  ScpFs scp_;
};

// What is SSH's alone in a share run: the login, whether scp has SFTP beside it
// (found at Start), the host and port after ~/.ssh/config, the console's words.
class SshDriver : public ShareDriverOf<SshShareSession> {
 public:
  explicit SshDriver(SshRun run) : run_(std::move(run)) {}

  absl::StatusOr<std::unique_ptr<SshShareSession>> ConnectSession(int stream, const ConsoleLine* say) override;
  const char* name() const override { return run_.sftp ? "sftp" : "scp"; }
  std::string host() const override {
    absl::MutexLock lock(&mu_);
    return host_;
  }
  uint16_t port() const override {
    absl::MutexLock lock(&mu_);
    return port_;
  }
  std::string ProtocolCellOf(SshShareSession&) const override { return ""; }
  std::string StartLineOf(SshShareSession& s, const std::string& free_text, const SyncPolicy&) const override {
    SshConnection& c = s.connection();
    const char* banner = ssh_get_serverbanner(c.session());
    const char* cipher = ssh_get_cipher_out(c.session());
    return absl::StrFormat(
        "%s %s (%s, host key %s, cipher %s): %s, %s, %s", name(), c.where(), banner ? banner : "?", c.host_key(),
        cipher ? cipher : "?", run_.login.to.dir, free_text,
        s.fs().CanSync().ok() ? "fsync@openssh.com offered" : "no remote sync (times end at the last byte)");
  }

 private:
  const SshRun run_;
  std::atomic<bool> sftp_beside_{true};  // scp: the server also offers SFTP
  mutable absl::Mutex mu_;
  std::string host_ ABSL_GUARDED_BY(mu_);
  uint16_t port_ ABSL_GUARDED_BY(mu_) = 0;
};

absl::StatusOr<std::unique_ptr<SshShareSession>> SshDriver::ConnectSession(int /*stream*/, const ConsoleLine* say) {
  const ConsoleLine quiet = [](const std::string&) {};
  absl::StatusOr<std::unique_ptr<SshConnection>> opened = SshConnection::Open(run_.login, say ? *say : quiet);
  if (!opened.ok()) return opened.status();
  SshConnection& c = **opened;
  if (say != nullptr) {  // Start's
    absl::MutexLock lock(&mu_);
    host_ = c.host();
    port_ = c.port();
  }
  sftp_session sftp = nullptr;
  if (run_.sftp || say != nullptr) {
    absl::StatusOr<sftp_session> opened_sftp = c.Sftp();
    if (opened_sftp.ok()) {
      sftp = *opened_sftp;
    } else if (run_.sftp) {
      return opened_sftp.status();
    } else {  // scp at Start: on without it
      sftp_beside_ = false;
      Log(LogLevel::kWarning, kComponent,
          "%s: no SFTP next to scp, so nasperf cannot check free space, check names or clean up", c.where());
    }
  }
  const bool beside = run_.sftp || sftp_beside_.load();
  return std::make_unique<SshShareSession>(*std::move(opened), sftp, run_, beside);
}

// The run's SSH login, as `sftp` (else scp) over the share shell.
absl::StatusOr<std::unique_ptr<Transport>> MakeSshTransport(const RunOptions& options, const RunContext& context,
                                                            bool sftp) {
  static std::once_flag once;
  static int init_rc = 0;
  std::call_once(once, [] { init_rc = ssh_init(); });
  if (init_rc != SSH_OK) return absl::InternalError("libssh: ssh_init failed");
  absl::StatusOr<const SshConfig*> config = ConfigOf<SshConfig>(options);
  if (!config.ok()) return config.status();
  SshRun run{(*config)->login, sftp, (*config)->knobs};
  return NewShareTransport(std::make_unique<SshDriver>(std::move(run)), options, context);
}

}  // namespace

constexpr char kSshToForm[] = "[user@]host[:port]:/remote/dir";
constexpr char kSshStartupSummary[] =
    "paid the SSH session's start-up (the first transfer over a session is slower while sshd grows its buffers; "
    "OpenSSH's scp pays it on every copy, this loop once per session)";

TransportEntry ScpTransportEntry() {
  TransportCaps caps;
  caps.ssh_login = true;
  caps.barrier = true;    // the share shell's Push
  caps.file_sets = true;  // RemoteFsRun::WriteSet
  TransportEntry entry{
      "scp", "the scp protocol to any SSH server (no agent; cannot sync or read)", caps,
      [](const RunOptions& options, const RunContext& context) { return MakeSshTransport(options, context, false); },
      &AddSshLoginFlags};
  entry.parse = ParseSshTo;
  entry.to_form = kSshToForm;
  entry.startup_summary = kSshStartupSummary;
  return entry;
}

TransportEntry SftpTransportEntry() {
  TransportCaps caps;
  caps.ssh_login = true;
  caps.reads = true;      // of an existing --remote-file: the server's cache is not ours to set
  caps.verify = true;     // read back (RemoteFsRun)
  caps.barrier = true;    // the share shell's Push (a read's Pull does not wait: no lab read over sftp)
  caps.file_sets = true;  // RemoteFsRun::WriteSet
  TransportEntry entry{
      "sftp", "SFTP to any SSH server (no agent; syncs with fsync@openssh.com when offered)", caps,
      [](const RunOptions& options, const RunContext& context) { return MakeSshTransport(options, context, true); },
      &AddSshLoginFlags};
  entry.parse = ParseSshTo;
  entry.to_form = kSshToForm;
  entry.startup_summary = kSshStartupSummary;
  return entry;
}

}  // namespace nasperf
