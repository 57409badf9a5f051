// Checks on fields that arrive from the network before anything uses them: run ids
// (they become part of file names) and whole TransferReports (they become CSV rows).
// Pure functions.
#ifndef NASPERF_COMMON_VALIDATE_H_
#define NASPERF_COMMON_VALIDATE_H_

#include <string>

#include "absl/status/status.h"
#include "proto/nasperf.pb.h"

namespace nasperf {

// 1-64 of [A-Za-z0-9._-], not starting with '.' or '-'.
absl::Status CheckRunId(const std::string& run_id);
// The label, iteration and stream every transfer carries: the same bounds when a
// transfer is opened and when its report arrives.
absl::Status CheckTransferKey(const std::string& label, int iteration, int stream);
// Field by field: known enums, bounded text, finite non-negative figures.
absl::Status CheckReport(const proto::TransferReport& report);

}  // namespace nasperf

#endif  // NASPERF_COMMON_VALIDATE_H_
