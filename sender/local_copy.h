// The client's end of a read (`--direction read`), the same for every transport:
// where the arriving bytes land (a directory given by --local-target, or nothing),
// the row cells that follow from it, and what happens to each copy afterwards
// (--cleanup: removed after each transfer by default, kept to the end of the run,
// or kept), and whether the local disk has room for what the far end announced
// (a file is never started that could not fit). Thread-safe: streams create and
// settle their copies at once.
#ifndef NASPERF_SENDER_LOCAL_COPY_H_
#define NASPERF_SENDER_LOCAL_COPY_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "common/policy.h"
#include "datapath/target.h"
#include "datapath/write_pipeline.h"
#include "proto/nasperf.pb.h"

namespace nasperf {

class LocalCopy {
 public:
  // `directory` empty: the bytes are dropped (discard). A directory must take `mode`.
  static absl::StatusOr<std::unique_ptr<LocalCopy>> Open(const std::string& directory, WriteMode mode, SyncPolicy sync,
                                                         Cleanup cleanup);

  bool discard() const { return target_->discard(); }
  const std::string& path() const { return target_->path(); }
  // The write_mode and sync_policy cells of a read's client row.
  void FillRow(proto::TransferReport& row) const;
  // What the pipeline must know of the local side: periodic syncs.
  uint64_t sync_every() const { return sync_.kind == SyncPolicy::kEvery ? sync_.every_bytes : 0; }

  // Before the first transfer: room on the local target for the copies of a whole
  // run of `length`-byte transfers (the length the far end announced), `streams` at
  // once, and all `transfers` per stream when --cleanup keeps them. One line naming
  // --local-target and the figures otherwise; always OK when discarding.
  absl::Status CheckRoomForRun(uint64_t length, int streams, int transfers) const;
  // A file for one transfer of `length` bytes (its name in *name), or a null writer
  // when discarding. Refused without creating anything when the local target has no
  // room for `length` beside the copies being written; the room is held until Settle.
  absl::StatusOr<std::unique_ptr<BlockWriter>> Create(const std::string& file_name, uint64_t length, std::string* name);
  // After the transfer: a failed copy always goes; a good one per --cleanup.
  void Settle(const std::string& name, bool ok);
  // The end of the run: the copies kept for --cleanup end go.
  void Finish();

 private:
  LocalCopy(std::unique_ptr<Target> target, WriteMode mode, SyncPolicy sync, Cleanup cleanup)
      : target_(std::move(target)), mode_(mode), sync_(sync), cleanup_(cleanup) {}

  const std::unique_ptr<Target> target_;
  const WriteMode mode_;
  const SyncPolicy sync_;
  const Cleanup cleanup_;
  absl::Mutex mu_;
  std::vector<std::string> kept_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, uint64_t> writing_ ABSL_GUARDED_BY(mu_);  // copy -> bytes held
  uint64_t held_ ABSL_GUARDED_BY(mu_) = 0;                                   // their sum
};

}  // namespace nasperf

#endif  // NASPERF_SENDER_LOCAL_COPY_H_
