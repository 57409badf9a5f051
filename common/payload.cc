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

PatternSource::PatternSource(Pattern pattern, uint64_t seed)
    : pattern_(pattern), seed_(seed), pool_(pattern == Pattern::kRandom ? kPoolSize : kChunk, 0) {
  if (pattern_ != Pattern::kRandom) return;
  uint64_t state = seed;
  for (size_t i = 0; i + 8 <= pool_.size(); i += 8) {
    state = SplitMix64(state);
    std::memcpy(&pool_[i], &state, 8);
  }
}

const uint8_t* PatternSource::Next(uint64_t offset, size_t size) {
  if (pattern_ == Pattern::kZero) return pool_.data();
  uint8_t* base = pool_.data() + (offset % kPoolSize);
  for (size_t block = 0; block < size; block += kBlock) {
    uint64_t index = (offset + block) / kBlock;
    uint64_t stamp[2] = {SplitMix64(seed_ ^ index), SplitMix64(index + seed_ * 31)};
    std::memcpy(base + block, stamp, std::min<size_t>(sizeof stamp, size - block));
  }
  return base;
}

}  // namespace nasperf
