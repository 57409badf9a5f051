#include "collector/csv_sink.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/sha.h>
#include <stdlib.h>

#include <algorithm>
#include <cmath>
#include <functional>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "common/csv.h"
#include "common/log.h"
#include "wire/columns.h"
#include "wire/validate.h"

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
                                   "transfer_id", "busiest_device", "busiest_busy_pct", "device_busy", "files"};
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

// What the sink keeps of a key: 16 bytes of its SHA-256, whatever the key's length.
// A peer that picks keys still cannot find two that collide.
absl::uint128 KeyDigest(const std::string& key) {
  // Fetched once: OpenSSL 3's SHA256() looks the algorithm up on every call, which
  // was a third of reading a store's keys at start.
  static EVP_MD* const sha256 = EVP_MD_fetch(nullptr, "SHA256", nullptr);
  unsigned char digest[EVP_MAX_MD_SIZE];
  if (sha256 == nullptr || EVP_Digest(key.data(), key.size(), digest, nullptr, sha256, nullptr) != 1) {
    SHA256(reinterpret_cast<const unsigned char*>(key.data()), key.size(), digest);
  }
  uint64_t high = 0, low = 0;
  for (int i = 0; i < 8; ++i) {
    high = (high << 8) | digest[i];
    low = (low << 8) | digest[8 + i];
  }
  return absl::MakeUint128(high, low);
}

// The widest a sample row's own cells get once CheckReport passed them: t_s bounded by
// kMaxFigure ("%.3f": 17 characters), bytes and transfer id 20 digits each, the rate
// below kMaxMegabytesPerSecond ("%.2f": 13), the device cells (a name, "100.0", the list,
// each perhaps quoted: 2 more), the files (20 digits), eight commas and the "\n".
constexpr size_t kSampleCellsMaxBytes =
    17 + 20 + 13 + 20 + (kMaxSampleDeviceNameBytes + 2) + 5 + (kMaxSampleDeviceBusyBytes + 2) + 20 + 9;
// Sample rows are written in batches of about this size.
constexpr size_t kWriteBatch = 64 << 10;
// transfers.csv is read in pieces of this size; no row of ours comes near it (its
// cells are bounded, wire/columns.h), so a longer one is not a nasperf row.
constexpr size_t kReadPiece = 1 << 20;

// The cells every sample row of a report starts with, the comma after them included.
std::string SamplePrefix(const proto::TransferReport& r) {
  return absl::StrCat(CsvText(r.run_id()), ",", CsvText(r.label()), ",", r.iteration(), ",", r.stream(), ",",
                      CsvText(r.role()), ",", CsvText(r.host()), ",");
}

// One samples.csv line, as CsvLine would make it from the cells of SampleColumns().
void AppendSampleRow(absl::string_view prefix, const proto::Sample& s, uint64_t transfer_id, std::string* out) {
  // CheckReport bounds the rate; a non-finite one still never reaches the file.
  double rate = s.interval_s() > 0 ? static_cast<double>(s.bytes()) / s.interval_s() / 1e6 : 0;
  if (!std::isfinite(rate)) rate = 0;
  absl::StrAppend(out, prefix, absl::StrFormat("%.3f", s.t_s()), ",", s.bytes(), ",", Rate(rate), ",", transfer_id, ",",
                  CsvText(s.busiest_device()), ",",
                  s.has_busiest_busy_pct() ? absl::StrFormat("%.1f", s.busiest_busy_pct()) : "", ",",
                  CsvText(s.device_busy()), ",", s.has_files() ? absl::StrCat(s.files()) : "", "\n");
}

// Hands each complete record of the CSV file fd (read from its current offset to
// its end, a piece at a time) to `record`. *torn gets what follows the last complete
// record (a crash's partial row; empty when none), *torn_at where it starts.
absl::Status ForEachRecord(int fd, const std::string& path,
                           const std::function<absl::Status(const std::vector<std::string>&)>& record,
                           uint64_t* torn_at, std::string* torn) {
  std::string buffer;  // the unread rest of the last piece, then the next piece
  uint64_t buffer_at = 0;
  int line = 1;
  std::vector<std::string> fields;
  for (bool end = false; !end;) {
    const size_t kept = buffer.size();
    buffer.resize(kept + kReadPiece);
    auto n = ReadFull(fd, buffer.data() + kept, kReadPiece, absl::StrCat("read ", path));
    if (!n.ok()) return n.status();
    buffer.resize(kept + *n);
    end = *n < kReadPiece;
    CsvReader reader(buffer, line);
    while (true) {
      auto more = reader.Next(&fields);
      if (!more.ok()) return absl::DataLossError(absl::StrCat(path, ": ", more.status().message()));
      if (!*more) break;
      if (absl::Status s = record(fields); !s.ok()) return s;
    }
    line = reader.next_line();
    buffer.erase(0, reader.complete_bytes());
    buffer_at += reader.complete_bytes();
    if (buffer.size() > kReadPiece) {
      return absl::DataLossError(
          absl::StrCat(path, ": the row on line ", line, " is longer than ", kReadPiece, " bytes: not a nasperf row"));
    }
  }
  *torn_at = buffer_at;
  *torn = std::move(buffer);
  return absl::OkStatus();
}

}  // namespace

std::string TransferRow(const proto::TransferReport& r) {
  std::vector<std::string> cells;
  for (const TransferColumn& column : TransferColumnTable()) cells.push_back(FormatCell(column, r));
  return CsvLine(cells);
}

std::string SampleRows(const proto::TransferReport& r) {
  const std::string prefix = SamplePrefix(r);
  std::string out;
  for (const proto::Sample& s : r.samples()) AppendSampleRow(prefix, s, r.transfer_id(), &out);
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

namespace {

// The header of an existing CSV file: this version's columns or an older nasperf's (a
// prefix of them: columns are only ever appended).
absl::Status CheckHeaderIsOurs(const std::string& path, const std::vector<std::string>& header,
                               const std::vector<std::string>& columns) {
  if (header.empty() || header[0] != columns[0]) {
    return absl::FailedPreconditionError(absl::StrCat(
        path, " exists but is not a nasperf CSV (first line: ", header.empty() ? "" : header[0].substr(0, 40), "...)"));
  }
  if (header.size() > columns.size() || !std::equal(header.begin(), header.end(), columns.begin())) {
    return absl::FailedPreconditionError(absl::StrCat(path, " was written by another nasperf version (its ",
                                                      header.size(), " columns are not the first of this one's ",
                                                      columns.size(), "); give --out a new directory"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CsvSink::OpenSamples(const std::string& path, const std::vector<std::string>& columns, Fd* out) {
  // Sample rows hold no line breaks (CheckReport refuses control characters in
  // labels and hosts), so the last "\n" ends the last whole row.
  constexpr size_t kWindow = 64 * 1024;
  Fd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0644));
  if (!fd.valid()) return ErrnoStatus(errno, absl::StrCat("open ", path));
  struct stat st {};
  if (fstat(fd.get(), &st) != 0) return ErrnoStatus(errno, absl::StrCat("stat ", path));
  uint64_t size = static_cast<uint64_t>(st.st_size);
  size_t old_width = columns.size();
  if (size > 0) {
    std::string head(std::min<uint64_t>(size, 4096), '\0');
    if (::pread(fd.get(), head.data(), head.size(), 0) != static_cast<ssize_t>(head.size())) {
      return ErrnoStatus(errno, absl::StrCat("read ", path));
    }
    std::vector<std::string> header;
    CsvReader reader(head);
    if (absl::StatusOr<bool> read = reader.Next(&header); !read.ok() || !*read) header.clear();
    if (absl::Status s = CheckHeaderIsOurs(path, header, columns); !s.ok()) return s;
    old_width = header.size();
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
  } else if (old_width < columns.size()) {
    if (absl::Status s = RewriteWithColumns(path, old_width, columns, &fd); !s.ok()) return s;
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
  if (absl::Status s = CheckHeaderIsOurs(path, header, columns); !s.ok()) return s;
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
  std::vector<std::string> header;
  std::vector<size_t> key_columns;
  auto row = [&](const std::vector<std::string>& fields) -> absl::Status {
    if (header.empty()) {
      header = fields;
      auto keys = CheckTransfersHeader(path, header, columns);
      if (!keys.ok()) return keys.status();
      key_columns = *keys;
      return absl::OkStatus();
    }
    if (fields.size() != header.size()) return absl::OkStatus();  // a report of this file will say so
    auto k = [&](int i) { return absl::string_view(fields[key_columns[i]]); };
    seen_.insert(KeyDigest(Key(k(0), k(1), k(2), k(3), k(4), k(5))));
    ++open_info_.rows_found;
    return absl::OkStatus();
  };
  uint64_t torn_at = 0;
  std::string torn;
  if (absl::Status s = ForEachRecord(fd.get(), path, row, &torn_at, &torn); !s.ok()) return s;
  if (!torn.empty()) {
    if (absl::Status s = SetAsideTorn(fd.get(), path, torn, torn_at); !s.ok()) return s;
    if (torn_at == 0) header.clear();
  }
  if (header.empty()) {
    std::string line = QuotedLine(columns, columns.size());
    if (absl::Status s = WriteAll(fd.get(), line.data(), line.size(), path); !s.ok()) return s;
  } else if (header.size() < columns.size()) {
    if (absl::Status s = RewriteWithColumns(path, header.size(), columns, &fd); !s.ok()) return s;
    open_info_.columns_added = columns.size() - header.size();
  }
  *out = std::move(fd);
  return absl::OkStatus();
}

// An older nasperf's file gets this version's header, and its rows empty new cells,
// in one atomic replace; rows appended after it line up with the header again.
absl::Status CsvSink::RewriteWithColumns(const std::string& path, size_t old_width,
                                         const std::vector<std::string>& columns, Fd* fd) {
  std::string tmp = path + ".tmp-XXXXXX";
  Fd out(::mkostemp(tmp.data(), O_CLOEXEC));  // O_CREAT | O_EXCL, mode 0600
  if (!out.valid()) return ErrnoStatus(errno, absl::StrCat("create a temporary file for ", path));
  std::string batch = QuotedLine(columns, columns.size());
  size_t rows = 0;
  bool header = true;
  auto row = [&](const std::vector<std::string>& fields) -> absl::Status {
    if (header || fields.size() != old_width) {  // the old header; rows that do not fit it are dropped
      header = false;
      return absl::OkStatus();
    }
    batch += QuotedLine(fields, columns.size());
    ++rows;
    if (batch.size() < kWriteBatch) return absl::OkStatus();
    absl::Status s = WriteAll(out.get(), batch.data(), batch.size(), absl::StrCat("write ", tmp));
    batch.clear();
    return s;
  };
  uint64_t torn_at = 0;
  std::string torn;  // already set aside by OpenTransfers
  absl::Status status =
      ::lseek(fd->get(), 0, SEEK_SET) == 0 ? absl::OkStatus() : ErrnoStatus(errno, absl::StrCat("seek ", path));
  if (status.ok()) status = ForEachRecord(fd->get(), path, row, &torn_at, &torn);
  if (status.ok()) status = WriteAll(out.get(), batch.data(), batch.size(), absl::StrCat("write ", tmp));
  if (status.ok() && ::fchmod(out.get(), 0644) != 0) status = ErrnoStatus(errno, absl::StrCat("chmod ", tmp));
  if (status.ok() && ::fsync(out.get()) != 0) status = ErrnoStatus(errno, absl::StrCat("fsync ", tmp));
  if (status.ok() && ::rename(tmp.c_str(), path.c_str()) != 0) {
    status = ErrnoStatus(errno, absl::StrCat("rename ", tmp, " to ", path));
  }
  if (!status.ok()) {
    ::unlink(tmp.c_str());
    return status;
  }
  Fd dir_fd(::open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dir_fd.valid()) ::fsync(dir_fd.get());
  Fd reopened(::open(path.c_str(), O_RDWR | O_APPEND | O_CLOEXEC | O_NOFOLLOW));
  if (!reopened.valid()) return ErrnoStatus(errno, absl::StrCat("open ", path));
  *fd = std::move(reopened);
  Log(LogLevel::kWarning, "collector",
      "%s came from an older nasperf (%d columns); rewrote it with %d (%d rows kept, "
      "new cells empty)",
      path, old_width, columns.size(), rows);
  return absl::OkStatus();
}

absl::Status CsvSink::WriteSamples(const proto::TransferReport& report, absl::string_view prefix) {
  std::string batch;
  batch.reserve(kWriteBatch + prefix.size() + kSampleCellsMaxBytes);
  for (int i = 0; i < report.samples_size(); ++i) {
    AppendSampleRow(prefix, report.samples(i), report.transfer_id(), &batch);
    if (batch.size() < kWriteBatch && i + 1 < report.samples_size()) continue;
    if (absl::Status s = WriteAll(samples_.get(), batch.data(), batch.size(), samples_path()); !s.ok()) return s;
    stored_bytes_ += batch.size();
    batch.clear();
  }
  return absl::OkStatus();
}

absl::Status CsvSink::Submit(const proto::TransferReport& report) {
  bool duplicate = false;
  return Append(report, &duplicate);
}

absl::Status CsvSink::Append(const proto::TransferReport& report, bool* duplicate) {
  // The key is built from the cells as they read back from the file, so keys rebuilt
  // on Open match keys of new reports even where the formula guard changed a cell.
  const absl::uint128 key = KeyDigest(Key(FormulaGuard(report.run_id()), FormulaGuard(report.role()),
                                          FormulaGuard(report.host()), absl::StrCat(report.iteration()),
                                          absl::StrCat(report.stream()), absl::StrCat(report.transfer_id())));
  const std::string row = TransferRow(report);  // one line: its cells are bounded
  const std::string prefix = SamplePrefix(report);
  // What the report can add at most, known before a single sample row is formatted.
  const uint64_t growth =
      row.size() + static_cast<uint64_t>(report.samples_size()) * (prefix.size() + kSampleCellsMaxBytes);
  uint64_t my_sequence = 0;
  {
    absl::MutexLock lock(&mu_);
    *duplicate = seen_.contains(key);
    if (*duplicate) return absl::OkStatus();
    if (max_bytes_ > 0 && stored_bytes_ + growth > max_bytes_) {
      return absl::FailedPreconditionError(
          absl::StrCat(dir_, " holds ", stored_bytes_, " bytes of results; a report of up to ", growth,
                       " more would pass the store's limit of ", max_bytes_,
                       " (--max-store): make room or raise it; the reporters keep the rows until then"));
    }
    // Samples first: a crash between the two writes leaves samples without their
    // row, and the retried report then writes both (samples are not keyed).
    if (absl::Status s = WriteSamples(report, prefix); !s.ok()) return s;
    if (absl::Status s = WriteAll(transfers_.get(), row.data(), row.size(), transfers_path()); !s.ok()) {
      return s;
    }
    stored_bytes_ += row.size();
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
