// The loop's journal (`sender --resume DIR`, docs/DESIGN.md §4, resumed loops): DIR/resume
// says which run the loop is, the copy it was at and the transfers that copy opened, so
// a loop killed mid-copy can go on in the same run from that copy, with the killed
// copy's rows recorded once as aborted. A copy's rows are written to DIR/resume.rows
// and the journal marked durably BEFORE any reaches the sink, so a loop killed while
// storing them stores the same rows again (the sink keeps each once) and never runs
// the copy again. Rewritten whole (temporary file and rename) at each copy, each
// opened transfer and each copy's rows; removed when the loop ends. Thread-safe: the
// streams note their transfers from their own threads.
#ifndef NASPERF_SENDER_LOOP_JOURNAL_H_
#define NASPERF_SENDER_LOOP_JOURNAL_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "proto/nasperf.pb.h"

namespace nasperf {

// What a journal holds; also what --resume checks the new flags against.
struct LoopState {
  std::string run_id, label;
  int runs = 0, warmup = 0, streams = 0;
  uint64_t size = 0;
  int copy = 0;                       // the copy in flight, 0-based, warm-ups first
  bool recorded = false;              // its rows are already stored (an interrupted loop's last copy)
  std::map<int, uint64_t> transfers;  // stream -> the transfer it opened
  // The copy's rows were taken (DIR/resume.rows, read into `rows`) before any was
  // stored: store them (again) and go on at copy `next` (runs + warmup: the loop is over).
  bool rows_taken = false;
  int next = 0;
  std::vector<proto::TransferReport> rows;
};

inline constexpr char kJournalName[] = "resume";
inline constexpr char kJournalRowsName[] = "resume.rows";

// Reads DIR/resume, every line checked (at most 64 KiB, 1024 streams, a run id as
// CheckRunId takes it), and with rows=1 its rows file (at most 64 MiB, each row of
// the journal's run and copy); a missing file is NOT_FOUND with a hint.
absl::StatusOr<LoopState> ReadLoopJournal(const std::string& dir);

class LoopJournal {
 public:
  LoopJournal(std::string dir, LoopState state) : dir_(std::move(dir)), state_(std::move(state)) {}
  // A copy begins: nothing opened yet.
  absl::Status BeginCopy(int copy);
  absl::Status Opened(int stream, uint64_t transfer_id);
  // The copy's rows are about to go to the sink: they and the copy to go on at are
  // made durable first. REQUIRES: nothing of them submitted yet.
  absl::Status RowsTaken(const std::vector<const proto::TransferReport*>& rows, int next);
  // The copy's rows are stored (an interrupted loop stops after it).
  absl::Status Recorded();
  // The loop ran to its end: nothing to resume.
  absl::Status Remove();

 private:
  absl::Status WriteLocked(bool durable) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  const std::string dir_;
  absl::Mutex mu_;
  LoopState state_ ABSL_GUARDED_BY(mu_);
};

}  // namespace nasperf

#endif  // NASPERF_SENDER_LOOP_JOURNAL_H_
