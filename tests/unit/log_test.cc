// What reaches a terminal from a peer, and how a flood of log lines is held back;
// ReadFullBy's one deadline for a header that trickles in.
#include <sys/socket.h>
#include <unistd.h>

#include "absl/status/status.h"
#include "common/clock.h"
#include "common/fd.h"
#include "common/log.h"
#include "gtest/gtest.h"

namespace nasperf {
namespace {

TEST(Printable, ControlCharactersBecomeQuestionMarks) {
  EXPECT_EQ(Printable("nas\x1b[2J\nbox\r\t\x7f"), "nas?[2J?box???");
  EXPECT_EQ(Printable("\xc2\x9b" "31m"), "?31m");  // C1 CSI in UTF-8
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

class SocketPair : public testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds_), 0); }
  void TearDown() override {
    ::close(fds_[0]);
    ::close(fds_[1]);
  }
  int fds_[2];
};

TEST_F(SocketPair, ReadFullByGetsEverythingThatComesInTime) {
  ASSERT_EQ(::write(fds_[1], "abc", 3), 3);
  ASSERT_EQ(::write(fds_[1], "defg", 4), 4);
  char buffer[7];
  auto got = ReadFullBy(fds_[0], buffer, sizeof buffer, MonoNanos() + 10'000'000'000, "read header");
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, 7u);
  EXPECT_EQ(std::string(buffer, 7), "abcdefg");
}

TEST_F(SocketPair, ReadFullByEndsAtTheDeadlineNotAtTheNextByte) {
  ASSERT_EQ(::write(fds_[1], "abc", 3), 3);  // then nothing more, ever
  char buffer[16];
  auto got = ReadFullBy(fds_[0], buffer, sizeof buffer, MonoNanos() + 50'000'000, "read header");
  ASSERT_FALSE(got.ok());
  EXPECT_TRUE(absl::IsDeadlineExceeded(got.status())) << got.status();
  EXPECT_NE(got.status().message().find("3 of 16 bytes"), std::string::npos) << got.status();
}

TEST_F(SocketPair, ReadFullByReportsAnEarlyEnd) {
  ASSERT_EQ(::write(fds_[1], "ab", 2), 2);
  ::shutdown(fds_[1], SHUT_WR);
  char buffer[16];
  auto got = ReadFullBy(fds_[0], buffer, sizeof buffer, MonoNanos() + 10'000'000'000, "read header");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*got, 2u);
}

}  // namespace
}  // namespace nasperf
