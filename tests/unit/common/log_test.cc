// What reaches a terminal from a peer, and how a flood of log lines is held back.
#include "common/log.h"

#include "gtest/gtest.h"

namespace nasperf {
namespace {

TEST(TerminalSafe, EscapeSequencesBecomeVisibleEscapes) {
  EXPECT_EQ(TerminalSafe("nas\x1b[2J\nbox\r\t\x7f"), "nas\\x1b[2J\\x0abox\\x0d\\x09\\x7f");
  EXPECT_EQ(TerminalSafe("\x1b]0;pwned\x07"), "\\x1b]0;pwned\\x07");  // sets the window title
  EXPECT_EQ(TerminalSafe(std::string("a\0b", 3)), "a\\x00b");
  EXPECT_EQ(TerminalSafe("a\nb\x1b[2J"
                         "c\n",
                         /*keep_newlines=*/true),
            "a\nb\\x1b[2Jc\n");
  EXPECT_EQ(TerminalSafe("a\rb", /*keep_newlines=*/true), "a\\x0db");
}

TEST(TerminalSafe, C1ControlsAndBrokenUtf8AreEscapedByteByByte) {
  EXPECT_EQ(TerminalSafe("\xc2\x9b"
                         "31m"),
            "\\xc2\\x9b31m");  // C1 CSI in UTF-8
  EXPECT_EQ(TerminalSafe("\x9b"
                         "2J"),
            "\\x9b2J");                                                 // CSI for a terminal in 8-bit mode
  EXPECT_EQ(TerminalSafe("\xc0\xaf"), "\\xc0\\xaf");                    // overlong '/'
  EXPECT_EQ(TerminalSafe("\xed\xa0\x80"), "\\xed\\xa0\\x80");           // a surrogate
  EXPECT_EQ(TerminalSafe("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");  // past U+10FFFF
  EXPECT_EQ(TerminalSafe("ab\xe2\x82"), "ab\\xe2\\x82");                // cut short
  EXPECT_EQ(TerminalSafe("\xe2\x80\xae"
                         "txt.exe"),
            "\\xe2\\x80\\xaetxt.exe");  // right-to-left override
}

TEST(TerminalSafe, PrintableTextStaysAsItIs) {
  for (const char* text : {"nas-01.lab: 10.0.0.5:7600", "caf\xc3\xa9 \xc2\xa0ok", "\xe6\x97\xa5\xe6\x9c\xac",
                           "\xf0\x9f\x92\xbe disk", "C:\\share\\x1b stays text", ""}) {
    EXPECT_EQ(TerminalSafe(text), text);
  }
  const std::string escaped = TerminalSafe(
      "\x1b[31mred\x1b[0m \xc2\x9d"
      "8;;http://x\xc2\x9c");
  EXPECT_EQ(escaped.find('\x1b'), std::string::npos);
  EXPECT_EQ(escaped.find("\xc2\x9d"), std::string::npos);
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
