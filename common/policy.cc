#include "common/policy.h"

#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/units.h"

namespace nasperf {
namespace {

template <typename T>
struct Table;

template <>
struct Table<WriteMode> {
  static constexpr const char* what = "write mode";
  static constexpr std::pair<WriteMode, const char*> entries[] = {
      {WriteMode::kBuffered, "buffered"}, {WriteMode::kDirect, "direct"}, {WriteMode::kDsync, "dsync"}};
};
template <>
struct Table<Cleanup> {
  static constexpr const char* what = "cleanup";
  static constexpr std::pair<Cleanup, const char*> entries[] = {
      {Cleanup::kEach, "each"}, {Cleanup::kEnd, "end"}, {Cleanup::kNever, "never"}};
};
template <>
struct Table<Role> {
  static constexpr const char* what = "role";
  static constexpr std::pair<Role, const char*> entries[] = {
      {Role::kSender, "sender"}, {Role::kReceiver, "receiver"}, {Role::kNas, "nas"}};
};
template <>
struct Table<Direction> {
  static constexpr const char* what = "direction";
  static constexpr std::pair<Direction, const char*> entries[] = {{Direction::kWrite, "write"},
                                                                  {Direction::kRead, "read"}};
};
template <>
struct Table<CacheState> {
  static constexpr const char* what = "cache state";
  static constexpr std::pair<CacheState, const char*> entries[] = {{CacheState::kCold, "cold"},
                                                                   {CacheState::kWarm, "warm"}};
};
template <>
struct Table<ReadMode> {
  static constexpr const char* what = "read mode";
  static constexpr std::pair<ReadMode, const char*> entries[] = {{ReadMode::kBuffered, "buffered"},
                                                                 {ReadMode::kDirect, "direct"}};
};
template <>
struct Table<CacheShape> {
  static constexpr const char* what = "cache shape";
  static constexpr std::pair<CacheShape, const char*> entries[] = {{CacheShape::kCliff, "cliff"},
                                                                   {CacheShape::kRamp, "ramp"},
                                                                   {CacheShape::kSawtooth, "sawtooth"},
                                                                   {CacheShape::kStalls, "stalls"}};
};
template <>
struct Table<Status> {
  static constexpr const char* what = "status";
  static constexpr std::pair<Status, const char*> entries[] = {
      {Status::kOk, "ok"}, {Status::kFailed, "failed"}, {Status::kAborted, "aborted"}};
};
template <>
struct Table<Bottleneck> {
  static constexpr const char* what = "bottleneck";
  static constexpr std::pair<Bottleneck, const char*> entries[] = {{Bottleneck::kNetwork, "network"},
                                                                   {Bottleneck::kDisk, "disk"},
                                                                   {Bottleneck::kSource, "source"},
                                                                   {Bottleneck::kBalanced, "balanced"},
                                                                   {Bottleneck::kOldSender, "sender"},
                                                                   {Bottleneck::kSenderCpu, "sender-cpu"},
                                                                   {Bottleneck::kReceiverCpu, "receiver-cpu"},
                                                                   {Bottleneck::kClientDisk, "client-disk"},
                                                                   {Bottleneck::kServerCpu, "server-cpu"},
                                                                   {Bottleneck::kClient, "client"},
                                                                   {Bottleneck::kMetadata, "metadata"}};
};

}  // namespace

template <typename T>
absl::StatusOr<T> Parse(absl::string_view text) {
  for (const auto& [value, name] : Table<T>::entries) {
    if (text == name) return value;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("invalid ", Table<T>::what, " \"", text, "\" (expected ", absl::StrJoin(Names<T>(), ", "), ")"));
}

template <typename T>
const char* Name(T value) {
  for (const auto& [v, name] : Table<T>::entries) {
    if (v == value) return name;
  }
  return "?";
}

template <typename T>
const std::vector<std::string>& Names() {
  static const auto* names = [] {
    auto* list = new std::vector<std::string>;
    for (const auto& entry : Table<T>::entries) list->push_back(entry.second);
    return list;
  }();
  return *names;
}

#define NASPERF_POLICY_TYPE(T)                            \
  template absl::StatusOr<T> Parse<T>(absl::string_view); \
  template const char* Name<T>(T);                        \
  template const std::vector<std::string>& Names<T>();
NASPERF_POLICY_TYPE(WriteMode)
NASPERF_POLICY_TYPE(Cleanup)
NASPERF_POLICY_TYPE(Role)
NASPERF_POLICY_TYPE(Status)
NASPERF_POLICY_TYPE(Bottleneck)
NASPERF_POLICY_TYPE(Direction)
NASPERF_POLICY_TYPE(CacheState)
NASPERF_POLICY_TYPE(ReadMode)
NASPERF_POLICY_TYPE(CacheShape)
#undef NASPERF_POLICY_TYPE

bool IsTransportWord(absl::string_view word) {
  if (word.empty() || word.size() > kMaxTransportWord) return false;
  for (char c : word) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) return false;
  }
  return true;
}

std::string TransferFileName(const std::string& run_id, int iteration, int stream) {
  return absl::StrCat("nasperf-", run_id, "-", iteration, "-", stream, ".dat");
}

absl::StatusOr<SyncPolicy> ParseSyncPolicy(absl::string_view text) {
  SyncPolicy policy;
  if (text == "none") {
    policy.kind = SyncPolicy::kNone;
  } else if (text == "end") {
    policy.kind = SyncPolicy::kEnd;
  } else if (absl::StartsWith(text, "every=")) {
    auto size = ParseSize(text.substr(6));
    if (!size.ok() || *size == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("invalid sync policy \"", text, "\" (every= needs a size, e.g. every=256MiB)"));
    }
    policy.kind = SyncPolicy::kEvery;
    policy.every_bytes = *size;
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid sync policy \"", text, "\" (expected none, end or every=SIZE)"));
  }
  return policy;
}

std::string SyncPolicyName(const SyncPolicy& policy) {
  switch (policy.kind) {
    case SyncPolicy::kNone:
      return "none";
    case SyncPolicy::kEnd:
      return "end";
    case SyncPolicy::kEvery: {
      // In the largest binary unit that divides it: what a user typed comes back.
      const std::pair<uint64_t, const char*> units[] = {{1ULL << 30, "GiB"}, {1ULL << 20, "MiB"}, {1ULL << 10, "KiB"}};
      for (const auto& [unit, name] : units) {
        if (policy.every_bytes % unit == 0) return absl::StrCat("every=", policy.every_bytes / unit, name);
      }
      return absl::StrCat("every=", policy.every_bytes);
    }
  }
  return "?";
}

}  // namespace nasperf
