// RFC 4180 CSV, both ways. Writing: fields quoted only when needed, free-text cells
// guarded so a spreadsheet never runs them as a formula. Reading: quoted fields with
// commas, quotes and newlines, errors with the line number, and a torn last record
// (no newline at the end) reported apart. Pure functions / single-owner reader.
#ifndef NASPERF_COMMON_CSV_H_
#define NASPERF_COMMON_CSV_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace nasperf {

// A cell as RFC 4180 wants it: quoted when it holds a comma, quote, CR or LF.
std::string CsvQuote(absl::string_view value);
// For text a user or a peer typed (labels, errors, host names): a leading = + - @
// (after any blank a spreadsheet skips, in any of their wide forms) or control blank
// gets a ' in front so spreadsheets show it as text. This is the cell's value
// as a CSV reader gives it back.
std::string FormulaGuard(absl::string_view value);
// CsvQuote(FormulaGuard(value)).
std::string CsvText(absl::string_view value);
// Joins already-quoted cells with commas and ends the line with "\n".
std::string CsvLine(const std::vector<std::string>& cells);

class CsvReader {
 public:
  // first_line: the line data starts on, for a file read in pieces.
  explicit CsvReader(absl::string_view data, int first_line = 1) : data_(data), next_line_(first_line) {}
  // Reads the next record into fields. Returns false at the end. A record whose last
  // line has no "\n" sets torn() and is not returned. Errors name the line.
  absl::StatusOr<bool> Next(std::vector<std::string>* fields);
  // 1-based line on which the record last returned started.
  int line() const { return record_line_; }
  bool torn() const { return torn_; }
  // Byte offset just past the last complete record, and the line it ends before.
  size_t complete_bytes() const { return complete_bytes_; }
  int next_line() const { return next_line_; }

 private:
  absl::StatusOr<bool> NextRecord(std::vector<std::string>* fields);

  absl::string_view data_;
  size_t pos_ = 0;
  int next_line_ = 1;
  int record_line_ = 0;
  bool torn_ = false;
  size_t complete_bytes_ = 0;
};

}  // namespace nasperf

#endif  // NASPERF_COMMON_CSV_H_
