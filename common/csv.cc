#include "common/csv.h"

#include <algorithm>
#include <cstdint>
#include <utility>

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

// The code point a UTF-8 text starts with and its length in bytes; {-1, 1} for a
// byte that does not start one (such bytes are never skipped).
std::pair<int32_t, size_t> FirstCodePoint(absl::string_view text) {
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char lead = byte(0);
  const size_t length = lead < 0x80 ? 1 : (lead >> 5) == 0x6 ? 2 : (lead >> 4) == 0xe ? 3 : (lead >> 3) == 0x1e ? 4 : 0;
  if (length == 0 || length > text.size()) return {-1, 1};
  int32_t code = length == 1 ? lead : lead & (0x7f >> length);
  for (size_t i = 1; i < length; ++i) {
    if ((byte(i) & 0xc0) != 0x80) return {-1, 1};
    code = (code << 6) | (byte(i) & 0x3f);
  }
  return {code, length};
}

// What a spreadsheet may skip, or a reader never see, before it looks for a formula:
// ASCII blanks and line breaks (VT and FF too), NEL, NBSP, the soft hyphen, the
// Ogham, Mongolian, en/em/thin/hair (U+2000-U+200A), narrow, medium-math and
// ideographic spaces, the zero-width ones and joiners (U+200B-U+200D, U+2060, U+FEFF,
// which is also the byte-order mark), the direction marks, embeddings, overrides and
// isolates (U+200E-U+200F, U+202A-U+202E, U+2066-U+2069) and the line and paragraph
// separators U+2028-U+2029.
bool IsSkippedBlank(int32_t c) {
  static constexpr std::pair<int32_t, int32_t> kRanges[] = {
      {0x09, 0x0d},     {0x20, 0x20},     {0x85, 0x85},     {0xa0, 0xa0},     {0xad, 0xad},
      {0x1680, 0x1680}, {0x180e, 0x180e}, {0x2000, 0x200f}, {0x2028, 0x202f}, {0x205f, 0x2064},
      {0x2066, 0x206f}, {0x3000, 0x3000}, {0xfeff, 0xfeff}};
  for (const auto& [low, high] : kRanges) {
    if (c >= low && c <= high) return true;
  }
  return false;
}

absl::string_view SkipLeadingBlanks(absl::string_view text) {
  while (!text.empty()) {
    const auto [code, length] = FirstCodePoint(text);
    if (!IsSkippedBlank(code)) break;
    text.remove_prefix(length);
  }
  return text;
}

// string_view::find_first_of builds a table on every call; a cell is too short for that.
bool IsCsvSpecial(char c) { return c == ',' || c == '"' || c == '\r' || c == '\n'; }

// The next cell of a record, cleared: cells are parsed into the strings *fields already
// holds, so a store of rows of one width (the collector reads every row at start)
// costs no allocation per cell.
std::string* NextCell(std::vector<std::string>* fields, size_t* cells) {
  if (*cells == fields->size()) fields->emplace_back();
  std::string* cell = &(*fields)[(*cells)++];
  cell->clear();
  return cell;
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
  if (pos_ >= data_.size()) {
    fields->clear();
    return false;
  }
  record_line_ = next_line_;
  int line = next_line_;
  size_t cells = 0;
  std::string* field = NextCell(fields, &cells);
  // Plain pointer and length: a debug (sanitizer) build calls string_view's
  // operator[] and size() for real, and they were most of its time here.
  const char* const data = data_.data();
  const size_t size = data_.size();
  size_t i = pos_;
  bool quoted = false;      // inside a quoted field
  bool was_quoted = false;  // the current field started with a quote
  while (i < size) {
    if (quoted) {
      const size_t quote = std::min(data_.find('"', i), size);
      line += static_cast<int>(std::count(data + i, data + quote, '\n'));
      field->append(data + i, quote - i);
      i = quote;
      if (i == size) break;
      if (i + 1 < size && data[i + 1] == '"') {
        field->push_back('"');
        i += 2;
        continue;
      }
      quoted = false;
      ++i;
      continue;
    }
    const char c = data[i];
    if (c == '"') {
      if (!field->empty() || was_quoted) {
        return absl::InvalidArgumentError(absl::StrCat("line ", line, ": stray quote inside an unquoted field"));
      }
      quoted = was_quoted = true;
      ++i;
      continue;
    }
    if (c == ',') {
      field = NextCell(fields, &cells);
      was_quoted = false;
      ++i;
      continue;
    }
    if (c == '\r' && i + 1 < size && data[i + 1] == '\n') {
      ++i;
      continue;
    }
    if (c == '\n') {
      fields->resize(cells);
      pos_ = i + 1;
      next_line_ = line + 1;
      complete_bytes_ = pos_;
      return true;
    }
    if (was_quoted) {
      return absl::InvalidArgumentError(absl::StrCat("line ", line, ": text after a closing quote"));
    }
    // c is plain text (a lone CR too): it and the plain run after it.
    size_t run_end = i + 1;
    while (run_end < size && !IsCsvSpecial(data[run_end])) ++run_end;
    field->append(data + i, run_end - i);
    i = run_end;
  }
  // Ran off the end without a newline: a torn record (crash mid-write), or an
  // unterminated quote.
  torn_ = true;
  pos_ = data_.size();
  fields->clear();
  return false;
}

}  // namespace nasperf
