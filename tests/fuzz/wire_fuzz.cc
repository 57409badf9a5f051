// libFuzzer target for the data-port codec: any bytes must decode to a refusal or
// to a frame that re-encodes to the same bytes; nothing may crash or read past size.
// Frame-sized inputs are also tried re-signed (a valid check word), so the fuzzer
// reaches the field checks behind the check word; any multiple of 8 bytes is also a
// tree's sizes, with the sum they add up to.
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "wire/wire.h"
#include "xxhash.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace nasperf;
  if (auto header = DecodeHeader(data, size); header.ok()) {
    auto again = EncodeHeader(*header);
    if (size != again.size() || std::memcmp(again.data(), data, size) != 0) __builtin_trap();
  }
  if (auto trailer = DecodeTrailer(data, size); trailer.ok()) {
    auto again = EncodeTrailer(*trailer);
    if (size != again.size() || std::memcmp(again.data(), data, size) != 0) __builtin_trap();
  }
  if (auto footer = DecodeFooter(data, size); footer.ok()) {
    auto again = EncodeFooter(*footer);
    if (size != again.size() || std::memcmp(again.data(), data, size) != 0) __builtin_trap();
  }
  // A tree's sizes: whatever count and total the bytes claim, a block that passes
  // re-encodes to itself, and every size in it is within a set's bounds.
  if (size >= 8 && size % kFileSizeBytes == 0) {
    uint64_t total = 0;
    for (size_t i = 0; i < size; i += kFileSizeBytes) {
      uint64_t v = 0;
      std::memcpy(&v, data + i, sizeof v);  // little-endian hosts only run the fuzzer
      total += v;
    }
    if (auto sizes = DecodeFileSizes(data, size, size / kFileSizeBytes, total); sizes.ok()) {
      auto again = EncodeFileSizes(*sizes);
      if (again.size() != size || std::memcmp(again.data(), data, size) != 0) __builtin_trap();
    }
  }
  if (size == kHeaderSize || size == kTrailerSize || size == kFooterSize) {
    uint8_t signed_frame[kTrailerSize];
    std::memcpy(signed_frame, data, size);
    uint32_t check = XXH32(signed_frame, size - 4, 0);
    for (int i = 0; i < 4; ++i) signed_frame[size - 4 + i] = static_cast<uint8_t>(check >> (8 * i));
    if (auto header = DecodeHeader(signed_frame, size); header.ok()) {
      auto again = EncodeHeader(*header);
      if (std::memcmp(again.data(), signed_frame, size) != 0) __builtin_trap();
    }
    if (auto trailer = DecodeTrailer(signed_frame, size); trailer.ok()) {
      auto again = EncodeTrailer(*trailer);
      if (std::memcmp(again.data(), signed_frame, size) != 0) __builtin_trap();
    }
    if (auto footer = DecodeFooter(signed_frame, size); footer.ok()) {
      auto again = EncodeFooter(*footer);
      if (std::memcmp(again.data(), signed_frame, size) != 0) __builtin_trap();
    }
  }
  return 0;
}
