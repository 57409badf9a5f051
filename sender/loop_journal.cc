#include "sender/loop_journal.h"

#include <errno.h>
#include <unistd.h>

#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/fd.h"
#include "wire/validate.h"

namespace nasperf {
namespace {

constexpr size_t kMaxJournalBytes = 64 << 10;
constexpr size_t kMaxRowsBytes = 64 << 20;
constexpr int kMaxStreams = 1024;

std::string PathIn(const std::string& dir) { return absl::StrCat(dir, "/", kJournalName); }
std::string RowsPathIn(const std::string& dir) { return absl::StrCat(dir, "/", kJournalRowsName); }

// The rows file: each row a 4-byte big-endian length and the serialized report.
std::string RowsText(const std::vector<const proto::TransferReport*>& rows) {
  std::string text;
  for (const proto::TransferReport* row : rows) {
    const std::string bytes = row->SerializeAsString();
    const uint32_t n = static_cast<uint32_t>(bytes.size());
    const char length[4] = {static_cast<char>(n >> 24), static_cast<char>(n >> 16), static_cast<char>(n >> 8),
                            static_cast<char>(n)};
    text.append(length, 4);
    text.append(bytes);
  }
  return text;
}

// The rows file back, every row of the journal's run and copy.
absl::Status ReadRows(const std::string& dir, LoopState* s) {
  const std::string path = RowsPathIn(dir);
  absl::StatusOr<std::string> text = ReadFileBounded(path, kMaxRowsBytes + 1);
  if (!text.ok()) return text.status();
  auto bad = [&](absl::string_view why) { return absl::DataLossError(absl::StrCat(path, ": ", why)); };
  if (text->size() > kMaxRowsBytes) return bad("larger than a copy's rows can be");
  absl::string_view rest = *text;
  while (!rest.empty()) {
    if (rest.size() < 4 || s->rows.size() >= 2 * kMaxStreams) return bad("not a nasperf journal's rows");
    const auto byte = [&](int i) { return static_cast<uint32_t>(static_cast<unsigned char>(rest[i])); };
    const uint32_t n = byte(0) << 24 | byte(1) << 16 | byte(2) << 8 | byte(3);
    rest.remove_prefix(4);
    proto::TransferReport row;
    if (n > rest.size() || !row.ParseFromArray(rest.data(), static_cast<int>(n))) {
      return bad("not a nasperf journal's rows");
    }
    rest.remove_prefix(n);
    if (row.run_id() != s->run_id) return bad(absl::StrCat("a row of run ", row.run_id(), ", not ", s->run_id));
    if (absl::Status checked = CheckReport(row); !checked.ok()) return bad(checked.message());
    s->rows.push_back(std::move(row));
  }
  return absl::OkStatus();
}

std::string Text(const LoopState& s) {
  std::string text = absl::StrCat("run_id=", s.run_id, "\nlabel=", s.label, "\nruns=", s.runs, "\nwarmup=", s.warmup,
                                  "\nstreams=", s.streams, "\nsize=", s.size, "\ncopy=", s.copy,
                                  "\nrecorded=", s.recorded ? 1 : 0, "\n");
  if (s.rows_taken) absl::StrAppend(&text, "rows=1\nnext=", s.next, "\n");
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
  if (key == "rows") return (s->rows_taken = value == "1", value == "0" || value == "1");
  if (key == "next") return count(&s->next, 2 * kMaxLiveCopies);
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
  if (state.rows_taken) {
    if (state.next < state.copy || state.next > state.runs + state.warmup) {
      return absl::DataLossError(absl::StrCat(path, ": its next copy ", state.next + 1, " is not within its loop"));
    }
    if (absl::Status s = ReadRows(dir, &state); !s.ok()) return s;
  }
  return state;
}

absl::Status LoopJournal::BeginCopy(int copy) {
  absl::MutexLock lock(&mu_);
  state_.copy = copy;
  state_.recorded = false;
  state_.rows_taken = false;
  state_.transfers.clear();
  return WriteLocked(/*durable=*/false);
}

absl::Status LoopJournal::Opened(int stream, uint64_t transfer_id) {
  absl::MutexLock lock(&mu_);
  state_.transfers[stream] = transfer_id;
  return WriteLocked(/*durable=*/false);
}

absl::Status LoopJournal::RowsTaken(const std::vector<const proto::TransferReport*>& rows, int next) {
  absl::MutexLock lock(&mu_);
  if (absl::Status s = MakeDirectories(dir_, 0755); !s.ok()) return s;
  // The rows first, then the journal that points at them, each synced: a crash at
  // any point leaves either the old journal (rows=0: a stale rows file is never
  // read) or both.
  if (absl::Status s = ReplaceFile(RowsPathIn(dir_), RowsText(rows), 0600, /*durable=*/true); !s.ok()) return s;
  state_.rows_taken = true;
  state_.next = next;
  return WriteLocked(/*durable=*/true);
}

absl::Status LoopJournal::Recorded() {
  absl::MutexLock lock(&mu_);
  state_.recorded = true;
  state_.rows_taken = false;
  return WriteLocked(/*durable=*/false);
}

absl::Status LoopJournal::Remove() {
  // The journal first: without it the rows file is never read.
  for (const std::string& path : {PathIn(dir_), RowsPathIn(dir_)}) {
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) return ErrnoStatus(errno, absl::StrCat("remove ", path));
  }
  return absl::OkStatus();
}

absl::Status LoopJournal::WriteLocked(bool durable) {
  if (absl::Status s = MakeDirectories(dir_, 0755); !s.ok()) return s;
  return ReplaceFile(PathIn(dir_), Text(state_), 0600, durable);
}

}  // namespace nasperf
