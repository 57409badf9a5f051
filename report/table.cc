#include "report/table.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/csv.h"
#include "measure/verdict.h"
#include "wire/columns.h"

namespace nasperf {

const std::string& TransferRecord::Cell(const std::string& column) const {
  static const std::string* empty = new std::string();
  auto it = cells.find(column);
  return it == cells.end() ? *empty : it->second;
}

namespace {

// The header of one file: column name -> index. Duplicated names are an error
// because a script could not tell which one it reads.
absl::StatusOr<std::map<std::string, size_t>> IndexHeader(const std::string& path,
                                                          const std::vector<std::string>& header) {
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < header.size(); ++i) {
    if (!index.emplace(header[i], i).second) {
      return absl::InvalidArgumentError(absl::StrCat(path, ":1: column '", header[i], "' appears twice in the header"));
    }
  }
  return index;
}

absl::Status RequireColumns(const std::string& path, const std::map<std::string, size_t>& index,
                            const std::vector<std::string>& required) {
  std::vector<std::string> missing;
  for (const std::string& column : required) {
    if (index.count(column) == 0) missing.push_back(column);
  }
  if (missing.empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(path, ":1: header lacks the column", missing.size() == 1 ? " " : "s ",
                                                 absl::StrJoin(missing, ", ")));
}

absl::Status BadCell(const std::string& where, const std::string& column, const std::string& value,
                     const char* expected) {
  return absl::InvalidArgumentError(absl::StrCat(where, ": column ", column, ": '", value, "' is not ", expected));
}

// A word column (role, status) through its Parse: other words are refused here.
template <typename T>
absl::Status ParseWord(const std::string& where, const std::string& column, const std::string& value, T* out) {
  auto word = Parse<T>(value);
  if (!word.ok()) {
    return BadCell(where, column, value, absl::StrCat("one of ", absl::StrJoin(Names<T>(), ", ")).c_str());
  }
  *out = *word;
  return absl::OkStatus();
}

// Walks the records of one file, checking the field count against the header.
// `visit(fields, "path:line")` is called for every data record.
template <typename Visit>
absl::Status ForEachRecord(const std::string& path, const std::string& text, const std::vector<std::string>& required,
                           ResultTable* table, Visit visit) {
  CsvReader reader(text);
  std::vector<std::string> header;
  auto got = reader.Next(&header);
  if (!got.ok()) return absl::InvalidArgumentError(absl::StrCat(path, ": ", got.status().message()));
  if (!*got) return absl::InvalidArgumentError(absl::StrCat(path, ":1: empty file, no header"));
  auto index = IndexHeader(path, header);
  if (!index.ok()) return index.status();
  if (absl::Status s = RequireColumns(path, *index, required); !s.ok()) return s;
  std::vector<std::string> fields;
  while (true) {
    got = reader.Next(&fields);
    if (!got.ok()) return absl::InvalidArgumentError(absl::StrCat(path, ": ", got.status().message()));
    if (!*got) break;
    std::string where = absl::StrCat(path, ":", reader.line());
    if (fields.size() == 1 && fields[0].empty()) continue;  // a blank line
    if (fields.size() != header.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": ", fields.size(), " fields, the header has ", header.size()));
    }
    if (absl::Status s = visit(fields, *index, where); !s.ok()) return s;
  }
  if (reader.torn()) {
    table->warnings.push_back(absl::StrCat(path,
                                           ": the last line has no newline (a write in progress or a "
                                           "crash); it was left out"));
  }
  return absl::OkStatus();
}

absl::Status ParseInt(const std::string& where, const std::string& column, const std::string& value, long long* out) {
  int64_t v = 0;
  if (!absl::SimpleAtoi(value, &v)) return BadCell(where, column, value, "a whole number");
  *out = v;
  return absl::OkStatus();
}

absl::Status ParseDouble(const std::string& where, const std::string& column, const std::string& value, double* out) {
  double v = 0;
  // Bounded, so sums and means over any number of rows stay finite.
  if (!absl::SimpleAtod(value, &v) || !std::isfinite(v) || std::fabs(v) > 1e15) {
    return BadCell(where, column, value, "a number (at most 1e15 in size)");
  }
  *out = v;
  return absl::OkStatus();
}

absl::StatusOr<std::string> ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open ", path));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return absl::DataLossError(absl::StrCat("cannot read ", path));
  return text.str();
}

bool IsDirectory(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool FileExists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// First line of a file's text, for telling transfers.csv from samples.csv.
bool LooksLikeSamples(const std::string& text) {
  CsvReader reader(text);
  std::vector<std::string> header;
  auto got = reader.Next(&header);
  if (!got.ok() || !*got) return false;
  std::set<std::string> names(header.begin(), header.end());
  return names.count("t_s") > 0 && names.count("status") == 0;
}

// Rows that flagged a figure as impossible (the notes column), and rows from an older
// nasperf whose line_rate_pct says more than the link can carry: one warning each.
void WarnAboutImpossibleFigures(ResultTable* table) {
  size_t noted = 0, over_line_rate = 0;
  std::string first_note;
  for (const TransferRecord& r : table->transfers) {
    if (!r.Cell("notes").empty()) {
      if (noted++ == 0) first_note = absl::StrCat(r.source, ": ", r.Cell("notes"));
      continue;
    }
    double pct = 0;
    if (absl::SimpleAtod(r.Cell("line_rate_pct"), &pct) && pct > kMaxPlausibleLineRatePct) ++over_line_rate;
  }
  if (noted > 0) {
    table->warnings.push_back(absl::StrCat(noted, " row", noted == 1 ? " has" : "s have",
                                           " a figure left out as impossible, e.g. ", first_note));
  }
  if (over_line_rate > 0) {
    table->warnings.push_back(absl::StrCat(
        over_line_rate, " row", over_line_rate == 1 ? " shows" : "s show", " line_rate_pct over ",
        kMaxPlausibleLineRatePct, "%: the link was faster than the --link-speed given, so that figure is wrong"));
  }
}

// The columns the statistics read: a cell of theirs that does not read back is an
// error naming the line. Any other column's cell that does not (a hand edit, an older
// nasperf) leaves its field unset and stays text in `cells`, as it always did.
bool StatisticsRead(absl::string_view column) {
  for (absl::string_view name : {"iteration", "stream", "warmup", "mb_per_s", "bytes", "duration_s"}) {
    if (column == name) return true;
  }
  return false;
}

// Every column of wire/columns.h the header has, through the table's reader.
absl::Status ReadKnownColumns(const std::vector<std::string>& fields, const std::map<std::string, size_t>& index,
                              const std::string& where, proto::TransferReport* row) {
  for (const TransferColumn& column : TransferColumnTable()) {
    auto at = index.find(column.name);
    if (at == index.end()) continue;
    absl::Status read = ReadCell(column, fields[at->second], row);
    if (!read.ok() && StatisticsRead(column.name)) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": ", read.message()));
    }
  }
  return absl::OkStatus();
}

// The statistics' view of r->row: words as enums, unknown figures as -1, warm-ups of
// files without the warmup column told by their iteration.
absl::Status TakeStatisticsFields(bool has_warmup_column, const std::string& where, TransferRecord* r) {
  const proto::TransferReport& row = r->row;
  if (r->Cell("iteration").empty()) return BadCell(where, "iteration", "", "a whole number");
  if (absl::Status s = ParseWord(where, "role", row.role(), &r->role); !s.ok()) return s;
  if (absl::Status s = ParseWord(where, "status", row.status(), &r->status); !s.ok()) return s;
  r->run_id = row.run_id();
  r->label = row.label();
  r->host = row.host();
  r->error = row.error();
  r->bottleneck = row.bottleneck();
  // An older nasperf's word for a slow source.
  if (r->bottleneck == Name(Bottleneck::kOldSender)) r->bottleneck = Name(Bottleneck::kSource);
  r->started_at = r->Cell("started_at");
  r->iteration = row.iteration();
  r->stream = row.stream();
  // Older files have no warmup column; their warm-ups carry iterations <= 0.
  r->warmup = row.warmup() || (!has_warmup_column && r->iteration <= 0);
  // An unknown rate is an empty cell (docs/DESIGN.md §5, CSV contract), e.g. a failed row.
  r->has_rate = row.has_mb_per_s();
  r->mb_per_s = row.mb_per_s();
  // Optional: used to add up the streams of one iteration.
  r->bytes = row.has_bytes() ? static_cast<double>(row.bytes()) : -1;
  r->duration_s = row.has_duration_s() ? row.duration_s() : -1;
  return absl::OkStatus();
}

}  // namespace

std::string TransferKey(const std::string& run_id, Role role, const std::string& host, long long iteration,
                        long long stream) {
  return absl::StrCat(run_id, "\x1f", Name(role), "\x1f", host, "\x1f", iteration, "\x1f", stream);
}

absl::Status ParseTransfersCsv(const std::string& path, const std::string& text, ResultTable* table) {
  return ForEachRecord(path, text, {"label", "iteration", "role", "mb_per_s", "status"}, table,
                       [&](const std::vector<std::string>& fields, const std::map<std::string, size_t>& index,
                           const std::string& where) -> absl::Status {
                         TransferRecord r;
                         r.source = where;
                         for (const auto& [name, i] : index) r.cells[name] = fields[i];
                         if (absl::Status s = ReadKnownColumns(fields, index, where, &r.row); !s.ok()) return s;
                         if (absl::Status s = TakeStatisticsFields(index.count("warmup") > 0, where, &r); !s.ok())
                           return s;
                         table->transfers.push_back(std::move(r));
                         return absl::OkStatus();
                       });
}

absl::Status ParseSamplesCsv(const std::string& path, const std::string& text, ResultTable* table) {
  return ForEachRecord(path, text, {"label", "iteration", "role", "t_s", "mb_per_s"}, table,
                       [&](const std::vector<std::string>& fields, const std::map<std::string, size_t>& index,
                           const std::string& where) -> absl::Status {
                         auto cell = [&](const char* name) -> std::string {
                           auto it = index.find(name);
                           return it == index.end() ? std::string() : fields[it->second];
                         };
                         SampleRecord s;
                         s.run_id = cell("run_id");
                         s.label = cell("label");
                         if (absl::Status st = ParseWord(where, "role", cell("role"), &s.role); !st.ok()) return st;
                         s.host = cell("host");
                         if (absl::Status st = ParseInt(where, "iteration", cell("iteration"), &s.iteration); !st.ok())
                           return st;
                         if (!cell("stream").empty()) {
                           if (absl::Status st = ParseInt(where, "stream", cell("stream"), &s.stream); !st.ok())
                             return st;
                         }
                         if (absl::Status st = ParseDouble(where, "t_s", cell("t_s"), &s.t_s); !st.ok()) return st;
                         if (absl::Status st = ParseDouble(where, "mb_per_s", cell("mb_per_s"), &s.mb_per_s); !st.ok())
                           return st;
                         if (!cell("bytes").empty()) {
                           if (absl::Status st = ParseDouble(where, "bytes", cell("bytes"), &s.bytes); !st.ok())
                             return st;
                           if (s.bytes < 0) return BadCell(where, "bytes", cell("bytes"), "a count of bytes");
                         }
                         table->samples.push_back(std::move(s));
                         return absl::OkStatus();
                       });
}

namespace {

// Drops duplicate transfers, refuses a table without any, and adds the warnings.
absl::StatusOr<ResultTable> FinishTable(ResultTable table) {
  // Two collectors fed by the same agents, or a directory and its file both named:
  // the same transfer must count once.
  std::set<std::string> keys;
  std::vector<TransferRecord> unique;
  size_t duplicates = 0;
  for (TransferRecord& r : table.transfers) {
    std::string key = absl::StrJoin({r.run_id, std::string(Name(r.role)), r.host, absl::StrCat(r.iteration),
                                     absl::StrCat(r.stream), r.Cell("transfer_id")},
                                    "\x1f");
    if (!r.run_id.empty() && !keys.insert(key).second) {
      ++duplicates;
      continue;
    }
    unique.push_back(std::move(r));
  }
  table.transfers = std::move(unique);
  if (duplicates > 0) {
    table.warnings.push_back(absl::StrCat(duplicates, " duplicate transfer row", duplicates == 1 ? "" : "s",
                                          " (same run, role, host, iteration, stream, id) counted once"));
  }
  if (table.transfers.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("no transfer rows in ", absl::StrJoin(table.files, ", ")));
  }
  WarnAboutImpossibleFigures(&table);
  return table;
}

// A file's first line (its header, at most 64 KiB) and the whole lines of its last
// `max_bytes`; *size: the file's size, *cut: whether lines were left out.
absl::StatusOr<std::string> ReadHeadAndTail(const std::string& path, size_t max_bytes, off_t* size, bool* cut) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return absl::NotFoundError(absl::StrCat("cannot open ", path, ": ", std::strerror(errno)));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return absl::InvalidArgumentError(absl::StrCat(path, ": not a regular file"));
  }
  std::string head(64 * 1024, '\0'), tail;
  ssize_t got = ::pread(fd, head.data(), head.size(), 0);
  int error = errno;
  *size = st.st_size;
  const off_t from = std::max<off_t>(0, st.st_size - static_cast<off_t>(max_bytes));
  if (got >= 0) {
    head.resize(static_cast<size_t>(got));
    tail.resize(static_cast<size_t>(st.st_size - from));
    got = ::pread(fd, tail.data(), tail.size(), from);
    error = errno;
  }
  ::close(fd);
  if (got < 0) return absl::DataLossError(absl::StrCat("cannot read ", path, ": ", std::strerror(error)));
  tail.resize(static_cast<size_t>(got));
  *cut = from > 0;
  if (!*cut) return tail;
  const size_t head_end = head.find('\n');
  if (head_end == std::string::npos) return absl::InvalidArgumentError(absl::StrCat(path, ":1: a header past 64 KiB"));
  const size_t first = tail.find('\n');
  tail.erase(0, first == std::string::npos ? tail.size() : first + 1);  // a row cut in two
  return absl::StrCat(absl::string_view(head).substr(0, head_end + 1), tail);
}

// Keeps the header line and the last `max_lines` lines after it; *cut when any went.
void KeepLastLines(std::string* text, size_t max_lines, bool* cut) {
  const size_t header_end = text->find('\n');
  if (header_end == std::string::npos) return;
  size_t at = text->size();
  if (at > header_end + 1 && (*text)[at - 1] == '\n') --at;  // the last line's own newline
  for (size_t n = 0; n < max_lines; ++n) {
    if (at <= header_end + 1) return;
    at = text->rfind('\n', at - 1);
    if (at == std::string::npos || at <= header_end) return;
  }
  text->erase(header_end + 1, at - header_end);
  *cut = true;
}

// The tail of one file parsed; a tail that starts inside a quoted field with a newline
// fails to parse: up to 8 more lines are dropped until it parses.
absl::Status ParseTail(const std::string& path, const TailBounds& bounds, bool samples, ResultTable* table) {
  off_t size = 0;
  bool cut = false;
  absl::StatusOr<std::string> text = ReadHeadAndTail(path, bounds.max_bytes, &size, &cut);
  if (!text.ok()) return text.status();
  KeepLastLines(&*text, bounds.max_rows, &cut);
  absl::Status status;
  for (int attempt = 0; attempt < 9; ++attempt) {
    ResultTable part;
    status = samples ? ParseSamplesCsv(path, *text, &part) : ParseTransfersCsv(path, *text, &part);
    if (status.ok()) {
      for (auto& r : part.transfers) table->transfers.push_back(std::move(r));
      for (auto& r : part.samples) table->samples.push_back(std::move(r));
      for (auto& w : part.warnings) table->warnings.push_back(std::move(w));
      if (cut && !samples) {
        table->warnings.push_back(absl::StrFormat("this report shows only the last %d transfer rows of %s (%.1f MiB)",
                                                  part.transfers.size(), path, size / 1048576.0));
      }
      return absl::OkStatus();
    }
    const size_t header_end = text->find('\n'), next = text->find('\n', header_end + 1);
    if (!cut || next == std::string::npos) break;
    text->erase(header_end + 1, next - header_end);
  }
  return status;
}

}  // namespace

absl::StatusOr<ResultTable> LoadResults(const std::vector<std::string>& inputs) {
  ResultTable table;
  std::set<std::string> read;
  auto read_one = [&](const std::string& path, bool samples) -> absl::Status {
    if (!read.insert(path).second) return absl::OkStatus();
    auto text = ReadWholeFile(path);
    if (!text.ok()) return text.status();
    table.files.push_back(path);
    return samples ? ParseSamplesCsv(path, *text, &table) : ParseTransfersCsv(path, *text, &table);
  };
  for (const std::string& input : inputs) {
    if (IsDirectory(input)) {
      std::string transfers = input + "/transfers.csv";
      if (!FileExists(transfers)) {
        return absl::NotFoundError(absl::StrCat(input, ": no transfers.csv in this directory"));
      }
      if (absl::Status s = read_one(transfers, false); !s.ok()) return s;
      std::string samples = input + "/samples.csv";
      if (FileExists(samples)) {
        if (absl::Status s = read_one(samples, true); !s.ok()) return s;
      }
      continue;
    }
    auto text = ReadWholeFile(input);
    if (!text.ok()) return text.status();
    if (absl::Status s = read_one(input, LooksLikeSamples(*text)); !s.ok()) return s;
  }
  return FinishTable(std::move(table));
}

absl::StatusOr<ResultTable> LoadResultsTail(const std::string& dir, const TailBounds& bounds) {
  ResultTable table;
  const std::string transfers = dir + "/transfers.csv", samples = dir + "/samples.csv";
  if (!FileExists(transfers)) return absl::NotFoundError(absl::StrCat(dir, ": no transfers.csv in this directory"));
  if (absl::Status s = ParseTail(transfers, bounds, false, &table); !s.ok()) return s;
  table.files.push_back(transfers);
  if (FileExists(samples)) {
    // A transfer has a sample a second or so: 64 of its lines a row.
    const TailBounds sample_bounds{bounds.max_bytes, bounds.max_rows * 64};
    if (absl::Status s = ParseTail(samples, sample_bounds, true, &table); !s.ok()) return s;
    table.files.push_back(samples);
  }
  return FinishTable(std::move(table));
}

}  // namespace nasperf
