// A RemoteFs served by a child process of this binary (`nasperf smb-worker`), for a
// client library that is not thread-safe (libsmbclient): parallel streams get one
// process, one connection each. Calls go over a socketpair, bulk bytes through a shared
// memory ring. Threading: an FsWorker and its file are used by one thread at a time.
#ifndef NASPERF_TRANSPORT_FS_WORKER_H_
#define NASPERF_TRANSPORT_FS_WORKER_H_

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/fd.h"
#include "proto/nasperf.pb.h"
#include "transport/remote_fs.h"

namespace nasperf {

class FsWorker : public RemoteFs {
 public:
  // Starts this binary's hidden `subcommand` (its socket on fd 3, its ring on fd 4,
  // where ServeFsWorker finds them) with a ring of `ring_bytes` (at most 64 MiB), hands it `login`
  // and waits for its answer: a login or connection error is this call's. `where`
  // names the server in messages; an answer later than `timeout_s` kills the worker.
  static absl::StatusOr<std::unique_ptr<FsWorker>> Start(const char* subcommand, std::string where,
                                                         const proto::FsWorkerCall& login, size_t ring_bytes,
                                                         int timeout_s);
  // Closes the socket (the worker ends) and reaps it: kills it if it lingers, says on
  // stderr if it ended badly (a crash after its last call fails no transfer).
  ~FsWorker() override;

  // False once the worker ended, was killed or garbled an answer: every call fails.
  bool alive() const { return dead_.ok(); }

  const std::string& Where() const override { return where_; }
  absl::StatusOr<std::unique_ptr<RemoteFile>> Create(const std::string& path) override;
  absl::StatusOr<std::unique_ptr<RemoteFile>> Open(const std::string& path) override;
  absl::StatusOr<std::unique_ptr<RemoteFile>> OpenToWrite(const std::string& path) override;
  absl::StatusOr<uint64_t> FreeBytes(const std::string& dir) override;
  absl::Status CanSync() override { return absl::UnimplementedError("a worker's file system has no flush call"); }
  absl::Status Unlink(const std::string& path) override;
  absl::Status Mkdir(const std::string& path) override;
  absl::Status Rmdir(const std::string& path) override;

 private:
  friend class WorkerFile;
  FsWorker(std::string where, pid_t pid, Fd socket, uint8_t* ring, size_t ring_bytes, int timeout_s);

  absl::Status Send(const proto::FsWorkerCall& call);
  absl::StatusOr<proto::FsWorkerAnswer> Receive();
  // One call and its answer as a status (and the answer's value).
  absl::StatusOr<uint64_t> Call(const proto::FsWorkerCall& call);
  absl::Status PathCall(proto::FsWorkerCall::Op op, const std::string& path);  // a call of one path
  absl::StatusOr<std::unique_ptr<RemoteFile>> OpenFile(proto::FsWorkerCall::Op op, const std::string& path);
  // Pipelined writes: waits for answers until `size` bytes fit in the ring at a free
  // place; returns it.
  absl::StatusOr<size_t> RingPlaceFor(size_t size);
  absl::Status AwaitOldestWrite();
  absl::Status AwaitWrites();
  absl::Status Dead(absl::string_view why);
  // Reaps the worker, told to end or found gone (waits up to 2 s): how it ended, or
  // nullopt if it still runs.
  std::optional<std::string> Reap();

  const std::string where_;
  pid_t pid_;
  Fd socket_;
  uint8_t* const ring_;
  const size_t ring_bytes_;
  const int answer_timeout_ms_;
  size_t ring_next_ = 0;
  std::deque<std::pair<size_t, size_t>> writes_in_flight_;  // ring place, bytes
  absl::Status first_write_error_;
  absl::Status dead_;  // once the worker is gone or garbled, every call says why
};

// One stream's file over several workers (SMB channels): its pieces of `chunk` bytes
// go round-robin to them, each worker's writes pipelined, so as many WRITEs are in
// flight as there are workers (libsmbclient waits for every answer). The first worker
// creates the file, the others open it; reads, space and cleanup go to the first.
// Holds the workers, does not own them.
class StripedFs : public RemoteFs {
 public:
  StripedFs(std::vector<FsWorker*> workers, size_t chunk) : workers_(std::move(workers)), chunk_(chunk) {}
  const std::string& Where() const override { return workers_.front()->Where(); }
  absl::StatusOr<std::unique_ptr<RemoteFile>> Create(const std::string& path) override;
  absl::StatusOr<std::unique_ptr<RemoteFile>> Open(const std::string& path) override {
    return workers_.front()->Open(path);
  }
  absl::StatusOr<uint64_t> FreeBytes(const std::string& dir) override { return workers_.front()->FreeBytes(dir); }
  absl::Status CanSync() override { return workers_.front()->CanSync(); }
  absl::Status Unlink(const std::string& path) override { return workers_.front()->Unlink(path); }
  absl::Status Mkdir(const std::string& path) override { return workers_.front()->Mkdir(path); }
  absl::Status Rmdir(const std::string& path) override { return workers_.front()->Rmdir(path); }

 private:
  const std::vector<FsWorker*> workers_;  // at least one
  const size_t chunk_;
};

// The worker's side, the hidden subcommand's work: answers the calls on fd 3 until the
// socket closes; `login` makes the file system from the LOGIN call. Returns the exit code.
int ServeFsWorker(const std::function<absl::StatusOr<std::unique_ptr<RemoteFs>>(const proto::FsWorkerCall&)>& login);

}  // namespace nasperf

#endif  // NASPERF_TRANSPORT_FS_WORKER_H_
