// Generated payload for --size runs. The random pattern is incompressible (random
// bytes from a PRNG) and repeats nowhere: not at 4 KiB block granularity (every block
// starts with a 16-byte stamp unique to its seed and offset) and not in the long
// windows of a compressor (zstd --long) either, as a reused pool would: each 1 MiB
// chunk is a pool of 1 MiB, filled once, XORed with 64 bytes of key drawn for that
// chunk, so no run of bytes recurs. Cheap per byte: one XOR pass, in place, over a
// buffer that stays in the core's cache. One instance per transfer, owned by one thread.
#ifndef NASPERF_COMMON_PAYLOAD_H_
#define NASPERF_COMMON_PAYLOAD_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace nasperf {

enum class Pattern { kRandom, kZero };
absl::StatusOr<Pattern> ParsePattern(absl::string_view text);

class PatternSource {
 public:
  static constexpr size_t kChunk = 1 << 20;  // largest piece Next() returns
  static constexpr size_t kBlock = 4096;     // dedup granularity of the stamps

  PatternSource(Pattern pattern, uint64_t seed);

  // The payload bytes at [offset, offset + size). REQUIRES: offset % kChunk == 0 and
  // size <= kChunk. The pointer stays valid until the next call.
  const uint8_t* Next(uint64_t offset, size_t size);

 private:
  Pattern pattern_;
  uint64_t seed_;
  typedef uint64_t Lanes __attribute__((vector_size(64)));
  std::vector<uint64_t> chunk_;  // kChunk bytes: the random pool XOR applied_key_, stamped
  Lanes applied_key_ = {};       // the key the buffer holds (zero: the pool itself)
};

// splitmix64: a fast, well-mixed 64-bit step (Steele, Lea, Flood 2014).
uint64_t SplitMix64(uint64_t x);

}  // namespace nasperf

#endif  // NASPERF_COMMON_PAYLOAD_H_
