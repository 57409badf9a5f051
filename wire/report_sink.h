// Where a finished transfer's row goes: the local CSV files (collector/csv_sink.h),
// or a collector behind a spool (collector/spool.h). Senders and receivers hand
// rows to this interface and know nothing of either. Implementations say whether
// Submit may be called from several threads at once (both above may). LiveSink: the
// same for the live updates a loop sends while it runs.
#ifndef NASPERF_WIRE_REPORT_SINK_H_
#define NASPERF_WIRE_REPORT_SINK_H_

#include "absl/status/status.h"
#include "proto/nasperf.pb.h"

namespace nasperf {

class ReportSink {
 public:
  virtual ~ReportSink() = default;
  // Stores one report; a duplicate is accepted and not stored twice.
  virtual absl::Status Submit(const proto::TransferReport& report) = 0;
};

// Where a loop's live updates go (collector/live_feed.h): for the collector's live page
// and /metrics only, so Offer never blocks and may drop. Callable from any thread.
class LiveSink {
 public:
  virtual ~LiveSink() = default;
  virtual void Offer(const proto::LiveUpdate& update) = 0;
};

}  // namespace nasperf

#endif  // NASPERF_WIRE_REPORT_SINK_H_
