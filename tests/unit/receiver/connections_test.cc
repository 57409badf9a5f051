// The data port's connection threads on real socket pairs: each serve runs on its own
// thread and gets its socket closed after; the total and per-source limits refuse
// (and close) what is over them; CloseAll unblocks every serve and joins it.
#include "receiver/connections.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>

#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"

namespace nasperf {
namespace {

struct Pair {
  int ours = -1, theirs = -1;  // theirs goes to ConnectionThreads
  Pair() {
    int fds[2];
    EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
    ours = fds[0];
    theirs = fds[1];
  }
  ~Pair() { ::close(ours); }
  // True once the other end is closed: a read returns 0 (end of file).
  bool PeerClosed() const {
    char byte;
    return ::recv(ours, &byte, 1, 0) == 0;
  }
};

// Blocks until its socket is shut down or the peer closes.
void ServeUntilClosed(int fd) {
  char buffer[64];
  while (::recv(fd, buffer, sizeof buffer, 0) > 0) {
  }
}

bool IsOpen(int fd) { return ::fcntl(fd, F_GETFD) != -1; }

TEST(ConnectionThreads, EachServeRunsOnItsOwnThreadAndItsSocketIsClosedAfter) {
  ConnectionThreads threads(4, 4);
  Pair a, b;
  absl::Notification a_served;
  ASSERT_EQ(threads.Start(a.theirs, "10.0.0.1",
                          [&](int fd) {
                            EXPECT_EQ(fd, a.theirs);
                            a_served.Notify();
                          }),
            ConnectionThreads::Refusal::kNone);
  ASSERT_EQ(threads.Start(b.theirs, "10.0.0.1", ServeUntilClosed), ConnectionThreads::Refusal::kNone);
  a_served.WaitForNotification();
  EXPECT_TRUE(a.PeerClosed()) << "the socket is closed once its serve returned";
  ::shutdown(b.ours, SHUT_WR);  // b's serve returns
  EXPECT_TRUE(b.PeerClosed());
  threads.CloseAll();
  EXPECT_EQ(threads.active(), 0);
}

TEST(ConnectionThreads, OverTheTotalLimitIsRefusedAndClosed) {
  ConnectionThreads threads(2, 8);
  Pair a, b, c;
  ASSERT_EQ(threads.Start(a.theirs, "10.0.0.1", ServeUntilClosed), ConnectionThreads::Refusal::kNone);
  ASSERT_EQ(threads.Start(b.theirs, "10.0.0.2", ServeUntilClosed), ConnectionThreads::Refusal::kNone);
  EXPECT_EQ(threads.Start(c.theirs, "10.0.0.3", ServeUntilClosed), ConnectionThreads::Refusal::kTooMany);
  EXPECT_FALSE(IsOpen(c.theirs));
  EXPECT_EQ(threads.active(), 2);
  threads.CloseAll();  // shuts a and b down, so their serves return
  EXPECT_EQ(threads.active(), 0);
  EXPECT_TRUE(a.PeerClosed());
  Pair d;
  EXPECT_EQ(threads.Start(d.theirs, "10.0.0.4", ServeUntilClosed), ConnectionThreads::Refusal::kTooMany)
      << "nothing starts after CloseAll";
}

TEST(ConnectionThreads, OneSourceMayHoldOnlySoManyUnadmittedConnections) {
  ConnectionThreads threads(16, 2);
  Pair a, b, c, d, e;
  absl::Notification a_admitted;
  auto admit_then_wait = [&](int fd) {
    threads.Admitted("10.0.0.1");
    a_admitted.Notify();
    ServeUntilClosed(fd);
  };
  ASSERT_EQ(threads.Start(a.theirs, "10.0.0.1", admit_then_wait), ConnectionThreads::Refusal::kNone);
  a_admitted.WaitForNotification();
  ASSERT_EQ(threads.Start(b.theirs, "10.0.0.1", ServeUntilClosed), ConnectionThreads::Refusal::kNone);
  ASSERT_EQ(threads.Start(c.theirs, "10.0.0.1", ServeUntilClosed), ConnectionThreads::Refusal::kNone);
  EXPECT_EQ(threads.Start(d.theirs, "10.0.0.1", ServeUntilClosed), ConnectionThreads::Refusal::kTooManyUnadmitted);
  EXPECT_FALSE(IsOpen(d.theirs));
  EXPECT_EQ(threads.Start(e.theirs, "10.0.0.9", ServeUntilClosed), ConnectionThreads::Refusal::kNone)
      << "another source is not held back";
  EXPECT_EQ(threads.active(), 4);
}  // the destructor closes all and joins

TEST(ConnectionThreads, FinishedThreadsAreJoinedAsNewOnesStart) {
  ConnectionThreads threads(1, 1);
  for (int i = 0; i < 50; ++i) {
    Pair p;
    absl::Notification done;
    ASSERT_EQ(threads.Start(p.theirs, "10.0.0.1",
                            [&](int) {
                              threads.Admitted("10.0.0.1");
                              done.Notify();
                            }),
              ConnectionThreads::Refusal::kNone)
        << "round " << i;
    done.WaitForNotification();
    ASSERT_TRUE(p.PeerClosed());
    // The socket is closed in the same critical section that frees the slot.
    ASSERT_EQ(threads.active(), 0);
  }
}

}  // namespace
}  // namespace nasperf
