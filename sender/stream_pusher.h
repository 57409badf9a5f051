// The sender's data path for the native transport (DESIGN.md section 3): connect to
// the receiver's data port, write the header, push the payload from a source
// (generated, or a file - zero-copy with sendfile when nothing needs to see the
// bytes), half-close, and wait for the receiver's trailer. Times each step on the
// monotonic clock. One call per transfer; runs on the caller's thread.
#ifndef NASPERF_SENDER_STREAM_PUSHER_H_
#define NASPERF_SENDER_STREAM_PUSHER_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/fd.h"
#include "common/payload.h"
#include "common/sampler.h"
#include "common/wire.h"

namespace nasperf {

// The bytes of one transfer. Chunk() hands out consecutive pieces; the pointer is
// valid until the next call.
class PayloadSource {
 public:
  virtual ~PayloadSource() = default;
  virtual absl::StatusOr<const uint8_t*> Chunk(uint64_t offset, size_t size) = 0;
  // A file descriptor sendfile() can read from at the same offsets, or -1.
  virtual int sendfile_fd() const { return -1; }
};

std::unique_ptr<PayloadSource> GeneratedSource(Pattern pattern, uint64_t seed);
// Opens the file for one transfer (its own descriptor: streams run in parallel).
absl::StatusOr<std::unique_ptr<PayloadSource>> FileSource(const std::string& path);

struct PushTarget {
  HostPort data;                 // the receiver's data port
  uint64_t transfer_id = 0;
  Ticket ticket{};
  uint64_t length = 0;
};

struct PushOptions {
  bool checksum = false;
  double interval_s = 0;
  double ack_timeout_s = 1800;   // a 45 GB flush onto a slow array takes minutes
  std::atomic<uint64_t>* progress = nullptr;  // bytes sent so far, for the console
  uint64_t window_bytes = 0;     // fixed send buffer; 0 = kernel autotuning
  uint32_t max_segment = 0;      // MSS cap for a path narrower than the interfaces; 0 = none
  const std::atomic<bool>* cancel = nullptr;  // set: close the connection, status CANCELLED
};

struct PushResult {
  absl::Status status;           // OK when a trailer arrived, whatever it says
  int64_t start_wall_ns = 0;
  int64_t start_ns = 0;          // before connect
  int64_t first_byte_ns = 0;     // before the first payload byte was handed to the kernel
  int64_t last_byte_ns = 0;      // after the last one was
  int64_t ack_ns = 0;            // the trailer arrived
  uint64_t bytes_sent = 0;
  int64_t source_ns = 0;         // waiting on the source (file reads, generation)
  std::optional<DataTrailer> trailer;
  bool has_checksum = false;
  uint64_t checksum = 0;
  std::optional<uint32_t> mss;   // TCP_MAXSEG after connect
  std::vector<IntervalSample> samples;
};

PushResult PushNative(const PushTarget& target, PayloadSource& source, const PushOptions& options);

}  // namespace nasperf

#endif  // NASPERF_SENDER_STREAM_PUSHER_H_
