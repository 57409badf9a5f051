// The receiver's write pipeline (docs/DESIGN.md §6, measurement semantics): a network reader fills
// buffers from the data socket into a bounded queue and a disk writer empties it into
// the target, so both run at once and each side's waiting is measured: the writer
// idle on an empty queue is time the network could not feed the disk (net wait); the
// reader blocked on a full queue is time the disk could not keep up (disk wait).
// RunPipeline runs on the caller's thread plus one writer thread it owns. When no
// byte needs to be seen (no checksum) and both ends allow it, it splices instead:
// socket → pipe → file on the caller's thread alone, with no copy through user space.
#ifndef NASPERF_DATAPATH_WRITE_PIPELINE_H_
#define NASPERF_DATAPATH_WRITE_PIPELINE_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/clock.h"
#include "measure/sampler.h"

namespace nasperf {

// Where payload bytes come from (the data socket). Read returns 0 only at EOF.
class ByteSource {
 public:
  virtual ~ByteSource() = default;
  virtual absl::StatusOr<size_t> Read(uint8_t* data, size_t size) = 0;
  // A descriptor splice() can take the same bytes from (a socket), or -1.
  virtual int SpliceFd() const { return -1; }
  // Bytes that have arrived and wait to be read (a socket's receive queue), or
  // nullopt when unknown: the samples count them as arrived.
  virtual std::optional<uint64_t> Queued() const { return std::nullopt; }
};

// Where payload bytes go (a file in the target). Blocks handed to Write are
// aligned to kPipelineAlignment and, except the last one, a multiple of it long.
class BlockWriter {
 public:
  virtual ~BlockWriter() = default;
  virtual absl::Status Write(const uint8_t* data, size_t size, bool last) = 0;
  // A periodic sync for --sync every=SIZE.
  virtual absl::Status SyncData() = 0;
  // The final step before the ack: fdatasync per policy, then close.
  virtual absl::Status Finish() = 0;
  // True when WriteFromPipe works: buffered writes, where the kernel may copy from
  // the socket's pages into the page cache without the bytes passing through us.
  virtual bool TakesPipe() const { return false; }
  // Moves exactly `size` bytes that wait in the pipe into the file.
  virtual absl::Status WriteFromPipe(int pipe_fd, size_t size) {
    return absl::UnimplementedError("this writer takes no pipe");
  }
};

inline constexpr size_t kPipelineAlignment = 4096;

struct PipelineOptions {
  size_t buffer_size = 1 << 20;  // multiple of kPipelineAlignment
  int buffer_count = 8;
  uint64_t sync_every = 0;  // bytes between SyncData calls; 0 = never
  bool checksum = false;
  double interval_s = 0;
  const std::atomic<bool>* cancel = nullptr;  // set by shutdown (or Ctrl-C on a reading client); checked between blocks
  // Every timestamp of the run comes from here. Tests put a clock they advance
  // themselves so the wait accounting is exact, not subject to scheduling.
  int64_t (*clock)() = &MonoNanos;
};

enum class PipelineEnd { kOk, kFailed, kAborted };

struct PipelineResult {
  PipelineEnd end = PipelineEnd::kOk;
  absl::Status status;  // why it did not end kOk
  int error_code = 0;   // errno behind status, 0 when none
  uint64_t bytes_received = 0;
  uint64_t bytes_written = 0;
  int64_t first_byte_ns = 0;  // monotonic; 0 when no byte arrived
  int64_t last_byte_ns = 0;
  int64_t written_ns = 0;  // last Write returned
  int64_t durable_ns = 0;  // Finish returned
  int64_t write_ns = 0;    // inside Write and SyncData
  int64_t sync_ns = 0;     // inside Finish
  int64_t net_wait_ns = 0;
  int64_t disk_wait_ns = 0;
  bool has_checksum = false;
  uint64_t checksum = 0;
  std::vector<IntervalSample> samples;
  CpuTime cpu;           // the reading and the writing thread, from start to end
  bool spliced = false;  // moved by splice, not copied through our buffers
  // The busier thread's CPU demand (CpuBusy) while bytes streamed: the reader to the
  // last byte, the writer to the last write (the final sync waits on the disk, and
  // counts as disk wait). -1 unknown, or the run ended early.
  double cpu_busy_pct = -1;
  // Of the CPU-quota periods this process's cgroup ran in during the run, the share
  // the quota throttled it in (CpuQuotaSpan, read at the start and the end); -1 unknown.
  double cpu_quota_pct = -1;
};

// Moves exactly `length` bytes from source to writer. writer == nullptr is the
// discard target: the bytes are read and dropped on the caller's thread (spliced
// into /dev/null when nothing needs to see them).
PipelineResult RunPipeline(ByteSource& source, BlockWriter* writer, uint64_t length, const PipelineOptions& options);

}  // namespace nasperf

#endif  // NASPERF_DATAPATH_WRITE_PIPELINE_H_
