// What a run of the sender loop is given besides its asks (RunOptions): the hooks its
// caller lends it and a lab job's placement. Filled before the run, read-only during it;
// hooks are called on the loop's and streams' threads, and what they reach outlives the run.
#ifndef NASPERF_TRANSPORT_RUN_CONTEXT_H_
#define NASPERF_TRANSPORT_RUN_CONTEXT_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/status.h"
#include "wire/report_sink.h"

namespace nasperf {

class LoopJournal;
struct LoopState;

struct RunContext {
  // The hooks: `nasperf sender` (Ctrl-C, --resume, a collector, a TTY) or a lab agent
  // (its job's cancel, the lab's barrier, the collector) sets them; none is needed.
  const std::atomic<bool>* cancel = nullptr;  // set: stop pushing, rows say "aborted"
  // Called on each stream's thread once its OpenTransfer returned (also when it was
  // refused), before the connect and first byte: the lab's barrier. A non-OK status
  // aborts that stream.
  std::function<absl::Status()> before_first_byte;
  // Called on a stream's thread when the far end accepted its transfer (an agent's
  // transports only), with the id it gave: the loop's journal keeps it.
  std::function<void(int stream, uint64_t transfer_id)> transfer_opened;
  // The loop's journal (sender/loop_journal.h), for --resume; null: none kept.
  LoopJournal* journal = nullptr;
  // --resume: the killed loop, whose run goes on from the copy it was at.
  const LoopState* resumed = nullptr;
  bool progress = false;     // live progress line on the console (a TTY, no --no-progress)
  LiveSink* live = nullptr;  // live updates to a collector (twice a second); may be null

  // The placement of a lab run (lab/agent.h) driven by a controller; the defaults
  // leave a plain `nasperf sender` as it was.
  int iteration_offset = 0;   // added to every iteration number
  int first_stream = 0;       // streams are numbered first_stream..: unique within a lab run
  std::string host_name;      // host column of sender rows; empty = this machine's name
  std::string receiver_name;  // host column of the receiver's rows; empty = as it reports
  // A lab job is one copy of the lab's loop: its live updates say the lab's copy i of N
  // and time left (the controller's estimate after this copy; negative: unknown).
  int lab_copy = 0, lab_copies = 0;  // 0: not a lab's job
  double lab_left_after_s = -1;
};

}  // namespace nasperf

#endif  // NASPERF_TRANSPORT_RUN_CONTEXT_H_
