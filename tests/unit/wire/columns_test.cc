// The column table (wire/columns.h) walked column by column: each one reaches the
// header at its place, a cell of TransferRow (empty when unknown), CheckReport's
// bounds and the report reader, so a column declared once is a column everywhere.
#include "wire/columns.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "collector/csv_sink.h"
#include "common/csv.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "report/table.h"
#include "wire/validate.h"

namespace nasperf {
namespace {

using google::protobuf::FieldDescriptor;
using ::testing::HasSubstr;

// transfers.csv's header as of this test's writing, byte for byte. Columns are only
// ever appended: these stay the first ones, in this order, whatever is added later.
constexpr char kHeaderSoFar[] =
    "run_id,label,iteration,stream,role,host,peer,transport,bytes,started_at,duration_s,mb_per_s,"
    "first_byte_s,write_s,sync_s,net_wait_pct,disk_wait_pct,bottleneck,write_mode,sync_policy,mtu,"
    "path_mtu,mss,link_mbps,line_rate_pct,checksum,verified,status,error,transfer_id,warmup,"
    "source_wait_pct,notes,cpu_user_s,cpu_sys_s,cpu_busy_pct,direction,cache,cache_resident_pct,read_mode,"
    "busiest_device,busiest_busy_pct,device_busy,disk_detail,dirty_peak_bytes";

// The columns CheckReport bounded before the table: each must still have a bound.
const char* const kBoundedBeforeTheTable[] = {"run_id",
                                              "label",
                                              "iteration",
                                              "stream",
                                              "role",
                                              "host",
                                              "peer",
                                              "transport",
                                              "started_at",
                                              "duration_s",
                                              "mb_per_s",
                                              "first_byte_s",
                                              "write_s",
                                              "sync_s",
                                              "net_wait_pct",
                                              "disk_wait_pct",
                                              "bottleneck",
                                              "write_mode",
                                              "sync_policy",
                                              "line_rate_pct",
                                              "checksum",
                                              "status",
                                              "error",
                                              "source_wait_pct",
                                              "notes",
                                              "cpu_user_s",
                                              "cpu_sys_s",
                                              "cpu_busy_pct",
                                              "direction",
                                              "cache",
                                              "cache_resident_pct",
                                              "read_mode"};

// Sets a whole-number field of any width.
void SetWhole(const FieldDescriptor* field, int64_t value, proto::TransferReport* r) {
  const google::protobuf::Reflection* reflection = r->GetReflection();
  switch (field->cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT32:
      return reflection->SetInt32(r, field, static_cast<int32_t>(value));
    case FieldDescriptor::CPPTYPE_INT64:
      return reflection->SetInt64(r, field, value);
    case FieldDescriptor::CPPTYPE_UINT32:
      return reflection->SetUInt32(r, field, static_cast<uint32_t>(value));
    default:
      return reflection->SetUInt64(r, field, static_cast<uint64_t>(value));
  }
}

// A value the column's bound admits, set through the proto's reflection.
void SetValid(const TransferColumn& column, proto::TransferReport* r) {
  const google::protobuf::Reflection* reflection = r->GetReflection();
  const FieldDescriptor* field = column.field;
  switch (column.format) {
    case CellFormat::kText:
      if (column.bound.kind == ColumnBound::Kind::kWord) {
        reflection->SetString(r, field, column.bound.words().front());
      } else if (column.bound.kind == ColumnBound::Kind::kTransportWord) {
        reflection->SetString(r, field, "sftp");
      } else if (column.bound.kind == ColumnBound::Kind::kDevice) {
        reflection->SetString(r, field, "nvme0n1");
      } else if (column.bound.kind == ColumnBound::Kind::kDeviceList) {
        reflection->SetString(r, field, "sdb=99;sdc=41");
      } else {
        reflection->SetString(r, field, column.bound.kind == ColumnBound::Kind::kRunId ? "run-1" : "some text");
      }
      return;
    case CellFormat::kInteger:
      SetWhole(field,
               column.bound.kind == ColumnBound::Kind::kRange
                   ? std::max<int64_t>(column.bound.min, std::min<int64_t>(column.bound.max, 1))
                   : 1,
               r);
      return;
    case CellFormat::kSeconds:
    case CellFormat::kRate:
    case CellFormat::kPercent:
      reflection->SetDouble(r, field, 42.125);
      return;
    case CellFormat::kTime:
      reflection->SetInt64(r, field, 1764672000123000000LL);
      return;
    case CellFormat::kBool:
      reflection->SetBool(r, field, true);
      return;
  }
}

// Every column set to a value CheckReport takes.
proto::TransferReport FullReport() {
  proto::TransferReport r;
  for (const TransferColumn& column : TransferColumnTable()) SetValid(column, &r);
  return r;
}

std::vector<std::string> Cells(const std::string& line) {
  CsvReader reader(line);
  std::vector<std::string> cells;
  EXPECT_TRUE(*reader.Next(&cells)) << line;
  return cells;
}

// Values past the column's bound, each with a word its refusal must contain.
std::vector<std::pair<std::string, proto::TransferReport>> OutOfBounds(const TransferColumn& column) {
  std::vector<std::pair<std::string, proto::TransferReport>> spoiled;
  auto spoil = [&](auto set) {
    proto::TransferReport r = FullReport();
    set(r.GetReflection(), &r);
    spoiled.emplace_back(column.bound.kind == ColumnBound::Kind::kRunId ? "run id" : column.name, r);
  };
  const FieldDescriptor* f = column.field;
  const ColumnBound& bound = column.bound;
  using R = const google::protobuf::Reflection*;
  switch (bound.kind) {
    case ColumnBound::Kind::kNone:
      break;
    case ColumnBound::Kind::kRunId:
      spoil([&](R reflection, proto::TransferReport* r) { reflection->SetString(r, f, "../etc"); });
      spoil([&](R reflection, proto::TransferReport* r) { reflection->SetString(r, f, ""); });
      break;
    case ColumnBound::Kind::kPlainText:
      spoil([&](R reflection, proto::TransferReport* r) { reflection->SetString(r, f, "two\nlines"); });
      [[fallthrough]];
    case ColumnBound::Kind::kText:
      spoil([&](R reflection, proto::TransferReport* r) {
        reflection->SetString(r, f, std::string(bound.max_bytes + 1, 'x'));
      });
      spoil([&](R reflection, proto::TransferReport* r) { reflection->SetString(r, f, std::string("a\0b", 3)); });
      // An escape sequence sets a reader's window title (issue 29 row 10); C1 CSI too.
      spoil([&](R reflection, proto::TransferReport* r) { reflection->SetString(r, f, "x\x1b]0;pwned\x07"); });
      spoil([&](R reflection, proto::TransferReport* r) {
        reflection->SetString(r, f,
                              "x\xc2\x9b"
                              "2J");
      });
      break;
    case ColumnBound::Kind::kWord:
      spoil([&](R reflection, proto::TransferReport* r) { reflection->SetString(r, f, "no-such-word"); });
      break;
    case ColumnBound::Kind::kTransportWord:
      spoil([&](R reflection, proto::TransferReport* r) { reflection->SetString(r, f, ""); });
      spoil([&](R reflection, proto::TransferReport* r) { reflection->SetString(r, f, "Native"); });
      spoil([&](R reflection, proto::TransferReport* r) { reflection->SetString(r, f, "a-word-of-17-char"); });
      spoil([&](R reflection, proto::TransferReport* r) { reflection->SetString(r, f, "x\x1b]0;pwned\x07"); });
      break;
    case ColumnBound::Kind::kRange:
      spoil([&](R, proto::TransferReport* r) { SetWhole(f, bound.max + 1, r); });
      spoil([&](R, proto::TransferReport* r) { SetWhole(f, bound.min - 1, r); });
      break;
    case ColumnBound::Kind::kShare:
      spoil([&](R reflection, proto::TransferReport* r) { reflection->SetDouble(r, f, 100.5); });
      [[fallthrough]];
    case ColumnBound::Kind::kFigure:
      for (double bad : {-1.0, std::nan(""), std::numeric_limits<double>::infinity(), kMaxFigure * 10}) {
        spoil([&](R reflection, proto::TransferReport* r) { reflection->SetDouble(r, f, bad); });
      }
      break;
    case ColumnBound::Kind::kSince1970:
      spoil([&](R reflection, proto::TransferReport* r) { reflection->SetInt64(r, f, -1); });
      break;
    case ColumnBound::Kind::kDevice:
      for (const char* bad : {"=cmd()", "../sda", "sd a", "sda\n"}) {
        spoil([&](R reflection, proto::TransferReport* r) { reflection->SetString(r, f, bad); });
      }
      break;
    case ColumnBound::Kind::kDeviceList:
      for (const char* bad : {"sda", "sda=101", "=1", "sda=1;", "sda=1;;sdb=2", "sda=1\n"}) {
        spoil([&](R reflection, proto::TransferReport* r) { reflection->SetString(r, f, bad); });
      }
      spoil([&](R reflection, proto::TransferReport* r) {
        std::string many = "sda=1";
        for (int64_t i = 0; i < bound.max; ++i) many += ";sda=1";
        reflection->SetString(r, f, many);
      });
      break;
  }
  return spoiled;
}

TEST(TransferColumnTable, TheHeaderHoldsEveryColumnAtItsPlace) {
  const auto& table = TransferColumnTable();
  ASSERT_EQ(TransferColumns().size(), table.size());
  std::set<std::string> names;
  for (size_t i = 0; i < table.size(); ++i) {
    EXPECT_EQ(TransferColumns()[i], table[i].name);
    EXPECT_TRUE(names.insert(table[i].name).second) << table[i].name << " is declared twice";
    EXPECT_EQ(table[i].place == ColumnPlace::kContract, i < kContractColumns) << table[i].name;
    EXPECT_EQ(FindTransferColumn(table[i].name), &table[i]);
    EXPECT_NE(std::string(table[i].description), "") << table[i].name;
  }
  // The header line the collector writes starts with every column it ever wrote.
  const std::string header = CsvLine(TransferColumns());
  EXPECT_EQ(header.substr(0, sizeof(kHeaderSoFar) - 1), kHeaderSoFar);
  EXPECT_TRUE(header.size() == sizeof(kHeaderSoFar) || header[sizeof(kHeaderSoFar) - 1] == ',');
  EXPECT_EQ(FindTransferColumn("no_such_column"), nullptr);
}

TEST(TransferColumnTable, EachColumnHasACellInTransferRowEmptyWhenUnknown) {
  const auto& table = TransferColumnTable();
  const std::vector<std::string> full = Cells(TransferRow(FullReport()));
  ASSERT_EQ(full.size(), table.size());
  for (size_t i = 0; i < table.size(); ++i) {
    const TransferColumn& column = table[i];
    EXPECT_FALSE(full[i].empty()) << column.name << " set, but its cell is empty";
    proto::TransferReport unset = FullReport();
    unset.GetReflection()->ClearField(&unset, column.field);
    const std::string cell = Cells(TransferRow(unset))[i];
    if (column.field->has_presence() || column.format == CellFormat::kTime || column.format == CellFormat::kText) {
      EXPECT_EQ(cell, "") << column.name << " unknown, but its cell says something";
    } else {
      // Fields without presence (iteration, transfer_id, warmup) always have a value.
      EXPECT_FALSE(cell.empty()) << column.name;
    }
  }
}

TEST(TransferColumnTable, CheckReportHoldsEachBoundedColumnToItsBound) {
  ASSERT_TRUE(CheckReport(FullReport()).ok()) << CheckReport(FullReport());
  for (const char* name : kBoundedBeforeTheTable) {
    ASSERT_NE(FindTransferColumn(name), nullptr) << name;
    EXPECT_NE(FindTransferColumn(name)->bound.kind, ColumnBound::Kind::kNone) << name << " lost its bound";
  }
  for (const TransferColumn& column : TransferColumnTable()) {
    for (const auto& [word, report] : OutOfBounds(column)) {
      absl::Status s = CheckReport(report);
      EXPECT_FALSE(s.ok()) << column.name << ": took " << FormatCell(column, report);
      EXPECT_THAT(std::string(s.message()), HasSubstr(word)) << column.name;
    }
  }
}

TEST(TransferColumnTable, TheReportReaderReadsBackEveryColumn) {
  const auto& table = TransferColumnTable();
  proto::TransferReport written = FullReport();
  proto::TransferReport unknowns = FullReport();
  for (const TransferColumn& column : table) {
    if (column.field->has_presence()) unknowns.GetReflection()->ClearField(&unknowns, column.field);
  }
  ResultTable results;
  const std::string csv = CsvLine(TransferColumns()) + TransferRow(written) + TransferRow(unknowns);
  ASSERT_TRUE(ParseTransfersCsv("t.csv", csv, &results).ok()) << ParseTransfersCsv("t.csv", csv, &results);
  ASSERT_EQ(results.transfers.size(), 2u);
  for (const TransferColumn& column : table) {
    EXPECT_EQ(FormatCell(column, results.transfers[0].row), FormatCell(column, written)) << column.name;
    EXPECT_TRUE(HasValue(column, results.transfers[0].row)) << column.name;
    if (column.field->has_presence()) {
      EXPECT_FALSE(HasValue(column, results.transfers[1].row)) << column.name;
    }
  }
}

TEST(TransferColumnTable, ACellThatIsNotItsFormatIsNamed) {
  proto::TransferReport r;
  absl::Status s = ReadCell(*FindTransferColumn("mtu"), "jumbo", &r);
  EXPECT_THAT(std::string(s.message()), HasSubstr("column mtu: 'jumbo' is not a whole number"));
  s = ReadCell(*FindTransferColumn("started_at"), "yesterday", &r);
  EXPECT_THAT(std::string(s.message()), HasSubstr("column started_at: 'yesterday' is not an RFC 3339"));
  EXPECT_FALSE(ReadCell(*FindTransferColumn("verified"), "yes", &r).ok());
  EXPECT_FALSE(ReadCell(*FindTransferColumn("duration_s"), "inf", &r).ok());
  EXPECT_TRUE(ReadCell(*FindTransferColumn("mtu"), "", &r).ok());
  EXPECT_FALSE(r.has_mtu()) << "an empty cell is unknown, not 0";
}

}  // namespace
}  // namespace nasperf
