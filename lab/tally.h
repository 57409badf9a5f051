// What a lab run moved, per transfer and per receiver, counted from its rows; and the
// lab's totals over runs. Only counts: nothing here prints, writes or calls an agent.
// Pure functions and a plain struct; not shared between threads.
#ifndef NASPERF_LAB_TALLY_H_
#define NASPERF_LAB_TALLY_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "lab/job_tracker.h"

namespace nasperf {

struct TransferTally {
  const PlanTransfer* transfer = nullptr;
  double send_mb_per_s = 0;     // sum over its streams' ok sender rows
  double durable_mb_per_s = 0;  // sum over its receiver rows
  int receiver_rows = 0;
  bool ok = true;     // every sender row ok
  std::string error;  // the first failed sender row's "status: error"
};

// The aggregate at one receiver: the sum over its concurrent transfers.
struct ReceiverTally {
  std::string name;
  int transfers = 0;
  double send_mb_per_s = 0;
  double durable_mb_per_s = 0;
  bool complete = true;  // every transfer ok, with a receiver row per stream
  bool durable = true;   // false for an SSH login: no agent there says when bytes were on disk
};

struct RunTally {
  std::vector<TransferTally> transfers;  // in plan order
  std::vector<ReceiverTally> receivers;  // by name
  // The spread of the ok streams' first bytes; needs two of them.
  std::optional<double> start_skew_ms;
  int sender_rows = 0;
  int failed = 0;  // sender rows not ok (aborted included)
  int aborted = 0;
};

RunTally TallyRun(const std::vector<LabJob>& jobs);

struct LabTotals {
  int sender_rows = 0, failed = 0, aborted = 0;           // warm-ups included
  std::vector<double> start_skews_ms;                     // timed runs only
  std::map<std::string, std::vector<double>> aggregates;  // receiver → send MB/s of its complete timed runs

  void Add(const RunTally& run, bool warmup);
};

}  // namespace nasperf

#endif  // NASPERF_LAB_TALLY_H_
