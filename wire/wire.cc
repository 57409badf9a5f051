#include "wire/wire.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "common/file_set.h"
#include "xxhash.h"

namespace nasperf {
namespace {

constexpr char kHeaderMagic[8] = {'N', 'S', 'P', 'F', 'D', 'A', 'T', 'A'};
constexpr char kTrailerMagic[8] = {'N', 'S', 'P', 'F', 'T', 'R', 'L', 'R'};
constexpr char kFooterMagic[8] = {'N', 'S', 'P', 'F', 'S', 'E', 'N', 'D'};

void Put16(uint8_t* p, uint16_t v) {
  for (int i = 0; i < 2; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
void Put32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
void Put64(uint8_t* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
uint16_t Get16(const uint8_t* p) { return static_cast<uint16_t>(p[0] | (p[1] << 8)); }
uint32_t Get32(const uint8_t* p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}
uint64_t Get64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}
// A CPU share travels as a u16 in tenths of a percent; this means unknown.
constexpr uint16_t kUnknownPermille = 0xFFFF;
uint16_t PermilleOf(double pct) {
  return pct >= 0 && pct <= 100 ? static_cast<uint16_t>(pct * 10 + 0.5) : kUnknownPermille;
}
// The share back; false for a value that is neither unknown nor 0..1000.
bool PctOfPermille(uint16_t permille, double* pct) {
  if (permille == kUnknownPermille) {
    *pct = -1;
    return true;
  }
  *pct = permille / 10.0;
  return permille <= 1000;
}

bool AllZero(const uint8_t* p, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    if (p[i] != 0) return false;
  }
  return true;
}

// Checks the parts every fixed frame shares: size, magic, version, check word.
absl::Status CheckFrame(const uint8_t* data, size_t size, size_t expected, const char (&magic)[8], const char* what) {
  if (data == nullptr || size != expected) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": ", size, " bytes, expected ", expected));
  }
  if (std::memcmp(data, magic, 8) != 0) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": bad magic (not a nasperf stream)"));
  }
  uint16_t version = Get16(data + 8);
  if (version != kWireVersion) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": wire version ", version, ", this build speaks ", kWireVersion));
  }
  if (Get32(data + expected - 4) != XXH32(data, expected - 4, 0)) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": check word mismatch (corrupted)"));
  }
  return absl::OkStatus();
}

}  // namespace

// Header layout: magic[8] version u16 | flags u16 | header_len u32 | transfer_id u64 |
// ticket[16] | payload_length u64 | reserved[12] | check u32.
std::array<uint8_t, kHeaderSize> EncodeHeader(const DataHeader& header) {
  std::array<uint8_t, kHeaderSize> out{};
  std::memcpy(out.data(), kHeaderMagic, 8);
  Put16(out.data() + 8, kWireVersion);
  Put16(out.data() + 10, 0);
  Put32(out.data() + 12, kHeaderSize);
  Put64(out.data() + 16, header.transfer_id);
  std::memcpy(out.data() + 24, header.ticket.data(), kTicketSize);
  Put64(out.data() + 40, header.payload_length);
  Put32(out.data() + 60, XXH32(out.data(), 60, 0));
  return out;
}

absl::StatusOr<DataHeader> DecodeHeader(const uint8_t* data, size_t size) {
  if (absl::Status s = CheckFrame(data, size, kHeaderSize, kHeaderMagic, "header"); !s.ok()) {
    return s;
  }
  if (Get16(data + 10) != 0 || Get32(data + 12) != kHeaderSize || !AllZero(data + 48, 12)) {
    return absl::InvalidArgumentError("header: unknown flags or reserved bytes set");
  }
  DataHeader header;
  header.transfer_id = Get64(data + 16);
  std::memcpy(header.ticket.data(), data + 24, kTicketSize);
  header.payload_length = Get64(data + 40);
  if (header.transfer_id == 0) return absl::InvalidArgumentError("header: transfer id 0");
  if (header.payload_length == 0) return absl::InvalidArgumentError("header: payload length 0");
  return header;
}

// Footer layout: magic[8] version u16 | flags u16 (0) | reserved u32 | source_wait u64 |
// send u64 | cpu_busy u16 | cpu_quota u16 (each permille, 0xFFFF unknown) | check u32.
std::array<uint8_t, kFooterSize> EncodeFooter(const DataFooter& footer) {
  std::array<uint8_t, kFooterSize> out{};
  std::memcpy(out.data(), kFooterMagic, 8);
  Put16(out.data() + 8, kWireVersion);
  Put64(out.data() + 16, footer.source_wait_ns);
  Put64(out.data() + 24, footer.send_ns);
  Put16(out.data() + 32, PermilleOf(footer.cpu_busy_pct));
  Put16(out.data() + 34, PermilleOf(footer.cpu_quota_pct));
  Put32(out.data() + 36, XXH32(out.data(), 36, 0));
  return out;
}

absl::StatusOr<DataFooter> DecodeFooter(const uint8_t* data, size_t size) {
  if (absl::Status s = CheckFrame(data, size, kFooterSize, kFooterMagic, "footer"); !s.ok()) return s;
  if (!AllZero(data + 10, 6)) {
    return absl::InvalidArgumentError("footer: flags or reserved bytes set");
  }
  DataFooter footer;
  footer.source_wait_ns = Get64(data + 16);
  footer.send_ns = Get64(data + 24);
  if (!PctOfPermille(Get16(data + 32), &footer.cpu_busy_pct) ||
      !PctOfPermille(Get16(data + 34), &footer.cpu_quota_pct)) {
    return absl::InvalidArgumentError("footer: a CPU share over 100 %");
  }
  if (footer.source_wait_ns > footer.send_ns) {
    return absl::InvalidArgumentError("footer: the source wait is longer than the send");
  }
  return footer;
}

// Trailer layout: magic[8] version u16 | status u8 | flags u8 | error i32 |
// bytes u64 | checksum u64 | receive, write, sync, durable, net_wait, disk_wait u64 |
// cpu_busy u16 | cpu_quota u16 (each permille, 0xFFFF unknown) | reserved[8] | check u32.
std::array<uint8_t, kTrailerSize> EncodeTrailer(const DataTrailer& t) {
  std::array<uint8_t, kTrailerSize> out{};
  std::memcpy(out.data(), kTrailerMagic, 8);
  Put16(out.data() + 8, kWireVersion);
  out[10] = static_cast<uint8_t>(t.status);
  out[11] = t.has_checksum ? 1 : 0;
  Put32(out.data() + 12, static_cast<uint32_t>(t.error_code));
  Put64(out.data() + 16, t.bytes_written);
  Put64(out.data() + 24, t.has_checksum ? t.checksum : 0);
  const uint64_t timings[] = {t.receive_ns, t.write_ns, t.sync_ns, t.durable_ns, t.net_wait_ns, t.disk_wait_ns};
  for (int i = 0; i < 6; ++i) Put64(out.data() + 32 + 8 * i, timings[i]);
  Put16(out.data() + 80, PermilleOf(t.cpu_busy_pct));
  Put16(out.data() + 82, PermilleOf(t.cpu_quota_pct));
  Put32(out.data() + 92, XXH32(out.data(), 92, 0));
  return out;
}

absl::StatusOr<DataTrailer> DecodeTrailer(const uint8_t* data, size_t size) {
  if (absl::Status s = CheckFrame(data, size, kTrailerSize, kTrailerMagic, "trailer"); !s.ok()) {
    return s;
  }
  if (data[10] > static_cast<uint8_t>(TrailerStatus::kAborted) || data[11] > 1 || !AllZero(data + 84, 8) ||
      (data[11] == 0 && !AllZero(data + 24, 8))) {
    return absl::InvalidArgumentError("trailer: unknown status, flags or reserved bytes set");
  }
  DataTrailer t;
  t.status = static_cast<TrailerStatus>(data[10]);
  t.has_checksum = data[11] == 1;
  t.error_code = static_cast<int32_t>(Get32(data + 12));
  t.bytes_written = Get64(data + 16);
  t.checksum = Get64(data + 24);
  uint64_t* timings[] = {&t.receive_ns, &t.write_ns, &t.sync_ns, &t.durable_ns, &t.net_wait_ns, &t.disk_wait_ns};
  for (int i = 0; i < 6; ++i) *timings[i] = Get64(data + 32 + 8 * i);
  if (!PctOfPermille(Get16(data + 80), &t.cpu_busy_pct) || !PctOfPermille(Get16(data + 82), &t.cpu_quota_pct)) {
    return absl::InvalidArgumentError("trailer: a CPU share over 100 %");
  }
  return t;
}

std::vector<uint8_t> EncodeFileSizes(const std::vector<uint64_t>& sizes) {
  std::vector<uint8_t> out(sizes.size() * kFileSizeBytes);
  for (size_t i = 0; i < sizes.size(); ++i) Put64(out.data() + i * kFileSizeBytes, sizes[i]);
  return out;
}

absl::StatusOr<std::vector<uint64_t>> DecodeFileSizes(const uint8_t* data, size_t size, uint64_t count,
                                                      uint64_t total) {
  if (count == 0 || count > kMaxSetFiles || data == nullptr || size != count * kFileSizeBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("file sizes: ", size, " bytes for ", count, " files (1..", kMaxSetFiles, ", 8 bytes each)"));
  }
  std::vector<uint64_t> sizes(count);
  uint64_t sum = 0;
  for (uint64_t i = 0; i < count; ++i) {
    sizes[i] = Get64(data + i * kFileSizeBytes);
    if (sizes[i] == 0 || sizes[i] > kMaxSetFileSize) {
      return absl::InvalidArgumentError(
          absl::StrCat("file sizes: file ", i + 1, " of ", sizes[i], " bytes (1 B..64 GiB)"));
    }
    sum += sizes[i];  // at most 10^6 * 2^36: no overflow
  }
  if (sum != total) {
    return absl::InvalidArgumentError(absl::StrCat("file sizes: ", count, " files of ", sum, " bytes, not the ", total,
                                                   " the transfer was opened for"));
  }
  return sizes;
}

}  // namespace nasperf
