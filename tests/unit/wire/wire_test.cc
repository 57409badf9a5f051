#include "wire/wire.h"

#include <cstring>

#include "common/file_set.h"
#include "gtest/gtest.h"
#include "xxhash.h"

namespace nasperf {
namespace {

DataHeader SampleHeader() {
  DataHeader h;
  h.transfer_id = 42;
  for (size_t i = 0; i < kTicketSize; ++i) h.ticket[i] = static_cast<uint8_t>(i * 7 + 1);
  h.payload_length = 45ULL << 30;
  return h;
}

TEST(Wire, HeaderRoundTrip) {
  auto bytes = EncodeHeader(SampleHeader());
  auto decoded = DecodeHeader(bytes.data(), bytes.size());
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(decoded->transfer_id, 42u);
  EXPECT_EQ(decoded->ticket, SampleHeader().ticket);
  EXPECT_EQ(decoded->payload_length, 45ULL << 30);
}

TEST(Wire, HeaderIsLittleEndianAtFixedOffsets) {
  auto bytes = EncodeHeader(SampleHeader());
  EXPECT_EQ(std::memcmp(bytes.data(), "NSPFDATA", 8), 0);
  EXPECT_EQ(bytes[8], kWireVersion);
  EXPECT_EQ(bytes[16], 42);  // transfer id, low byte first
  EXPECT_EQ(bytes[12], kHeaderSize);
}

TEST(Wire, EveryMalformedHeaderIsRefusedWithAReason) {
  auto good = EncodeHeader(SampleHeader());
  auto expect_refused = [](std::array<uint8_t, kHeaderSize> bytes, const char* reason) {
    auto decoded = DecodeHeader(bytes.data(), bytes.size());
    ASSERT_FALSE(decoded.ok()) << reason;
    EXPECT_NE(decoded.status().message().find(reason), std::string::npos) << decoded.status();
  };
  // Short and long buffers.
  EXPECT_FALSE(DecodeHeader(good.data(), kHeaderSize - 1).ok());
  EXPECT_FALSE(DecodeHeader(nullptr, 0).ok());
  std::vector<uint8_t> longer(good.begin(), good.end());
  longer.push_back(0);
  EXPECT_FALSE(DecodeHeader(longer.data(), longer.size()).ok());

  auto bad = good;
  bad[0] = 'X';
  expect_refused(bad, "bad magic");
  bad = good;
  bad[8] = kWireVersion - 1;  // an older nasperf's header
  expect_refused(bad, "version");
  // Any single flipped bit after the magic and version is caught by the check word.
  for (size_t i = 10; i < kHeaderSize; ++i) {
    bad = good;
    bad[i] ^= 0x10;
    EXPECT_FALSE(DecodeHeader(bad.data(), bad.size()).ok()) << "byte " << i;
  }
}

TEST(Wire, ZeroIdOrLengthRefusedEvenWhenWellFormed) {
  DataHeader h = SampleHeader();
  h.transfer_id = 0;
  auto bytes = EncodeHeader(h);
  EXPECT_FALSE(DecodeHeader(bytes.data(), bytes.size()).ok());
  h = SampleHeader();
  h.payload_length = 0;
  bytes = EncodeHeader(h);
  EXPECT_FALSE(DecodeHeader(bytes.data(), bytes.size()).ok());
}

TEST(Wire, ReservedBytesMustBeZero) {
  auto bytes = EncodeHeader(SampleHeader());
  bytes[50] = 1;
  // Re-sign so only the reserved-byte rule can refuse it.
  uint32_t check = XXH32(bytes.data(), 60, 0);
  for (int i = 0; i < 4; ++i) bytes[60 + i] = static_cast<uint8_t>(check >> (8 * i));
  auto decoded = DecodeHeader(bytes.data(), bytes.size());
  ASSERT_FALSE(decoded.ok());
  EXPECT_NE(decoded.status().message().find("reserved"), std::string::npos);
}

TEST(Wire, TrailerRoundTrip) {
  DataTrailer t;
  t.status = TrailerStatus::kFailed;
  t.error_code = 28;
  t.bytes_written = 123456789;
  t.has_checksum = true;
  t.checksum = 0xdeadbeefcafef00dULL;
  t.receive_ns = 1;
  t.write_ns = 2;
  t.sync_ns = 3;
  t.durable_ns = 4;
  t.net_wait_ns = 5;
  t.disk_wait_ns = 6;
  t.cpu_busy_pct = 93.4;
  t.cpu_quota_pct = 88.5;
  auto bytes = EncodeTrailer(t);
  auto d = DecodeTrailer(bytes.data(), bytes.size());
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->status, TrailerStatus::kFailed);
  EXPECT_EQ(d->error_code, 28);
  EXPECT_EQ(d->bytes_written, 123456789u);
  EXPECT_TRUE(d->has_checksum);
  EXPECT_EQ(d->checksum, t.checksum);
  EXPECT_EQ(d->receive_ns, 1u);
  EXPECT_EQ(d->write_ns, 2u);
  EXPECT_EQ(d->sync_ns, 3u);
  EXPECT_EQ(d->durable_ns, 4u);
  EXPECT_EQ(d->net_wait_ns, 5u);
  EXPECT_EQ(d->disk_wait_ns, 6u);
  EXPECT_DOUBLE_EQ(d->cpu_busy_pct, 93.4);
  EXPECT_DOUBLE_EQ(d->cpu_quota_pct, 88.5);
  auto unknown = EncodeTrailer(DataTrailer{});
  EXPECT_DOUBLE_EQ(DecodeTrailer(unknown.data(), unknown.size())->cpu_busy_pct, -1) << "unknown stays unknown";
  EXPECT_DOUBLE_EQ(DecodeTrailer(unknown.data(), unknown.size())->cpu_quota_pct, -1) << "unknown stays unknown";
}

// Sets a little-endian u16 and re-signs the frame, as a hostile peer would.
template <size_t N>
std::array<uint8_t, N> Resigned(std::array<uint8_t, N> frame, size_t offset, uint16_t value) {
  frame[offset] = static_cast<uint8_t>(value);
  frame[offset + 1] = static_cast<uint8_t>(value >> 8);
  uint32_t check = XXH32(frame.data(), N - 4, 0);
  for (int i = 0; i < 4; ++i) frame[N - 4 + i] = static_cast<uint8_t>(check >> (8 * i));
  return frame;
}

TEST(Wire, ACpuShareOver100PercentIsRefusedFromEitherEnd) {
  auto trailer = Resigned(EncodeTrailer(DataTrailer{}), 80, 1001);
  auto t = DecodeTrailer(trailer.data(), trailer.size());
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("CPU share"), std::string::npos) << t.status();
  EXPECT_TRUE(DecodeTrailer(Resigned(trailer, 80, 1000).data(), kTrailerSize).ok()) << "100.0 % is possible";
  DataFooter f;
  f.send_ns = 10;
  auto footer = Resigned(EncodeFooter(f), 32, 5000);
  EXPECT_FALSE(DecodeFooter(footer.data(), footer.size()).ok());
  f.cpu_busy_pct = 99.96;
  auto rounded = EncodeFooter(f);
  EXPECT_DOUBLE_EQ(DecodeFooter(rounded.data(), rounded.size())->cpu_busy_pct, 100.0);
  // The quota's share (wire version 3) is refused past 100 % the same way.
  EXPECT_FALSE(DecodeFooter(Resigned(rounded, 34, 1001).data(), kFooterSize).ok());
  EXPECT_FALSE(DecodeTrailer(Resigned(trailer, 82, 1001).data(), kTrailerSize).ok());
  f.cpu_quota_pct = 91.2;
  auto quota = EncodeFooter(f);
  EXPECT_DOUBLE_EQ(DecodeFooter(quota.data(), quota.size())->cpu_quota_pct, 91.2);
}

TEST(Wire, TrailerRefusesCorruption) {
  auto good = EncodeTrailer(DataTrailer{});
  for (size_t i = 0; i < kTrailerSize; ++i) {
    auto bad = good;
    bad[i] ^= 0x01;
    EXPECT_FALSE(DecodeTrailer(bad.data(), bad.size()).ok()) << "byte " << i;
  }
  EXPECT_FALSE(DecodeTrailer(good.data(), kTrailerSize - 1).ok());
  // Found by the fuzzer: checksum bytes without the checksum flag must not decode
  // (they would re-encode differently).
  auto no_flag = good;
  no_flag[24] = 0xdc;
  uint32_t check = XXH32(no_flag.data(), kTrailerSize - 4, 0);
  for (int i = 0; i < 4; ++i) no_flag[kTrailerSize - 4 + i] = static_cast<uint8_t>(check >> (8 * i));
  EXPECT_FALSE(DecodeTrailer(no_flag.data(), no_flag.size()).ok());
  auto header = EncodeHeader(SampleHeader());
  EXPECT_FALSE(DecodeTrailer(header.data(), header.size()).ok());
}

// The sender's footer: its own waits, so the receiver's verdict can name a slow source.
TEST(Wire, FooterRoundTripAndRefusals) {
  DataFooter f;
  f.source_wait_ns = 700;
  f.send_ns = 1000;
  auto bytes = EncodeFooter(f);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(bytes.data()), 8), "NSPFSEND");
  auto d = DecodeFooter(bytes.data(), bytes.size());
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->source_wait_ns, 700u);
  EXPECT_EQ(d->send_ns, 1000u);
  for (size_t i = 0; i < kFooterSize; ++i) {
    auto bad = bytes;
    bad[i] ^= 0x01;
    EXPECT_FALSE(DecodeFooter(bad.data(), bad.size()).ok()) << "byte " << i;
  }
  EXPECT_FALSE(DecodeFooter(bytes.data(), kFooterSize - 1).ok());
  f.source_wait_ns = 1001;  // waited longer than it sent: a lie or a broken clock
  auto impossible = EncodeFooter(f);
  auto refused = DecodeFooter(impossible.data(), impossible.size());
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("longer than the send"), std::string::npos);
  auto trailer = EncodeTrailer(DataTrailer{});
  EXPECT_FALSE(DecodeFooter(trailer.data(), kFooterSize).ok()) << "a trailer's bytes are not a footer";
}

// --tree: the sizes after the header come back as sent, and a hostile block (short,
// long, a file of no bytes or over 64 GiB, a sum other than the transfer's) is refused
// with a reason before the receiver creates a file.
TEST(Wire, FileSizesRoundTripAndAreCheckedAgainstTheOpenRequest) {
  const std::vector<uint64_t> sizes = {1, 4096, kMaxSetFileSize};
  const uint64_t total = 1 + 4096 + kMaxSetFileSize;
  std::vector<uint8_t> bytes = EncodeFileSizes(sizes);
  ASSERT_EQ(bytes.size(), 3 * kFileSizeBytes);
  EXPECT_EQ(bytes[8], 0x00);  // 4096, little-endian
  EXPECT_EQ(bytes[9], 0x10);
  auto back = DecodeFileSizes(bytes.data(), bytes.size(), 3, total);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, sizes);

  const auto refused = [&](const std::vector<uint8_t>& b, uint64_t count, uint64_t sum, const char* why) {
    auto got = DecodeFileSizes(b.data(), b.size(), count, sum);
    ASSERT_FALSE(got.ok()) << why;
    EXPECT_NE(std::string(got.status().message()).find(why), std::string::npos) << got.status();
  };
  refused(bytes, 3, total - 1, "not the");
  refused(bytes, 4, total, "bytes for 4 files");
  refused(std::vector<uint8_t>(bytes.begin(), bytes.end() - 1), 3, total, "bytes for 3 files");
  refused({}, 0, 0, "bytes for 0 files");
  refused(EncodeFileSizes({5, 0, 7}), 3, 12, "file 2 of 0 bytes");
  refused(EncodeFileSizes({kMaxSetFileSize + 1}), 1, kMaxSetFileSize + 1, "file 1 of");
  std::vector<uint8_t> huge(16, 0xFF);  // two sizes of 2^64 - 1: no wrap-around to the sum
  refused(huge, 2, 0xFFFFFFFFFFFFFFFEULL, "file 1 of");
}

}  // namespace
}  // namespace nasperf
