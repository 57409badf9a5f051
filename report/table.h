// Loads the collector's CSVs (docs/DESIGN.md §5, the CSV contract; §7, reports and statistics)
// for `report` and `compare`: any number of result directories or CSV files, merged into one
// table of transfers and one of per-interval samples. Columns are found by header name, so
// columns appended after the contract ones are tolerated; a malformed file is an error naming
// the file and line. Pure functions over values; thread-safe.
#ifndef NASPERF_REPORT_TABLE_H_
#define NASPERF_REPORT_TABLE_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/policy.h"
#include "proto/nasperf.pb.h"

namespace nasperf {

// One transfers.csv row. `cells` keeps every column by header name so `--by` can
// group by any of them; `row` holds the columns this nasperf knows (wire/columns.h)
// read back into their fields; the fields below are the statistics' view of `row`.
struct TransferRecord {
  std::string source;  // "path:line" for messages
  std::map<std::string, std::string> cells;
  proto::TransferReport row;  // an empty cell, or a column the file lacks, is unset
  std::string run_id, label, host, error, bottleneck, started_at;
  Role role = Role::kSender;
  Status status = Status::kOk;
  long long iteration = 0;
  long long stream = 0;
  bool warmup = false;
  bool has_rate = false;
  double mb_per_s = 0;     // sender: end to end; receiver: durable (docs/DESIGN.md §6, measurement semantics)
  double bytes = -1;       // -1: unknown
  double duration_s = -1;  // the time mb_per_s is measured over; -1: unknown

  // The cell of a column, or "" when the file had no such column.
  const std::string& Cell(const std::string& column) const;
  // A row that goes into statistics: not a warm-up, status ok, a throughput present.
  bool Measured() const { return !warmup && status == Status::kOk && has_rate; }
};

struct SampleRecord {
  std::string run_id, label;
  Role role = Role::kSender;
  std::string host;
  long long iteration = 0;
  long long stream = 0;
  double t_s = 0;
  double mb_per_s = 0;
  double bytes = -1;  // -1: a file without the bytes column
};

struct ResultTable {
  std::vector<TransferRecord> transfers;  // in input order, duplicates dropped
  std::vector<SampleRecord> samples;
  std::vector<std::string> files;     // what was read
  std::vector<std::string> warnings;  // torn last lines, duplicate rows
};

// The key that ties a sample to its transfer row (run, role, host, iteration, stream).
std::string TransferKey(const std::string& run_id, Role role, const std::string& host, long long iteration,
                        long long stream);

// Each input is a directory holding transfers.csv (and maybe samples.csv) or a CSV
// file; a file is a samples file when its header has t_s and no status column.
// The same transfer (run, role, host, iteration, stream, transfer id) read twice is
// kept once.
absl::StatusOr<ResultTable> LoadResults(const std::vector<std::string>& inputs);

// A live view of a result directory of any size: its transfers.csv's header and the last
// `max_rows` lines (a row with a newline in a quoted cell counts twice) within its last
// `max_bytes` (samples.csv likewise, 64 lines a row), read with two preads each, so the
// memory used is bounded whatever the file's size. When rows were left out, a warning
// says how many rows are shown.
struct TailBounds {
  size_t max_bytes = size_t{1} << 20;
  size_t max_rows = 1000;
};
absl::StatusOr<ResultTable> LoadResultsTail(const std::string& dir, const TailBounds& bounds);

// Parses one file's text; `path` only names it in errors. Appends to *table.
absl::Status ParseTransfersCsv(const std::string& path, const std::string& text, ResultTable* table);
absl::Status ParseSamplesCsv(const std::string& path, const std::string& text, ResultTable* table);

}  // namespace nasperf

#endif  // NASPERF_REPORT_TABLE_H_
