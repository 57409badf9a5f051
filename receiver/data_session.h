// The receiver's per-transfer bookkeeping as pure functions: the row it reports for
// a transfer (the cells known at admission, then the figures from the write
// pipeline) and the trailer it answers the sender with. The receiver's Serve does
// the I/O around them. Thread-safe (no state).
#ifndef NASPERF_RECEIVER_DATA_SESSION_H_
#define NASPERF_RECEIVER_DATA_SESSION_H_

#include <cstdint>
#include <optional>
#include <string>

#include "common/wire.h"
#include "proto/nasperf.pb.h"
#include "receiver/transfer_table.h"
#include "receiver/write_pipeline.h"

namespace nasperf {

// Where the row's cells come from besides the transfer's plan.
struct SessionFacts {
  std::string host, peer;            // this receiver's name; the sender's address
  int64_t accepted_wall_ns = 0;
  bool discard = false;              // the discard target: no write mode, no sync
  std::optional<uint32_t> mtu;       // of the interface the data came in on
  std::optional<uint32_t> link_mbps; // the sender's --link-speed, else the NIC's
  std::optional<uint32_t> mss;
};

// The receiver row as far as it is known when the header was admitted.
proto::TransferReport AdmittedRow(const TransferPlan& plan, const SessionFacts& facts);

// The pipeline's outcome into the row: status, bytes, timings, waits, verdict,
// checksum, samples, and line_rate_pct when the link speed and MTU are known. The
// sender's footer, when it sent one, lets the verdict name its source: this end
// alone sees a slow source only as bytes arriving late.
void AddFigures(const PipelineResult& r, int64_t accepted_ns, std::optional<uint32_t> link_mbps,
                const std::optional<DataFooter>& sender, proto::TransferReport* row);

// What the sender is told: the outcome, bytes, checksum and the receiver's times
// (relative to its first byte).
DataTrailer TrailerFor(const PipelineResult& r);

}  // namespace nasperf

#endif  // NASPERF_RECEIVER_DATA_SESSION_H_
