// How a transfer's bytes reach the target: the native agent protocol (docs/DESIGN.md §3,
// protocols) or SSH (scp, sftp: no agent on the NAS). The sender loop owns one
// Transport per run and does everything else (rows, console, pauses, summary).
// Threading: Start() and Finish() on the loop's thread; Push() or Pull() from one
// thread per stream at once, never two calls for the same stream index at the same
// time.
#ifndef NASPERF_TRANSPORT_TRANSPORT_H_
#define NASPERF_TRANSPORT_TRANSPORT_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "common/log.h"
#include "datapath/payload_source.h"
#include "datapath/push_loop.h"
#include "datapath/write_pipeline.h"
#include "proto/nasperf.pb.h"

namespace nasperf {

struct TransferSlot {
  std::string run_id;
  int iteration = 0;
  bool warmup = false;
  int stream = 0;
  uint64_t length = 0;
};

struct TransferResult {
  proto::TransferReport sender;
  std::optional<proto::TransferReport> receiver;  // only an agent can write this row
  bool stop_loop = false;                         // a refusal that every later transfer would meet too
  // The transfer also paid a one-off start-up cost of the transport's session (the
  // first over a new SSH session): its rate is not the loop's steady rate.
  bool startup = false;
};

class Transport {
 public:
  virtual ~Transport() = default;
  // Reaches the target and checks it before the loop; says what it found. An error
  // here ends the run before any row is written.
  virtual absl::Status Start(const std::string& run_id, uint64_t length, const ConsoleLine& say) = 0;
  // One transfer. result.sender arrives with the cells every transport shares (run,
  // label, iteration, stream, role, host, transport, warmup, sync policy, status
  // "failed"); Push fills the rest and sets "ok" only when the data arrived whole.
  virtual void Push(const TransferSlot& slot, PayloadSource& source, const PushOptions& push,
                    TransferResult& result) = 0;
  // One read (`--direction read`): the far end streams the transfer's bytes into
  // `into` (null: dropped) through a write pipeline with `pipeline`'s options;
  // result.sender arrives as for Push, with the local copy's cells set. The client's
  // end (the local copy, its cleanup, comparing checksums) is the loop's.
  virtual void Pull(const TransferSlot& slot, BlockWriter* into, const PipelineOptions& pipeline,
                    TransferResult& result) = 0;
  // --resume: the far end's row of a transfer a killed loop had opened (the id it gave);
  // nullopt when this transport's far end keeps none.
  virtual std::optional<proto::TransferReport> RowOfInterrupted(const TransferSlot& /*slot*/, uint64_t /*id*/) {
    return std::nullopt;
  }
  // After the loop: end-of-run cleanup. Problems are logged as warnings.
  virtual void Finish(const std::string& run_id) = 0;
  // After Start: the bytes each transfer moves; `asked` unless the target decides
  // (a read of an existing file on the NAS).
  virtual uint64_t Length(uint64_t asked) const { return asked; }
  // After Start: the most MB/s the path can carry (TCP over the link at its MTU), when
  // the link speed is known.
  virtual std::optional<double> CeilingMBps() const { return std::nullopt; }
};

}  // namespace nasperf

#endif  // NASPERF_TRANSPORT_TRANSPORT_H_
