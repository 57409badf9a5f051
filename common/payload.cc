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
  // pass over a buffer that stays in the core's cache. A vector of 64 bytes (GCC's
  // extension: SSE2 or AVX2 on x86, NEON on ARM), loaded and stored with memcpy.
  Lanes key;
  uint64_t state = SplitMix64(seed_ * 0x2545f4914f6cdd1dULL ^ (offset / kChunk));
  for (int lane = 0; lane < 8; ++lane) key[lane] = state = SplitMix64(state);
  const Lanes delta = key ^ applied_key_;
  applied_key_ = key;
  uint64_t* words = chunk_.data();
  for (size_t group = 0; group < kChunk / 64; ++group) {
    Lanes v;
    std::memcpy(&v, words + group * 8, sizeof v);
    v ^= delta;
    std::memcpy(words + group * 8, &v, sizeof v);
  }
  uint8_t* base = reinterpret_cast<uint8_t*>(chunk_.data());
  for (size_t block = 0; block < size; block += kBlock) {
    uint64_t index = (offset + block) / kBlock;
    uint64_t stamp[2] = {SplitMix64(seed_ ^ index), SplitMix64(index + seed_ * 31)};
    std::memcpy(base + block, stamp, std::min<size_t>(sizeof stamp, size - block));
  }
  return base;
}

}  // namespace nasperf
