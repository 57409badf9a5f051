#include "wire/columns.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <limits>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "common/csv.h"
#include "common/policy.h"

namespace nasperf {
namespace {

using google::protobuf::FieldDescriptor;

constexpr ColumnPlace kContract = ColumnPlace::kContract;
constexpr ColumnPlace kAppended = ColumnPlace::kAppended;
constexpr CellFormat kText = CellFormat::kText;
constexpr CellFormat kInteger = CellFormat::kInteger;
constexpr CellFormat kSeconds = CellFormat::kSeconds;
constexpr CellFormat kRate = CellFormat::kRate;
constexpr CellFormat kPercent = CellFormat::kPercent;
constexpr CellFormat kTime = CellFormat::kTime;
constexpr CellFormat kBool = CellFormat::kBool;

// One entry per column, in file order. A new column: a proto::TransferReport field
// (optional, so unknown stays empty) and one entry at the end, kAppended.
constexpr TransferColumn kDeclared[] = {
    {"run_id", kContract, kText, "", RunIdBound(), "The run the transfer belongs to"},
    {"label", kContract, kText, "", PlainTextBound(200), "`--label`, or the lab plan's label"},
    {"iteration", kContract, kInteger, "", RangeBound(-1000000, 1000000),
     "Measured iterations are 1..N, warm-ups -W+1..0"},
    {"stream", kContract, kInteger, "", RangeBound(0, 1023), "The stream within the iteration (`first_stream` + s)"},
    {"role", kContract, kText, "", WordBound(&Names<Role>, false),
     "sender (sent the bytes) or receiver (took them): each transfer has one row per role"},
    {"host", kContract, kText, "", PlainTextBound(255), "This end's host name (in a lab, the plan's name for it)"},
    {"peer", kContract, kText, "", PlainTextBound(300),
     "The other end: the receiver's data address (SSH: host:port) on the sender's row, the sender's addr:port on "
     "the receiver's"},
    {"transport", kContract, kText, "", TransportWordBound(),
     "How the bytes went: the run's --transport (`nasperf sender --help`), or observed (a copy `nasperf watch` saw)"},
    {"bytes", kContract, kInteger, "bytes", NoBound(),
     "Bytes this end moved: handed to the kernel or SSH (sender), written to the target (receiver)"},
    {"started_at", kContract, kTime, "UTC", Since1970Bound(),
     "When the transfer began: before connect on the sender (after a lab's barrier), at accept on the receiver",
     "started_at_unix_ns"},
    {"duration_s", kContract, kSeconds, "s", FigureBound(),
     "What mb_per_s is measured over: first byte to the receiver's answer (sender), to the final sync (receiver)"},
    {"mb_per_s", kContract, kRate, "MB/s", FigureBound(),
     "bytes / duration_s / 10^6: end to end on the sender's row, durable on the receiver's"},
    {"first_byte_s", kContract, kSeconds, "s", FigureBound(),
     "From before connect (sender) or from accept (receiver) to the first payload byte"},
    {"write_s", kContract, kSeconds, "s", FigureBound(),
     "Sender: first to last byte handed to the socket; receiver: time inside write and periodic fdatasync calls"},
    {"sync_s", kContract, kSeconds, "s", FigureBound(),
     "Sender: last byte to the receiver's answer; receiver: the final fdatasync + close"},
    {"net_wait_pct", kContract, kPercent, "%", FigureBound(),
     "Receiver: share of the duration its disk writer sat idle waiting for data; empty on the sender's row"},
    {"disk_wait_pct", kContract, kPercent, "%", FigureBound(),
     "Receiver: share of the duration its reader waited for the disk (full buffers, final sync); reads: NAS disk"},
    {"bottleneck", kContract, kText, "", WordBound(&Names<Bottleneck>, true),
     "The verdict: what held the transfer back (docs/guides/verdicts.md); with no agent at the far end only the "
     "client's side, or empty; "
     "sender is an older nasperf's source"},
    {"write_mode", kContract, kText, "", PlainTextBound(32),
     "How the target was written, as requested (after --direct-fallback); discard on a discard target; SSH: empty"},
    {"sync_policy", kContract, kText, "", PlainTextBound(64),
     "When the receiver synced: none, end or every=SIZE, as requested; none on a discard target"},
    {"mtu", kContract, kInteger, "bytes", NoBound(), "This end's interface MTU toward the peer"},
    {"path_mtu", kContract, kInteger, "bytes", NoBound(),
     "Largest packet the sender's don't-fragment UDP probes got through (both rows); empty when UDP was filtered"},
    {"mss", kContract, kInteger, "bytes", NoBound(), "The data socket's negotiated TCP MSS (TCP_MAXSEG)"},
    {"link_mbps", kContract, kInteger, "Mbit/s", NoBound(),
     "The link speed: the sender's --link-speed, else the NIC's; empty when the driver reports none"},
    {"line_rate_pct", kContract, kPercent, "%", FigureBound(),
     "mb_per_s as a share of the TCP goodput ceiling for link_mbps and the smallest of both MTUs and the path MTU"},
    {"checksum", kContract, kText, "", PlainTextBound(64),
     "XXH3-64 of the payload in hex, with --verify; empty when not computed"},
    {"verified", kContract, kBool, "", NoBound(),
     "With --verify: whether both ends' checksums matched; empty otherwise"},
    {"status", kContract, kText, "", WordBound(&Names<Status>, false),
     "ok only when the transfer completed (sender: trailer ok, byte count and checksum match)"},
    {"error", kContract, kText, "", TextBound(2000),
     "Why it failed, as a sentence (e.g. write ...: No space left on device); empty when ok"},
    {"transfer_id", kAppended, kInteger, "", NoBound(), "The receiver's id for the transfer; 0 when none was issued"},
    {"warmup", kAppended, kBool, "", NoBound(), "true for warm-up runs, which never enter the statistics"},
    {"source_wait_pct", kAppended, kPercent, "%", FigureBound(),
     "Sender: share of the duration it waited on its source (generation, file reads); reads: the client's own disk"},
    {"notes", kAppended, kText, "", TextBound(2000),
     "A figure this row leaves out because it cannot be true, and why (e.g. a line_rate_pct over 105 %)"},
    {"cpu_user_s", kAppended, kSeconds, "s", FigureBound(),
     "User CPU seconds this end's data threads spent on the transfer"},
    {"cpu_sys_s", kAppended, kSeconds, "s", FigureBound(),
     "System CPU seconds this end's data threads spent on the transfer"},
    {"cpu_busy_pct", kAppended, kPercent, "%", ShareBound(),
     "Share of the transfer this end's busiest data thread was on or queued for a CPU; 90 or more names that CPU"},
    {"direction", kAppended, kText, "", WordBound(&Names<Direction>, true),
     "write (to the NAS) or read (from it); rows from before this column are writes"},
    {"cache", kAppended, kText, "", WordBound(&Names<CacheState>, true),
     "Reads: the NAS's page cache for the file, dropped before the run (cold) or read through once (warm)"},
    {"cache_resident_pct", kAppended, kPercent, "%", ShareBound(),
     "Reads, the NAS agent's row: share of the file's pages in its page cache as the run began"},
    {"read_mode", kAppended, kText, "", WordBound(&Names<ReadMode>, true),
     "Reads: how the agent read the file (--read-mode); empty on writes and SSH rows"},
    {"busiest_device", kAppended, kText, "", DeviceBound(),
     "Receiver: kernel name of the busiest block device under the target (e.g. sdb, loop7)"},
    {"busiest_busy_pct", kAppended, kPercent, "%", ShareBound(),
     "Receiver: share of the transfer busiest_device had a request in flight (/proc/diskstats io_ticks)"},
    {"device_busy", kAppended, kText, "", DeviceListBound(32),
     "Receiver: busy % of the devices under the target, then of other disks that did I/O, e.g. "
     "loop7=99;loop6=7 (at most 32)"},
    {"disk_detail", kAppended, kText, "", PlainTextBound(1000),  // kMaxDetailBytes
     "Receiver: the device figures in words: the busiest device under the target, what the system says "
     "it is, busy %, MB/s and queue depth; the others' busy %; busy disks outside the target named as such"},
    {"dirty_peak_bytes", kAppended, kInteger, "bytes", NoBound(),
     "Receiver: peak of Dirty + Writeback in the NAS's /proc/meminfo during the transfer: how much the "
     "page cache held back"},
    {"burst_mb_per_s", kAppended, kRate, "MB/s", FigureBound(),
     "Receiver, writes: MB/s from the first byte to the cache cliff, its ramp included (the rate's fall to what "
     "the disks sustained for good); empty when there was none"},
    {"burst_bytes", kAppended, kInteger, "bytes", NoBound(),
     "Receiver, writes: what the NAS's caches absorbed: bytes taken by the cliff less what the disks wrote "
     "meanwhile at the sustained rate; empty when none"},
    {"sustained_mb_per_s", kAppended, kRate, "MB/s", FigureBound(),
     "Receiver, writes: MB/s from the cache cliff to the end, stalls and catch-up bursts averaged in: what the "
     "disks sustained; empty when there was none"},
    {"share_protocol", kAppended, kText, "", PlainTextBound(200),
     "Transports to a share: what the protocol negotiated or was asked for, e.g. nfs3 wsize=1048576 "
     "rsize=1048576 stable=unstable (WRITEs the server may cache until COMMIT) or stable=file_sync"},
    {"observed_file", kAppended, kText, "", PlainTextBound(1024),
     "nasperf watch (role nas): the file the observed copy wrote, relative to the watched directory"},
    {"observed_detail", kAppended, kText, "", TextBound(2000),
     "nasperf watch (role nas): how the copy ended (closed, not grown for --idle, truncated, ...), the process "
     "that served it with its CPU and blocking, and the verdict in words"},
    {"cache_shape", kAppended, kText, "", WordBound(&Names<CacheShape>, true),
     "Receiver, writes: how the rate came down at the cache cliff: cliff (at once), ramp (over a second or more, as "
     "Linux's dirty throttling does), sawtooth (alternating phases, as ZFS transaction groups draw), stalls; empty "
     "with no cliff"},
    {"stall_count", kAppended, kInteger, "", RangeBound(0, 1000000),
     "Receiver, writes: spells of 1 s or more in which the rate stayed under a tenth of what the disks sustained "
     "(of the mean rate with no cliff)"},
    {"longest_stall_s", kAppended, kSeconds, "s", FigureBound(),
     "Receiver, writes: the longest of those spells, the idle parts of the samples around it included; 0 with none"},
    {"knee_s", kAppended, kSeconds, "s", FigureBound(),
     "Receiver, writes: when the cache cliff was, seconds from the first byte; empty with no cliff"},
    {"files", kAppended, kInteger, "", RangeBound(0, 1000000),
     "Many-files transfers (--files): the files written whole (created, written, closed, synced as asked); empty "
     "for a one-file transfer"},
    {"files_per_s", kAppended, kRate, "files/s", FigureBound(),
     "Many-files transfers: files written whole per second of the timed span"},
    {"file_p50_s", kAppended, kSeconds, "s", FigureBound(),
     "Many-files transfers: the median file's create to close (its fsync included when the sync policy asks one)"},
    {"file_p90_s", kAppended, kSeconds, "s", FigureBound(), "Many-files transfers: the 90th percentile of the same"},
    {"file_p99_s", kAppended, kSeconds, "s", FigureBound(), "Many-files transfers: the 99th percentile of the same"},
    {"file_max_s", kAppended, kSeconds, "s", FigureBound(), "Many-files transfers: the slowest file's"},
    {"metadata_pct", kAppended, kPercent, "%", FigureBound(),
     "Many-files transfers: share of the timed span spent creating, closing and syncing files rather than "
     "writing their bytes (the metadata verdict's figure)"},
};

// The field type each format writes and reads.
bool FormatFits(CellFormat format, FieldDescriptor::CppType type) {
  switch (format) {
    case CellFormat::kText:
      return type == FieldDescriptor::CPPTYPE_STRING;
    case CellFormat::kInteger:
      return type == FieldDescriptor::CPPTYPE_INT32 || type == FieldDescriptor::CPPTYPE_INT64 ||
             type == FieldDescriptor::CPPTYPE_UINT32 || type == FieldDescriptor::CPPTYPE_UINT64;
    case CellFormat::kSeconds:
    case CellFormat::kRate:
    case CellFormat::kPercent:
      return type == FieldDescriptor::CPPTYPE_DOUBLE;
    case CellFormat::kTime:
      return type == FieldDescriptor::CPPTYPE_INT64;
    case CellFormat::kBool:
      return type == FieldDescriptor::CPPTYPE_BOOL;
  }
  return false;
}

// Text bounds for text cells, number bounds for number cells.
bool BoundFits(ColumnBound::Kind bound, CellFormat format) {
  switch (bound) {
    case ColumnBound::Kind::kNone:
      return true;
    case ColumnBound::Kind::kRunId:
    case ColumnBound::Kind::kPlainText:
    case ColumnBound::Kind::kText:
    case ColumnBound::Kind::kWord:
    case ColumnBound::Kind::kTransportWord:
    case ColumnBound::Kind::kDevice:
    case ColumnBound::Kind::kDeviceList:
      return format == CellFormat::kText;
    case ColumnBound::Kind::kRange:
      return format == CellFormat::kInteger;
    case ColumnBound::Kind::kFigure:
    case ColumnBound::Kind::kShare:
      return format == CellFormat::kSeconds || format == CellFormat::kRate || format == CellFormat::kPercent;
    case ColumnBound::Kind::kSince1970:
      return format == CellFormat::kTime;
  }
  return false;
}

// A column the proto does not back, or backs with another type, is a mistake in
// kDeclared: found on first use (columns_test), before any row is written.
[[noreturn]] void BadDeclaration(const TransferColumn& column, const char* why) {
  std::fprintf(stderr, "nasperf: transfers.csv column %s: %s (wire/columns.cc)\n", column.name, why);
  std::abort();
}

std::vector<TransferColumn>* Build() {
  auto* table = new std::vector<TransferColumn>(std::begin(kDeclared), std::end(kDeclared));
  const google::protobuf::Descriptor* report = proto::TransferReport::descriptor();
  for (size_t i = 0; i < table->size(); ++i) {
    TransferColumn& column = (*table)[i];
    const char* field_name = column.field_name != nullptr ? column.field_name : column.name;
    column.field = report->FindFieldByName(field_name);
    if (column.field == nullptr) BadDeclaration(column, "no such proto::TransferReport field");
    if (column.field->is_repeated() || !FormatFits(column.format, column.field->cpp_type())) {
      BadDeclaration(column, "its format does not fit the field's type");
    }
    if (!BoundFits(column.bound.kind, column.format)) BadDeclaration(column, "its bound does not fit its format");
    if ((column.place == kContract) != (i < kContractColumns)) {
      BadDeclaration(column, "the contract is the first 29 columns; later columns are appended");
    }
  }
  return table;
}

std::string Rfc3339(int64_t unix_ns) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", absl::FromUnixNanos(unix_ns), absl::UTCTimeZone());
}

std::string IntegerCell(const FieldDescriptor* field, const proto::TransferReport& report) {
  const google::protobuf::Reflection* reflection = report.GetReflection();
  switch (field->cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT32:
      return absl::StrCat(reflection->GetInt32(report, field));
    case FieldDescriptor::CPPTYPE_INT64:
      return absl::StrCat(reflection->GetInt64(report, field));
    case FieldDescriptor::CPPTYPE_UINT32:
      return absl::StrCat(reflection->GetUInt32(report, field));
    default:
      return absl::StrCat(reflection->GetUInt64(report, field));
  }
}

// A whole number of T: decimal digits, or a float with no fraction, as spreadsheets
// save large numbers (1.37439E+11); out of T's range it is none.
template <typename T>
bool ParseWhole(absl::string_view cell, T* out) {
  if (absl::SimpleAtoi(cell, out)) return true;
  double v = 0;
  if (!absl::SimpleAtod(cell, &v) || !std::isfinite(v) || v != std::floor(v)) return false;
  // max() + 1.0 is a power of two, exact as a double, unlike max() itself for 64 bits.
  if (v < static_cast<double>(std::numeric_limits<T>::min()) ||
      v >= static_cast<double>(std::numeric_limits<T>::max()) + 1.0) {
    return false;
  }
  *out = static_cast<T>(v);
  return true;
}

bool ReadInteger(const FieldDescriptor* field, absl::string_view cell, proto::TransferReport* report) {
  const google::protobuf::Reflection* reflection = report->GetReflection();
  switch (field->cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT32: {
      int32_t v = 0;
      if (!ParseWhole(cell, &v)) return false;
      reflection->SetInt32(report, field, v);
      return true;
    }
    case FieldDescriptor::CPPTYPE_INT64: {
      int64_t v = 0;
      if (!ParseWhole(cell, &v)) return false;
      reflection->SetInt64(report, field, v);
      return true;
    }
    case FieldDescriptor::CPPTYPE_UINT32: {
      uint32_t v = 0;
      if (!ParseWhole(cell, &v)) return false;
      reflection->SetUInt32(report, field, v);
      return true;
    }
    default: {
      uint64_t v = 0;
      if (!ParseWhole(cell, &v)) return false;
      reflection->SetUInt64(report, field, v);
      return true;
    }
  }
}

// Readers bound figures so sums and means over any number of rows stay finite.
constexpr double kMaxReadFigure = 1e15;

// What a cell of the format must look like, for the reader's error.
const char* Expected(CellFormat format) {
  switch (format) {
    case CellFormat::kText:
      return "text";
    case CellFormat::kInteger:
      return "a whole number";
    case CellFormat::kSeconds:
    case CellFormat::kRate:
    case CellFormat::kPercent:
      return "a number (at most 1e15 in size)";
    case CellFormat::kTime:
      return "an RFC 3339 UTC time (2025-12-02T10:40:00.123Z)";
    case CellFormat::kBool:
      return "true or false";
  }
  return "?";
}

// Sets the field from a non-empty cell; false when the cell is not of the format.
bool ReadValue(const TransferColumn& column, absl::string_view cell, proto::TransferReport* report) {
  const google::protobuf::Reflection* reflection = report->GetReflection();
  switch (column.format) {
    case CellFormat::kText:
      reflection->SetString(report, column.field, std::string(cell));
      return true;
    case CellFormat::kInteger:
      return ReadInteger(column.field, cell, report);
    case CellFormat::kSeconds:
    case CellFormat::kRate:
    case CellFormat::kPercent: {
      double v = 0;
      if (!absl::SimpleAtod(cell, &v) || !std::isfinite(v) || std::fabs(v) > kMaxReadFigure) return false;
      reflection->SetDouble(report, column.field, v);
      return true;
    }
    case CellFormat::kTime: {
      absl::Time t;
      std::string error;
      if (!absl::ParseTime("%Y-%m-%dT%H:%M:%E*SZ", cell, absl::UTCTimeZone(), &t, &error)) return false;
      reflection->SetInt64(report, column.field, absl::ToUnixNanos(t));
      return true;
    }
    case CellFormat::kBool:
      if (cell != "true" && cell != "false") return false;
      reflection->SetBool(report, column.field, cell == "true");
      return true;
  }
  return false;
}

}  // namespace

const std::vector<TransferColumn>& TransferColumnTable() {
  static const std::vector<TransferColumn>* table = Build();
  return *table;
}

const TransferColumn* FindTransferColumn(absl::string_view name) {
  for (const TransferColumn& column : TransferColumnTable()) {
    if (name == column.name) return &column;
  }
  return nullptr;
}

bool HasValue(const TransferColumn& column, const proto::TransferReport& report) {
  if (column.format == CellFormat::kTime) return report.GetReflection()->GetInt64(report, column.field) != 0;
  return !column.field->has_presence() || report.GetReflection()->HasField(report, column.field);
}

std::string FormatCell(const TransferColumn& column, const proto::TransferReport& report) {
  if (!HasValue(column, report)) return "";
  const google::protobuf::Reflection* reflection = report.GetReflection();
  switch (column.format) {
    case CellFormat::kText:
      return CsvText(reflection->GetString(report, column.field));
    case CellFormat::kInteger:
      return IntegerCell(column.field, report);
    case CellFormat::kSeconds:
      return absl::StrFormat("%.6f", reflection->GetDouble(report, column.field));
    case CellFormat::kRate:
      return absl::StrFormat("%.2f", reflection->GetDouble(report, column.field));
    case CellFormat::kPercent:
      return absl::StrFormat("%.1f", reflection->GetDouble(report, column.field));
    case CellFormat::kTime:
      return Rfc3339(reflection->GetInt64(report, column.field));
    case CellFormat::kBool:
      return reflection->GetBool(report, column.field) ? "true" : "false";
  }
  return "";
}

absl::Status ReadCell(const TransferColumn& column, absl::string_view cell, proto::TransferReport* report) {
  if (cell.empty()) return absl::OkStatus();  // unknown
  if (ReadValue(column, cell, report)) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("column ", column.name, ": '", cell, "' is not ", Expected(column.format)));
}

std::string TextValue(const TransferColumn& column, const proto::TransferReport& report) {
  if (column.field->cpp_type() != FieldDescriptor::CPPTYPE_STRING) return "";
  return report.GetReflection()->GetString(report, column.field);
}

double NumberValue(const TransferColumn& column, const proto::TransferReport& report) {
  const google::protobuf::Reflection* reflection = report.GetReflection();
  switch (column.field->cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT32:
      return reflection->GetInt32(report, column.field);
    case FieldDescriptor::CPPTYPE_INT64:
      return static_cast<double>(reflection->GetInt64(report, column.field));
    case FieldDescriptor::CPPTYPE_UINT32:
      return reflection->GetUInt32(report, column.field);
    case FieldDescriptor::CPPTYPE_UINT64:
      return static_cast<double>(reflection->GetUInt64(report, column.field));
    case FieldDescriptor::CPPTYPE_DOUBLE:
      return reflection->GetDouble(report, column.field);
    case FieldDescriptor::CPPTYPE_BOOL:
      return reflection->GetBool(report, column.field) ? 1 : 0;
    default:
      return 0;
  }
}

}  // namespace nasperf
