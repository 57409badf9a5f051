#include "report/run_intake.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "common/policy.h"

namespace nasperf {
namespace {

// The row's transfer with its samples attached, read back as the lab holds it live, so
// both go through IntakeFromRow. A samples file without bytes gives them from MB/s.
std::optional<IntakeTransfer> TransferOf(const TransferRecord& r, const SampleIndex& samples) {
  proto::TransferReport row;
  row.set_status(r.row.status());
  if (r.row.started_at_unix_ns() != 0) row.set_started_at_unix_ns(r.row.started_at_unix_ns());
  if (r.row.has_first_byte_s()) row.set_first_byte_s(r.row.first_byte_s());
  if (r.row.has_duration_s()) row.set_duration_s(r.row.duration_s());
  if (r.row.has_bytes()) row.set_bytes(r.row.bytes());
  auto it = samples.find(TransferKey(r.run_id, r.role, r.host, r.iteration, r.stream));
  if (it != samples.end()) {
    double previous = 0;
    for (const SampleRecord* s : it->second) {
      proto::Sample* out = row.add_samples();
      out->set_t_s(s->t_s);
      const double bytes = s->bytes >= 0 ? s->bytes : s->mb_per_s * 1e6 * std::max(0.0, s->t_s - previous);
      out->set_bytes(static_cast<uint64_t>(std::llround(std::min(bytes, 1e15))));
      previous = s->t_s;
    }
  }
  return IntakeFromRow(row);
}

bool IsReceiverWrite(const TransferRecord& r) {
  return r.role == Role::kReceiver && !r.warmup && r.Cell("direction") != Name(Direction::kRead);
}

// Each sender row's host by (run, iteration, stream): a lab numbers its streams across
// all its clients within an iteration, so the triple names one transfer.
std::map<std::string, std::string> SenderHosts(const ResultTable& table) {
  std::map<std::string, std::string> hosts;
  for (const TransferRecord& r : table.transfers) {
    if (r.role == Role::kSender) hosts.emplace(absl::StrCat(r.run_id, "\x1f", r.iteration, "\x1f", r.stream), r.host);
  }
  return hosts;
}

std::string SenderOf(const TransferRecord& r, const std::map<std::string, std::string>& senders) {
  auto it = senders.find(absl::StrCat(r.run_id, "\x1f", r.iteration, "\x1f", r.stream));
  if (it != senders.end()) return absl::StrCat(it->second, " stream ", r.stream);
  const std::string& peer = r.Cell("peer");
  return absl::StrCat(peer.empty() ? "stream" : peer + " stream", " ", r.stream);
}

}  // namespace

SampleIndex IndexSamples(const ResultTable& table) {
  SampleIndex index;
  for (const SampleRecord& s : table.samples) {
    index[TransferKey(s.run_id, s.role, s.host, s.iteration, s.stream)].push_back(&s);
  }
  for (auto& [key, list] : index) {
    std::stable_sort(list.begin(), list.end(),
                     [](const SampleRecord* a, const SampleRecord* b) { return a->t_s < b->t_s; });
  }
  return index;
}

std::optional<IntakeFigures> IntakeOfRows(const std::vector<const TransferRecord*>& rows, const SampleIndex& samples) {
  std::vector<IntakeTransfer> transfers;
  for (const TransferRecord* r : rows) {
    if (r->status != Status::kOk) continue;
    std::optional<IntakeTransfer> t = TransferOf(*r, samples);
    // A figure over some of the streams would read as all of them: none instead.
    if (!t) return std::nullopt;
    transfers.push_back(std::move(*t));
  }
  return ComputeIntake(transfers);
}

std::vector<RunIntake> RunIntakes(const ResultTable& table) {
  const SampleIndex samples = IndexSamples(table);
  const std::map<std::string, std::string> sender_hosts = SenderHosts(table);
  std::vector<std::string> order;
  std::map<std::string, std::vector<const TransferRecord*>> runs;
  for (const TransferRecord& r : table.transfers) {
    if (!IsReceiverWrite(r)) continue;
    const std::string key = absl::StrCat(r.run_id, "\x1f", r.host, "\x1f", r.iteration);
    auto [it, added] = runs.emplace(key, std::vector<const TransferRecord*>());
    if (added) order.push_back(key);
    it->second.push_back(&r);
  }
  std::vector<RunIntake> out;
  for (const std::string& key : order) {
    const std::vector<const TransferRecord*>& rows = runs[key];
    auto figures = IntakeOfRows(rows, samples);
    if (!figures) continue;
    RunIntake run;
    run.run_id = rows.front()->run_id;
    run.label = rows.front()->label;
    run.host = rows.front()->host;
    run.iteration = rows.front()->iteration;
    run.failed = static_cast<size_t>(
        std::count_if(rows.begin(), rows.end(), [](const TransferRecord* r) { return r->status != Status::kOk; }));
    run.figures = std::move(*figures);
    for (const TransferRecord* r : rows) {
      if (r->status == Status::kOk) run.senders.push_back(SenderOf(*r, sender_hosts));
    }
    out.push_back(std::move(run));
  }
  return out;
}

}  // namespace nasperf
