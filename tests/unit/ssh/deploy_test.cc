// What decides whether a binary may be uploaded to a NAS (ssh/deploy.h): the ELF
// header's processor and the absence of a program interpreter, read from real files
// (this test binary, which is dynamic) and from headers built here; and what
// `uname -m` says.
#include "ssh/deploy.h"

#include <fstream>
#include <sstream>
#include <string>

#include "gtest/gtest.h"

namespace nasperf {
namespace {

// A minimal 64-bit little-endian ELF image: the header, then one program header of
// each type given.
std::string Elf(uint16_t machine, std::initializer_list<uint32_t> types) {
  std::string image(64 + 56 * types.size(), '\0');
  image.replace(0, 4,
                "\x7f"
                "ELF");
  image[4] = 2;  // 64-bit
  image[5] = 1;  // little-endian
  image[18] = static_cast<char>(machine & 0xff);
  image[19] = static_cast<char>(machine >> 8);
  image[32] = 64;  // e_phoff
  image[54] = 56;  // e_phentsize
  image[56] = static_cast<char>(types.size());
  size_t at = 64;
  for (uint32_t type : types) {
    image[at] = static_cast<char>(type);
    at += 56;
  }
  return image;
}

TEST(ReadElfFacts, AStaticX86Binary) {
  auto facts = ReadElfFacts(Elf(62, {1, 1, 4}));  // PT_LOAD, PT_LOAD, PT_NOTE
  ASSERT_TRUE(facts.ok()) << facts.status();
  EXPECT_EQ(facts->machine, Machine::kX86_64);
  EXPECT_TRUE(facts->is_static);
}

TEST(ReadElfFacts, ADynamicAarch64Binary) {
  auto facts = ReadElfFacts(Elf(183, {6, 3, 1}));  // PT_PHDR, PT_INTERP, PT_LOAD
  ASSERT_TRUE(facts.ok()) << facts.status();
  EXPECT_EQ(facts->machine, Machine::kAarch64);
  EXPECT_FALSE(facts->is_static);
}

TEST(ReadElfFacts, ThisTestBinaryIsDynamicForThisProcessor) {
  std::ifstream in("/proc/self/exe", std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  auto facts = ReadElfFacts(bytes.str());
  ASSERT_TRUE(facts.ok()) << facts.status();
  EXPECT_FALSE(facts->is_static);
#if defined(__x86_64__)
  EXPECT_EQ(facts->machine, Machine::kX86_64);
#elif defined(__aarch64__)
  EXPECT_EQ(facts->machine, Machine::kAarch64);
#endif
}

TEST(ReadElfFacts, RefusesWhatIsNotA64BitLittleEndianElf) {
  EXPECT_FALSE(ReadElfFacts("#!/bin/sh\necho hello\n" + std::string(64, ' ')).ok());
  EXPECT_FALSE(ReadElfFacts("\x7f"
                            "ELF")
                   .ok());  // too short
  std::string thirty_two_bit = Elf(62, {1});
  thirty_two_bit[4] = 1;
  EXPECT_FALSE(ReadElfFacts(thirty_two_bit).ok());
}

TEST(ReadElfFacts, ProgramHeadersOutsideTheFileAreRefused) {
  std::string image = Elf(62, {1});
  image[56] = 100;  // 100 headers of 56 bytes in a 120-byte file
  EXPECT_FALSE(ReadElfFacts(image).ok());
  image = Elf(62, {1});
  image[39] = 0x7f;  // e_phoff far beyond the end
  EXPECT_FALSE(ReadElfFacts(image).ok());
}

TEST(MachineFromUname, NamesBothBuildsAndNothingElse) {
  EXPECT_EQ(MachineFromUname("x86_64\n"), Machine::kX86_64);
  EXPECT_EQ(MachineFromUname("aarch64"), Machine::kAarch64);
  EXPECT_EQ(MachineFromUname("arm64"), Machine::kAarch64);
  EXPECT_EQ(MachineFromUname("armv7l"), Machine::kOther);
  EXPECT_EQ(MachineFromUname("i686"), Machine::kOther);
  EXPECT_STREQ(MachineName(Machine::kAarch64), "aarch64");
}

}  // namespace
}  // namespace nasperf
