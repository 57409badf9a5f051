// The columns of transfers.csv (docs/DESIGN.md §5, the CSV contract), each declared once: its name,
// place in the contract, format, unit, bound and meaning. The collector's header and
// rows, CheckReport, the report reader and docs/reference/csv.md all walk this table.
// The table is built on first use and never changes after: thread-safe.
#ifndef NASPERF_WIRE_COLUMNS_H_
#define NASPERF_WIRE_COLUMNS_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "proto/nasperf.pb.h"

namespace nasperf {

// The original design's columns, 1-29, never move: users' spreadsheets and scripts
// address them by position. Every later column is appended after the last one.
enum class ColumnPlace { kContract, kAppended };
inline constexpr size_t kContractColumns = 29;

// How a cell is written, and read back. Unknown (an unset optional field) is always
// an empty cell, never 0.
enum class CellFormat {
  kText,     // CsvText: a formula guard, RFC 4180 quoting when needed
  kInteger,  // decimal
  kSeconds,  // %.6f
  kRate,     // %.2f
  kPercent,  // %.1f
  kTime,     // unix ns as RFC 3339 UTC with milliseconds; 0 is unknown
  kBool,     // true | false
};

// What CheckReport (wire/validate.cc) holds a column's field to.
struct ColumnBound {
  enum class Kind {
    kNone,           // any value of the field's type
    kRunId,          // CheckRunId: it becomes part of file names
    kPlainText,      // at most max_bytes, no NUL and no control characters
    kText,           // at most max_bytes; of the control characters only '\n' and '\t' (errors, notes)
    kWord,           // one of words(), or empty when empty_ok
    kTransportWord,  // IsTransportWord (common/policy.h): the words are the transport registry's
    kRange,          // a whole number in [min, max]
    kFigure,         // when set: finite, 0 to kMaxFigure
    kShare,          // a figure that is a share of a whole: at most 100
    kSince1970,      // a unix time, not negative
    kDevice,         // a kernel block device name (sdb, nvme0n1, dm-0), or empty
    kDeviceList,     // NAME=PCT;... of kDevice names and whole percentages 0-100, at most max items
  };
  Kind kind = Kind::kNone;
  size_t max_bytes = 0;                                  // kPlainText, kText
  int64_t min = 0, max = 0;                              // kRange
  const std::vector<std::string>& (*words)() = nullptr;  // kWord
  bool empty_ok = false;                                 // kWord
};
// Larger than any real figure; a value past it is corrupt input.
inline constexpr double kMaxFigure = 1e12;

constexpr ColumnBound NoBound() { return {}; }
constexpr ColumnBound RunIdBound() { return {ColumnBound::Kind::kRunId}; }
constexpr ColumnBound PlainTextBound(size_t max_bytes) { return {ColumnBound::Kind::kPlainText, max_bytes}; }
constexpr ColumnBound TextBound(size_t max_bytes) { return {ColumnBound::Kind::kText, max_bytes}; }
// words: Names<T>() of a policy type (common/policy.h).
constexpr ColumnBound WordBound(const std::vector<std::string>& (*words)(), bool empty_ok) {
  return {ColumnBound::Kind::kWord, 0, 0, 0, words, empty_ok};
}
constexpr ColumnBound TransportWordBound() { return {ColumnBound::Kind::kTransportWord}; }
constexpr ColumnBound RangeBound(int64_t min, int64_t max) { return {ColumnBound::Kind::kRange, 0, min, max}; }
constexpr ColumnBound FigureBound() { return {ColumnBound::Kind::kFigure}; }
constexpr ColumnBound ShareBound() { return {ColumnBound::Kind::kShare}; }
constexpr ColumnBound Since1970Bound() { return {ColumnBound::Kind::kSince1970}; }
constexpr ColumnBound DeviceBound() { return {ColumnBound::Kind::kDevice}; }
constexpr ColumnBound DeviceListBound(int64_t max_items) { return {ColumnBound::Kind::kDeviceList, 0, 0, max_items}; }

struct TransferColumn {
  const char* name;
  ColumnPlace place;
  CellFormat format;
  const char* unit;  // for users: "s", "MB/s", "bytes", ...; "" for text and plain counts
  ColumnBound bound;
  const char* description;  // one line for users (docs/reference/csv.md)
  // The proto::TransferReport field behind the column, when it is not named like it.
  const char* field_name = nullptr;
  // Set when the table is built.
  const google::protobuf::FieldDescriptor* field = nullptr;
};

// Every column in file order: the contract ones, then the appended ones.
const std::vector<TransferColumn>& TransferColumnTable();
// nullptr when there is no such column.
const TransferColumn* FindTransferColumn(absl::string_view name);

// Whether the report holds a value for the column: an optional field that is set, a
// time that is not 0, and any other field always.
bool HasValue(const TransferColumn& column, const proto::TransferReport& report);
// The column's cell as transfers.csv holds it, quoted where needed; "" when unknown.
std::string FormatCell(const TransferColumn& column, const proto::TransferReport& report);
// The inverse of FormatCell: sets the column's field from a cell, leaves it unset for an
// empty one. INVALID_ARGUMENT "column NAME: 'CELL' is not ..." when the cell does not
// read as the column's format. A text cell is taken as it reads (after the formula guard).
absl::Status ReadCell(const TransferColumn& column, absl::string_view cell, proto::TransferReport* report);

// The field's value for CheckReport: text fields as text, number fields as a double.
std::string TextValue(const TransferColumn& column, const proto::TransferReport& report);
double NumberValue(const TransferColumn& column, const proto::TransferReport& report);

}  // namespace nasperf

#endif  // NASPERF_WIRE_COLUMNS_H_
