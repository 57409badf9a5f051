// The NAS's intake per receiver and run (measure/intake.h) from the CSV's rows and the
// receiver's samples, so old files get the figures too and `report`, `compare` and the
// lab console agree. Pure functions over a loaded table; thread-safe.
#ifndef NASPERF_REPORT_RUN_INTAKE_H_
#define NASPERF_REPORT_RUN_INTAKE_H_

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "measure/intake.h"
#include "report/table.h"

namespace nasperf {

// Each transfer's samples, by TransferKey, in time order.
using SampleIndex = std::map<std::string, std::vector<const SampleRecord*>>;
SampleIndex IndexSamples(const ResultTable& table);

// The intake of these rows together (the ok ones); nullopt when any of them lacks a
// start, first byte, duration or bytes (e.g. a file from before started_at): a figure
// over some of the streams would read as all of them.
std::optional<IntakeFigures> IntakeOfRows(const std::vector<const TransferRecord*>& rows, const SampleIndex& samples);

// One receiver's writes of one run and iteration, warm-ups left out.
struct RunIntake {
  std::string run_id, label, host;
  long long iteration = 0;
  size_t failed = 0;  // its receiver rows that are not ok: not in the figures
  IntakeFigures figures;
  // Who sent each transfer in the figures (the order of timeline_by_transfer_mb_per_s):
  // the sender row's host and stream, or the receiver row's peer when no sender row is here.
  std::vector<std::string> senders;
};

// In the order the runs were first seen.
std::vector<RunIntake> RunIntakes(const ResultTable& table);

}  // namespace nasperf

#endif  // NASPERF_REPORT_RUN_INTAKE_H_
