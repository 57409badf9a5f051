// The SMB transport through libsmbclient (transport/smb.h). Dynamic builds only.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>
// clang-format off
#include <libsmbclient.h>
// clang-format on

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "common/fd.h"
#include "common/log.h"
#include "common/policy.h"
#include "common/units.h"
#include "common/validate.h"
#include "datapath/rows.h"
#include "datapath/write_pipeline.h"
#include "transport/fs_worker.h"
#include "transport/remote_fs.h"
#include "transport/smb.h"

namespace nasperf {

absl::StatusOr<std::unique_ptr<Transport>> MakeSmbTransport(const RunOptions& options);

namespace {

constexpr char kComponent[] = "sender";
constexpr size_t kMaxCallBytes = 8 << 20;  // one SMB WRITE or READ per call at most (libsmbclient's largest)
constexpr size_t kReadSize = 1 << 20;
constexpr int kBusyUnlinkAttempts = 15;  // 200 ms apart

// libsmbclient is not thread-safe, even with one context per thread: every call into
// it holds this lock.
absl::Mutex& SmbLock() {
  static absl::Mutex* mu = new absl::Mutex;
  return *mu;
}

// One libsmbclient context: the login, the knobs, the server connection it caches.
class SmbClient {
 public:
  static absl::StatusOr<std::unique_ptr<SmbClient>> Open(const SmbUrl& url, SmbLogin login,
                                                         const ShareOptions& options);
  ~SmbClient() {
    absl::MutexLock lock(&SmbLock());
    if (ctx_ != nullptr) smbc_free_context(ctx_, 1);
  }
  SMBCCTX* ctx() const { return ctx_; }
  // smb://host/share/dir/name, for libsmbclient (the port is the context's).
  std::string UrlOf(const std::string& path) const { return absl::StrCat("smb://", url_.host, "/", url_.share, path); }
  const std::string& where() const { return where_; }
  // A failed call: errno's words, what was done, on what.
  absl::Status Failure(absl::string_view what, int err) const {
    const std::string text = absl::StrCat(what, " on ", where_, ": ", std::strerror(err));
    if (err == ENOSPC || err == EDQUOT) return absl::ResourceExhaustedError(text);
    if (err == EACCES || err == EPERM) {
      return absl::PermissionDeniedError(absl::StrCat(text, " (a wrong user or password, or no right to it)"));
    }
    if (err == EEXIST) return absl::AlreadyExistsError(text);
    return absl::UnavailableError(text);
  }

 private:
  static void Auth(SMBCCTX* c, const char*, const char*, char* wg, int wglen, char* un, int unlen, char* pw, int pwlen);

  SMBCCTX* ctx_ = nullptr;
  SmbUrl url_;
  SmbLogin login_;
  std::string where_;
};

void SmbClient::Auth(SMBCCTX* c, const char*, const char*, char* wg, int wglen, char* un, int unlen, char* pw,
                     int pwlen) {
  const auto* self = static_cast<const SmbClient*>(smbc_getOptionUserData(c));
  auto put = [](char* out, int size, const std::string& value) {
    if (out != nullptr && size > 0) std::snprintf(out, static_cast<size_t>(size), "%s", value.c_str());
  };
  put(un, unlen, self->login_.user);
  put(pw, pwlen, self->login_.password);
  if (!self->login_.domain.empty()) put(wg, wglen, self->login_.domain);
}

// libsmbclient has no option for signing: Samba's `client signing` parameter, from a
// client smb.conf of that one line loaded over the defaults (process-wide, as
// libsmbclient's configuration is; a run has one SMB login).
absl::Status AskSigning(SMBCCTX* ctx, const std::string& signing) {
  if (signing == "default") return absl::OkStatus();
  // Samba's words; its "desired" signs whenever the server agrees.
  const char* value = signing == "off" ? "disabled" : signing == "desired" ? "desired" : "required";
  char path[] = "/tmp/nasperf-smb-XXXXXX";
  Fd fd(::mkstemp(path));
  if (!fd.valid()) return ErrnoStatus(errno, "--smb-signing: a client smb.conf in /tmp");
  const std::string conf = absl::StrCat("[global]\n\tclient signing = ", value, "\n");
  const bool written = ::write(fd.get(), conf.data(), conf.size()) == static_cast<ssize_t>(conf.size());
  const int loaded = written ? smbc_setConfiguration(ctx, path) : -1;
  ::unlink(path);
  if (!written || loaded != 0) {
    return absl::InternalError(
        absl::StrCat("--smb-signing ", signing, ": libsmbclient did not take `client signing = ", value, "`"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<SmbClient>> SmbClient::Open(const SmbUrl& url, SmbLogin login,
                                                           const ShareOptions& options) {
  std::unique_ptr<SmbClient> c(new SmbClient);
  c->url_ = url;
  c->login_ = std::move(login);
  c->where_ = absl::StrCat("//", url.host, url.port ? absl::StrCat(":", url.port) : "", "/", url.share);
  absl::MutexLock lock(&SmbLock());
  c->ctx_ = smbc_new_context();
  if (c->ctx_ == nullptr) return absl::ResourceExhaustedError("libsmbclient: smbc_new_context failed");
  smbc_setDebug(c->ctx_, 0);
  smbc_setOptionUserData(c->ctx_, c.get());
  smbc_setFunctionAuthDataWithContext(c->ctx_, &SmbClient::Auth);
  smbc_setOptionNoAutoAnonymousLogin(c->ctx_, true);  // a wrong password is an error, not a guest login
  smbc_setOptionUseKerberos(c->ctx_, false);
  smbc_setOptionFallbackAfterKerberos(c->ctx_, true);
  smbc_setTimeout(c->ctx_, options.timeout_s * 1000);
  if (url.port != 0) smbc_setPort(c->ctx_, url.port);
  smbc_smb_encrypt_level level = SMBC_ENCRYPTLEVEL_DEFAULT;
  if (options.smb_encrypt == "off") level = SMBC_ENCRYPTLEVEL_NONE;
  if (options.smb_encrypt == "desired") level = SMBC_ENCRYPTLEVEL_REQUEST;
  if (options.smb_encrypt == "required") level = SMBC_ENCRYPTLEVEL_REQUIRE;
  smbc_setOptionSmbEncryptionLevel(c->ctx_, level);
  if (!smbc_setOptionProtocols(c->ctx_, options.smb_min_protocol.c_str(), "SMB3")) {
    return absl::InvalidArgumentError(absl::StrCat("--smb-min-protocol ", options.smb_min_protocol, ": refused"));
  }
  if (smbc_init_context(c->ctx_) == nullptr) {
    const int err = errno;
    smbc_free_context(c->ctx_, 1);
    c->ctx_ = nullptr;
    return ErrnoStatus(err, "libsmbclient: smbc_init_context (is /etc/samba/smb.conf readable?)");
  }
  if (absl::Status signing = AskSigning(c->ctx_, options.smb_signing); !signing.ok()) return signing;
  return c;
}

// One open SMB file as a RemoteFile. libsmbclient waits for each WRITE's answer
// before the next (it has no asynchronous calls), so the link idles one round trip
// per call: the push loop's 1 MiB pieces are gathered into WRITEs of `write_size`
// (--smb-write-size, 8 MiB by default, SMB3's usual largest), which keeps that idle
// time small. libsmbclient has no flush call (close flushes): Sync is never asked.
class SmbFile : public RemoteFile {
 public:
  SmbFile(SmbClient& c, SMBCFILE* file, std::string path, size_t write_size)
      : c_(c), file_(file), path_(std::move(path)), write_size_(write_size) {}
  ~SmbFile() override { (void)Close(); }

  absl::Status PWrite(const uint8_t* data, size_t size, uint64_t offset) override {
    if (offset != staged_at_ + staged_.size()) {  // not where the last piece ended
      if (absl::Status s = Settle(); !s.ok()) return s;
      staged_at_ = offset;
    }
    while (size > 0) {
      const size_t n = std::min(size, write_size_ - staged_.size());
      staged_.insert(staged_.end(), data, data + n);
      data += n;
      size -= n;
      if (staged_.size() == write_size_) {
        if (absl::Status s = Settle(); !s.ok()) return s;
      }
    }
    return absl::OkStatus();
  }

  // Writes what is gathered.
  absl::Status Settle() override {
    if (staged_.empty()) return absl::OkStatus();
    absl::MutexLock lock(&SmbLock());
    if (absl::Status s = SeekTo(staged_at_); !s.ok()) return Failed(s);
    for (size_t done = 0; done < staged_.size();) {
      const ssize_t wrote =
          smbc_getFunctionWrite(c_.ctx())(c_.ctx(), file_, staged_.data() + done, staged_.size() - done);
      if (wrote <= 0) {
        return Failed(
            c_.Failure(absl::StrCat("smb write ", path_, " at byte ", staged_at_ + done), wrote < 0 ? errno : EIO));
      }
      done += static_cast<size_t>(wrote);
      position_ += static_cast<uint64_t>(wrote);
    }
    staged_at_ += staged_.size();
    staged_.clear();
    return absl::OkStatus();
  }

  absl::StatusOr<size_t> PRead(uint8_t* data, size_t size, uint64_t offset) override {
    absl::MutexLock lock(&SmbLock());
    if (absl::Status s = SeekTo(offset); !s.ok()) return s;
    const ssize_t got = smbc_getFunctionRead(c_.ctx())(c_.ctx(), file_, data, std::min(size, kMaxCallBytes));
    if (got < 0) return c_.Failure(absl::StrCat("smb read ", path_, " at byte ", offset), errno);
    position_ += static_cast<uint64_t>(got);
    return static_cast<size_t>(got);
  }

  absl::Status Sync() override { return absl::UnimplementedError("libsmbclient has no flush call"); }

  // What is still gathered (unless a write failed), then the server's answer to
  // CLOSE, where a late write error shows.
  absl::Status Close() override {
    if (file_ == nullptr) return absl::OkStatus();
    absl::Status status = failed_ ? absl::OkStatus() : Settle();
    absl::MutexLock lock(&SmbLock());
    const int rc = smbc_getFunctionClose(c_.ctx())(c_.ctx(), file_);
    file_ = nullptr;
    if (rc != 0 && status.ok()) status = c_.Failure(absl::StrCat("smb close ", path_), errno);
    return status;
  }

 private:
  absl::Status SeekTo(uint64_t offset) ABSL_EXCLUSIVE_LOCKS_REQUIRED(SmbLock()) {
    if (offset == position_) return absl::OkStatus();
    if (smbc_getFunctionLseek(c_.ctx())(c_.ctx(), file_, static_cast<off_t>(offset), SEEK_SET) < 0) {
      return c_.Failure(absl::StrCat("smb seek ", path_, " to byte ", offset), errno);
    }
    position_ = offset;
    return absl::OkStatus();
  }
  absl::Status Failed(absl::Status s) {
    failed_ = true;
    staged_.clear();
    return s;
  }

  SmbClient& c_;
  SMBCFILE* file_;
  const std::string path_;
  const size_t write_size_;
  uint64_t position_ = 0;
  std::vector<uint8_t> staged_;  // bytes for the file at staged_at_
  uint64_t staged_at_ = 0;
  bool failed_ = false;
};

class SmbFs : public RemoteFs {
 public:
  SmbFs(SmbClient& c, size_t write_size) : c_(c), write_size_(write_size) {}
  // A worker's (transport/fs_worker.h): the file system owns its connection.
  SmbFs(std::unique_ptr<SmbClient> owned, size_t write_size)
      : owned_(std::move(owned)), c_(*owned_), write_size_(write_size) {}
  const std::string& Where() const override { return c_.where(); }

  absl::StatusOr<std::unique_ptr<RemoteFile>> Create(const std::string& path) override {
    return OpenFile(path, O_WRONLY | O_CREAT | O_EXCL, "smb create ");  // O_EXCL: never an existing file
  }
  absl::StatusOr<std::unique_ptr<RemoteFile>> Open(const std::string& path) override {
    return OpenFile(path, O_RDONLY, "smb open ");
  }
  absl::StatusOr<std::unique_ptr<RemoteFile>> OpenToWrite(const std::string& path) override {
    return OpenFile(path, O_WRONLY, "smb open ");
  }

  absl::StatusOr<uint64_t> FreeBytes(const std::string& dir) override {
    absl::MutexLock lock(&SmbLock());
    std::string url = c_.UrlOf(dir);
    struct statvfs st {};
    if (smbc_getFunctionStatVFS(c_.ctx())(c_.ctx(), url.data(), &st) != 0) {
      return c_.Failure(absl::StrCat("smb statvfs ", dir), errno);
    }
    // libsmbclient fills f_bsize with the bytes per sector and f_frsize with the
    // sectors per allocation unit (SMB's FS_FULL_SIZE_INFORMATION), f_bavail in units.
    const uint64_t sectors = st.f_frsize != 0 ? st.f_frsize : 1;
    const uint64_t sector = st.f_bsize;
    if (sector == 0 || sectors > UINT64_MAX / sector) return UINT64_MAX;
    const uint64_t unit = sectors * sector;
    if (st.f_bavail > UINT64_MAX / unit) return UINT64_MAX;
    return static_cast<uint64_t>(st.f_bavail) * unit;
  }

  absl::Status CanSync() override {
    return absl::UnimplementedError("libsmbclient has no flush call (the server writes when it closes the file)");
  }

  // A file still open in another connection is busy (a sharing violation): after a
  // stream's worker died, its smbd holds the file until it sees the connection gone,
  // so a busy file is tried again for a few seconds.
  absl::Status Unlink(const std::string& path) override {
    const std::string url = c_.UrlOf(path);
    int err = 0;
    for (int attempt = 0; attempt < kBusyUnlinkAttempts; ++attempt) {
      if (attempt > 0) absl::SleepFor(absl::Milliseconds(200));
      absl::MutexLock lock(&SmbLock());
      if (smbc_getFunctionUnlink(c_.ctx())(c_.ctx(), url.c_str()) == 0) return absl::OkStatus();
      err = errno;
      if (err != EBUSY) break;
    }
    return c_.Failure(absl::StrCat("cleanup: remove ", path), err);
  }

  absl::StatusOr<RemoteStat> Stat(const std::string& path) override {
    absl::MutexLock lock(&SmbLock());
    struct stat st {};
    if (smbc_getFunctionStat(c_.ctx())(c_.ctx(), c_.UrlOf(path).c_str(), &st) != 0) {
      return c_.Failure(path, errno);
    }
    return RemoteStat{S_ISDIR(st.st_mode), S_ISREG(st.st_mode), static_cast<uint64_t>(std::max<off_t>(st.st_size, 0))};
  }

 private:
  absl::StatusOr<std::unique_ptr<RemoteFile>> OpenFile(const std::string& path, int flags, const char* what) {
    absl::MutexLock lock(&SmbLock());
    SMBCFILE* file = smbc_getFunctionOpen(c_.ctx())(c_.ctx(), c_.UrlOf(path).c_str(), flags, 0644);
    if (file == nullptr) {
      const int err = errno;
      if (err == EEXIST) {
        return absl::AlreadyExistsError(
            absl::StrCat(c_.where(), ": ", path, " already exists; nasperf never overwrites"));
      }
      return c_.Failure(absl::StrCat(what, path), err);
    }
    return std::make_unique<SmbFile>(c_, file, path, write_size_);
  }

  std::unique_ptr<SmbClient> owned_;
  SmbClient& c_;
  const size_t write_size_;
};

// An SMB file as the write pipeline's ByteSource (reads): one READ of 1 MiB at a time.
class SmbSource : public ByteSource {
 public:
  SmbSource(RemoteFile& file, uint64_t length) : file_(file), length_(length) {}
  absl::StatusOr<size_t> Read(uint8_t* data, size_t size) override {
    if (at_ >= length_) return 0;
    if (first_request_ns_ == 0) first_request_ns_ = MonoNanos();
    const size_t want = static_cast<size_t>(std::min<uint64_t>({size, kReadSize, length_ - at_}));
    absl::StatusOr<size_t> got = file_.PRead(data, want, at_);
    if (!got.ok()) return got.status();
    if (*got == 0) return absl::DataLossError(absl::StrCat("the file ended at byte ", at_, " of ", length_));
    at_ += *got;
    return *got;
  }
  // When the first READ went out: a read's clock starts there (see NfsSource).
  int64_t first_request_ns() const { return first_request_ns_; }

 private:
  RemoteFile& file_;
  const uint64_t length_;
  uint64_t at_ = 0;
  int64_t first_request_ns_ = 0;
};

// What a worker process needs to make this run's connection (fs_worker.h's LOGIN).
proto::FsWorkerCall WorkerLogin(const ShareOptions& share, const SmbLogin& login) {
  proto::FsWorkerCall call;
  call.set_op(proto::FsWorkerCall::LOGIN);
  call.set_url(share.url);
  call.set_user(login.user);
  call.set_password(login.password);
  call.set_domain(login.domain);
  call.set_encrypt(share.smb_encrypt);
  call.set_signing(share.smb_signing);
  call.set_min_protocol(share.smb_min_protocol);
  call.set_timeout_s(static_cast<uint32_t>(share.timeout_s));
  call.set_write_size(share.smb_write_size);
  return call;
}

// The worker's side of LOGIN: the connection, as the run's own process would make it.
absl::StatusOr<std::unique_ptr<RemoteFs>> WorkerSmbFs(const proto::FsWorkerCall& call) {
  absl::StatusOr<SmbUrl> url = ParseSmbUrl(call.url());
  if (!url.ok()) return url.status();
  if (call.write_size() < (64 << 10) || call.write_size() > kMaxCallBytes || call.timeout_s() < 1 ||
      call.timeout_s() > 3600) {
    return absl::InvalidArgumentError("a worker's write size or timeout out of range");
  }
  ShareOptions share;
  share.url = call.url();
  share.smb_encrypt = call.encrypt();
  share.smb_signing = call.signing();
  share.smb_min_protocol = call.min_protocol();
  share.timeout_s = static_cast<int>(call.timeout_s());
  absl::StatusOr<std::unique_ptr<SmbClient>> client =
      SmbClient::Open(*url, SmbLogin{call.user(), call.password(), call.domain()}, share);
  if (!client.ok()) return client.status();
  return std::unique_ptr<RemoteFs>(new SmbFs(*std::move(client), static_cast<size_t>(call.write_size())));
}

class SmbTransport : public Transport {
 public:
  SmbTransport(const RunOptions& options, SmbUrl url, SmbLogin login)
      : options_(options), url_(std::move(url)), login_(std::move(login)), run_(RemoteRunPlanFor(options)) {}

  absl::Status Start(const std::string& run_id, uint64_t length, const ConsoleLine& say) override;
  void Push(const TransferSlot& slot, PayloadSource& source, const PushOptions& push, TransferResult& out) override;
  void Pull(const TransferSlot& slot, BlockWriter* into, const PipelineOptions& pipeline, TransferResult& out) override;
  void Finish(const std::string& run_id) override;
  std::optional<double> CeilingMBps() const override { return path_.ceiling_mb_per_s(); }
  uint64_t Length(uint64_t asked) const override { return read_length_ > 0 ? read_length_ : asked; }

 private:
  void FillPathCells(proto::TransferReport& row) const;
  // A stream's worker processes, one per channel (a new one for any that died: the
  // loop goes on); none when the run's own process serves its one stream and channel.
  absl::StatusOr<std::vector<FsWorker*>> ChannelsOf(int stream);
  bool AnyChannelDied(int stream);
  absl::StatusOr<std::unique_ptr<FsWorker>> StartWorker(int stream) const;
  size_t Channels() const { return static_cast<size_t>(options_.share.smb_channels); }
  // Stream s's channel c (workers_ holds stream s's at s * channels ...).
  std::unique_ptr<FsWorker>& WorkerOf(int stream, size_t channel) {
    return workers_[static_cast<size_t>(stream) * Channels() + channel];
  }

  const RunOptions& options_;
  const SmbUrl url_;
  const SmbLogin login_;
  RemoteFsRun run_;
  std::unique_ptr<SmbClient> client_;
  // --streams or --smb-channels above 1: a process per stream and channel (stream s's
  // at s * channels ...), each with its own connection, since libsmbclient serialises
  // every call of a process.
  std::vector<std::unique_ptr<FsWorker>> workers_;
  std::string protocol_;
  RemotePathCells path_;  // peer, MTU, link of every row
  uint64_t read_length_ = 0;
  std::string read_path_;  // a read's file: --remote-file, or the one Start laid out
};

absl::Status SmbTransport::Start(const std::string& run_id, uint64_t length, const ConsoleLine& say) {
  if (absl::Status valid = CheckRunId(run_id); !valid.ok()) return valid;
  auto client = SmbClient::Open(url_, login_, options_.share);
  if (!client.ok()) return client.status();
  client_ = std::move(*client);
  SmbFs fs(*client_, static_cast<size_t>(options_.share.smb_write_size));
  absl::StatusOr<RemoteStat> dir = fs.Stat(url_.dir);
  if (!dir.ok()) return absl::Status(dir.status().code(), absl::StrCat("the directory ", dir.status().message()));
  if (!dir->is_dir) {
    return absl::InvalidArgumentError(absl::StrCat(client_->where(), ": ", url_.dir, " is not a directory"));
  }
  const size_t workers =
      options_.streams > 1 || Channels() > 1 ? static_cast<size_t>(options_.streams) * Channels() : 0;
  for (size_t i = 0; i < workers; ++i) {
    absl::StatusOr<std::unique_ptr<FsWorker>> worker = StartWorker(static_cast<int>(i / Channels()));
    if (!worker.ok()) return worker.status();
    workers_.push_back(*std::move(worker));
  }
  std::string free_text = "a read";
  if (options_.direction == Direction::kRead) {
    if (options_.remote_file.empty()) {
      // The last step that can fail: Finish, which removes the file, follows a Start that worked.
      absl::StatusOr<std::string> laid_out = run_.LayOutReadFile(fs, url_.dir, run_id, length);
      if (!laid_out.ok()) return laid_out.status();
      read_path_ = *laid_out;
      read_length_ = length;
      free_text = "a read of a file laid out first, untimed";
    } else {
      read_path_ = PathInDir(url_.dir, options_.remote_file);
      absl::StatusOr<RemoteStat> file = fs.Stat(read_path_);
      if (!file.ok()) return absl::Status(file.status().code(), absl::StrCat("remote file ", file.status().message()));
      read_length_ = file->size;
      if (!file->is_regular || read_length_ == 0 || read_length_ > kMaxReadLength) {
        return absl::InvalidArgumentError(
            absl::StrCat(client_->where(), ": ", read_path_, " is not a regular file of 1 byte to 1 PiB"));
      }
    }
  } else {
    absl::StatusOr<std::string> started = run_.Start(&fs, client_->where(), url_.dir, length, fs.CanSync());
    if (!started.ok()) return started.status();
    free_text = *started;
  }
  protocol_ = absl::StrFormat("smb asked min=%s encrypt=%s signing=%s channels=%d", options_.share.smb_min_protocol,
                              options_.share.smb_encrypt, options_.share.smb_signing, options_.share.smb_channels);
  path_.Resolve(url_.host, url_.port ? absl::StrCat(url_.host, ":", url_.port) : url_.host, options_.link_mbps);
  say(absl::StrFormat(
      "smb %s as %s (asked: %s or newer, encryption %s; libsmbclient does not say what was "
      "negotiated): %s, %s, no remote flush (times end at the last WRITE's answer)",
      client_->where(), login_.user, options_.share.smb_min_protocol, options_.share.smb_encrypt, url_.dir, free_text));
  say(path_.Describe());
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<FsWorker>> SmbTransport::StartWorker(int stream) const {
  const size_t ring = 2 * static_cast<size_t>(std::max(options_.share.smb_write_size, uint64_t{kReadSize}));
  absl::StatusOr<std::unique_ptr<FsWorker>> worker = FsWorker::Start(
      kSmbWorkerCommand, client_->where(), WorkerLogin(options_.share, login_), ring, options_.share.timeout_s);
  if (!worker.ok()) {
    return absl::Status(worker.status().code(),
                        absl::StrCat("stream ", stream, "'s SMB process: ", worker.status().message()));
  }
  return worker;
}

absl::StatusOr<std::vector<FsWorker*>> SmbTransport::ChannelsOf(int stream) {
  std::vector<FsWorker*> channels;
  if (workers_.empty()) return channels;
  if (stream < 0 || (static_cast<size_t>(stream) + 1) * Channels() > workers_.size()) {
    return absl::InternalError(absl::StrCat("stream ", stream, " has no SMB process"));
  }
  for (size_t c = 0; c < Channels(); ++c) {
    std::unique_ptr<FsWorker>& worker = WorkerOf(stream, c);  // this stream's thread only
    if (!worker->alive()) {
      absl::StatusOr<std::unique_ptr<FsWorker>> fresh = StartWorker(stream);
      if (!fresh.ok()) return fresh.status();
      worker = *std::move(fresh);
    }
    channels.push_back(worker.get());
  }
  return channels;
}

bool SmbTransport::AnyChannelDied(int stream) {
  for (size_t c = 0; !workers_.empty() && c < Channels(); ++c) {
    if (!WorkerOf(stream, c)->alive()) return true;
  }
  return false;
}

void SmbTransport::FillPathCells(proto::TransferReport& row) const {
  path_.Fill(row);
  row.set_share_protocol(protocol_);
}

void SmbTransport::Push(const TransferSlot& slot, PayloadSource& source, const PushOptions& push, TransferResult& out) {
  RemoteFsRun::Turn turn(run_);
  proto::TransferReport& row = out.sender;
  FillPathCells(row);
  const std::string path = PathInDir(url_.dir, TransferFileName(slot.run_id, slot.iteration, slot.stream));
  PushResult r;
  r.start_wall_ns = WallNanos();
  r.start_ns = MonoNanos();
  SmbFs local(*client_, static_cast<size_t>(options_.share.smb_write_size));
  const std::function<absl::Status()>& wait = options_.before_first_byte;
  absl::StatusOr<std::vector<FsWorker*>> channels = ChannelsOf(slot.stream);
  if (!channels.ok()) {
    if (wait) (void)wait();  // a stream that failed before its first byte never holds the others back
    row.set_error(std::string(channels.status().message()));
    return;
  }
  std::optional<StripedFs> striped;
  if (!channels->empty()) striped.emplace(*channels, static_cast<size_t>(options_.share.smb_write_size));
  RemoteFs& fs = striped ? static_cast<RemoteFs&>(*striped) : local;
  absl::Status status = run_.Write(
      fs, path, slot.length, source, push,
      [&] {
        absl::Status released = wait ? wait() : absl::OkStatus();
        r.start_wall_ns = WallNanos();  // the barrier's wait is not the transfer's
        r.start_ns = MonoNanos();
        return released;
      },
      r, turn);
  run_.RecordRow(r, status, path_.ceiling_mb_per_s(), row);
  // A stream whose process died leaves its partial file to this process's connection.
  run_.Done(AnyChannelDied(slot.stream) ? &local : &fs, path, status.ok(), r.first_byte_ns != 0);
}

void SmbTransport::Pull(const TransferSlot& slot, BlockWriter* into, const PipelineOptions& pipeline,
                        TransferResult& out) {
  proto::TransferReport& row = out.sender;
  FillPathCells(row);
  const int64_t start_ns = MonoNanos();
  SmbFs local(*client_, static_cast<size_t>(options_.share.smb_write_size));
  absl::StatusOr<std::vector<FsWorker*>> channels = ChannelsOf(slot.stream);
  if (!channels.ok()) {
    row.set_error(std::string(channels.status().message()));
    return;
  }
  RemoteFs& fs = channels->empty() ? static_cast<RemoteFs&>(local) : *channels->front();  // reads: one READ at a time
  absl::StatusOr<std::unique_ptr<RemoteFile>> file = fs.Open(read_path_);
  if (!file.ok()) {
    row.set_error(std::string(file.status().message()));
    return;
  }
  SmbSource source(**file, read_length_);
  PipelineResult result = RunPipeline(source, into, read_length_, pipeline);
  if (result.first_byte_ns != 0) result.first_byte_ns = source.first_request_ns();
  (void)(*file)->Close();
  AddReadClientFigures(result, start_ns, into != nullptr, std::nullopt, path_.ceiling_mb_per_s(), &row);
  KeepClientVerdicts(row);
}

void SmbTransport::Finish(const std::string&) {
  workers_.clear();
  if (client_ != nullptr && run_.HasKept()) {
    SmbFs fs(*client_, static_cast<size_t>(options_.share.smb_write_size));
    run_.Finish(fs);
  }
  client_.reset();
}

}  // namespace

int RunSmbWorker() {
  // Its run sends it the login: exec made it dumpable again.
  if (absl::Status s = KeepOutOfCoreDumps(); !s.ok()) {
    std::fprintf(stderr, "nasperf smb-worker: %s\n", std::string(s.message()).c_str());
    return 2;
  }
  return ServeFsWorker(WorkerSmbFs);
}

absl::StatusOr<std::unique_ptr<Transport>> MakeSmbTransport(const RunOptions& options) {
  absl::StatusOr<SmbUrl> url = ParseSmbUrl(options.share.url);
  if (!url.ok()) return url.status();
  // Before the password is read (or copied out of $NASPERF_SMB_PASSWORD).
  if (absl::Status s = KeepOutOfCoreDumps(); !s.ok()) return s;
  absl::StatusOr<SmbLogin> login = SmbLoginFor(*url, options.share);
  if (!login.ok()) return login.status();
  return std::unique_ptr<Transport>(new SmbTransport(options, *std::move(url), *std::move(login)));
}

}  // namespace nasperf
