// The receiver's book of transfers: plans made by OpenTransfer waiting for their data
// connection (one-time ticket, expiry, reserved bytes for the free-space guard),
// transfers in flight, and the finished reports senders fetch. Thread-safe.
#ifndef NASPERF_RECEIVER_TRANSFER_TABLE_H_
#define NASPERF_RECEIVER_TRANSFER_TABLE_H_

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/policy.h"
#include "datapath/target.h"
#include "proto/nasperf.pb.h"
#include "wire/wire.h"

namespace nasperf {

struct TransferPlan {
  uint64_t id = 0;
  Ticket ticket{};
  proto::OpenTransferRequest request;
  WriteMode mode = WriteMode::kBuffered;
  SyncPolicy sync;
  Cleanup cleanup = Cleanup::kEach;
  int64_t expires_ns = 0;  // monotonic
  Direction direction = Direction::kWrite;
  ReadMode read_mode = ReadMode::kBuffered;  // reads: how the file is read (checked in PlanRead)
  uint64_t reserve_bytes = 0;                // held against the free-space guard: a write's size, 0 for a read
  // A write of many files (request.file_count): their sizes, summing to request.size;
  // or, with file_sizes_follow (--tree), none yet: the data connection brings them.
  std::shared_ptr<const std::vector<uint64_t>> file_sizes;
  bool file_sizes_follow = false;
};

class TransferTable {
 public:
  TransferTable(absl::Duration ticket_ttl, int max_active, size_t reports_kept = 4096);

  // Gives the plan an id and a fresh ticket and reserves its size. Refuses when
  // max_active transfers are already planned, running or laying out a read file.
  absl::StatusOr<TransferPlan> Add(TransferPlan plan);
  // A read file PrepareRead is about to lay out: it counts as an open transfer and
  // holds `bytes` against the free-space guard until EndLayOut(id), refused as Add.
  absl::StatusOr<uint64_t> BeginLayOut(uint64_t bytes);
  void EndLayOut(uint64_t id);
  // The one use of a ticket. Refuses unknown, used or expired tickets, and a header
  // whose transfer id or length does not match the plan.
  absl::StatusOr<TransferPlan> Claim(const DataHeader& header);
  // Stores the finished report and releases the reservation.
  void Complete(uint64_t id, proto::TransferReport report);
  // Waits up to `wait` for the transfer to finish. NOT_FOUND for an unknown id.
  absl::StatusOr<proto::TransferReport> Fetch(uint64_t id, absl::Duration wait);

  uint64_t reserved_bytes();
  void KeepUntilRunEnds(const std::string& run_id, const std::string& file_name);
  // The files this receiver laid out for reads (PrepareRead) and has not removed: the
  // only ones it serves to a token holder without --serve-existing-files.
  void NoteLaidOut(const std::string& file_name);
  bool WasLaidOut(const std::string& file_name);
  std::vector<std::string> TakeRunFiles(const std::string& run_id);
  // For the receiver's stop: every file still kept for a run's end, and every read
  // file it laid out, also those a peer asked to keep (cleanup=never): none of them
  // outlives the receiver. Each name once.
  std::vector<std::string> TakeAllRunFiles();

 private:
  void DropExpiredLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // --max-transfers: planned, running and laying out together.
  absl::Status CheckRoomForOneMoreLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const absl::Duration ticket_ttl_;
  const int max_active_;
  const size_t reports_kept_;
  absl::Mutex mu_;
  uint64_t next_id_ ABSL_GUARDED_BY(mu_) = 1;
  absl::flat_hash_map<std::string, TransferPlan> pending_ ABSL_GUARDED_BY(mu_);  // by ticket
  absl::flat_hash_set<std::string> used_tickets_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<uint64_t, uint64_t> running_ ABSL_GUARDED_BY(mu_);     // id -> bytes
  absl::flat_hash_map<uint64_t, uint64_t> laying_out_ ABSL_GUARDED_BY(mu_);  // id -> bytes
  absl::flat_hash_map<uint64_t, proto::TransferReport> reports_ ABSL_GUARDED_BY(mu_);
  std::deque<uint64_t> report_order_ ABSL_GUARDED_BY(mu_);
  uint64_t reserved_ ABSL_GUARDED_BY(mu_) = 0;
  absl::flat_hash_map<std::string, std::vector<std::string>> run_files_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_set<std::string> laid_out_ ABSL_GUARDED_BY(mu_);
};

}  // namespace nasperf

#endif  // NASPERF_RECEIVER_TRANSFER_TABLE_H_
