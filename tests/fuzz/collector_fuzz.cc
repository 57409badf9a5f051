// libFuzzer target for the collector's request check: any bytes a token holder can
// send as a TransferReport either fail CheckReport or become CSV rows that `nasperf
// report` reads back: one line each, exactly one cell per column, no cell a
// spreadsheet would run as a formula.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "collector/csv_sink.h"
#include "proto/nasperf.pb.h"
#include "wire/validate.h"

namespace {

// The cells of one CSV line, unquoted. Traps on a line break anywhere (the reader
// is line-oriented and CheckReport refuses control characters) or an open quote.
std::vector<std::string> Cells(absl::string_view line) {
  std::vector<std::string> cells(1);
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (c == '\n' || c == '\r') __builtin_trap();
    if (c == '"') {
      if (quoted && i + 1 < line.size() && line[i + 1] == '"') {
        cells.back() += '"';
        ++i;
      } else {
        quoted = !quoted;
      }
    } else if (c == ',' && !quoted) {
      cells.emplace_back();
    } else {
      cells.back() += c;
    }
  }
  if (quoted) __builtin_trap();
  return cells;
}

void CheckLines(const std::string& text, size_t columns) {
  if (text.empty()) return;
  if (text.back() != '\n') __builtin_trap();
  for (absl::string_view line : absl::StrSplit(absl::string_view(text).substr(0, text.size() - 1), '\n')) {
    std::vector<std::string> cells = Cells(line);
    if (cells.size() != columns) __builtin_trap();
    for (const std::string& cell : cells) {
      size_t first = cell.find_first_not_of(" \t");
      if (first != std::string::npos && (cell[first] == '=' || cell[first] == '+' || cell[first] == '@'))
        __builtin_trap();
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace nasperf;
  proto::TransferReport report;
  if (!report.ParseFromArray(data, static_cast<int>(size))) return -1;
  if (!CheckReport(report).ok()) return 0;
  CheckLines(TransferRow(report), TransferColumns().size());
  CheckLines(SampleRows(report), SampleColumns().size());
  return 0;
}
