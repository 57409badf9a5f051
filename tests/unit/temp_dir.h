// A fresh directory under /tmp for a test that writes real files, removed with all in it
// afterwards. Fixtures derive from it (and call its SetUp first when they add to it).
// One per test; not thread-safe.
#ifndef NASPERF_TESTS_UNIT_TEMP_DIR_H_
#define NASPERF_TESTS_UNIT_TEMP_DIR_H_

#include <stdlib.h>

#include <filesystem>
#include <string>

#include "gtest/gtest.h"

namespace nasperf {

class TempDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char name[] = "/tmp/nasperf-test-XXXXXX";
    ASSERT_NE(mkdtemp(name), nullptr);
    dir_ = name;
  }
  void TearDown() override {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  std::string dir_;
};

}  // namespace nasperf

#endif  // NASPERF_TESTS_UNIT_TEMP_DIR_H_
