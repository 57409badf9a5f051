#include "lab/agent_limits.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace nasperf {

absl::Status CheckGoInstant(absl::Time start_at, absl::Time now, const AgentLimits& limits) {
  const absl::Duration ahead = start_at - now;
  if (ahead > limits.go_ahead || ahead < -limits.go_behind) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "the start instant is %.1f s from now on this host; it must be between -%.0f s and +%.0f s",
        absl::ToDoubleSeconds(ahead), absl::ToDoubleSeconds(limits.go_behind), absl::ToDoubleSeconds(limits.go_ahead)));
  }
  return absl::OkStatus();
}

absl::Status JobLedger::Admit(const std::string& id, int streams, absl::Time now) {
  if (ledger_.count(id) > 0) return absl::AlreadyExistsError(absl::StrCat("job ", id, " exists"));
  if (live_jobs_ + 1 > limits_.max_jobs) {
    return absl::ResourceExhaustedError(
        absl::StrCat("this agent runs ", live_jobs_, " jobs, its limit; job ", id, " can start when one of them ends"));
  }
  if (live_streams_ + streams > limits_.max_streams) {
    return absl::ResourceExhaustedError(absl::StrCat("this agent's jobs hold ", live_streams_, " streams and job ", id,
                                                     " asks for ", streams, "; the limit is ", limits_.max_streams,
                                                     " at once"));
  }
  Entry& entry = ledger_[id];
  entry.streams = streams;
  entry.admitted = now;
  ++live_jobs_;
  live_streams_ += streams;
  return absl::OkStatus();
}

void JobLedger::Released(const std::string& id) {
  auto it = ledger_.find(id);
  if (it != ledger_.end()) it->second.released = true;
}

void JobLedger::Finished(const std::string& id, absl::Time now) {
  auto it = ledger_.find(id);
  if (it == ledger_.end() || it->second.finished) return;
  it->second.finished = true;
  it->second.finished_at = now;
  --live_jobs_;
  live_streams_ -= it->second.streams;
}

void JobLedger::Remove(const std::string& id) {
  auto it = ledger_.find(id);
  if (it == ledger_.end()) return;
  if (!it->second.finished) {
    --live_jobs_;
    live_streams_ -= it->second.streams;
  }
  ledger_.erase(it);
}

JobLedger::Due JobLedger::Sweep(absl::Time now) const {
  Due due;
  std::vector<std::pair<absl::Time, std::string>> unread;
  for (const auto& [id, entry] : ledger_) {
    if (!entry.finished && !entry.released && now - entry.admitted > limits_.wait_for_go) due.cancel.push_back(id);
    if (entry.finished) unread.emplace_back(entry.finished_at, id);
  }
  std::sort(unread.begin(), unread.end());
  const size_t excess = unread.size() > static_cast<size_t>(limits_.max_unread)
                            ? unread.size() - static_cast<size_t>(limits_.max_unread)
                            : 0;
  for (size_t i = 0; i < unread.size(); ++i) {
    if (i < excess || now - unread[i].first > limits_.unread_lifetime) due.forget.push_back(unread[i].second);
  }
  return due;
}

}  // namespace nasperf
