// A share transport: the one Transport over a file system nasperf reaches by path
// with no agent there (NFS, SMB, SSH's scp and sftp), written once over a ShareDriver
// that keeps only what differs per protocol: how a stream connects, how a read's
// requests go out, the protocol's cells and console words. The shell owns the rest:
// each stream's session (a new one when it is no longer usable), Start's checks and
// lines, the push with the lab's barrier, the pull, the cleanup at Finish.
// Threading: Transport's contract. A driver's Connect may run on several streams'
// threads at once; a ShareSession and its reader are used by one thread at a time.
#ifndef NASPERF_TRANSPORT_SHARE_H_
#define NASPERF_TRANSPORT_SHARE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/log.h"
#include "common/policy.h"
#include "datapath/push_loop.h"
#include "datapath/write_pipeline.h"
#include "measure/devices.h"
#include "proto/nasperf.pb.h"
#include "transport/remote_fs.h"
#include "transport/run_context.h"
#include "transport/run_options.h"
#include "transport/transport.h"

namespace nasperf {

// A lab's barrier for one stream's write (RunContext::before_first_byte): waited once,
// just before the first byte (the connection and the new file are ready, so the
// streams of all hosts start together), or after the push for a stream that failed
// before it (no connection, a file it could not create), so every stream counts in and
// none waits out the barrier's timeout. The clock restarts on release: the wait is not
// the transfer's.
class StreamBarrier {
 public:
  StreamBarrier(const std::function<absl::Status()>& wait, PushResult& r) : wait_(wait), r_(r) {}
  absl::Status Wait();

 private:
  const std::function<absl::Status()>& wait_;
  PushResult& r_;
  bool waited_ = false;
};

// A read's requests over one session, as the write pipeline's source.
class ShareReader : public ByteSource {
 public:
  // When the first request went out: a read's clock starts there, as a write's starts
  // at its first byte (the first answer is a whole request late). 0: the reader does
  // not say (sftp's), and the clock starts at the first byte that came back.
  virtual int64_t first_request_ns() const = 0;
  // After the pipeline, whether it read to the end or stopped early: lets the file
  // go. Answers still owed leave the session unusable (ShareSession::usable).
  virtual void Close() = 0;
  // After Close: the read row's cells only this reader knows (a mounted path's: the
  // client's page cache before the read, cache and cache_resident_pct, or a note on why
  // it is unknown).
  virtual void FillReadRow(proto::TransferReport& /*row*/) const {}
};

// One stream's connection to the share.
class ShareSession {
 public:
  virtual ~ShareSession() = default;
  // Transfers go through it.
  virtual RemoteFs& fs() = 0;
  // Start's checks, a read's laid-out file, Finish's cleanup, and the file of a
  // transfer after fs()'s connection stopped being usable (SMB: the run's own
  // connection, which outlives a dead channel). Null: no way to look or remove (scp
  // with no SFTP beside it): free space unknown, the directory unchecked, no cleanup.
  virtual RemoteFs* housekeeping() { return &fs(); }
  // Where a transfer's file is removed after it (null: nowhere): fs(), or housekeeping()
  // once fs()'s connection is no longer usable.
  virtual RemoteFs* AfterTransfer() { return usable() ? &fs() : housekeeping(); }
  // The directory --to named, as fs() takes paths.
  virtual const std::string& dir() const = 0;
  // False once the connection is lost or owes answers: the stream's next transfer
  // gets a new session.
  virtual bool usable() const = 0;
  // A read of the first `length` bytes of `path`.
  virtual absl::StatusOr<std::unique_ptr<ShareReader>> OpenReader(const std::string& path, uint64_t length) = 0;
  // Asked once per transfer, before it: a note for the row when this transfer pays a
  // cost later ones on the session do not (SSH's start-up), else null.
  virtual const char* StartupNote() { return nullptr; }
};

// The rows' peer column: `host`, or host:port when a port was named.
std::string PeerCell(const std::string& host, uint16_t port);

// What differs per protocol. The shell calls it after the constructor's RunOptions
// are set; its const calls come from any thread.
class ShareDriver {
 public:
  virtual ~ShareDriver() = default;
  // A new session for `stream`. Start's and Finish's is the run's first stream's;
  // `say` is given for Start's alone (the console hears of a host key recorded).
  virtual absl::StatusOr<std::unique_ptr<ShareSession>> Connect(int stream, const ConsoleLine* say) = 0;
  // True: Start connects every stream, so a stream that cannot connect fails the run
  // before its first row (SMB's worker processes).
  virtual bool ConnectsEveryStreamAtStart() const { return false; }
  // The protocol's word in the console ("nfs"), the host the path's interface is
  // found toward and its port (0: none named), asked after Start's Connect. The rows'
  // peer column is host, or host:port (PeerCell).
  virtual const char* name() const = 0;
  virtual std::string host() const = 0;
  virtual uint16_t port() const { return 0; }
  // The rows' peer column: PeerCell(host(), port()) unless the driver says better (a
  // mount's source, or "local" for a file system with no server).
  virtual std::string peer() const { return PeerCell(host(), port()); }
  // The requests a stream's read keeps in flight (the read line says more than one).
  virtual int reads_in_flight() const { return 1; }
  // After Start's checks, over Start's session: the share_protocol cell, and the
  // console's line on the share (`free_text`: the free space, or "a read"; `sync`:
  // the policy the rows claim).
  virtual std::string ProtocolCell(ShareSession& session) const = 0;
  virtual std::string StartLine(ShareSession& session, const std::string& free_text, const SyncPolicy& sync) const = 0;
  // A write's row cells of this protocol alone (NFS: write_mode), once the shell
  // recorded the transfer (status, figures, notes): a driver may add a note on them.
  virtual void FillPushRow(proto::TransferReport& /*row*/) const {}
  // Non-null when the directory is on this machine's own file system (no server, no
  // link): the block devices under it. Each write then watches them (the rows' device
  // columns) and is judged whole, its waits in the kernel the disk's (RecordRow).
  virtual const std::vector<BlockDevice>* LocalDevices() const { return nullptr; }
};

// A driver whose sessions are all `Session`s (its ConnectSession's): the calls that
// take Start's session get it as that type. The shell hands a driver only sessions
// its Connect made, so the one downcast, here, always holds.
template <class Session>
class ShareDriverOf : public ShareDriver {
 public:
  virtual absl::StatusOr<std::unique_ptr<Session>> ConnectSession(int stream, const ConsoleLine* say) = 0;
  virtual std::string ProtocolCellOf(Session& session) const = 0;
  virtual std::string StartLineOf(Session& session, const std::string& free_text, const SyncPolicy& sync) const = 0;

  absl::StatusOr<std::unique_ptr<ShareSession>> Connect(int stream, const ConsoleLine* say) final {
    absl::StatusOr<std::unique_ptr<Session>> s = ConnectSession(stream, say);
    if (!s.ok()) return s.status();
    return std::unique_ptr<ShareSession>(*std::move(s));
  }
  std::string ProtocolCell(ShareSession& session) const final { return ProtocolCellOf(static_cast<Session&>(session)); }
  std::string StartLine(ShareSession& session, const std::string& free_text, const SyncPolicy& sync) const final {
    return StartLineOf(static_cast<Session&>(session), free_text, sync);
  }
};

// The transport; `options` and `context` must outlive it (the barrier is read per transfer).
std::unique_ptr<Transport> NewShareTransport(std::unique_ptr<ShareDriver> driver, const RunOptions& options,
                                             const RunContext& context);

}  // namespace nasperf

#endif  // NASPERF_TRANSPORT_SHARE_H_
