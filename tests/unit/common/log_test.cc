// What reaches a terminal from a peer, and how a flood of log lines is held back.
#include "common/log.h"

#include "gtest/gtest.h"

namespace nasperf {
namespace {

TEST(Printable, ControlCharactersBecomeQuestionMarks) {
  EXPECT_EQ(Printable("nas\x1b[2J\nbox\r\t\x7f"), "nas?[2J?box???");
  EXPECT_EQ(Printable("\xc2\x9b"
                      "31m"),
            "?31m");                                                         // C1 CSI in UTF-8
  EXPECT_EQ(Printable("caf\xc3\xa9 \xc2\xa0ok"), "caf\xc3\xa9 \xc2\xa0ok");  // other UTF-8 stays
  EXPECT_EQ(Printable(std::string("a\0b", 3)), "a?b");
}

TEST(LogThrottle, LetsThroughOnlySoManyPerWindow) {
  LogThrottle throttle(3, 3600);
  uint64_t held = 99;
  for (int i = 0; i < 3; ++i) {
    EXPECT_TRUE(throttle.Allow(&held));
    EXPECT_EQ(held, 0u);
  }
  for (int i = 0; i < 100; ++i) EXPECT_FALSE(throttle.Allow(&held));
  EXPECT_EQ(LogThrottle::Held(0), "");
  EXPECT_EQ(LogThrottle::Held(1), " (1 similar line not logged)");
  EXPECT_EQ(LogThrottle::Held(97), " (97 similar lines not logged)");
}

TEST(LogThrottle, ANewWindowTellsWhatWasHeld) {
  LogThrottle throttle(1, 0);  // every call opens a new window
  uint64_t held = 99;
  EXPECT_TRUE(throttle.Allow(&held));
  EXPECT_EQ(held, 0u);
}

}  // namespace
}  // namespace nasperf
