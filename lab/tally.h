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
#include "measure/intake.h"

namespace nasperf {

struct TransferTally {
  const PlanTransfer* transfer = nullptr;
  double send_mb_per_s = 0;     // sum over its streams' ok sender rows
  double durable_mb_per_s = 0;  // sum over its receiver rows
  int receiver_rows = 0;
  bool ok = true;     // every sender row ok
  std::string error;  // the first failed sender row's "status: error"
};

// One receiver's run: what the NAS took from all its transfers together, from its
// own rows and samples (measure/intake.h, the figures `report` prints for the run).
struct ReceiverTally {
  std::string name;
  int transfers = 0;
  // The transfers' own MB/s added up: what the NAS took only if all started and
  // ended together; kept for lab-runs.csv under that meaning, never printed as intake.
  double send_mb_per_s = 0;
  double durable_mb_per_s = 0;
  bool complete = true;                  // every transfer ok, with a receiver row per stream
  bool durable = true;                   // false for an SSH login: no agent there says when bytes were on disk
  std::vector<IntakeTransfer> received;  // its ok receiver rows (not kept past TallyRun)
  std::optional<IntakeFigures> intake;   // nullopt without receiver rows (SSH) or times
};

struct RunTally {
  std::vector<TransferTally> transfers;  // in plan order
  std::vector<ReceiverTally> receivers;  // by name
  // The spread of the ok streams' first bytes; needs two of them.
  std::optional<double> start_skew_ms;
  std::optional<double> shortest_s;  // the shortest ok sender row's duration
  int sender_rows = 0;
  int failed = 0;  // sender rows not ok (aborted included)
  int aborted = 0;
};

RunTally TallyRun(const std::vector<LabJob>& jobs);

struct LabTotals {
  int sender_rows = 0, failed = 0, aborted = 0;  // warm-ups included
  std::vector<double> start_skews_ms;            // timed runs only
  // Receiver → all bytes/span and while-all-ran MB/s of its complete timed runs.
  std::map<std::string, std::vector<double>> all_mb_per_s, while_all_mb_per_s;

  void Add(const RunTally& run, bool warmup);
};

}  // namespace nasperf

#endif  // NASPERF_LAB_TALLY_H_
