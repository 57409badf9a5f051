// The data-port codec (docs/DESIGN.md §3.1, data port): the fixed header a sender writes before
// the payload, the footer it may write after it (its own waits, when the receiver
// asked for it at OpenTransfer), and the fixed trailer the receiver answers with.
// Both are little-endian, fixed-size and self-checking (XXH32 over the other bytes),
// so a receiver can refuse garbage before it touches the disk. Pure functions.
#ifndef NASPERF_WIRE_WIRE_H_
#define NASPERF_WIRE_WIRE_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"

namespace nasperf {

inline constexpr size_t kHeaderSize = 64;
inline constexpr size_t kTrailerSize = 96;
inline constexpr size_t kFooterSize = 40;
inline constexpr uint16_t kWireVersion =
    4;  // 2: each end's CPU demand; 3: and its CPU quota's throttling; 4: file sets
inline constexpr size_t kTicketSize = 16;

using Ticket = std::array<uint8_t, kTicketSize>;

struct DataHeader {
  uint64_t transfer_id = 0;
  Ticket ticket{};
  uint64_t payload_length = 0;
};

enum class TrailerStatus : uint8_t { kOk = 0, kFailed = 1, kAborted = 2 };

struct DataTrailer {
  TrailerStatus status = TrailerStatus::kOk;
  int32_t error_code = 0;  // errno on the receiver, 0 when none
  uint64_t bytes_written = 0;
  bool has_checksum = false;
  uint64_t checksum = 0;  // XXH3-64 of the payload as received
  // Receiver timings in nanoseconds (docs/DESIGN.md §6, measurement semantics).
  uint64_t receive_ns = 0;    // first byte received -> last byte received
  uint64_t write_ns = 0;      // inside write calls
  uint64_t sync_ns = 0;       // final fdatasync / close
  uint64_t durable_ns = 0;    // first byte -> sync done
  uint64_t net_wait_ns = 0;   // disk writer idle: buffer empty
  uint64_t disk_wait_ns = 0;  // network reader blocked: buffer full
  double cpu_busy_pct = -1;   // its busiest data thread on or queued for the CPU; -1 unknown
  double cpu_quota_pct = -1;  // periods its cgroup's CPU quota throttled it in (%); -1 unknown
};

std::array<uint8_t, kHeaderSize> EncodeHeader(const DataHeader& header);
// Refuses: wrong size, bad magic, other version, non-zero reserved bytes, a check
// mismatch, a zero transfer id or payload length. The message says which.
absl::StatusOr<DataHeader> DecodeHeader(const uint8_t* data, size_t size);

// What the sender saw of its own side, so the receiver's verdict can name a slow
// source instead of the network (the receiver alone sees only bytes arriving late).
struct DataFooter {
  uint64_t source_wait_ns = 0;  // waiting on its source (file reads, generation)
  uint64_t send_ns = 0;         // first payload byte -> last one handed to the socket
  double cpu_busy_pct = -1;     // its sending thread on or queued for the CPU; -1 unknown
  double cpu_quota_pct = -1;    // periods its cgroup's CPU quota throttled it in (%); -1 unknown
};

std::array<uint8_t, kFooterSize> EncodeFooter(const DataFooter& footer);
// Refuses what DecodeHeader refuses, a source wait longer than the send and a CPU
// or quota share over 100 %.
absl::StatusOr<DataFooter> DecodeFooter(const uint8_t* data, size_t size);

// --tree: a set whose open request's file size is kTreeFileSize (common/file_set.h) has
// its sizes right after the header, a little-endian u64 each. Only a receiver that took
// that request reads them, so the header and the version are a plain set's.
inline constexpr size_t kFileSizeBytes = 8;
std::vector<uint8_t> EncodeFileSizes(const std::vector<uint64_t>& sizes);
// `count` sizes from `size` bytes, checked against the open request: refuses any other
// length, a file of 0 bytes or over kMaxSetFileSize, and a sum other than `total`.
absl::StatusOr<std::vector<uint64_t>> DecodeFileSizes(const uint8_t* data, size_t size, uint64_t count, uint64_t total);

std::array<uint8_t, kTrailerSize> EncodeTrailer(const DataTrailer& trailer);
absl::StatusOr<DataTrailer> DecodeTrailer(const uint8_t* data, size_t size);

}  // namespace nasperf

#endif  // NASPERF_WIRE_WIRE_H_
