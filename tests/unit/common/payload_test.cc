#include "common/payload.h"

#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace nasperf {
namespace {

TEST(PatternSource, NoTwoBlocksRepeatAcrossManyPoolCycles) {
  PatternSource source(Pattern::kRandom, 1234);
  std::set<std::string> blocks;
  const uint64_t total = 24 * PatternSource::kChunk;  // past the 16 MiB an older pool repeated at
  for (uint64_t offset = 0; offset < total; offset += PatternSource::kChunk) {
    const uint8_t* chunk = source.Next(offset, PatternSource::kChunk);
    for (size_t b = 0; b < PatternSource::kChunk; b += PatternSource::kBlock) {
      blocks.insert(std::string(reinterpret_cast<const char*>(chunk + b), 64));
    }
  }
  EXPECT_EQ(blocks.size(), total / PatternSource::kBlock);
}

// Nothing recurs at any distance, as a pool reused every 16 MiB did (zstd --long found
// it): every 64-byte piece of 40 chunks (4 KiB stamps apart) is unique.
TEST(PatternSource, NoRunRecursAcrossChunks) {
  PatternSource source(Pattern::kRandom, 77);
  std::set<std::string> pieces;
  const uint64_t total = 40 * PatternSource::kChunk;
  size_t count = 0;
  for (uint64_t offset = 0; offset < total; offset += PatternSource::kChunk) {
    const uint8_t* chunk = source.Next(offset, PatternSource::kChunk);
    for (size_t at = 64; at < PatternSource::kChunk; at += 256, ++count) {
      pieces.insert(std::string(reinterpret_cast<const char*>(chunk + at), 64));
    }
  }
  EXPECT_EQ(pieces.size(), count);
}

TEST(PatternSource, LooksIncompressible) {
  PatternSource source(Pattern::kRandom, 99);
  const uint8_t* chunk = source.Next(0, PatternSource::kChunk);
  size_t counts[256] = {};
  for (size_t i = 0; i < PatternSource::kChunk; ++i) ++counts[chunk[i]];
  // A uniform byte distribution: each value within 10% of the mean count.
  double mean = PatternSource::kChunk / 256.0;
  for (size_t c : counts) EXPECT_NEAR(static_cast<double>(c), mean, mean * 0.1);
}

TEST(PatternSource, SeedsDifferAndAreReproducible) {
  PatternSource a(Pattern::kRandom, 1), b(Pattern::kRandom, 2), a2(Pattern::kRandom, 1);
  std::string first(reinterpret_cast<const char*>(a.Next(0, 4096)), 4096);
  EXPECT_NE(first, std::string(reinterpret_cast<const char*>(b.Next(0, 4096)), 4096));
  EXPECT_EQ(first, std::string(reinterpret_cast<const char*>(a2.Next(0, 4096)), 4096));
}

uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// The payload's definition, word by word with no vectors: chunk k is the pool (a
// splitmix64 chain from the seed) XOR chunk k's 8-word key, repeating every 64 bytes,
// with each 4 KiB block's first 16 bytes its stamp. The vector loop makes exactly these
// bytes in any order of chunks: a sender and a receiver built for different CPUs (x86's
// SSE2, ARM's NEON) must agree byte for byte.
TEST(PatternSource, MakesThePayloadsDefinedBytes) {
  constexpr uint64_t kSeed = 4242;
  constexpr size_t kWords = PatternSource::kChunk / 8;
  std::vector<uint64_t> pool(kWords);
  uint64_t state = kSeed;
  for (uint64_t& word : pool) word = state = Mix(state);
  PatternSource source(Pattern::kRandom, kSeed);
  for (uint64_t k : {0, 3, 1, 1, 7}) {
    uint64_t key[8];
    uint64_t key_state = Mix(kSeed * 0x2545f4914f6cdd1dULL ^ k);
    for (uint64_t& lane : key) lane = key_state = Mix(key_state);
    std::vector<uint64_t> want(kWords);
    for (size_t w = 0; w < kWords; ++w) want[w] = pool[w] ^ key[w % 8];
    for (size_t block = 0; block < PatternSource::kChunk; block += PatternSource::kBlock) {
      const uint64_t index = (k * PatternSource::kChunk + block) / PatternSource::kBlock;
      want[block / 8] = Mix(kSeed ^ index);
      want[block / 8 + 1] = Mix(index + kSeed * 31);
    }
    const uint64_t offset = k * PatternSource::kChunk;
    ASSERT_EQ(std::memcmp(source.Next(offset, PatternSource::kChunk), want.data(), PatternSource::kChunk), 0)
        << "chunk " << k;
  }
}

TEST(PatternSource, ZeroIsZero) {
  PatternSource zero(Pattern::kZero, 5);
  const uint8_t* chunk = zero.Next(PatternSource::kChunk * 3, 1000);
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(chunk[i], 0);
}

TEST(ParsePattern, Names) {
  EXPECT_EQ(*ParsePattern("random"), Pattern::kRandom);
  EXPECT_EQ(*ParsePattern("zero"), Pattern::kZero);
  EXPECT_FALSE(ParsePattern("ones").ok());
}

}  // namespace
}  // namespace nasperf
