#include "collector/csv_sink.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "common/columns.h"
#include "common/csv.h"
#include "common/log.h"

namespace nasperf {

const std::vector<std::string>& TransferColumns() {
  static const auto* columns = [] {
    auto* names = new std::vector<std::string>;
    for (const TransferColumn& column : TransferColumnTable()) names->push_back(column.name);
    return names;
  }();
  return *columns;
}

const std::vector<std::string>& SampleColumns() {
  static const auto* columns =
      new std::vector<std::string>{"run_id", "label", "iteration", "stream", "role", "host", "t_s", "bytes", "mb_per_s",
                                   // appended
                                   "transfer_id"};
  return *columns;
}

namespace {

// samples.csv's MB/s: the same format as transfers.csv's mb_per_s.
std::string Rate(double v) { return absl::StrFormat("%.2f", v); }

// What makes a row unique. The transfer id alone is not enough: it is 0 for a
// transfer that failed before the receiver gave it one, and two receivers in one
// run hand out the same ids.
std::string Key(absl::string_view run_id, absl::string_view role, absl::string_view host, absl::string_view iteration,
                absl::string_view stream, absl::string_view transfer_id) {
  return absl::StrCat(run_id, "\x1f", role, "\x1f", host, "\x1f", iteration, "\x1f", stream, "\x1f", transfer_id);
}

}  // namespace

std::string TransferRow(const proto::TransferReport& r) {
  std::vector<std::string> cells;
  for (const TransferColumn& column : TransferColumnTable()) cells.push_back(FormatCell(column, r));
  return CsvLine(cells);
}

std::string SampleRows(const proto::TransferReport& r) {
  std::string out;
  for (const proto::Sample& s : r.samples()) {
    // CheckReport bounds the rate; a non-finite one still never reaches the file.
    double rate = s.interval_s() > 0 ? static_cast<double>(s.bytes()) / s.interval_s() / 1e6 : 0;
    if (!std::isfinite(rate)) rate = 0;
    out += CsvLine({CsvText(r.run_id()), CsvText(r.label()), absl::StrCat(r.iteration()), absl::StrCat(r.stream()),
                    CsvText(r.role()), CsvText(r.host()), absl::StrFormat("%.3f", s.t_s()), absl::StrCat(s.bytes()),
                    Rate(rate), absl::StrCat(r.transfer_id())});
  }
  return out;
}

absl::StatusOr<std::unique_ptr<CsvSink>> CsvSink::Open(const std::string& dir, uint64_t max_bytes) {
  std::unique_ptr<CsvSink> sink(new CsvSink());
  sink->dir_ = dir;
  sink->max_bytes_ = max_bytes;
  if (absl::Status s = MakeDirectories(dir, 0755); !s.ok()) return s;
  absl::MutexLock lock(&sink->mu_);
  if (absl::Status s = sink->OpenTransfers(sink->transfers_path(), TransferColumns(), &sink->transfers_); !s.ok()) {
    return s;
  }
  if (absl::Status s = sink->OpenSamples(sink->samples_path(), SampleColumns(), &sink->samples_); !s.ok()) {
    return s;
  }
  for (int fd : {sink->transfers_.get(), sink->samples_.get()}) {
    struct stat st {};
    if (fstat(fd, &st) == 0) sink->stored_bytes_ += static_cast<uint64_t>(st.st_size);
  }
  return sink;
}

absl::Status CsvSink::SetAsideTorn(int fd, const std::string& path, absl::string_view torn, uint64_t keep) {
  std::string aside = absl::StrCat(path, ".torn-", absl::ToUnixSeconds(absl::Now()));
  Fd aside_fd(::open(aside.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0644));
  if (!aside_fd.valid()) return ErrnoStatus(errno, absl::StrCat("open ", aside));
  if (absl::Status s = WriteAll(aside_fd.get(), torn.data(), torn.size(), aside); !s.ok()) return s;
  if (::ftruncate(fd, static_cast<off_t>(keep)) != 0) return ErrnoStatus(errno, absl::StrCat("truncate ", path));
  Log(LogLevel::kWarning, "collector", "%s ended in a torn line (%d bytes); moved it to %s", path, torn.size(), aside);
  open_info_.set_aside.push_back(aside);
  return absl::OkStatus();
}

absl::Status CsvSink::OpenSamples(const std::string& path, const std::vector<std::string>& columns, Fd* out) {
  // Sample rows hold no line breaks (CheckReport refuses control characters in
  // labels and hosts), so the last "\n" ends the last whole row.
  constexpr size_t kWindow = 64 * 1024;
  Fd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0644));
  if (!fd.valid()) return ErrnoStatus(errno, absl::StrCat("open ", path));
  struct stat st {};
  if (fstat(fd.get(), &st) != 0) return ErrnoStatus(errno, absl::StrCat("stat ", path));
  uint64_t size = static_cast<uint64_t>(st.st_size);
  if (size > 0) {
    std::string head(std::min<uint64_t>(size, 4096), '\0');
    if (::pread(fd.get(), head.data(), head.size(), 0) != static_cast<ssize_t>(head.size())) {
      return ErrnoStatus(errno, absl::StrCat("read ", path));
    }
    absl::string_view first_cell = absl::string_view(head).substr(0, head.find_first_of(",\n"));
    if (first_cell != columns[0]) {
      return absl::FailedPreconditionError(
          absl::StrCat(path, " exists but is not a nasperf CSV (first line: ", first_cell.substr(0, 40), "...)"));
    }
    const uint64_t tail_at = size > kWindow ? size - kWindow : 0;
    std::string tail(size - tail_at, '\0');
    if (::pread(fd.get(), tail.data(), tail.size(), static_cast<off_t>(tail_at)) != static_cast<ssize_t>(tail.size())) {
      return ErrnoStatus(errno, absl::StrCat("read ", path));
    }
    if (tail.back() != '\n') {
      size_t last_newline = tail.rfind('\n');
      if (last_newline == std::string::npos && tail_at > 0) {
        return absl::DataLossError(absl::StrCat(path, ": its last line is longer than 64 KiB: not a sample row"));
      }
      const size_t keep_in_tail = last_newline == std::string::npos ? 0 : last_newline + 1;
      if (absl::Status s =
              SetAsideTorn(fd.get(), path, absl::string_view(tail).substr(keep_in_tail), tail_at + keep_in_tail);
          !s.ok()) {
        return s;
      }
      size = tail_at + keep_in_tail;
    }
  }
  if (size == 0) {
    std::vector<std::string> quoted;
    for (const auto& c : columns) quoted.push_back(CsvQuote(c));
    std::string header = CsvLine(quoted);
    if (absl::Status s = WriteAll(fd.get(), header.data(), header.size(), path); !s.ok()) return s;
  }
  *out = std::move(fd);
  return absl::OkStatus();
}

namespace {

// The header of an existing transfers.csv: this version's columns, or an older
// nasperf's (a prefix of them: columns are only ever appended). Returns where the key
// columns are.
absl::StatusOr<std::vector<size_t>> CheckTransfersHeader(const std::string& path,
                                                         const std::vector<std::string>& header,
                                                         const std::vector<std::string>& columns) {
  if (header.empty() || header[0] != columns[0]) {
    return absl::FailedPreconditionError(
        absl::StrCat(path, " exists but is not a nasperf CSV (first line: ", header.empty() ? "" : header[0], "...)"));
  }
  const bool older = header.size() <= columns.size() && std::equal(header.begin(), header.end(), columns.begin());
  if (!older) {
    return absl::FailedPreconditionError(absl::StrCat(path, " was written by another nasperf version (its ",
                                                      header.size(), " columns are not the first of this one's ",
                                                      columns.size(), "); give --out a new directory"));
  }
  std::vector<size_t> key_columns;
  for (const char* name : {"run_id", "role", "host", "iteration", "stream", "transfer_id"}) {
    auto at = std::find(header.begin(), header.end(), name);
    if (at == header.end()) {
      return absl::FailedPreconditionError(
          absl::StrCat(path, " has no ", name, " column: not written by this nasperf"));
    }
    key_columns.push_back(static_cast<size_t>(at - header.begin()));
  }
  return key_columns;
}

std::string QuotedLine(const std::vector<std::string>& cells, size_t width) {
  std::vector<std::string> quoted;
  for (const std::string& c : cells) quoted.push_back(CsvQuote(c));
  quoted.resize(width);  // an older row's new cells: empty, "unknown" (docs/DESIGN.md §5, CSV contract)
  return CsvLine(quoted);
}

}  // namespace

absl::Status CsvSink::OpenTransfers(const std::string& path, const std::vector<std::string>& columns, Fd* out) {
  Fd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0644));
  if (!fd.valid()) return ErrnoStatus(errno, absl::StrCat("open ", path));
  struct stat st {};
  if (fstat(fd.get(), &st) != 0) return ErrnoStatus(errno, absl::StrCat("stat ", path));
  std::string text(static_cast<size_t>(st.st_size), '\0');
  if (auto n = ReadFull(fd.get(), text.data(), text.size(), absl::StrCat("read ", path)); !n.ok()) {
    return n.status();
  }
  CsvReader reader(text);
  std::vector<std::string> header, fields;
  std::vector<size_t> key_columns;
  std::vector<std::vector<std::string>> older_rows;  // kept only to rewrite an older file
  while (true) {
    auto more = reader.Next(&fields);
    if (!more.ok()) return absl::DataLossError(absl::StrCat(path, ": ", more.status().message()));
    if (!*more) break;
    if (header.empty()) {
      header = fields;
      auto keys = CheckTransfersHeader(path, header, columns);
      if (!keys.ok()) return keys.status();
      key_columns = *keys;
      continue;
    }
    if (fields.size() != header.size()) continue;  // a report of this file will say so
    auto k = [&](int i) { return absl::string_view(fields[key_columns[i]]); };
    seen_.insert(Key(k(0), k(1), k(2), k(3), k(4), k(5)));
    ++open_info_.rows_found;
    if (header.size() < columns.size()) older_rows.push_back(fields);
  }
  if (reader.torn()) {
    if (absl::Status s = SetAsideTorn(fd.get(), path, absl::string_view(text).substr(reader.complete_bytes()),
                                      reader.complete_bytes());
        !s.ok()) {
      return s;
    }
    if (reader.complete_bytes() == 0) header.clear();
  }
  if (header.empty()) {
    std::string line = QuotedLine(columns, columns.size());
    if (absl::Status s = WriteAll(fd.get(), line.data(), line.size(), path); !s.ok()) return s;
  } else if (header.size() < columns.size()) {
    if (absl::Status s = RewriteWithColumns(path, header.size(), columns, older_rows, &fd); !s.ok()) return s;
  }
  *out = std::move(fd);
  return absl::OkStatus();
}

// An older nasperf's file gets this version's header, and its rows empty new cells,
// in one atomic replace; rows appended after it line up with the header again.
absl::Status CsvSink::RewriteWithColumns(const std::string& path, size_t old_width,
                                         const std::vector<std::string>& columns,
                                         const std::vector<std::vector<std::string>>& rows, Fd* fd) {
  std::string text = QuotedLine(columns, columns.size());
  for (const auto& row : rows) text += QuotedLine(row, columns.size());
  if (absl::Status s = ReplaceFile(path, text, 0644, /*durable=*/true); !s.ok()) return s;
  Fd reopened(::open(path.c_str(), O_RDWR | O_APPEND | O_CLOEXEC | O_NOFOLLOW));
  if (!reopened.valid()) return ErrnoStatus(errno, absl::StrCat("open ", path));
  *fd = std::move(reopened);
  open_info_.columns_added = columns.size() - old_width;
  Log(LogLevel::kWarning, "collector",
      "%s came from an older nasperf (%d columns); rewrote it with %d (%d rows kept, "
      "new cells empty)",
      path, old_width, columns.size(), rows.size());
  return absl::OkStatus();
}

absl::Status CsvSink::Submit(const proto::TransferReport& report) {
  bool duplicate = false;
  return Append(report, &duplicate);
}

absl::Status CsvSink::Append(const proto::TransferReport& report, bool* duplicate) {
  // The key is built from the cells as they read back from the file, so keys rebuilt
  // on Open match keys of new reports even where the formula guard changed a cell.
  std::string key =
      Key(FormulaGuard(report.run_id()), FormulaGuard(report.role()), FormulaGuard(report.host()),
          absl::StrCat(report.iteration()), absl::StrCat(report.stream()), absl::StrCat(report.transfer_id()));
  std::string row = TransferRow(report);
  std::string samples = SampleRows(report);
  uint64_t my_sequence = 0;
  {
    absl::MutexLock lock(&mu_);
    *duplicate = seen_.contains(key);
    if (*duplicate) return absl::OkStatus();
    const uint64_t growth = row.size() + samples.size();
    if (max_bytes_ > 0 && stored_bytes_ + growth > max_bytes_) {
      return absl::FailedPreconditionError(
          absl::StrCat(dir_, " holds ", stored_bytes_, " bytes of results; a row of ", growth,
                       " more would pass the store's limit of ", max_bytes_,
                       " (--max-store): make room or raise it; the reporters keep the rows until then"));
    }
    stored_bytes_ += growth;
    // Samples first: a crash between the two writes leaves samples without their
    // row, and the retried report then writes both (samples are not keyed).
    if (!samples.empty()) {
      if (absl::Status s = WriteAll(samples_.get(), samples.data(), samples.size(), samples_path()); !s.ok()) {
        return s;
      }
    }
    if (absl::Status s = WriteAll(transfers_.get(), row.data(), row.size(), transfers_path()); !s.ok()) {
      return s;
    }
    seen_.insert(key);
    my_sequence = ++written_;
  }
  // Group commit: whoever syncs covers every row written before the sync began, so
  // concurrent reporters share fdatasync calls instead of queueing one each.
  absl::MutexLock sync_lock(&sync_mu_);
  if (synced_ >= my_sequence) return absl::OkStatus();
  uint64_t covered = 0;
  int samples_fd = -1, transfers_fd = -1;
  {
    absl::MutexLock lock(&mu_);
    covered = written_;
    samples_fd = samples_.get();
    transfers_fd = transfers_.get();
  }
  if (::fdatasync(samples_fd) != 0) return ErrnoStatus(errno, absl::StrCat("fdatasync ", samples_path()));
  if (::fdatasync(transfers_fd) != 0) return ErrnoStatus(errno, absl::StrCat("fdatasync ", transfers_path()));
  synced_ = covered;
  return absl::OkStatus();
}

}  // namespace nasperf
