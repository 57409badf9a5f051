#include "common/payload.h"

#include <cstring>

#include "absl/strings/str_cat.h"

namespace nasperf {

uint64_t SplitMix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

absl::StatusOr<Pattern> ParsePattern(absl::string_view text) {
  if (text == "random") return Pattern::kRandom;
  if (text == "zero") return Pattern::kZero;
  return absl::InvalidArgumentError(absl::StrCat("invalid pattern \"", text, "\" (expected random or zero)"));
}

PatternSource::PatternSource(Pattern pattern, uint64_t seed) : pattern_(pattern), seed_(seed), chunk_(kChunk / 8, 0) {
  if (pattern_ != Pattern::kRandom) return;
  uint64_t state = seed;
  for (uint64_t& word : chunk_) word = state = SplitMix64(state);
}

const uint8_t* PatternSource::Next(uint64_t offset, size_t size) {
  if (pattern_ == Pattern::kZero) return reinterpret_cast<const uint8_t*>(chunk_.data());
  // The chunk's key, 64 bytes; the buffer holds the pool XOR the last key, so XORing it
  // with the difference of the two keys makes this chunk's bytes in place, in one
  // pass over a buffer that stays in the core's cache. Four 16-byte vectors (GCC's
  // extension: SSE2 on x86, NEON on ARM) kept in registers: a 64-byte vector type
  // on SSE2 went through the stack, a store and a reload per 16 bytes (perf annotate:
  // most of this function's samples), at half the speed.
  Lanes key;
  uint64_t state = SplitMix64(seed_ * 0x2545f4914f6cdd1dULL ^ (offset / kChunk));
  for (int lane = 0; lane < 8; ++lane) key[lane] = state = SplitMix64(state);
  const Lanes delta = key ^ applied_key_;
  applied_key_ = key;
  typedef uint64_t Pair __attribute__((vector_size(16)));
  const Pair d0 = {delta[0], delta[1]}, d1 = {delta[2], delta[3]}, d2 = {delta[4], delta[5]}, d3 = {delta[6], delta[7]};
  uint8_t* bytes = reinterpret_cast<uint8_t*>(chunk_.data());
  for (uint8_t* group = bytes; group < bytes + kChunk; group += 64) {
    Pair v0, v1, v2, v3;
    std::memcpy(&v0, group, 16);
    std::memcpy(&v1, group + 16, 16);
    std::memcpy(&v2, group + 32, 16);
    std::memcpy(&v3, group + 48, 16);
    v0 ^= d0, v1 ^= d1, v2 ^= d2, v3 ^= d3;
    std::memcpy(group, &v0, 16);
    std::memcpy(group + 16, &v1, 16);
    std::memcpy(group + 32, &v2, 16);
    std::memcpy(group + 48, &v3, 16);
  }
  for (size_t block = 0; block < size; block += kBlock) {
    uint64_t index = (offset + block) / kBlock;
    uint64_t stamp[2] = {SplitMix64(seed_ ^ index), SplitMix64(index + seed_ * 31)};
    std::memcpy(bytes + block, stamp, std::min<size_t>(sizeof stamp, size - block));
  }
  return bytes;
}

}  // namespace nasperf
