// A file system nasperf reaches by path over the network with no agent there (sftp,
// NFS, SMB), as the few calls a run needs, and what every such run does
// written once over them (RemoteFsRun): the free-space check, the sync fallback, one
// transfer into a new file, cleanup. Threading: a RemoteFs and its files are used by
// one thread at a time (one per stream); RemoteFsRun is shared by the streams (Start
// and Finish on the loop's thread, Write, Done and RecordRow from each stream's).
#ifndef NASPERF_TRANSPORT_REMOTE_FS_H_
#define NASPERF_TRANSPORT_REMOTE_FS_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/policy.h"
#include "datapath/file_set.h"
#include "datapath/payload_source.h"
#include "datapath/push_loop.h"
#include "proto/nasperf.pb.h"
#include "transport/run_options.h"

namespace nasperf {

class RemoteFile {
 public:
  virtual ~RemoteFile() = default;
  // May be pipelined: the failure of an earlier write can surface at a later PWrite,
  // at Sync or at Close.
  virtual absl::Status PWrite(const uint8_t* data, size_t size, uint64_t offset) = 0;
  // Up to `size` bytes at `offset`; 0 at the end of the file.
  virtual absl::StatusOr<size_t> PRead(uint8_t* data, size_t size, uint64_t offset) = 0;
  // Waits for the answers to every write still in flight (pipelined writes): where
  // a --sync none clock stops, before a close that may flush (NFS's COMMIT).
  virtual absl::Status Settle() { return absl::OkStatus(); }
  // Every write so far on the server's disk (fsync); only where RemoteFs::CanSync.
  virtual absl::Status Sync() = 0;
  // Waits for writes in flight and closes; reports the server's close(2), where a
  // late write error (NFS, quota) shows.
  virtual absl::Status Close() = 0;
};

// What is at a path (RemoteFs::Stat).
struct RemoteStat {
  bool is_dir = false;
  bool is_regular = false;
  uint64_t size = 0;
};

class RemoteFs {
 public:
  virtual ~RemoteFs() = default;
  // user@host:port, or what names the server in messages.
  virtual const std::string& Where() const = 0;
  // A new file for writing, never an existing one (O_EXCL): ALREADY_EXISTS when
  // anything, even a dangling symlink, is at `path`.
  virtual absl::StatusOr<std::unique_ptr<RemoteFile>> Create(const std::string& path) = 0;
  // Create for a file that will hold `length` bytes: what a write's transfer calls.
  // Only a protocol that sends the length before the bytes (scp) needs it.
  virtual absl::StatusOr<std::unique_ptr<RemoteFile>> CreateSized(const std::string& path, uint64_t /*length*/) {
    return Create(path);
  }
  virtual absl::StatusOr<std::unique_ptr<RemoteFile>> Open(const std::string& path) = 0;  // for reading
  // An existing file, for writing: another connection's share of a file one stream
  // writes over several (SMB channels). Only where a transport offers channels.
  virtual absl::StatusOr<std::unique_ptr<RemoteFile>> OpenToWrite(const std::string& path) {
    return absl::UnimplementedError(absl::StrCat(Where(), ": no second connection to ", path));
  }
  // What may still be written in `dir` (statvfs: f_bavail * f_frsize); an error
  // (UNIMPLEMENTED: the server cannot say) says why it is unknown.
  virtual absl::StatusOr<uint64_t> FreeBytes(const std::string& dir) = 0;
  // OK when RemoteFile::Sync works here, else why it cannot.
  virtual absl::Status CanSync() = 0;
  virtual absl::Status Unlink(const std::string& path) = 0;
  // A new directory (ALREADY_EXISTS when anything is at `path`), and an empty one
  // removed: a set spread over directories (--files-per-dir), where a transport offers
  // them (TransportCaps::file_set_dirs).
  virtual absl::Status Mkdir(const std::string& path) {
    return absl::UnimplementedError(absl::StrCat(Where(), ": no directories made over this transport (", path, ")"));
  }
  virtual absl::Status Rmdir(const std::string& path) {
    return absl::UnimplementedError(absl::StrCat(Where(), ": no directories removed over this transport (", path, ")"));
  }
  // What is at `path`. An error reads "PATH on WHERE: why": the caller says what
  // PATH was to it ("the directory ", "remote file ").
  virtual absl::StatusOr<RemoteStat> Stat(const std::string& path) {
    return absl::UnimplementedError(absl::StrCat(path, " on ", Where(), ": no way to look"));
  }
};

// `name` in the remote directory `dir`, one slash between.
std::string PathInDir(const std::string& dir, const std::string& name);

// The path toward a server with no agent: the interface the kernel routes through, its
// MTU and link speed (--link-speed wins over what the NIC says), the TCP goodput
// ceiling they imply, and the cells every row over it carries. Set at Start on the
// loop's thread, read-only after.
class RemotePathCells {
 public:
  // `peer`: the rows' peer column (host, or host:port).
  void Resolve(const std::string& host, const std::string& peer, uint32_t link_mbps_flag);
  // "path: PEER via eth0 (addr), MTU 1500, link 1000 Mb/s; no agent there: ..."
  std::string Describe() const;
  void Fill(proto::TransferReport& row) const;  // peer, mtu, link_mbps
  std::optional<double> ceiling_mb_per_s() const { return ceiling_mb_per_s_; }

 private:
  std::string peer_, interface_ = "?", local_address_ = "?";
  std::optional<uint32_t> mtu_, link_mbps_;
  bool link_from_flag_ = false;
  std::optional<double> ceiling_mb_per_s_;
};

// A read's row over a file system with no agent: only this end can be told apart (its
// disk, its CPU), so any other verdict is cleared.
void KeepClientVerdicts(proto::TransferReport& row);

struct RemoteRunPlan {
  SyncPolicy sync_policy;  // asked (--sync); with a file set, none or each file's at its close
  // --files: each transfer writes these files one after another; null: one file.
  std::shared_ptr<const std::vector<uint64_t>> file_sizes;
  uint64_t files_per_dir = 0;  // with file_sizes: a new directory each this many files
  Cleanup cleanup = Cleanup::kEach;
  uint64_t files_at_once = 1;  // most files the run leaves in the directory at once
  // --verify: each file written is read back and its XXH3 compared with what was
  // sent, after the transfer's clock stopped (the read is in no figure).
  bool verify = false;
  int streams = 1;  // transfers per iteration, each a Turn (a read-back waits for every clock)
};

// The plan a run's options ask for: --sync, --cleanup (each by default), --verify, and
// how many files that leaves at once (streams, times the runs when kept).
RemoteRunPlan RemoteRunPlanFor(const RunOptions& options);

// What a write run over a RemoteFs decides once and does per transfer.
class RemoteFsRun {
 public:
  explicit RemoteFsRun(const RemoteRunPlan& plan) : plan_(plan), sync_(plan.sync_policy) {}

  // One stream's transfer of one iteration: every Push makes one, first thing, so each
  // iteration has plan.streams of them. With --verify, a read-back waits until every
  // stream of the iteration has stopped its clock, so it never shares the link with a
  // transfer still timed; a Turn that ends without a transfer counts as stopped.
  class Turn {
   public:
    explicit Turn(RemoteFsRun& run) : run_(run) {}
    ~Turn() { ClockStopped(); }
    Turn(const Turn&) = delete;
    Turn& operator=(const Turn&) = delete;
    void ClockStopped();
    void AwaitEveryClock();
    FileSetTally files;  // a many-files transfer's

   private:
    RemoteFsRun& run_;
    bool stopped_ = false;
    uint64_t round_ = 0;  // the iteration's round when this clock stopped
  };

  // Before a write run. Refuses when `dir` has less room than the files the run
  // leaves there at once (`fs` null: the server offers no way to look); falls back to
  // sync none, with a warning, when `can_sync` says the files cannot be synced, so no
  // row claims a sync that did not happen. Returns the console's words on free space.
  absl::StatusOr<std::string> Start(RemoteFs* fs, const std::string& where, const std::string& dir, uint64_t length,
                                    const absl::Status& can_sync);
  // The policy rows can honestly claim.
  const SyncPolicy& sync() const { return sync_; }

  // One transfer of `length` bytes of `source` into the new file `path` (a many-files
  // plan: into its files, SetFileName(path, i), each created, written, synced as
  // asked and closed in turn, tallied in turn.files; the barrier before the first): created (never
  // overwritten), `before_first_byte` waited (a failure there removes the empty file),
  // pushed, synced as sync() says, closed. Sets r.ack_ns. With plan.verify, then read
  // back (once every `turn` of the iteration stopped its clock): a difference is
  // DATA_LOSS and r.verified says whether the bytes matched.
  absl::Status Write(RemoteFs& fs, const std::string& path, uint64_t length, PayloadSource& source,
                     const PushOptions& push, const std::function<absl::Status()>& before_first_byte, PushResult& r,
                     Turn& turn) const;
  // The row of a transfer that pushed as `r` says and ended with `status`: "ok" only
  // when it did, else "failed" (or "aborted") with the error. Over a network only this
  // end can be told apart (its source and its CPU), so no other verdict is given. With
  // `local_disk` (the directory is on this machine's own file system: no server, no
  // link) the writer's time neither on the CPU nor waiting on its source was spent in
  // the kernel on the disk's behalf (dirty-page throttling, the fsync): that is the
  // disk's wait, and every verdict is given.
  // A many-files transfer's row (`files`: its turn's tally) also has its files,
  // files/s, latency percentiles and metadata share, and on a local disk the metadata
  // verdict when the creates, fsyncs and closes took at least half the timed span.
  void RecordRow(const PushResult& r, const absl::Status& status, std::optional<double> ceiling_mb_per_s,
                 bool local_disk, proto::TransferReport& row, const FileSetTally* files = nullptr) const;
  // The file's fate after a transfer: a failed one that wrote goes (a partial file
  // helps nobody) unless --cleanup never; an ok one goes now (each) or at Finish
  // (end). `fs` null: no way to remove files (logged once at Start by the caller).
  // A many-files transfer's (`files`: its turn's tally): each file of the set it created.
  void Done(RemoteFs* fs, const std::string& path, bool ok, bool wrote, const FileSetTally* files = nullptr);
  // A read's file when none was named (--remote-file): `length` generated bytes written
  // into a new file in `dir` before the run, untimed, after the same free-space check
  // as a write's; removed at Finish unless --cleanup never. Returns its path.
  absl::StatusOr<std::string> LayOutReadFile(RemoteFs& fs, const std::string& dir, const std::string& run_id,
                                             uint64_t length);
  // Files are kept for --cleanup end (or a laid-out read file): Finish has work.
  bool HasKept();
  // After the run: removes the files kept for --cleanup end.
  void Finish(RemoteFs& fs);

 private:
  // `path` ending in '/' is a set's directory, done with after its files.
  void DoneWithFile(RemoteFs* fs, const std::string& path, bool ok, bool wrote);
  void Remove(RemoteFs& fs, const std::string& path) const;
  absl::Status WriteSet(RemoteFs& fs, const std::string& path, PayloadSource& source, const PushOptions& push,
                        const std::function<absl::Status()>& before_first_byte, PushResult& r, Turn& turn) const;
  absl::Status ReadBack(RemoteFs& fs, const std::string& path, uint64_t length, PushResult& r) const;

  const RemoteRunPlan plan_;
  SyncPolicy sync_;
  absl::Mutex mu_;
  std::vector<std::string> kept_ ABSL_GUARDED_BY(mu_);
  absl::Mutex clocks_mu_;
  absl::CondVar clocks_cv_;
  int clocks_stopped_ ABSL_GUARDED_BY(clocks_mu_) = 0;  // in this round
  uint64_t clock_round_ ABSL_GUARDED_BY(clocks_mu_) = 0;
};

}  // namespace nasperf

#endif  // NASPERF_TRANSPORT_REMOTE_FS_H_
