// The token generated at an agent's first start: several agents starting at once on
// one host (a lab's receivers, a receiver and its collector) must all end up with
// the one token that is in the file, never an error or a half-written file.
#include "common/token.h"

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace nasperf {
namespace {

TEST(Token, SimultaneousFirstStartsAgreeOnOneToken) {
  // A fresh directory: a killed earlier run (even under the same pid) left nothing here.
  std::string pattern = absl::StrCat(testing::TempDir(), "/token-race-XXXXXX");
  ASSERT_NE(mkdtemp(pattern.data()), nullptr);
  const std::string root = pattern;
  unsetenv("NASPERF_TOKEN");
  unsetenv("XDG_CONFIG_HOME");
  for (int round = 0; round < 40; ++round) {
    const std::string home = absl::StrCat(root, "/", round);
    std::filesystem::create_directories(home);
    setenv("HOME", home.c_str(), 1);
    constexpr int kAgents = 4;
    std::vector<std::string> tokens(kAgents);
    std::vector<std::string> errors(kAgents);
    std::vector<std::thread> agents;
    for (int i = 0; i < kAgents; ++i) {
      agents.emplace_back([&, i] {
        auto token = LoadToken("", /*generate_if_missing=*/true);
        if (token.ok())
          tokens[i] = token->token;
        else
          errors[i] = std::string(token.status().message());
      });
    }
    for (auto& t : agents) t.join();
    std::ifstream file(absl::StrCat(home, "/.config/nasperf/token"));
    std::string on_disk;
    file >> on_disk;
    for (int i = 0; i < kAgents; ++i) {
      ASSERT_EQ(errors[i], "") << "round " << round;
      ASSERT_EQ(tokens[i], on_disk) << "round " << round << " agent " << i;
    }
    int files = 0;
    for (const auto& entry : std::filesystem::directory_iterator(absl::StrCat(home, "/.config/nasperf"))) {
      (void)entry;
      ++files;
    }
    EXPECT_EQ(files, 1) << "drafts left behind in round " << round;
  }
  std::filesystem::remove_all(root);
}

}  // namespace
}  // namespace nasperf
