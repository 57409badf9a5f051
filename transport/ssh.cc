#include "transport/ssh.h"

#include <fcntl.h>
#include <libssh/callbacks.h>
#include <libssh/libssh.h>
#include <libssh/sftp.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
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
#include "common/sampler.h"
#include "common/units.h"
#include "common/validate.h"
#include "datapath/rows.h"
#include "datapath/target.h"
#include "datapath/write_pipeline.h"
#include "ssh/ssh_session.h"
#include "transport/remote_fs.h"
#include "transport/share.h"  // StreamBarrier

namespace nasperf {
namespace {

constexpr char kComponent[] = "sender";
// The first bulk transfer over an SSH session pays sshd's buffer growth (see
// SshConnection::FirstTransfer): 2-4x slower than the next over loopback.
constexpr char kStartupNote[] =
    "start-up: the first transfer over this SSH session, slower while sshd grows its buffers "
    "(later runs on the session do not pay it; OpenSSH's scp pays it on every copy); --warmup 1 leaves it out";

void NoteStartup(SshConnection& c, TransferResult& out) {
  if (!c.FirstTransfer()) return;
  out.startup = true;
  AppendNote(kStartupNote, out.sender);
}

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

// A connection's SFTP session as a RemoteFs: sftp's files, and the housekeeping of
// scp's (free space, names, cleanup).
class SftpFs : public RemoteFs {
 public:
  SftpFs(SshConnection& c, sftp_session sftp, const SshOptions& options) : c_(c), sftp_(sftp), options_(options) {}

  const std::string& Where() const override { return c_.where(); }

  absl::StatusOr<std::unique_ptr<RemoteFile>> Create(const std::string& path) override {
    // O_EXCL: a file already there is somebody's data, never overwritten.
    sftp_file file = sftp_open(sftp_, path.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0644);
    if (file == nullptr) {
      if (absl::Status there = NothingAt(path); !there.ok()) return there;
      return c_.Failure(absl::StrCat("sftp open ", path));
    }
    return std::make_unique<SftpFile>(c_, file, path, options_.sftp_write_size, options_.sftp_writes_in_flight);
  }

  absl::StatusOr<std::unique_ptr<RemoteFile>> Open(const std::string& path) override {
    sftp_file file = sftp_open(sftp_, path.c_str(), O_RDONLY, 0);
    if (file == nullptr) return c_.Failure(absl::StrCat("sftp open ", path));
    return std::make_unique<SftpFile>(c_, file, path, options_.sftp_write_size, 1);
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
    if (sftp_extension_supported(sftp_, "fsync@openssh.com", "1")) return absl::OkStatus();
    return absl::UnimplementedError("the server does not offer fsync@openssh.com");
  }

  absl::Status Unlink(const std::string& path) override {
    if (sftp_unlink(sftp_, path.c_str()) != 0) return c_.Failure(absl::StrCat("cleanup: remove ", path));
    return absl::OkStatus();
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
  const SshOptions& options_;
};

// libssh 0.10 marks its SCP API deprecated (0.11 keeps it); it is still the one way
// to speak the scp protocol through libssh, which is what this baseline measures.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
// One scp upload as the push loop's writer. After the file's last byte a write also
// waits for scp's answer that it wrote it.
class ScpWriter : public ChunkWriter {
 public:
  ScpWriter(SshConnection& c, ssh_scp scp, const std::string& path) : c_(c), scp_(scp), path_(path) {}
  absl::Status Write(const uint8_t* data, size_t size, uint64_t offset) override {
    if (ssh_scp_write(scp_, data, size) != SSH_OK) {
      return c_.Failure(absl::StrCat("scp write ", path_, " at byte ", offset));
    }
    return absl::OkStatus();
  }

 private:
  SshConnection& c_;
  const ssh_scp scp_;
  const std::string& path_;
};
#pragma GCC diagnostic pop

// A remote file as the write pipeline's ByteSource, for reads over SFTP: up to
// kReadsInFlight SSH_FXP_READ requests of kReadSize bytes ahead of the one being
// consumed (sftp_async_read_begin/sftp_async_read), as OpenSSH's client keeps many
// reads in flight; each reply lands in a staging buffer the pipeline's reader copies
// out of. A short reply anywhere but at the end is an error, never a silent gap.
class SftpSource : public ByteSource {
 public:
  static constexpr uint32_t kReadSize = 64 << 10;
  static constexpr size_t kReadsInFlight = 16;

  SftpSource(SshConnection& c, sftp_file file, std::string path, uint64_t length)
      : c_(c), file_(file), path_(std::move(path)), length_(length), staged_(kReadSize) {}

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

  // Requests still unanswered when the pipeline stopped early: the session owes
  // replies libssh would hand to the next call, so it is not used again.
  bool abandoned() const { return !in_flight_.empty(); }

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

class SshTransport : public Transport {
 public:
  SshTransport(const SshOptions& options, const SshRunPlan& plan) : options_(options), plan_(plan), run_(plan.remote) {}

  absl::Status Start(const std::string& run_id, uint64_t length, const ConsoleLine& say) override;
  void Push(const TransferSlot& slot, PayloadSource& source, const PushOptions& push, TransferResult& out) override;
  void Pull(const TransferSlot& slot, BlockWriter* into, const PipelineOptions& pipeline, TransferResult& out) override;
  void Finish(const std::string& run_id) override;
  std::optional<double> CeilingMBps() const override { return path_.ceiling_mb_per_s(); }
  uint64_t Length(uint64_t asked) const override { return read_length_ > 0 ? read_length_ : asked; }

 private:
  // Reads: the remote file's length.
  absl::Status StartReads(SshConnection& c, sftp_session sftp, const ConsoleLine& say);
  // The stream's session, (re)connected when it is missing or was lost.
  absl::StatusOr<SshConnection*> ConnectionFor(int stream);
  absl::Status PushSftp(SshConnection& c, const std::string& path, uint64_t length, PayloadSource& source,
                        const PushOptions& push, StreamBarrier& barrier, PushResult& r, RemoteFsRun::Turn& turn);
  absl::Status PushScp(SshConnection& c, const std::string& name, uint64_t length, PayloadSource& source,
                       const PushOptions& push, StreamBarrier& barrier, PushResult& r);
  // The connection's SFTP session for names and cleanup; none when scp has no SFTP
  // next to it.
  std::optional<SftpFs> HousekeepingFs(SshConnection& c);
  // The destination is a directory: a typo fails before any transfer.
  absl::Status CheckDirectory(SshConnection& c, sftp_session sftp);

  const SshOptions options_;
  SshRunPlan plan_;
  RemoteFsRun run_;                    // free space, sync fallback, cleanup: as for every remote file system
  bool fsync_ = false;                 // the files can be synced (sftp with fsync@openssh.com)
  bool sftp_for_housekeeping_ = true;  // scp: the server also offers SFTP
  RemotePathCells path_;               // peer, MTU, link of every row
  uint64_t read_length_ = 0;

  absl::Mutex mu_;
  std::map<int, std::unique_ptr<SshConnection>> connections_ ABSL_GUARDED_BY(mu_);
};

absl::StatusOr<SshConnection*> SshTransport::ConnectionFor(int stream) {
  {
    absl::MutexLock lock(&mu_);
    auto it = connections_.find(stream);
    if (it != connections_.end() && it->second->reusable()) return it->second.get();
  }
  auto opened = SshConnection::Open(options_, [](const std::string&) {});
  if (!opened.ok()) return opened.status();
  absl::MutexLock lock(&mu_);
  std::unique_ptr<SshConnection>& slot = connections_[stream];
  slot = std::move(*opened);
  return slot.get();
}

absl::Status SshTransport::Start(const std::string& run_id, uint64_t length, const ConsoleLine& say) {
  // The run id becomes part of remote file names; no agent checks it on the other side.
  if (absl::Status valid = CheckRunId(run_id); !valid.ok()) return valid;
  auto opened = SshConnection::Open(options_, say);
  if (!opened.ok()) return opened.status();
  SshConnection& c = **opened;

  std::optional<SftpFs> fs;
  absl::Status can_sync = absl::UnimplementedError("scp has no way to sync");
  absl::StatusOr<sftp_session> sftp = c.Sftp();
  if (!sftp.ok()) {
    if (options_.sftp) return sftp.status();
    sftp_for_housekeeping_ = false;
    Log(LogLevel::kWarning, kComponent,
        "%s: no SFTP next to scp, so nasperf cannot check free space, check names or clean up", c.where());
  } else {
    if (plan_.direction == Direction::kRead) {
      if (absl::Status s = StartReads(c, *sftp, say); !s.ok()) return s;
    }
    if (absl::Status s = CheckDirectory(c, *sftp); !s.ok()) return s;
    fs.emplace(c, *sftp, options_);
    if (options_.sftp) can_sync = fs->CanSync();
  }
  fsync_ = can_sync.ok();
  std::string free_text = "free space unknown (no statvfs@openssh.com)";
  if (plan_.direction == Direction::kWrite) {  // a read syncs the local target, which takes any policy
    absl::StatusOr<std::string> started = run_.Start(fs ? &*fs : nullptr, c.where(), options_.to.dir, length, can_sync);
    if (!started.ok()) return started.status();
    free_text = *started;
  }

  path_.Resolve(c.host(), absl::StrCat(c.host(), ":", c.port()), plan_.link_mbps);
  say(absl::StrFormat("%s %s (%s, host key %s, cipher %s): %s, %s, %s", options_.sftp ? "sftp" : "scp", c.where(),
                      ssh_get_serverbanner(c.session()) ? ssh_get_serverbanner(c.session()) : "?", c.host_key(),
                      ssh_get_cipher_out(c.session()) ? ssh_get_cipher_out(c.session()) : "?", options_.to.dir,
                      free_text, fsync_ ? "fsync@openssh.com offered" : "no remote sync (times end at the last byte)"));
  say(path_.Describe());
  absl::MutexLock lock(&mu_);
  connections_[0] = std::move(*opened);
  return absl::OkStatus();
}

absl::Status SshTransport::CheckDirectory(SshConnection& c, sftp_session sftp) {
  sftp_attributes dir = sftp_stat(sftp, options_.to.dir.c_str());
  if (dir == nullptr) return c.Failure(absl::StrCat("remote directory ", options_.to.dir));
  const bool is_dir = dir->type == SSH_FILEXFER_TYPE_DIRECTORY;
  sftp_attributes_free(dir);
  if (!is_dir) return absl::InvalidArgumentError(absl::StrCat(c.where(), ": ", options_.to.dir, " is not a directory"));
  return absl::OkStatus();
}

std::optional<SftpFs> SshTransport::HousekeepingFs(SshConnection& c) {
  if (!sftp_for_housekeeping_) return std::nullopt;
  absl::StatusOr<sftp_session> sftp = c.Sftp();
  if (!sftp.ok()) {
    Log(LogLevel::kWarning, kComponent, "cleanup: %s", sftp.status().message());
    return std::nullopt;
  }
  return std::optional<SftpFs>(std::in_place, c, *sftp, options_);
}

absl::Status SshTransport::StartReads(SshConnection& c, sftp_session sftp, const ConsoleLine& say) {
  const std::string path = PathInDir(options_.to.dir, plan_.remote_file);
  sftp_attributes there = sftp_stat(sftp, path.c_str());
  if (there == nullptr) return c.Failure(absl::StrCat("remote file ", path));
  const bool regular = there->type == SSH_FILEXFER_TYPE_REGULAR;
  read_length_ = there->size;
  sftp_attributes_free(there);
  if (!regular || read_length_ == 0) {
    return absl::InvalidArgumentError(absl::StrCat(c.where(), ": ", path, " is not a non-empty regular file"));
  }
  if (read_length_ > kMaxReadLength) {
    return absl::InvalidArgumentError(
        absl::StrCat(c.where(), ": ", path, " is said to hold ", read_length_, " bytes (more than 1 PiB)"));
  }
  say(absl::StrFormat("sftp read: %s, %s (the server's page cache is not ours to control: cache unknown)", path,
                      FormatSize(read_length_)));
  return absl::OkStatus();
}

void SshTransport::Pull(const TransferSlot& slot, BlockWriter* into, const PipelineOptions& pipeline,
                        TransferResult& out) {
  proto::TransferReport& row = out.sender;
  path_.Fill(row);
  const std::string path = PathInDir(options_.to.dir, plan_.remote_file);
  const int64_t start_ns = MonoNanos();
  absl::StatusOr<SshConnection*> c = ConnectionFor(slot.stream);
  if (!c.ok()) {
    row.set_error(std::string(c.status().message()));
    return;
  }
  NoteStartup(**c, out);
  absl::StatusOr<sftp_session> sftp = (*c)->Sftp();
  if (!sftp.ok()) {
    row.set_error(std::string(sftp.status().message()));
    return;
  }
  sftp_file file = sftp_open(*sftp, path.c_str(), O_RDONLY, 0);
  if (file == nullptr) {
    row.set_error(std::string((*c)->Failure(absl::StrCat("sftp open ", path)).message()));
    return;
  }
  SftpSource source(**c, file, path, read_length_);
  PipelineResult result = RunPipeline(source, into, read_length_, pipeline);
  if (source.abandoned()) (*c)->MarkUnreusable();
  sftp_close(file);
  AddReadClientFigures(result, start_ns, into != nullptr, std::nullopt, path_.ceiling_mb_per_s(), &row);
  KeepClientVerdicts(row);  // the cipher runs on the reading thread: sender-cpu is this end's
}

void SshTransport::Push(const TransferSlot& slot, PayloadSource& source, const PushOptions& push, TransferResult& out) {
  proto::TransferReport& row = out.sender;
  path_.Fill(row);
  const std::string name = TransferFileName(slot.run_id, slot.iteration, slot.stream);
  const std::string path = PathInDir(options_.to.dir, name);

  RemoteFsRun::Turn turn(run_);
  PushResult r;
  r.start_wall_ns = WallNanos();
  r.start_ns = MonoNanos();
  StreamBarrier barrier(plan_.before_first_byte, r);
  absl::StatusOr<SshConnection*> c = ConnectionFor(slot.stream);
  absl::Status status = c.status();
  if (status.ok()) {
    NoteStartup(**c, out);
    status = options_.sftp ? PushSftp(**c, path, slot.length, source, push, barrier, r, turn)
                           : PushScp(**c, name, slot.length, source, push, barrier, r);
  }
  (void)barrier.Wait();  // a stream that failed before its first byte never holds the others back
  run_.RecordRow(r, status, path_.ceiling_mb_per_s(), row);
  std::optional<SftpFs> fs = c.ok() && (*c)->connected() ? HousekeepingFs(**c) : std::nullopt;
  run_.Done(fs ? &*fs : nullptr, path, status.ok(), r.first_byte_ns != 0);
}

absl::Status SshTransport::PushSftp(SshConnection& c, const std::string& path, uint64_t length, PayloadSource& source,
                                    const PushOptions& push, StreamBarrier& barrier, PushResult& r,
                                    RemoteFsRun::Turn& turn) {
  absl::StatusOr<sftp_session> sftp = c.Sftp();
  if (!sftp.ok()) return sftp.status();
  SftpFs fs(c, *sftp, options_);
  return run_.Write(
      fs, path, length, source, push, [&barrier] { return barrier.Wait(); }, r, turn);
}

// libssh 0.10 marks its SCP API deprecated (0.11 keeps it); it is still the one way
// to speak the scp protocol through libssh, which is what this baseline measures.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
absl::Status SshTransport::PushScp(SshConnection& c, const std::string& name, uint64_t length, PayloadSource& source,
                                   const PushOptions& push, StreamBarrier& barrier, PushResult& r) {
  const std::string path = PathInDir(options_.to.dir, name);
  if (sftp_for_housekeeping_) {
    // scp itself would overwrite: look first.
    absl::StatusOr<sftp_session> sftp = c.Sftp();
    if (!sftp.ok()) return sftp.status();
    if (absl::Status there = SftpFs(c, *sftp, options_).NothingAt(path); !there.ok()) return there;
  }
  ssh_scp scp = ssh_scp_new(c.session(), SSH_SCP_WRITE, options_.to.dir.c_str());
  if (scp == nullptr) return c.Failure("scp");
  auto failure = [&](absl::string_view what) {
    absl::Status s = c.Failure(what);
    ssh_scp_free(scp);
    return s;
  };
  if (ssh_scp_init(scp) != SSH_OK) return failure(absl::StrCat("scp to ", options_.to.dir));
  if (ssh_scp_push_file64(scp, name.c_str(), length, 0644) != SSH_OK) {
    return failure(absl::StrCat("scp ", path));
  }
  if (absl::Status released = barrier.Wait(); !released.ok()) {
    ssh_scp_close(scp);  // the remote scp made an empty file: ours, so it goes
    ssh_scp_free(scp);
    if (std::optional<SftpFs> fs = HousekeepingFs(c); fs) (void)fs->Unlink(path);
    return released;
  }
  ScpWriter writer(c, scp, path);
  absl::Status status = PushLoop(source, length, push, writer, r).status;
  // close waits for the remote scp to exit, i.e. to have closed the file.
  if (ssh_scp_close(scp) != SSH_OK && status.ok()) status = c.Failure(absl::StrCat("scp close ", path));
  ssh_scp_free(scp);
  r.ack_ns = MonoNanos();
  return status;
}
#pragma GCC diagnostic pop

void SshTransport::Finish(const std::string& run_id) {
  if (run_.HasKept()) {
    absl::StatusOr<SshConnection*> c = ConnectionFor(0);
    if (!c.ok()) {
      Log(LogLevel::kWarning, kComponent, "cleanup at the end: %s", c.status().message());
    } else if (std::optional<SftpFs> fs = HousekeepingFs(**c); fs) {
      run_.Finish(*fs);
    }
  }
  absl::MutexLock lock(&mu_);
  connections_.clear();
}

}  // namespace

absl::StatusOr<std::unique_ptr<Transport>> NewSshTransport(const SshOptions& options, const SshRunPlan& plan) {
  static std::once_flag once;
  static int init_rc = 0;
  std::call_once(once, [] { init_rc = ssh_init(); });
  if (init_rc != SSH_OK) return absl::InternalError("libssh: ssh_init failed");
  return std::unique_ptr<Transport>(new SshTransport(options, plan));
}

namespace {

// The run's SSH login and what the transport needs from the loop's options; `sftp`:
// the sftp entry's (else scp's).
absl::StatusOr<std::unique_ptr<Transport>> MakeSshTransport(const RunOptions& options, const RunContext& context,
                                                            bool sftp) {
  SshOptions ssh = options.ssh;
  ssh.sftp = sftp;
  SshRunPlan plan;
  plan.remote = RemoteRunPlanFor(options);
  plan.link_mbps = options.link_mbps;
  plan.direction = options.direction;
  plan.remote_file = options.remote_file;
  plan.before_first_byte = context.before_first_byte;
  return NewSshTransport(ssh, plan);
}

}  // namespace

constexpr char kSshToForm[] = "[user@]host:/remote/dir";
constexpr char kSshStartupSummary[] =
    "paid the SSH session's start-up (the first transfer over a session is slower while sshd grows its buffers; "
    "OpenSSH's scp pays it on every copy, this loop once per session)";

TransportEntry ScpTransportEntry() {
  TransportCaps caps;
  caps.ssh_login = true;
  caps.barrier = true;  // SshTransport::Push
  TransportEntry entry{
      "scp", "the scp protocol to any SSH server (no agent; cannot sync or read)", caps,
      [](const RunOptions& options, const RunContext& context) { return MakeSshTransport(options, context, false); },
      &AddSshLoginFlags};
  entry.to_form = kSshToForm;
  entry.startup_summary = kSshStartupSummary;
  return entry;
}

TransportEntry SftpTransportEntry() {
  TransportCaps caps;
  caps.ssh_login = true;
  caps.reads = true;    // of an existing --remote-file: the server's cache is not ours to set
  caps.verify = true;   // read back (RemoteFsRun)
  caps.barrier = true;  // SshTransport::Push (a read's Pull does not wait: no lab read over sftp)
  TransportEntry entry{
      "sftp", "SFTP to any SSH server (no agent; syncs with fsync@openssh.com when offered)", caps,
      [](const RunOptions& options, const RunContext& context) { return MakeSshTransport(options, context, true); },
      &AddSshLoginFlags};
  entry.to_form = kSshToForm;
  entry.startup_summary = kSshStartupSummary;
  return entry;
}

}  // namespace nasperf
