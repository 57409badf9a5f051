#include "sender/local_copy.h"

#include <utility>

namespace nasperf {

absl::StatusOr<std::unique_ptr<LocalCopy>> LocalCopy::Open(const std::string& directory, WriteMode mode,
                                                           SyncPolicy sync, Cleanup cleanup) {
  auto target = Target::Open(directory.empty() ? std::string(kDiscardTarget) : directory);
  if (!target.ok()) return target.status();
  if (!(*target)->discard() && !(*target)->Supports(mode)) {
    return absl::FailedPreconditionError((*target)->Unsupported(mode));
  }
  return std::unique_ptr<LocalCopy>(new LocalCopy(std::move(*target), mode, sync, cleanup));
}

void LocalCopy::FillRow(proto::TransferReport& row) const {
  if (discard()) {
    row.set_write_mode(kDiscardTarget);
    row.set_sync_policy(SyncPolicyName({SyncPolicy::kNone, 0}));
  } else {
    row.set_write_mode(Name(mode_));
    row.set_sync_policy(SyncPolicyName(sync_));
  }
}

absl::StatusOr<std::unique_ptr<BlockWriter>> LocalCopy::Create(const std::string& file_name, std::string* name) {
  name->clear();
  if (discard()) return std::unique_ptr<BlockWriter>();
  return target_->Create(file_name, mode_, sync_, name);
}

void LocalCopy::Settle(const std::string& name, bool ok) {
  if (name.empty()) return;
  if (!ok || cleanup_ == Cleanup::kEach) {
    (void)target_->Remove(name);
  } else if (cleanup_ == Cleanup::kEnd) {
    absl::MutexLock lock(&mu_);
    kept_.push_back(name);
  }
}

void LocalCopy::Finish() {
  std::vector<std::string> kept;
  {
    absl::MutexLock lock(&mu_);
    kept.swap(kept_);
  }
  for (const std::string& name : kept) (void)target_->Remove(name);
}

}  // namespace nasperf
