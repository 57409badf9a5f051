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
#include "datapath/rows.h"
#include "datapath/write_pipeline.h"
#include "transport/fs_worker.h"
#include "transport/remote_fs.h"
#include "transport/share.h"
#include "transport/smb.h"
#include "wire/validate.h"

namespace nasperf {

absl::StatusOr<std::unique_ptr<Transport>> MakeSmbTransport(const RunOptions& options, const RunContext& context);

namespace {

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

  absl::Status Mkdir(const std::string& path) override {
    absl::MutexLock lock(&SmbLock());
    if (smbc_getFunctionMkdir(c_.ctx())(c_.ctx(), c_.UrlOf(path).c_str(), 0755) != 0) {
      return c_.Failure(absl::StrCat("mkdir ", path), errno);
    }
    return absl::OkStatus();
  }

  absl::Status Rmdir(const std::string& path) override {
    absl::MutexLock lock(&SmbLock());
    if (smbc_getFunctionRmdir(c_.ctx())(c_.ctx(), c_.UrlOf(path).c_str()) != 0) {
      return c_.Failure(absl::StrCat("cleanup: remove ", path), errno);
    }
    return absl::OkStatus();
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

// An SMB file as the share shell's reader: one READ of 1 MiB at a time.
class SmbReader : public ShareReader {
 public:
  SmbReader(std::unique_ptr<RemoteFile> file, uint64_t length) : file_(std::move(file)), length_(length) {}
  absl::StatusOr<size_t> Read(uint8_t* data, size_t size) override {
    if (at_ >= length_) return 0;
    if (first_request_ns_ == 0) first_request_ns_ = MonoNanos();
    const size_t want = static_cast<size_t>(std::min<uint64_t>({size, kReadSize, length_ - at_}));
    absl::StatusOr<size_t> got = file_->PRead(data, want, at_);
    if (!got.ok()) return got.status();
    if (*got == 0) return absl::DataLossError(absl::StrCat("the file ended at byte ", at_, " of ", length_));
    at_ += *got;
    return *got;
  }
  int64_t first_request_ns() const override { return first_request_ns_; }
  void Close() override { (void)file_->Close(); }

 private:
  const std::unique_ptr<RemoteFile> file_;
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

// A stream served by the run's own process: one stream, one channel.
class SmbLocalSession : public ShareSession {
 public:
  SmbLocalSession(SmbClient& client, size_t write_size, const std::string& dir) : fs_(client, write_size), dir_(dir) {}
  RemoteFs& fs() override { return fs_; }
  const std::string& dir() const override { return dir_; }
  bool usable() const override { return true; }  // a lost server fails each call, in its own words
  absl::StatusOr<std::unique_ptr<ShareReader>> OpenReader(const std::string& path, uint64_t length) override {
    absl::StatusOr<std::unique_ptr<RemoteFile>> file = fs_.Open(path);
    if (!file.ok()) return file.status();
    return std::unique_ptr<ShareReader>(new SmbReader(*std::move(file), length));
  }

 private:
  SmbFs fs_;
  const std::string dir_;
};

// A stream served by worker processes, one per channel (--streams or --smb-channels
// above 1: libsmbclient serialises every call of a process). Its file's pieces go
// round the channels (StripedFs); checks and a dead channel's file go through the
// run's own connection.
class SmbWorkerSession : public ShareSession {
 public:
  SmbWorkerSession(std::vector<std::unique_ptr<FsWorker>> channels, SmbClient& client, size_t write_size,
                   const std::string& dir)
      : channels_(std::move(channels)), striped_(Raw(channels_), write_size), local_(client, write_size), dir_(dir) {}
  RemoteFs& fs() override { return striped_; }
  RemoteFs* housekeeping() override { return &local_; }
  const std::string& dir() const override { return dir_; }
  bool usable() const override {
    return std::all_of(channels_.begin(), channels_.end(), [](const auto& w) { return w->alive(); });
  }
  absl::StatusOr<std::unique_ptr<ShareReader>> OpenReader(const std::string& path, uint64_t length) override {
    absl::StatusOr<std::unique_ptr<RemoteFile>> file = channels_.front()->Open(path);  // reads: one READ at a time
    if (!file.ok()) return file.status();
    return std::unique_ptr<ShareReader>(new SmbReader(*std::move(file), length));
  }

 private:
  static std::vector<FsWorker*> Raw(const std::vector<std::unique_ptr<FsWorker>>& owned) {
    std::vector<FsWorker*> raw;
    for (const auto& w : owned) raw.push_back(w.get());
    return raw;
  }
  const std::vector<std::unique_ptr<FsWorker>> channels_;  // at least one
  StripedFs striped_;
  SmbFs local_;
  const std::string dir_;
};

// What is SMB's alone in a share run: the run's own connection (made at the first
// Connect, Start's), the worker processes, its cells and console words.
class SmbDriver : public ShareDriver {
 public:
  SmbDriver(const RunOptions& options, const ShareOptions& share, SmbUrl url, SmbLogin login)
      : options_(options), share_(share), url_(std::move(url)), login_(std::move(login)) {}

  absl::StatusOr<std::unique_ptr<ShareSession>> Connect(int stream, const ConsoleLine* say) override;
  bool ConnectsEveryStreamAtStart() const override { return true; }
  const char* name() const override { return "smb"; }
  std::string host() const override { return url_.host; }
  uint16_t port() const override { return url_.port; }
  std::string ProtocolCell(ShareSession&) const override {
    return absl::StrFormat("smb asked min=%s encrypt=%s signing=%s channels=%d", share_.smb_min_protocol,
                           share_.smb_encrypt, share_.smb_signing, share_.smb_channels);
  }
  std::string StartLine(ShareSession& session, const std::string& free_text, const SyncPolicy&) const override {
    return absl::StrFormat(
        "smb %s as %s (asked: %s or newer, encryption %s; libsmbclient does not say what was "
        "negotiated): %s, %s, no remote flush (times end at the last WRITE's answer)",
        session.housekeeping()->Where(), login_.user, share_.smb_min_protocol, share_.smb_encrypt, url_.dir, free_text);
  }

 private:
  absl::StatusOr<std::unique_ptr<FsWorker>> StartWorker(int stream, const std::string& where) const;
  size_t Channels() const { return static_cast<size_t>(share_.smb_channels); }
  size_t WriteSize() const { return static_cast<size_t>(share_.smb_write_size); }

  const RunOptions& options_;
  const ShareOptions& share_;  // the entry's config's (options_.config)
  const SmbUrl url_;
  const SmbLogin login_;
  absl::Mutex mu_;
  std::unique_ptr<SmbClient> client_ ABSL_GUARDED_BY(mu_);  // the run's own connection, kept until the end
};

absl::StatusOr<std::unique_ptr<ShareSession>> SmbDriver::Connect(int stream, const ConsoleLine* /*say*/) {
  SmbClient* client = nullptr;
  {
    absl::MutexLock lock(&mu_);
    if (client_ == nullptr) {
      absl::StatusOr<std::unique_ptr<SmbClient>> opened = SmbClient::Open(url_, login_, share_);
      if (!opened.ok()) return opened.status();
      client_ = *std::move(opened);
    }
    client = client_.get();
  }
  if (options_.streams <= 1 && Channels() <= 1) {
    return std::unique_ptr<ShareSession>(new SmbLocalSession(*client, WriteSize(), url_.dir));
  }
  std::vector<std::unique_ptr<FsWorker>> channels;
  for (size_t c = 0; c < Channels(); ++c) {
    absl::StatusOr<std::unique_ptr<FsWorker>> worker = StartWorker(stream, client->where());
    if (!worker.ok()) return worker.status();
    channels.push_back(*std::move(worker));
  }
  return std::unique_ptr<ShareSession>(new SmbWorkerSession(std::move(channels), *client, WriteSize(), url_.dir));
}

absl::StatusOr<std::unique_ptr<FsWorker>> SmbDriver::StartWorker(int stream, const std::string& where) const {
  const size_t ring = 2 * static_cast<size_t>(std::max(share_.smb_write_size, uint64_t{kReadSize}));
  absl::StatusOr<std::unique_ptr<FsWorker>> worker =
      FsWorker::Start(kSmbWorkerCommand, where, WorkerLogin(share_, login_), ring, share_.timeout_s);
  if (!worker.ok()) {
    return absl::Status(worker.status().code(),
                        absl::StrCat("stream ", stream, "'s SMB process: ", worker.status().message()));
  }
  return worker;
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

absl::StatusOr<std::unique_ptr<Transport>> MakeSmbTransport(const RunOptions& options, const RunContext& context) {
  absl::StatusOr<const ShareConfig*> config = ConfigOf<ShareConfig>(options);
  if (!config.ok()) return config.status();
  const ShareOptions& share = (*config)->share();
  absl::StatusOr<SmbUrl> url = ParseSmbUrl(share.url);
  if (!url.ok()) return url.status();
  // Before the password is read (or copied out of $NASPERF_SMB_PASSWORD).
  if (absl::Status s = KeepOutOfCoreDumps(); !s.ok()) return s;
  absl::StatusOr<SmbLogin> login = SmbLoginFor(*url, share);
  if (!login.ok()) return login.status();
  return NewShareTransport(std::make_unique<SmbDriver>(options, share, *std::move(url), *std::move(login)), options,
                           context);
}

}  // namespace nasperf
