// The client's half of a read (docs/DESIGN.md §6, measurement semantics: Reads): connect to the NAS
// agent's data port, write the header, take the payload through the write pipeline
// (datapath/write_pipeline.h: into a --local-target file, or nowhere), read the
// agent's footer, and answer with the trailer the agent's row waits for. One call
// per transfer; runs on the caller's thread.
#ifndef NASPERF_DATAPATH_STREAM_PULLER_H_
#define NASPERF_DATAPATH_STREAM_PULLER_H_

#include <cstdint>
#include <optional>

#include "absl/status/status.h"
#include "datapath/stream_pusher.h"
#include "datapath/write_pipeline.h"
#include "wire/wire.h"

namespace nasperf {

struct PullResult {
  absl::Status status;   // connect or header failed (then nothing moved)
  int64_t start_ns = 0;  // before connect
  std::optional<uint32_t> mss;
  PipelineResult pipeline;
  std::optional<DataFooter> footer;  // the agent's: its disk reads, its CPU
};

// window_bytes: fixed receive buffer (0 = autotuning); max_segment as for pushes.
PullResult PullNative(const PushTarget& target, BlockWriter* writer, const PipelineOptions& options,
                      uint64_t window_bytes, uint32_t max_segment);

}  // namespace nasperf

#endif  // NASPERF_DATAPATH_STREAM_PULLER_H_
