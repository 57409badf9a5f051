#include "transport/fs_worker.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"

extern char** environ;

namespace nasperf {
namespace {

constexpr int kSocketFd = 3;
constexpr int kRingFd = 4;
constexpr size_t kMaxRingBytes = size_t{64} << 20;
constexpr size_t kMaxCallBytes = 64 << 10;
constexpr size_t kMaxPathChars = 4096;
constexpr size_t kMaxAnswerChars = 1024;
constexpr size_t kMaxAnswerBytes = kMaxAnswerChars + 64;  // the message and a few small fields
constexpr int kExitWaitMs = 2000;                         // a worker told to end (its socket closed) gets this long

// `fd` moved to a number above kRingFd, so the spawn's dup2 onto 3 and 4 always
// makes a new descriptor (one without close-on-exec).
absl::Status MoveAboveWorkerFds(Fd& fd) {
  if (fd.get() > kRingFd) return absl::OkStatus();
  const int moved = ::fcntl(fd.get(), F_DUPFD_CLOEXEC, kRingFd + 1);
  if (moved < 0) return ErrnoStatus(errno, "fcntl(F_DUPFD_CLOEXEC)");
  fd.Reset(moved);
  return absl::OkStatus();
}

absl::Status StatusOf(const proto::FsWorkerAnswer& answer) {
  return absl::Status(static_cast<absl::StatusCode>(answer.code()), answer.message());
}

}  // namespace

// ---- the run's side ----

absl::StatusOr<std::unique_ptr<FsWorker>> FsWorker::Start(const char* subcommand, std::string where,
                                                          const proto::FsWorkerCall& login, size_t ring_bytes,
                                                          int timeout_s) {
  if (ring_bytes == 0 || ring_bytes > kMaxRingBytes) {
    return absl::InvalidArgumentError(absl::StrCat("a worker's ring of ", ring_bytes, " bytes (1 to 64 MiB)"));
  }
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0) {
    return ErrnoStatus(errno, "socketpair for an SMB worker");
  }
  Fd ours(pair[0]), theirs(pair[1]);
  Fd ring_fd(::memfd_create("nasperf-worker-ring", MFD_CLOEXEC));
  if (!ring_fd.valid()) return ErrnoStatus(errno, "memfd_create for an SMB worker's ring");
  if (::ftruncate(ring_fd.get(), static_cast<off_t>(ring_bytes)) != 0) {
    return ErrnoStatus(errno, "ftruncate of an SMB worker's ring");
  }
  void* ring = ::mmap(nullptr, ring_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, ring_fd.get(), 0);
  if (ring == MAP_FAILED) return ErrnoStatus(errno, "mmap of an SMB worker's ring");
  auto unmap = [&] { ::munmap(ring, ring_bytes); };
  for (Fd* fd : {&theirs, &ring_fd}) {
    if (absl::Status moved = MoveAboveWorkerFds(*fd); !moved.ok()) {
      unmap();
      return moved;
    }
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, theirs.get(), kSocketFd);
  posix_spawn_file_actions_adddup2(&actions, ring_fd.get(), kRingFd);
  // This binary by its name, so `ps` shows what the worker is.
  std::string exe(4096, '\0'), command = subcommand;
  const ssize_t n = ::readlink("/proc/self/exe", exe.data(), exe.size() - 1);
  exe = n > 0 ? exe.substr(0, static_cast<size_t>(n)) : "/proc/self/exe";
  char* argv[] = {exe.data(), command.data(), nullptr};
  pid_t pid = 0;
  const int rc = ::posix_spawn(&pid, exe.c_str(), &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    unmap();
    return ErrnoStatus(rc, absl::StrCat("starting a worker (this binary, ", subcommand, ")"));
  }
  std::unique_ptr<FsWorker> worker(
      new FsWorker(std::move(where), pid, std::move(ours), static_cast<uint8_t*>(ring), ring_bytes, timeout_s));
  absl::StatusOr<uint64_t> logged_in = worker->Call(login);
  if (!logged_in.ok()) return logged_in.status();
  return worker;
}

FsWorker::FsWorker(std::string where, pid_t pid, Fd socket, uint8_t* ring, size_t ring_bytes, int timeout_s)
    : where_(std::move(where)),
      pid_(pid),
      socket_(std::move(socket)),
      ring_(ring),
      ring_bytes_(ring_bytes),
      // The worker's own calls give up after timeout_s; a close may wait for several.
      answer_timeout_ms_((std::max(timeout_s, 1) * 3 + 10) * 1000) {}

FsWorker::~FsWorker() {
  socket_.Reset();  // the worker's next read sees the end and it exits
  if (pid_ > 0) {
    std::optional<std::string> how = Reap();
    if (!how.has_value()) {
      ::kill(pid_, SIGKILL);
      while (::waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
      }
    } else if (dead_.ok() && *how != "ended (exit 0)") {
      // After its last call, so no transfer's status can carry it; a sanitizer's report
      // in the worker ends up here too.
      std::fprintf(stderr, "nasperf: the SMB worker for %s %s when told to end\n", where_.c_str(), how->c_str());
    }
  }
  ::munmap(ring_, ring_bytes_);
}

std::optional<std::string> FsWorker::Reap() {
  if (pid_ <= 0) return "ended";
  Fd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, pid_, 0)));
  pollfd p{pidfd.get(), POLLIN, 0};
  if (pidfd.valid()) ::poll(&p, 1, kExitWaitMs);  // its socket closed: it is on its way out
  int wstatus = 0;
  if (::waitpid(pid_, &wstatus, WNOHANG) != pid_) return std::nullopt;
  pid_ = -1;
  if (WIFSIGNALED(wstatus)) return absl::StrCat("was killed (signal ", WTERMSIG(wstatus), ")");
  return absl::StrCat("ended (exit ", WEXITSTATUS(wstatus), ")");
}

absl::Status FsWorker::Dead(absl::string_view why) {
  if (dead_.ok()) {
    dead_ = absl::UnavailableError(absl::StrCat("the SMB worker for ", where_, " ", why));
    if (pid_ > 0) ::kill(pid_, SIGKILL);
  }
  return dead_;
}

absl::Status FsWorker::Send(const proto::FsWorkerCall& call) {
  if (!dead_.ok()) return dead_;
  const std::string bytes = call.SerializeAsString();
  if (bytes.size() > kMaxCallBytes) return absl::InvalidArgumentError("a worker call over 64 KiB");
  ssize_t sent;
  do {
    sent = ::send(socket_.get(), bytes.data(), bytes.size(), MSG_NOSIGNAL);
  } while (sent < 0 && errno == EINTR);
  if (sent != static_cast<ssize_t>(bytes.size())) return Dead(absl::StrCat("took no call: ", std::strerror(errno)));
  return absl::OkStatus();
}

absl::StatusOr<proto::FsWorkerAnswer> FsWorker::Receive() {
  if (!dead_.ok()) return dead_;
  pollfd p{socket_.get(), POLLIN, 0};
  int ready;
  do {
    ready = ::poll(&p, 1, answer_timeout_ms_);
  } while (ready < 0 && errno == EINTR);
  if (ready == 0) return Dead(absl::StrCat("answered nothing in ", answer_timeout_ms_ / 1000, " s (killed)"));
  char buffer[kMaxAnswerBytes];
  ssize_t got;
  do {
    got = ::recv(socket_.get(), buffer, sizeof buffer, MSG_TRUNC);
  } while (got < 0 && errno == EINTR);
  if (got == 0 || (got < 0 && errno == ECONNRESET)) return Dead(Reap().value_or("ended"));
  if (got < 0) return Dead(absl::StrCat("could not be heard: ", std::strerror(errno)));
  proto::FsWorkerAnswer answer;
  if (static_cast<size_t>(got) > sizeof buffer || !answer.ParseFromArray(buffer, static_cast<int>(got)) ||
      !answer.answered() || answer.code() < 0 || answer.code() > static_cast<int>(absl::StatusCode::kUnauthenticated) ||
      answer.message().size() > kMaxAnswerChars) {
    return Dead("sent a garbled answer");
  }
  return answer;
}

absl::StatusOr<uint64_t> FsWorker::Call(const proto::FsWorkerCall& call) {
  if (absl::Status sent = Send(call); !sent.ok()) return sent;
  absl::StatusOr<proto::FsWorkerAnswer> answer = Receive();
  if (!answer.ok()) return answer.status();
  if (answer->code() != 0) return StatusOf(*answer);
  return answer->value();
}

absl::Status FsWorker::AwaitOldestWrite() {
  absl::StatusOr<proto::FsWorkerAnswer> answer = Receive();
  if (!answer.ok()) {
    writes_in_flight_.clear();
    return answer.status();
  }
  writes_in_flight_.pop_front();
  if (answer->code() != 0 && first_write_error_.ok()) first_write_error_ = StatusOf(*answer);
  return absl::OkStatus();
}

absl::Status FsWorker::AwaitWrites() {
  while (!writes_in_flight_.empty()) {
    if (absl::Status s = AwaitOldestWrite(); !s.ok()) return s;
  }
  return std::exchange(first_write_error_, absl::OkStatus());
}

absl::StatusOr<size_t> FsWorker::RingPlaceFor(size_t size) {
  const size_t place = ring_next_ + size <= ring_bytes_ ? ring_next_ : 0;
  auto overlaps = [&] {
    return std::any_of(writes_in_flight_.begin(), writes_in_flight_.end(),
                       [&](const auto& w) { return w.first < place + size && place < w.first + w.second; });
  };
  while (overlaps()) {
    if (absl::Status s = AwaitOldestWrite(); !s.ok()) return s;
  }
  ring_next_ = place + size;
  return place;
}

// The worker's open file, as the run's RemoteFile: writes are pipelined through the
// ring (their answers collected as the ring wraps, at Settle and at Close).
class WorkerFile : public RemoteFile {
 public:
  explicit WorkerFile(FsWorker& w) : w_(w) {}
  ~WorkerFile() override { (void)Close(); }

  absl::Status PWrite(const uint8_t* data, size_t size, uint64_t offset) override {
    if (!w_.first_write_error_.ok()) return std::exchange(w_.first_write_error_, absl::OkStatus());
    while (size > 0) {
      const size_t n = std::min(size, w_.ring_bytes_ / 2);
      absl::StatusOr<size_t> place = w_.RingPlaceFor(n);
      if (!place.ok()) return place.status();
      std::memcpy(w_.ring_ + *place, data, n);
      proto::FsWorkerCall call;
      call.set_op(proto::FsWorkerCall::WRITE);
      call.set_offset(offset);
      call.set_size(n);
      call.set_ring_at(*place);
      if (absl::Status sent = w_.Send(call); !sent.ok()) return sent;
      w_.writes_in_flight_.emplace_back(*place, n);
      data += n;
      size -= n;
      offset += n;
    }
    return absl::OkStatus();
  }

  absl::StatusOr<size_t> PRead(uint8_t* data, size_t size, uint64_t offset) override {
    const size_t n = std::min(size, w_.ring_bytes_);
    proto::FsWorkerCall call;
    call.set_op(proto::FsWorkerCall::READ);
    call.set_offset(offset);
    call.set_size(n);
    absl::StatusOr<uint64_t> got = w_.Call(call);
    if (!got.ok()) return got.status();
    if (*got > n) return w_.Dead("answered a read with more bytes than asked");
    std::memcpy(data, w_.ring_, *got);
    return static_cast<size_t>(*got);
  }

  absl::Status Settle() override {
    if (absl::Status s = w_.AwaitWrites(); !s.ok()) return s;
    proto::FsWorkerCall call;
    call.set_op(proto::FsWorkerCall::SETTLE);
    return w_.Call(call).status();
  }

  absl::Status Sync() override { return absl::UnimplementedError("a worker's file has no flush call"); }

  absl::Status Close() override {
    if (!open_) return absl::OkStatus();
    open_ = false;
    absl::Status status = w_.AwaitWrites();
    proto::FsWorkerCall call;
    call.set_op(proto::FsWorkerCall::CLOSE);
    absl::Status closed = w_.Call(call).status();
    return status.ok() ? closed : status;
  }

 private:
  FsWorker& w_;
  bool open_ = true;
};

absl::StatusOr<std::unique_ptr<RemoteFile>> FsWorker::OpenFile(proto::FsWorkerCall::Op op, const std::string& path) {
  proto::FsWorkerCall call;
  call.set_op(op);
  call.set_path(path);
  if (absl::StatusOr<uint64_t> opened = Call(call); !opened.ok()) return opened.status();
  ring_next_ = 0;
  return std::unique_ptr<RemoteFile>(new WorkerFile(*this));
}

absl::StatusOr<std::unique_ptr<RemoteFile>> FsWorker::Create(const std::string& path) {
  return OpenFile(proto::FsWorkerCall::CREATE, path);
}
absl::StatusOr<std::unique_ptr<RemoteFile>> FsWorker::Open(const std::string& path) {
  return OpenFile(proto::FsWorkerCall::OPEN, path);
}
absl::StatusOr<std::unique_ptr<RemoteFile>> FsWorker::OpenToWrite(const std::string& path) {
  return OpenFile(proto::FsWorkerCall::OPEN_WRITE, path);
}

namespace {

// StripedFs's file: piece k of `chunk` bytes is written through files[k % n].
class StripedFile : public RemoteFile {
 public:
  StripedFile(std::vector<std::unique_ptr<RemoteFile>> files, size_t chunk) : files_(std::move(files)), chunk_(chunk) {}
  absl::Status PWrite(const uint8_t* data, size_t size, uint64_t offset) override {
    while (size > 0) {
      const size_t n = static_cast<size_t>(std::min<uint64_t>(size, chunk_ - offset % chunk_));
      if (absl::Status s = files_[(offset / chunk_) % files_.size()]->PWrite(data, n, offset); !s.ok()) return s;
      data += n;
      size -= n;
      offset += n;
    }
    return absl::OkStatus();
  }
  absl::StatusOr<size_t> PRead(uint8_t* data, size_t size, uint64_t offset) override {
    return files_.front()->PRead(data, size, offset);
  }
  absl::Status Settle() override {
    return Each([](RemoteFile& f) { return f.Settle(); });
  }
  absl::Status Sync() override { return absl::UnimplementedError("a striped file has no flush call"); }
  absl::Status Close() override {
    return Each([](RemoteFile& f) { return f.Close(); });
  }

 private:
  // Every file, even after one failed; the first error.
  absl::Status Each(const std::function<absl::Status(RemoteFile&)>& step) {
    absl::Status first;
    for (auto& file : files_) first.Update(step(*file));
    return first;
  }

  std::vector<std::unique_ptr<RemoteFile>> files_;
  const size_t chunk_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<RemoteFile>> StripedFs::Create(const std::string& path) {
  std::vector<std::unique_ptr<RemoteFile>> files;
  for (FsWorker* worker : workers_) {
    absl::StatusOr<std::unique_ptr<RemoteFile>> file = files.empty() ? worker->Create(path) : worker->OpenToWrite(path);
    if (!file.ok()) {
      if (!files.empty()) {
        for (auto& opened : files) (void)opened->Close();
        (void)workers_.front()->Unlink(path);  // ours: the first worker made it
      }
      return file.status();
    }
    files.push_back(*std::move(file));
  }
  return std::unique_ptr<RemoteFile>(new StripedFile(std::move(files), chunk_));
}

absl::StatusOr<uint64_t> FsWorker::FreeBytes(const std::string& dir) {
  proto::FsWorkerCall call;
  call.set_op(proto::FsWorkerCall::FREE_BYTES);
  call.set_path(dir);
  return Call(call);
}

absl::Status FsWorker::Unlink(const std::string& path) { return PathCall(proto::FsWorkerCall::UNLINK, path); }
absl::Status FsWorker::Mkdir(const std::string& path) { return PathCall(proto::FsWorkerCall::MKDIR, path); }
absl::Status FsWorker::Rmdir(const std::string& path) { return PathCall(proto::FsWorkerCall::RMDIR, path); }

absl::Status FsWorker::PathCall(proto::FsWorkerCall::Op op, const std::string& path) {
  proto::FsWorkerCall call;
  call.set_op(op);
  call.set_path(path);
  return Call(call).status();
}

// ---- the worker's side ----

namespace {

// What the worker holds between calls: its file system, its one open file, the ring.
struct WorkerState {
  std::unique_ptr<RemoteFs> fs;
  std::unique_ptr<RemoteFile> file;
  uint8_t* ring = nullptr;
  size_t ring_bytes = 0;
};

absl::StatusOr<uint64_t> Answer(
    const proto::FsWorkerCall& call, WorkerState& w,
    const std::function<absl::StatusOr<std::unique_ptr<RemoteFs>>(const proto::FsWorkerCall&)>& login) {
  using Call = proto::FsWorkerCall;
  if (call.path().size() > kMaxPathChars) return absl::InvalidArgumentError("a path over 4096 characters");
  if (call.op() == Call::LOGIN) {
    if (w.fs != nullptr) return absl::FailedPreconditionError("logged in already");
    absl::StatusOr<std::unique_ptr<RemoteFs>> fs = login(call);
    if (!fs.ok()) return fs.status();
    w.fs = *std::move(fs);
    return 0;
  }
  if (w.fs == nullptr) return absl::FailedPreconditionError("not logged in");
  const bool in_ring = call.size() > 0 && call.size() <= w.ring_bytes && call.ring_at() <= w.ring_bytes - call.size();
  switch (call.op()) {
    case Call::CREATE:
    case Call::OPEN:
    case Call::OPEN_WRITE: {
      if (w.file != nullptr) return absl::FailedPreconditionError("a file is open already");
      auto file = call.op() == Call::CREATE ? w.fs->Create(call.path())
                  : call.op() == Call::OPEN ? w.fs->Open(call.path())
                                            : w.fs->OpenToWrite(call.path());
      if (!file.ok()) return file.status();
      w.file = *std::move(file);
      return 0;
    }
    case Call::FREE_BYTES:
      return w.fs->FreeBytes(call.path());
    case Call::UNLINK:
    case Call::MKDIR:
    case Call::RMDIR: {
      absl::Status s = call.op() == Call::UNLINK  ? w.fs->Unlink(call.path())
                       : call.op() == Call::MKDIR ? w.fs->Mkdir(call.path())
                                                  : w.fs->Rmdir(call.path());
      if (!s.ok()) return s;
      return 0;
    }
    default:
      break;
  }
  if (w.file == nullptr) return absl::FailedPreconditionError("no file is open");
  switch (call.op()) {
    case Call::WRITE:
      if (!in_ring) return absl::InvalidArgumentError("a write outside the ring");
      if (absl::Status s = w.file->PWrite(w.ring + call.ring_at(), call.size(), call.offset()); !s.ok()) return s;
      return 0;
    case Call::READ: {
      if (!in_ring) return absl::InvalidArgumentError("a read outside the ring");
      absl::StatusOr<size_t> got = w.file->PRead(w.ring + call.ring_at(), call.size(), call.offset());
      if (!got.ok()) return got.status();
      return *got;
    }
    case Call::SETTLE:
      if (absl::Status s = w.file->Settle(); !s.ok()) return s;
      return 0;
    case Call::CLOSE: {
      absl::Status s = w.file->Close();
      w.file.reset();
      if (!s.ok()) return s;
      return 0;
    }
    default:
      return absl::InvalidArgumentError(absl::StrCat("no such call: ", static_cast<int>(call.op())));
  }
}

}  // namespace

int ServeFsWorker(const std::function<absl::StatusOr<std::unique_ptr<RemoteFs>>(const proto::FsWorkerCall&)>& login) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive the run that started it
  struct stat ring_st {};
  if (::fstat(kRingFd, &ring_st) != 0 || ring_st.st_size <= 0 ||
      static_cast<uint64_t>(ring_st.st_size) > kMaxRingBytes) {
    std::fprintf(stderr, "nasperf: a worker needs its ring on fd 4 (a run starts workers itself, never by hand)\n");
    return 2;
  }
  WorkerState w;
  w.ring_bytes = static_cast<size_t>(ring_st.st_size);
  void* ring = ::mmap(nullptr, w.ring_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, kRingFd, 0);
  if (ring == MAP_FAILED) return 2;
  w.ring = static_cast<uint8_t*>(ring);
  std::vector<char> buffer(kMaxCallBytes);
  for (;;) {
    const ssize_t got = ::recv(kSocketFd, buffer.data(), buffer.size(), MSG_TRUNC);
    if (got < 0 && errno == EINTR) continue;
    if (got == 0) return 0;  // the run closed its end: done
    proto::FsWorkerCall call;
    if (got < 0 || static_cast<size_t>(got) > buffer.size() ||
        !call.ParseFromArray(buffer.data(), static_cast<int>(got))) {
      return 1;
    }
    absl::StatusOr<uint64_t> result = Answer(call, w, login);
    proto::FsWorkerAnswer answer;
    answer.set_answered(true);
    if (result.ok()) {
      answer.set_value(*result);
    } else {
      answer.set_code(static_cast<int>(result.status().code()));
      answer.set_message(std::string(result.status().message().substr(0, kMaxAnswerChars)));
    }
    const std::string bytes = answer.SerializeAsString();
    if (::send(kSocketFd, bytes.data(), bytes.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(bytes.size())) return 1;
  }
}

}  // namespace nasperf
