#include "receiver/transfer_table.h"

#include "absl/strings/str_cat.h"
#include "common/clock.h"
#include "common/token.h"

namespace nasperf {
namespace {
std::string TicketKey(const Ticket& t) { return std::string(t.begin(), t.end()); }
}  // namespace

TransferTable::TransferTable(absl::Duration ticket_ttl, int max_active, size_t reports_kept)
    : ticket_ttl_(ticket_ttl), max_active_(max_active), reports_kept_(reports_kept) {}

void TransferTable::DropExpiredLocked() {
  int64_t now = MonoNanos();
  for (auto it = pending_.begin(); it != pending_.end();) {
    auto current = it++;
    if (current->second.expires_ns <= now) {
      reserved_ -= current->second.reserve_bytes;
      used_tickets_.insert(current->first);
      pending_.erase(current);
    }
  }
}

absl::Status TransferTable::CheckRoomForOneMoreLocked() {
  DropExpiredLocked();
  if (static_cast<int>(pending_.size() + running_.size() + laying_out_.size()) >= max_active_) {
    return absl::ResourceExhaustedError(
        absl::StrCat("receiver is busy: ", max_active_, " transfers already open (--max-transfers)"));
  }
  return absl::OkStatus();
}

absl::StatusOr<TransferPlan> TransferTable::Add(TransferPlan plan) {
  absl::MutexLock lock(&mu_);
  if (absl::Status s = CheckRoomForOneMoreLocked(); !s.ok()) return s;
  plan.id = next_id_++;
  RandomBytes(plan.ticket.data(), plan.ticket.size());
  plan.expires_ns = MonoNanos() + absl::ToInt64Nanoseconds(ticket_ttl_);
  reserved_ += plan.reserve_bytes;
  pending_[TicketKey(plan.ticket)] = plan;
  return plan;
}

absl::StatusOr<uint64_t> TransferTable::BeginLayOut(uint64_t bytes) {
  absl::MutexLock lock(&mu_);
  if (absl::Status s = CheckRoomForOneMoreLocked(); !s.ok()) return s;
  const uint64_t id = next_id_++;
  laying_out_[id] = bytes;
  reserved_ += bytes;
  return id;
}

void TransferTable::EndLayOut(uint64_t id) {
  absl::MutexLock lock(&mu_);
  if (auto it = laying_out_.find(id); it != laying_out_.end()) {
    reserved_ -= it->second;
    laying_out_.erase(it);
  }
}

absl::StatusOr<TransferPlan> TransferTable::Claim(const DataHeader& header) {
  absl::MutexLock lock(&mu_);
  std::string key = TicketKey(header.ticket);
  auto it = pending_.find(key);
  if (it == pending_.end()) {
    if (used_tickets_.contains(key)) {
      return absl::PermissionDeniedError("ticket already used or expired");
    }
    return absl::PermissionDeniedError("unknown ticket");
  }
  TransferPlan plan = it->second;
  // Any presentation uses the ticket up, also a mismatched one.
  pending_.erase(it);
  if (used_tickets_.size() > 100000) used_tickets_.clear();  // bounded memory; still refused
  used_tickets_.insert(key);
  if (plan.expires_ns <= MonoNanos()) {
    reserved_ -= plan.reserve_bytes;
    return absl::PermissionDeniedError("ticket already used or expired");
  }
  if (header.transfer_id != plan.id || header.payload_length != plan.request.size()) {
    reserved_ -= plan.reserve_bytes;
    return absl::PermissionDeniedError(absl::StrCat("header does not match its ticket (transfer ", header.transfer_id,
                                                    ", ", header.payload_length, " bytes; expected transfer ", plan.id,
                                                    ", ", plan.request.size(), " bytes)"));
  }
  running_[plan.id] = plan.reserve_bytes;
  return plan;
}

void TransferTable::Complete(uint64_t id, proto::TransferReport report) {
  absl::MutexLock lock(&mu_);
  if (auto it = running_.find(id); it != running_.end()) {
    reserved_ -= it->second;
    running_.erase(it);
  }
  reports_[id] = std::move(report);
  report_order_.push_back(id);
  while (report_order_.size() > reports_kept_) {
    reports_.erase(report_order_.front());
    report_order_.pop_front();
  }
}

absl::StatusOr<proto::TransferReport> TransferTable::Fetch(uint64_t id, absl::Duration wait) {
  absl::MutexLock lock(&mu_);
  auto done = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (reports_.contains(id)) return true;
    if (running_.contains(id)) return false;
    for (const auto& [ticket, plan] : pending_) {
      if (plan.id == id) return false;
    }
    return true;  // unknown: nothing to wait for
  };
  mu_.AwaitWithTimeout(absl::Condition(&done), wait);
  auto it = reports_.find(id);
  if (it != reports_.end()) return it->second;
  if (running_.contains(id)) {
    return absl::DeadlineExceededError(absl::StrCat("transfer ", id, " is still running"));
  }
  return absl::NotFoundError(absl::StrCat("no report for transfer ", id));
}

uint64_t TransferTable::reserved_bytes() {
  absl::MutexLock lock(&mu_);
  DropExpiredLocked();
  return reserved_;
}

void TransferTable::KeepUntilRunEnds(const std::string& run_id, const std::string& file_name) {
  absl::MutexLock lock(&mu_);
  run_files_[run_id].push_back(file_name);
}

void TransferTable::NoteLaidOut(const std::string& file_name) {
  absl::MutexLock lock(&mu_);
  laid_out_.insert(file_name);
}

bool TransferTable::WasLaidOut(const std::string& file_name) {
  absl::MutexLock lock(&mu_);
  return laid_out_.contains(file_name);
}

// The run's files leave the laid-out set too: the caller removes them, and a file
// planted later under the same name is not ours.
std::vector<std::string> TransferTable::TakeRunFiles(const std::string& run_id) {
  absl::MutexLock lock(&mu_);
  auto node = run_files_.extract(run_id);
  if (node.empty()) return {};
  for (const std::string& name : node.mapped()) laid_out_.erase(name);
  return std::move(node.mapped());
}

std::vector<std::string> TransferTable::TakeAllRunFiles() {
  absl::MutexLock lock(&mu_);
  absl::flat_hash_set<std::string> all(laid_out_.begin(), laid_out_.end());
  for (auto& [run, files] : run_files_) all.insert(files.begin(), files.end());
  run_files_.clear();
  laid_out_.clear();
  return std::vector<std::string>(all.begin(), all.end());
}

}  // namespace nasperf
