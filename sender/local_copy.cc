#include "sender/local_copy.h"

#include <algorithm>
#include <cstdint>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/units.h"

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

// The client keeps no margin of its own (no --min-free): its disk, its choice of
// directory; the copies must fit, no more.
absl::Status LocalCopy::CheckRoomForRun(uint64_t length, int streams, int transfers) const {
  if (discard()) return absl::OkStatus();
  const uint64_t copies = static_cast<uint64_t>(std::max(streams, 1)) *
                          (cleanup_ == Cleanup::kEach ? 1 : static_cast<uint64_t>(std::max(transfers, 1)));
  const uint64_t bytes = length > UINT64_MAX / copies ? UINT64_MAX : length * copies;
  if (absl::Status room = target_->CheckRoom(bytes, 0, 0); !room.ok()) {
    return absl::ResourceExhaustedError(absl::StrCat("--local-target cannot take ", copies, " cop",
                                                     copies == 1 ? "y" : "ies", " of the ", FormatSize(length),
                                                     " the far end announced: ", room.message()));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<BlockWriter>> LocalCopy::Create(const std::string& file_name, uint64_t length,
                                                               std::string* name) {
  name->clear();
  if (discard()) return std::unique_ptr<BlockWriter>();
  absl::MutexLock lock(&mu_);
  if (absl::Status room = target_->CheckRoom(length, held_, 0); !room.ok()) return room;
  auto writer = target_->Create(file_name, mode_, sync_, name);
  if (!writer.ok()) return writer;
  writing_[*name] = length;
  held_ += length;
  return writer;
}

void LocalCopy::Settle(const std::string& name, bool ok) {
  if (name.empty()) return;
  {
    absl::MutexLock lock(&mu_);
    if (auto it = writing_.find(name); it != writing_.end()) {
      held_ -= it->second;
      writing_.erase(it);
    }
  }
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
