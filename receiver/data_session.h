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
#include "sender/push_loop.h"

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

// Reads (DESIGN.md section 6). The columns keep naming places: disk_wait_pct is the
// NAS's disk (the agent's file reads), source_wait_pct the client's own disk (its
// --local-target), net_wait_pct the client waiting for data; the verdict is
// ReadVerdict's.
//
// The NAS agent's row: first byte read from its disk until the client's trailer
// confirmed the last one. `expected` is the file's length; `verify` whether the
// client asked for checksums (then `verified` compares both ends').
void AddReadAgentFigures(const PushResult& r, int64_t accepted_ns, uint64_t expected, bool verify,
                         std::optional<uint32_t> link_mbps, proto::TransferReport* row);
// The client's row: its pipeline (into its --local-target, or nowhere) from the first
// byte received until the bytes were where its --sync says, with the agent's footer
// for the NAS's disk share. `ceiling_mb_per_s`: the path's, when known.
void AddReadClientFigures(const PipelineResult& r, int64_t start_ns, bool local_disk,
                          const std::optional<DataFooter>& nas, std::optional<double> ceiling_mb_per_s,
                          proto::TransferReport* row);

}  // namespace nasperf

#endif  // NASPERF_RECEIVER_DATA_SESSION_H_
