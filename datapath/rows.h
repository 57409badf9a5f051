// How a transfer's figures become its CSV row, the same for every transport and
// both directions: what a push loop measured (RecordPush, RecordTimings), what a
// write pipeline measured (AddFigures, AddReadClientFigures), the NAS agent's half
// of a read (AddReadAgentFigures), each end's CPU quota (JudgeCpuQuotas), and the
// trailer that answers a sender (TrailerFor). Pure functions: thread-safe.
#ifndef NASPERF_DATAPATH_ROWS_H_
#define NASPERF_DATAPATH_ROWS_H_

#include <cstdint>
#include <optional>

#include "absl/strings/string_view.h"
#include "datapath/push_loop.h"
#include "datapath/write_pipeline.h"
#include "measure/verdict.h"
#include "proto/nasperf.pb.h"
#include "wire/wire.h"

namespace nasperf {

// Adds a sentence to the row's notes (separated by "; ").
void AppendNote(absl::string_view note, proto::TransferReport& row);

// Cells every transport fills the same way from a push: start time, bytes, checksum
// and interval samples.
void RecordPush(const PushResult& r, proto::TransferReport& row);
// Timing cells of a transfer that completed: duration and MB/s from first byte to
// ack, first byte, write and sync times; line_rate_pct when a ceiling is known.
void RecordTimings(const PushResult& r, std::optional<double> ceiling_mb_per_s, proto::TransferReport& row);

// The pipeline's outcome into the row: status, bytes, timings, waits, verdict,
// checksum, samples, and line_rate_pct when the link speed and MTU are known. The
// sender's footer, when it sent one, lets the verdict name its source: this end
// alone sees a slow source only as bytes arriving late.
void AddFigures(const PipelineResult& r, int64_t accepted_ns, std::optional<uint32_t> link_mbps,
                const std::optional<DataFooter>& sender, proto::TransferReport* row);

// The sender's row once each end's CPU quota is known (PushOptions::cpu_seen: the
// transport judged the row without them): a full link stays the network, a CPU-bound
// end (busy, or held by its quota) is named, with the quota's share in the notes. Only
// an ok row with some quota figure known is touched.
void JudgeCpuQuotas(VerdictFigures cpu, proto::TransferReport& row);

// What the sender is told: the outcome, bytes, checksum and the receiver's times
// (relative to its first byte).
DataTrailer TrailerFor(const PipelineResult& r);

// Reads (docs/DESIGN.md §6, measurement semantics: Reads). The columns keep naming places: disk_wait_pct is the
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

#endif  // NASPERF_DATAPATH_ROWS_H_
