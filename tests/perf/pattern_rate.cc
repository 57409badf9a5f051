// Benchmark helper (not a test): how fast PatternSource produces payload, and how
// fast XXH3 hashes it, in MB/s on one core, so docs/PERFORMANCE.md can show that the
// generator and --verify outrun the data path. Prints "pattern_mb_s=... xxh3_mb_s=...".
#include <cstdio>

#include "common/checksum.h"
#include "common/clock.h"
#include "common/payload.h"

int main() {
  using namespace nasperf;
  constexpr uint64_t kBytes = 16ULL << 30;
  PatternSource source(Pattern::kRandom, 42);
  uint64_t sink = 0;
  int64_t start = MonoNanos();
  for (uint64_t offset = 0; offset < kBytes; offset += PatternSource::kChunk) {
    sink += source.Next(offset, PatternSource::kChunk)[offset % 4096];
  }
  double pattern_s = NanosToSeconds(MonoNanos() - start);

  StreamChecksum checksum;
  start = MonoNanos();
  for (uint64_t offset = 0; offset < kBytes / 4; offset += PatternSource::kChunk) {
    checksum.Update(source.Next(offset, PatternSource::kChunk), PatternSource::kChunk);
  }
  double hash_s = NanosToSeconds(MonoNanos() - start);
  std::printf("pattern_mb_s=%.0f xxh3_mb_s=%.0f (%llu)\n", kBytes / pattern_s / 1e6, kBytes / 4 / hash_s / 1e6,
              static_cast<unsigned long long>(sink + checksum.Digest() % 2));
  return 0;
}
