// The data port's connection threads on real socket pairs: each serve runs on its own
// thread and gets its socket closed after; the total and per-source limits refuse
// (and close) what is over them; the unadmitted budget makes room at the expense of
// the source holding the most and keeps the other slots for admitted connections;
// CloseAll unblocks every serve and joins it. And SourceGroup's per-source groups.
#include "receiver/connections.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

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
void WaitUntilClosed(int fd) {
  char buffer[64];
  while (::recv(fd, buffer, sizeof buffer, 0) > 0) {
  }
}
void ServeUntilClosed(int fd, bool) { WaitUntilClosed(fd); }

bool IsOpen(int fd) { return ::fcntl(fd, F_GETFD) != -1; }

TEST(ConnectionThreads, EachServeRunsOnItsOwnThreadAndItsSocketIsClosedAfter) {
  ConnectionThreads threads({4, 4, 4});
  Pair a, b;
  absl::Notification a_served;
  ASSERT_EQ(threads.Start(a.theirs, "10.0.0.1",
                          [&](int fd, bool) {
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
  ConnectionThreads threads({2, 8, 8});
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
  ConnectionThreads threads({16, 16, 2});
  Pair a, b, c, d, e;
  absl::Notification a_admitted;
  auto admit_then_wait = [&](int fd, bool) {
    EXPECT_TRUE(threads.HeaderDone(fd));
    a_admitted.Notify();
    WaitUntilClosed(fd);
  };
  ASSERT_EQ(threads.Start(a.theirs, "10.0.0.1", admit_then_wait), ConnectionThreads::Refusal::kNone);
  a_admitted.WaitForNotification();
  ASSERT_EQ(threads.Start(b.theirs, "10.0.0.1", ServeUntilClosed), ConnectionThreads::Refusal::kNone);
  ASSERT_EQ(threads.Start(c.theirs, "10.0.0.1", ServeUntilClosed), ConnectionThreads::Refusal::kNone);
  EXPECT_EQ(threads.Start(d.theirs, "10.0.0.1", ServeUntilClosed), ConnectionThreads::Refusal::kTooManyFromSource);
  EXPECT_FALSE(IsOpen(d.theirs));
  EXPECT_EQ(threads.Start(e.theirs, "10.0.0.9", ServeUntilClosed), ConnectionThreads::Refusal::kNone)
      << "another source is not held back";
  EXPECT_EQ(threads.active(), 4);
}  // the destructor closes all and joins

// Holds serves without reading their sockets until the test ends (also an early one).
struct HeldServes {
  absl::Notification release;
  ~HeldServes() { release.Notify(); }
  ConnectionThreads::Serve Serve() {
    return [this](int, bool) { release.WaitForNotification(); };
  }
};

TEST(ConnectionThreads, AConnectionWhoseHeaderHasArrivedDoesNotCountAgainstTheBudgets) {
  ConnectionThreads threads({64, 8, 2, /*header_bytes=*/4});
  HeldServes held;  // destroyed first: the serves return before threads' CloseAll waits
  std::vector<std::unique_ptr<Pair>> senders;
  for (int i = 0; i < 12; ++i) {  // one source's streams, headers sent, not yet read by a starved NAS
    senders.push_back(std::make_unique<Pair>());
    ASSERT_EQ(::send(senders.back()->ours, "HEAD", 4, 0), 4);
    ASSERT_EQ(threads.Start(senders.back()->theirs, "10.0.0.1", held.Serve()), ConnectionThreads::Refusal::kNone)
        << "stream " << i << " of a sender whose header came at once";
  }
  Pair partial, silent, third;
  ASSERT_EQ(::send(partial.ours, "HEA", 3, 0), 3);
  ASSERT_EQ(threads.Start(partial.theirs, "10.0.0.1", held.Serve()), ConnectionThreads::Refusal::kNone);
  ASSERT_EQ(threads.Start(silent.theirs, "10.0.0.1", held.Serve()), ConnectionThreads::Refusal::kNone);
  EXPECT_EQ(threads.Start(third.theirs, "10.0.0.1", held.Serve()), ConnectionThreads::Refusal::kTooManyFromSource)
      << "a header not yet whole still counts against the source's budget";
  EXPECT_EQ(threads.unadmitted(), 2);
  EXPECT_EQ(threads.active(), 14);
}

TEST(ConnectionThreads, FinishedThreadsAreJoinedAsNewOnesStart) {
  ConnectionThreads threads({1, 1, 1});
  for (int i = 0; i < 50; ++i) {
    Pair p;
    absl::Notification done;
    ASSERT_EQ(threads.Start(p.theirs, "10.0.0.1",
                            [&](int fd, bool) {
                              EXPECT_TRUE(threads.HeaderDone(fd));
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

// Polls (bounded: 10 s) until at most `n` connections are open: a dropped one's
// thread ends soon after the drop, not at once.
bool ActiveFallsTo(const ConnectionThreads& threads, int n) {
  for (int i = 0; i < 10000; ++i) {
    if (threads.active() <= n) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return false;
}

// A serve that reports its header at once, as a real sender's connection does, then
// holds its slot like a transfer until the peer closes.
struct AdmittedServe {
  ConnectionThreads* threads;
  std::atomic<int>* dropped;
  absl::Notification* header_done;
  void operator()(int fd, bool) const {
    if (!threads->HeaderDone(fd)) ++*dropped;
    header_done->Notify();
    WaitUntilClosed(fd);
  }
};

TEST(ConnectionThreads, AFullUnadmittedBudgetDropsTheOldestOfTheSourceHoldingTheMost) {
  ConnectionThreads threads({16, 4, 3});
  Pair a1, a2, a3, b1, c1;
  for (Pair* p : {&a1, &a2, &a3}) {
    ASSERT_EQ(threads.Start(p->theirs, "10.0.0.1", ServeUntilClosed), ConnectionThreads::Refusal::kNone);
  }
  ASSERT_EQ(threads.Start(b1.theirs, "10.0.0.2", ServeUntilClosed), ConnectionThreads::Refusal::kNone);
  ASSERT_EQ(threads.unadmitted(), 4);
  ASSERT_EQ(threads.Start(c1.theirs, "10.0.0.3", ServeUntilClosed), ConnectionThreads::Refusal::kNone)
      << "a source holding nothing makes room";
  EXPECT_TRUE(a1.PeerClosed()) << "the oldest of 10.0.0.1, which held the most, was dropped";
  EXPECT_EQ(threads.unadmitted(), 4);
  ::shutdown(b1.ours, SHUT_WR);
  EXPECT_TRUE(b1.PeerClosed()) << "b1 was still served (its serve ended only now)";
}

TEST(ConnectionThreads, ANewcomerFromTheSourceHoldingTheMostIsRefusedWhenTheBudgetIsFull) {
  ConnectionThreads threads({16, 4, 4});
  Pair a1, a2, b1, b2, a3;
  for (Pair* p : {&a1, &a2}) {
    ASSERT_EQ(threads.Start(p->theirs, "10.0.0.1", ServeUntilClosed), ConnectionThreads::Refusal::kNone);
  }
  for (Pair* p : {&b1, &b2}) {
    ASSERT_EQ(threads.Start(p->theirs, "10.0.0.2", ServeUntilClosed), ConnectionThreads::Refusal::kNone);
  }
  EXPECT_EQ(threads.Start(a3.theirs, "10.0.0.1", ServeUntilClosed), ConnectionThreads::Refusal::kUnadmittedBudgetFull);
  EXPECT_FALSE(IsOpen(a3.theirs));
  EXPECT_EQ(threads.active(), 4) << "nothing was dropped for it";
}

TEST(ConnectionThreads, ADroppedConnectionLearnsItWhenItsHeaderIsDone) {
  ConnectionThreads threads({16, 1, 1});
  Pair a, b;
  absl::Notification a_dropped;
  std::atomic<bool> header_done_ok{true};
  ASSERT_EQ(threads.Start(a.theirs, "10.0.0.1",
                          [&](int fd, bool) {
                            WaitUntilClosed(fd);  // the drop shuts it down
                            header_done_ok = threads.HeaderDone(fd);
                            a_dropped.Notify();
                          }),
            ConnectionThreads::Refusal::kNone);
  ASSERT_EQ(threads.Start(b.theirs, "10.0.0.2", ServeUntilClosed), ConnectionThreads::Refusal::kNone);
  a_dropped.WaitForNotification();
  EXPECT_FALSE(header_done_ok) << "serve nothing more on a dropped connection";
}

// 17 sources of 16 slow-header connections each (issue 29, row 2) against limits
// scaled down: the unadmitted never hold more than their budget, and every slot
// beyond it stays open to admitted connections.
TEST(ConnectionThreads, AFloodFromManySourcesLeavesTheOtherSlotsToAdmittedConnections) {
  ConnectionThreads threads({24, 8, 4});
  std::vector<std::unique_ptr<Pair>> flood;
  for (int source = 0; source < 17; ++source) {
    for (int i = 0; i < 4; ++i) {
      flood.push_back(std::make_unique<Pair>());
      (void)threads.Start(flood.back()->theirs, "10.0.1." + std::to_string(source), ServeUntilClosed);
      ASSERT_LE(threads.unadmitted(), 8);
    }
  }
  ASSERT_TRUE(ActiveFallsTo(threads, 8)) << "the dropped connections' threads end";
  std::atomic<int> dropped{0};
  std::vector<std::unique_ptr<Pair>> admitted;
  for (int i = 0; i < 16; ++i) {
    admitted.push_back(std::make_unique<Pair>());
    absl::Notification header_done;
    ASSERT_EQ(threads.Start(admitted.back()->theirs, "10.0.0.1", AdmittedServe{&threads, &dropped, &header_done}),
              ConnectionThreads::Refusal::kNone)
        << "admitted connection " << i;
    header_done.WaitForNotification();
    // The first one dropped a flood connection to get in; its thread ends soon.
    ASSERT_TRUE(ActiveFallsTo(threads, 8 + i));
  }
  EXPECT_EQ(threads.active(), 7 + 16) << "the 16 slots beyond the unadmitted budget went to admitted connections";
  EXPECT_EQ(dropped.load(), 0) << "no connection that presented its header at once was dropped";
  for (auto& p : admitted) ::shutdown(p->ours, SHUT_WR);
  for (auto& p : admitted) EXPECT_TRUE(p->PeerClosed());
}

TEST(ConnectionThreads, AConnectionIsCrowdedWhenMoreThanHalfTheBudgetIsInUse) {
  ConnectionThreads threads({16, 4, 4});
  std::vector<std::unique_ptr<Pair>> pairs;
  std::vector<bool> crowded(4);
  for (int i = 0; i < 4; ++i) {
    pairs.push_back(std::make_unique<Pair>());
    absl::Notification started;
    ASSERT_EQ(threads.Start(pairs.back()->theirs, "10.0.0." + std::to_string(i),
                            [&, i](int fd, bool c) {
                              crowded[i] = c;
                              started.Notify();
                              WaitUntilClosed(fd);
                            }),
              ConnectionThreads::Refusal::kNone);
    started.WaitForNotification();
  }
  EXPECT_EQ(crowded, (std::vector<bool>{false, false, false, true})) << "0, 1, 2, then 3 of 4 in use";
}

sockaddr_storage V4(const char* text) {
  sockaddr_storage s{};
  auto& in = reinterpret_cast<sockaddr_in&>(s);
  in.sin_family = AF_INET;
  EXPECT_EQ(inet_pton(AF_INET, text, &in.sin_addr), 1) << text;
  return s;
}
sockaddr_storage V6(const char* text) {
  sockaddr_storage s{};
  auto& in6 = reinterpret_cast<sockaddr_in6&>(s);
  in6.sin6_family = AF_INET6;
  EXPECT_EQ(inet_pton(AF_INET6, text, &in6.sin6_addr), 1) << text;
  return s;
}

TEST(SourceGroup, IPv4ByAddressIPv6ByItsSlash64) {
  EXPECT_EQ(SourceGroup(V4("192.0.2.7")), "192.0.2.7");
  EXPECT_NE(SourceGroup(V4("192.0.2.7")), SourceGroup(V4("192.0.2.8")));
  EXPECT_EQ(SourceGroup(V6("2001:db8:1:2::1")), "2001:db8:1:2::/64");
  EXPECT_EQ(SourceGroup(V6("2001:db8:1:2:ffff:ffff:ffff:ffff")), "2001:db8:1:2::/64")
      << "any address of the /64 is the same host, as far as the budget goes";
  EXPECT_NE(SourceGroup(V6("2001:db8:1:2::1")), SourceGroup(V6("2001:db8:1:3::1")));
  EXPECT_EQ(SourceGroup(V6("fe80::1:2:3:4")), "fe80::/64");
  EXPECT_EQ(SourceGroup(V6("::1")), "::/64");
}

TEST(SourceGroup, AnIPv4AddressMappedIntoIPv6CountsAsThatIPv4Address) {
  EXPECT_EQ(SourceGroup(V6("::ffff:192.0.2.7")), "192.0.2.7");
  EXPECT_NE(SourceGroup(V6("::ffff:192.0.2.7")), SourceGroup(V6("::ffff:192.0.2.8")))
      << "not one /64 for the whole IPv4 Internet";
}

TEST(SourceGroup, AnotherFamilyIsOneGroup) {
  sockaddr_storage unix_address{};
  unix_address.ss_family = AF_UNIX;
  EXPECT_EQ(SourceGroup(unix_address), "?");
}

}  // namespace
}  // namespace nasperf
