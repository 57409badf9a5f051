// The one loop every transport pushes a transfer's bytes with:
// the next piece from the source (its time counted as source wait), the checksum,
// the transport's write, interval samples, progress, and cancel checked before every
// piece. A transport supplies only how a piece is written (ChunkWriter). Runs on the
// transfer's own thread.
#ifndef NASPERF_DATAPATH_PUSH_LOOP_H_
#define NASPERF_DATAPATH_PUSH_LOOP_H_

#include <atomic>
#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "datapath/payload_source.h"
#include "measure/sampler.h"
#include "measure/verdict.h"
#include "wire/wire.h"

namespace nasperf {

struct PushOptions {
  bool checksum = false;
  double interval_s = 0;
  double ack_timeout_s = 1800;                // a 45 GB flush onto a slow array takes minutes
  std::atomic<uint64_t>* progress = nullptr;  // bytes sent so far, for the console
  uint64_t window_bytes = 0;                  // fixed send buffer; 0 = kernel autotuning
  uint32_t max_segment = 0;                   // MSS cap for a path narrower than the interfaces; 0 = none
  const std::atomic<bool>* cancel = nullptr;  // set: stop before the next piece, status CANCELLED
  // Set: each end's CPU figures as the push saw them (this end's thread and CPU quota;
  // on the agent wire the receiver's, from its trailer), for a caller that judges the
  // row's CPU quota itself (sender/sender.cc). Written on the pushing thread.
  VerdictFigures* cpu_seen = nullptr;
};

struct PushResult {
  absl::Status status;  // OK when the target confirmed the whole transfer
  int64_t start_wall_ns = 0;
  int64_t start_ns = 0;       // before connect
  int64_t first_byte_ns = 0;  // before the first payload byte was handed over
  int64_t last_byte_ns = 0;   // after the last one was
  int64_t ack_ns = 0;         // the target confirmed (trailer, close, fsync)
  uint64_t bytes_sent = 0;
  int64_t source_ns = 0;               // waiting on the source (file reads, generation)
  std::optional<DataTrailer> trailer;  // the agent wire's only
  bool has_checksum = false;
  uint64_t checksum = 0;
  // Whether the far end's copy hashed the same (a transport that read it back).
  std::optional<bool> verified;
  std::optional<uint32_t> mss;  // TCP_MAXSEG after connect (the agent wire)
  bool zero_copy = false;       // the writer moved the file's bytes itself (source_ns is its file reads)
  double cpu_busy_pct = -1;     // the loop's thread on or queued for the CPU, first to last byte (CpuBusy)
  double cpu_quota_pct = -1;    // periods this process's CPU quota throttled it in, the same span (CpuQuotaSpan)
  // Bytes per interval: what the peer acknowledged where the writer can tell (TCP),
  // else what was handed over. With acknowledgements the last bytes are still in
  // flight when the loop ends: FinishedSamples adds them at ack_ns.
  IntervalSampler sampler{0, 0};
  uint64_t sampled_bytes = 0;  // counted in `sampler` so far
};

// The transfer's samples, every byte counted: the ones not yet acknowledged when the
// loop ended are counted as arriving by ack_ns.
std::vector<IntervalSample> FinishedSamples(const PushResult& r);

// How one transport hands a piece of payload to its peer.
class ChunkWriter {
 public:
  virtual ~ChunkWriter() = default;
  // Takes all of [data, data + size): the payload bytes at `offset`.
  virtual absl::Status Write(const uint8_t* data, size_t size, uint64_t offset) = 0;
  // Bytes of this connection the peer has acknowledged so far (TCP_INFO), so samples
  // show what crossed the wire rather than what a socket buffer took; nullopt when
  // the transport cannot tell (SSH).
  virtual std::optional<uint64_t> Acknowledged() const { return std::nullopt; }
  // True when WriteFromFile can move file bytes without a copy through us.
  virtual bool ZeroCopy() const { return false; }
  // Up to `size` bytes of `fd` at `offset` straight to the peer; how many went. Adds
  // the time spent waiting on the file (not on the peer) to *source_ns. UNIMPLEMENTED:
  // this file cannot go this way (the loop copies instead).
  virtual absl::StatusOr<size_t> WriteFromFile(int fd, uint64_t offset, size_t size, int64_t* source_ns) {
    return absl::UnimplementedError("no zero-copy writes");
  }
};

enum class LoopEnd { kDone, kSourceFailed, kWriteFailed, kCancelled };
struct LoopOutcome {
  LoopEnd end = LoopEnd::kDone;
  absl::Status status;  // OK only with kDone
};

// Pushes `length` bytes of `source` through `writer` (zero-copy when the source is a
// file, nothing needs to see the bytes and the writer can). Fills r.first_byte_ns,
// last_byte_ns, bytes_sent, source_ns, cpu_busy_pct, cpu_quota_pct, the sampler and
// the checksum.
LoopOutcome PushLoop(PayloadSource& source, uint64_t length, const PushOptions& options, ChunkWriter& writer,
                     PushResult& r);

}  // namespace nasperf

#endif  // NASPERF_DATAPATH_PUSH_LOOP_H_
