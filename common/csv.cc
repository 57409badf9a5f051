#include "common/csv.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace nasperf {

std::string CsvQuote(absl::string_view value) {
  if (value.find_first_of(",\"\r\n") == absl::string_view::npos) return std::string(value);
  std::string out = "\"";
  for (char c : value) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

namespace {

// = + - @ and their full-width forms (U+FF1D, U+FF0B, U+FF0D, U+FF20), which some
// spreadsheets read as the ASCII ones.
bool StartsFormula(absl::string_view text) {
  if (!text.empty() && absl::string_view("=+-@").find(text.front()) != absl::string_view::npos) return true;
  for (absl::string_view wide : {"\xef\xbc\x9d", "\xef\xbc\x8b", "\xef\xbc\x8d", "\xef\xbc\xa0"}) {
    if (absl::StartsWith(text, wide)) return true;
  }
  return false;
}

}  // namespace

std::string FormulaGuard(absl::string_view value) {
  // Spreadsheets skip leading blanks and line breaks before looking for a formula,
  // and a cell that starts with a tab, CR or LF is suspect on its own.
  const size_t first = value.find_first_not_of(" \t\r\n");
  const bool blank_start = !value.empty() && absl::string_view("\t\r\n").find(value.front()) != absl::string_view::npos;
  if (blank_start || (first != absl::string_view::npos && StartsFormula(value.substr(first)))) {
    return absl::StrCat("'", value);
  }
  return std::string(value);
}

std::string CsvText(absl::string_view value) { return CsvQuote(FormulaGuard(value)); }

std::string CsvLine(const std::vector<std::string>& cells) { return absl::StrCat(absl::StrJoin(cells, ","), "\n"); }

absl::StatusOr<bool> CsvReader::Next(std::vector<std::string>* fields) {
  size_t start = pos_;
  int start_line = next_line_;
  absl::StatusOr<bool> result = NextRecord(fields);
  if (!result.ok() && data_.find('\n', start) == absl::string_view::npos) {
    // Malformed, but the data ends before this record's newline: a torn write.
    pos_ = data_.size();
    next_line_ = start_line;
    torn_ = true;
    fields->clear();
    return false;
  }
  return result;
}

absl::StatusOr<bool> CsvReader::NextRecord(std::vector<std::string>* fields) {
  fields->clear();
  if (pos_ >= data_.size()) return false;
  record_line_ = next_line_;
  int line = next_line_;
  size_t i = pos_;
  std::string field;
  bool quoted = false;      // inside a quoted field
  bool was_quoted = false;  // the current field started with a quote
  while (i < data_.size()) {
    char c = data_[i];
    if (quoted) {
      if (c == '"') {
        if (i + 1 < data_.size() && data_[i + 1] == '"') {
          field += '"';
          i += 2;
          continue;
        }
        quoted = false;
        ++i;
        continue;
      }
      if (c == '\n') ++line;
      field += c;
      ++i;
      continue;
    }
    if (c == '"') {
      if (!field.empty() || was_quoted) {
        return absl::InvalidArgumentError(absl::StrCat("line ", line, ": stray quote inside an unquoted field"));
      }
      quoted = was_quoted = true;
      ++i;
      continue;
    }
    if (c == ',') {
      fields->push_back(std::move(field));
      field.clear();
      was_quoted = false;
      ++i;
      continue;
    }
    if (c == '\r' && i + 1 < data_.size() && data_[i + 1] == '\n') {
      ++i;
      continue;
    }
    if (c == '\n') {
      fields->push_back(std::move(field));
      pos_ = i + 1;
      next_line_ = line + 1;
      complete_bytes_ = pos_;
      return true;
    }
    if (was_quoted) {
      return absl::InvalidArgumentError(absl::StrCat("line ", line, ": text after a closing quote"));
    }
    field += c;
    ++i;
  }
  // Ran off the end without a newline: a torn record (crash mid-write), or an
  // unterminated quote.
  torn_ = true;
  pos_ = data_.size();
  fields->clear();
  return false;
}

}  // namespace nasperf
