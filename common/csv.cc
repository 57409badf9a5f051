#include "common/csv.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"

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

// = + - @, their full-width forms (U+FF1D, U+FF0B, U+FF0D, U+FF20) and the small
// ones (U+FE66, U+FE62, U+FE63), which some spreadsheets read as the ASCII ones.
bool StartsFormula(absl::string_view text) {
  if (!text.empty() && absl::string_view("=+-@").find(text.front()) != absl::string_view::npos) return true;
  for (absl::string_view wide : {"\xef\xbc\x9d", "\xef\xbc\x8b", "\xef\xbc\x8d", "\xef\xbc\xa0", "\xef\xb9\xa6",
                                 "\xef\xb9\xa2", "\xef\xb9\xa3"}) {
    if (absl::StartsWith(text, wide)) return true;
  }
  return false;
}

// What spreadsheets skip before they look for a formula: ASCII blanks and line
// breaks (VT and FF too), NBSP, the ideographic space U+3000, a byte-order mark and a
// zero-width space.
absl::string_view SkipLeadingBlanks(absl::string_view text) {
  static constexpr absl::string_view kBlanks[] = {" ",  "\t",       "\r",           "\n",           "\v",
                                                  "\f", "\xc2\xa0", "\xe3\x80\x80", "\xef\xbb\xbf", "\xe2\x80\x8b"};
  for (bool skipped = true; skipped && !text.empty();) {
    skipped = false;
    for (absl::string_view blank : kBlanks) {
      if (absl::ConsumePrefix(&text, blank)) skipped = true;
    }
  }
  return text;
}

}  // namespace

std::string FormulaGuard(absl::string_view value) {
  // A cell that starts with a control blank (tab, CR, LF, VT, FF) is suspect on its own.
  const bool control_start =
      !value.empty() && absl::string_view("\t\r\n\v\f").find(value.front()) != absl::string_view::npos;
  if (control_start || StartsFormula(SkipLeadingBlanks(value))) return absl::StrCat("'", value);
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
