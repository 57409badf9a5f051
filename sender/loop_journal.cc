#include "sender/loop_journal.h"

#include <errno.h>
#include <unistd.h>

#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/fd.h"
#include "common/validate.h"

namespace nasperf {
namespace {

constexpr size_t kMaxJournalBytes = 64 << 10;
constexpr int kMaxStreams = 1024;

std::string PathIn(const std::string& dir) { return absl::StrCat(dir, "/", kJournalName); }

std::string Text(const LoopState& s) {
  std::string text = absl::StrCat("run_id=", s.run_id, "\nlabel=", s.label, "\nruns=", s.runs, "\nwarmup=", s.warmup,
                                  "\nstreams=", s.streams, "\nsize=", s.size, "\ncopy=", s.copy,
                                  "\nrecorded=", s.recorded ? 1 : 0, "\n");
  for (const auto& [stream, id] : s.transfers) absl::StrAppend(&text, "transfer=", stream, ":", id, "\n");
  return text;
}

// One key=value line into the state; false when the line is not one of ours.
bool TakeLine(absl::string_view key, absl::string_view value, LoopState* s) {
  auto count = [&](int* out, int max) { return absl::SimpleAtoi(value, out) && *out >= 0 && *out <= max; };
  if (key == "run_id") return (s->run_id = std::string(value), true);
  if (key == "label") return (s->label = std::string(value), true);
  if (key == "runs") return count(&s->runs, kMaxLiveCopies);
  if (key == "warmup") return count(&s->warmup, kMaxLiveCopies);
  if (key == "streams") return count(&s->streams, kMaxStreams);
  if (key == "copy") return count(&s->copy, 2 * kMaxLiveCopies);
  if (key == "size") return absl::SimpleAtoi(value, &s->size);
  if (key == "recorded") return (s->recorded = value == "1", value == "0" || value == "1");
  if (key == "transfer") {
    std::pair<absl::string_view, absl::string_view> parts = absl::StrSplit(value, absl::MaxSplits(':', 1));
    int stream = 0;
    uint64_t id = 0;
    if (!absl::SimpleAtoi(parts.first, &stream) || stream < 0 || stream >= kMaxStreams ||
        !absl::SimpleAtoi(parts.second, &id) || id == 0 || s->transfers.size() >= kMaxStreams) {
      return false;
    }
    s->transfers[stream] = id;
    return true;
  }
  return false;
}

}  // namespace

absl::StatusOr<LoopState> ReadLoopJournal(const std::string& dir) {
  const std::string path = PathIn(dir);
  if (::access(path.c_str(), F_OK) != 0) {
    return absl::NotFoundError(absl::StrCat(path,
                                            ": nothing to resume (a loop that ran to its end leaves none; "
                                            "--resume takes the killed loop's --out directory)"));
  }
  absl::StatusOr<std::string> text = ReadFileBounded(path, kMaxJournalBytes + 1);
  if (!text.ok()) return text.status();
  if (text->size() > kMaxJournalBytes) return absl::DataLossError(absl::StrCat(path, " is not a nasperf journal"));
  LoopState state;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(*text, '\n', absl::SkipEmpty())) {
    ++line_number;
    std::pair<absl::string_view, absl::string_view> kv = absl::StrSplit(line, absl::MaxSplits('=', 1));
    if (!TakeLine(kv.first, kv.second, &state)) {
      return absl::DataLossError(absl::StrCat(path, ":", line_number, ": not a line of a nasperf journal"));
    }
  }
  if (absl::Status s = CheckRunId(state.run_id); !s.ok()) {
    return absl::DataLossError(absl::StrCat(path, ": ", s.message()));
  }
  if (absl::Status s = CheckPlainText("label", state.label, 200); !s.ok()) {
    return absl::DataLossError(absl::StrCat(path, ": ", s.message()));
  }
  if (state.streams < 1 || state.runs < 1 || state.copy >= state.runs + state.warmup) {
    return absl::DataLossError(absl::StrCat(path, ": its copy ", state.copy + 1, " is not within its loop"));
  }
  return state;
}

absl::Status LoopJournal::BeginCopy(int copy) {
  absl::MutexLock lock(&mu_);
  state_.copy = copy;
  state_.recorded = false;
  state_.transfers.clear();
  return WriteLocked();
}

absl::Status LoopJournal::Opened(int stream, uint64_t transfer_id) {
  absl::MutexLock lock(&mu_);
  state_.transfers[stream] = transfer_id;
  return WriteLocked();
}

absl::Status LoopJournal::Recorded() {
  absl::MutexLock lock(&mu_);
  state_.recorded = true;
  return WriteLocked();
}

absl::Status LoopJournal::Remove() {
  if (::unlink(PathIn(dir_).c_str()) != 0 && errno != ENOENT) {
    return ErrnoStatus(errno, absl::StrCat("remove ", PathIn(dir_)));
  }
  return absl::OkStatus();
}

absl::Status LoopJournal::WriteLocked() {
  if (absl::Status s = MakeDirectories(dir_, 0755); !s.ok()) return s;
  return ReplaceFile(PathIn(dir_), Text(state_), 0600, /*durable=*/false);
}

}  // namespace nasperf
