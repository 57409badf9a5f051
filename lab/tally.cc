#include "lab/tally.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/policy.h"

namespace nasperf {
namespace {

// First-byte instants of the ok sender rows.
struct StartSpread {
  int64_t first = 0, last = 0;
  int starts = 0;

  void Add(const proto::TransferReport& r) {
    if (!r.has_first_byte_s()) return;
    const int64_t at = r.started_at_unix_ns() + static_cast<int64_t>(r.first_byte_s() * 1e9);
    first = starts == 0 ? at : std::min(first, at);
    last = starts == 0 ? at : std::max(last, at);
    ++starts;
  }
  std::optional<double> SkewMs() const {
    if (starts < 2) return std::nullopt;
    return static_cast<double>(last - first) / 1e6;
  }
};

}  // namespace

RunTally TallyRun(const std::vector<LabJob>& jobs) {
  RunTally run;
  StartSpread spread;
  std::map<std::string, ReceiverTally> receivers;
  for (const LabJob& job : jobs) {
    TransferTally t;
    t.transfer = job.transfer;
    for (const auto* rows : {&job.agent_rows, &job.lost_rows}) {
      for (const proto::TransferReport& r : *rows) {
        if (r.role() == Name(Role::kReceiver)) {
          if (r.has_mb_per_s()) t.durable_mb_per_s += r.mb_per_s();
          ++t.receiver_rows;
          // Writes only, as report counts them: a read's receiver row is the NAS giving data.
          if (r.direction() == Name(Direction::kRead)) continue;
          if (auto received = IntakeFromRow(r)) receivers[job.transfer->to].received.push_back(std::move(*received));
          continue;
        }
        ++run.sender_rows;
        if (r.status() == Name(Status::kAborted)) ++run.aborted;
        if (r.status() != Name(Status::kOk)) {
          ++run.failed;
          if (t.ok) t.error = absl::StrCat(r.status(), ": ", r.error());
          t.ok = false;
          continue;
        }
        t.send_mb_per_s += r.mb_per_s();
        spread.Add(r);
        if (r.has_duration_s()) run.shortest_s = std::min(run.shortest_s.value_or(r.duration_s()), r.duration_s());
      }
    }
    ReceiverTally& sum = receivers[job.transfer->to];
    sum.name = job.transfer->to;
    ++sum.transfers;
    sum.send_mb_per_s += t.send_mb_per_s;
    sum.durable_mb_per_s += t.durable_mb_per_s;
    sum.durable = job.transfer->ToIsHost();
    // Over SSH no agent takes the bytes, so no receiver rows are due.
    const int receiver_rows_due = job.transfer->ToIsHost() ? job.transfer->streams : 0;
    sum.complete = sum.complete && t.ok && t.receiver_rows == receiver_rows_due;
    run.transfers.push_back(std::move(t));
  }
  for (auto& [name, sum] : receivers) {
    sum.intake = ComputeIntake(sum.received);
    sum.received.clear();
    run.receivers.push_back(std::move(sum));
  }
  run.start_skew_ms = spread.SkewMs();
  return run;
}

void LabTotals::Add(const RunTally& run, bool warmup) {
  sender_rows += run.sender_rows;
  failed += run.failed;
  aborted += run.aborted;
  if (warmup) return;
  if (run.start_skew_ms) start_skews_ms.push_back(*run.start_skew_ms);
  for (const ReceiverTally& r : run.receivers) {
    if (!r.complete || !r.intake) continue;
    all_mb_per_s[r.name].push_back(r.intake->all_mb_per_s);
    if (r.intake->overlapped) while_all_mb_per_s[r.name].push_back(r.intake->while_all_mb_per_s);
  }
}

}  // namespace nasperf
