#include "common/huge_buffer.h"

#include <cstdint>

#include "gtest/gtest.h"

namespace nasperf {
namespace {

constexpr size_t kHugePage = size_t{2} << 20;

TEST(HugeBuffer, StartsOnAHugePageAndRoundsItsSizeUpToOne) {
  HugeBuffer buffer(3 << 20);
  ASSERT_NE(buffer.data(), nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(buffer.data()) % kHugePage, 0u);
  EXPECT_EQ(buffer.size(), 2 * kHugePage);
}

TEST(HugeBuffer, IsZeroedAndEveryByteIsWritable) {
  HugeBuffer buffer(1 << 20);
  ASSERT_NE(buffer.data(), nullptr);
  for (size_t i = 0; i < buffer.size(); i += 4096) ASSERT_EQ(buffer.data()[i], 0) << "at " << i;
  buffer.data()[0] = 1;
  buffer.data()[buffer.size() - 1] = 2;
  EXPECT_EQ(buffer.data()[0] + buffer.data()[buffer.size() - 1], 3);
}

TEST(HugeBuffer, TwoBuffersDoNotOverlap) {
  HugeBuffer a(1 << 20), b(1 << 20);
  ASSERT_NE(a.data(), nullptr);
  ASSERT_NE(b.data(), nullptr);
  EXPECT_TRUE(a.data() + a.size() <= b.data() || b.data() + b.size() <= a.data());
}

}  // namespace
}  // namespace nasperf
