// libFuzzer target for what `nasperf report`/`compare` do with a CSV from anywhere:
// any bytes must parse to a table or an error naming a line, and every table must
// summarize, compare and render to HTML without crashing; nothing from the input
// may come out as markup (the HTML never holds a script or an element the report
// did not write).
#include <cstddef>
#include <cstdint>
#include <string>

#include "report/analysis.h"
#include "report/html.h"
#include "report/table.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace nasperf;
  std::string text(reinterpret_cast<const char*>(data), size);
  ResultTable table;
  absl::Status parsed = ParseTransfersCsv("fuzz.csv", text, &table);
  if (!parsed.ok()) {
    if (std::string(parsed.message()).find("fuzz.csv") == std::string::npos) __builtin_trap();
    return 0;
  }
  (void)ParseSamplesCsv("samples.csv", text, &table);
  auto report = SummarizeResults(table, std::nullopt);
  if (!report.ok()) return 0;
  (void)ReportText(*report);
  (void)ReportJson(*report);
  auto compare = Compare(table, "label", "", std::nullopt);
  if (compare.ok()) {
    (void)CompareText(*compare);
    (void)CompareJson(*compare);
  }
  HtmlReportInput input;
  input.table = &table;
  input.report = &*report;
  input.compare = compare.ok() ? &*compare : nullptr;
  input.generator = "fuzz";
  std::string html = RenderHtmlReport(input);
  if (html.find("<script") != std::string::npos || html.find("<img") != std::string::npos ||
      html.find("<iframe") != std::string::npos) {
    __builtin_trap();
  }
  return 0;
}
