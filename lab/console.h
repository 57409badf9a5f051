// What the lab controller says on its console: the plan's banner, each host and path
// as checked, each run per transfer and per receiver, and the summary. Only prints
// (and flushes, so a tail -f sees each line); decides nothing. One thread at a time.
#ifndef NASPERF_LAB_CONSOLE_H_
#define NASPERF_LAB_CONSOLE_H_

#include <cstdio>
#include <string>

#include "lab/controller.h"
#include "lab/plan.h"
#include "lab/tally.h"
#include "proto/nasperf.pb.h"

namespace nasperf {

class LabConsole {
 public:
  explicit LabConsole(std::FILE* out) : out_(out) {}

  void Line(const std::string& text);
  void Banner(const std::string& run_id, const Plan& plan);
  void HostChecked(const PlanHost& host, const proto::HelloReply& hello);
  void PathChecked(const std::string& transfer_name, const PlanTransfer& transfer, const proto::CheckPathReply& path);
  // nth of `of` warm-ups (warmup) or timed runs.
  void Run(const RunTally& run, bool warmup, int nth, int of, int iteration);
  void Summary(const LabOutcome& outcome, const LabTotals& totals, const std::string& results_dir);

 private:
  std::FILE* out_;
};

}  // namespace nasperf

#endif  // NASPERF_LAB_CONSOLE_H_
