// Path MTU probing over loopback: a responder beside a TCP listener answers, the
// prober finds the interface MTU, ignores what is not an answer to its probe, and
// gives up quickly on a port nobody answers.
#include "measure/pmtu.h"

#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>

#include "common/fd.h"
#include "gtest/gtest.h"
#include "measure/netinfo.h"

namespace nasperf {
namespace {

// A UDP socket bound to an ephemeral loopback port; *port gets the port.
Fd LoopbackUdp(uint16_t* port) {
  Fd fd(::socket(AF_INET, SOCK_DGRAM, 0));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      getsockname(fd.get(), reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    ADD_FAILURE() << "bind a loopback UDP socket: " << strerror(errno);
  }
  *port = ntohs(address.sin_port);
  return fd;
}

TEST(PathMtu, LoopbackPathIsAsWideAsTheInterface) {
  auto listener = ListenTcp({"127.0.0.1", 0});
  ASSERT_TRUE(listener.ok()) << listener.status();
  auto responder = PmtuResponder::StartBesides(listener->get());
  ASSERT_TRUE(responder.ok()) << responder.status();
  (*responder)->Admit("127.0.0.1");  // as an authenticated Hello from here would
  auto tcp_port = LocalPort(listener->get());
  ASSERT_TRUE(tcp_port.ok());
  EXPECT_EQ((*responder)->port(), *tcp_port);

  auto lo = InterfaceOwning("127.0.0.1");
  ASSERT_TRUE(lo.ok() && lo->mtu.has_value());
  PathMtuOptions options;
  options.local_mtu = *lo->mtu;
  options.min_timeout_s = options.first_timeout_s;  // a busy machine's late answer is no loss
  auto probe = ProbePathMtu({"127.0.0.1", (*responder)->port()}, options);
  ASSERT_TRUE(probe.ok()) << probe.status();
  ASSERT_TRUE(probe->path_mtu.has_value());
  EXPECT_EQ(*probe->path_mtu, *lo->mtu);
  EXPECT_GT(probe->rtt_ms, 0);
  EXPECT_FALSE(probe->icmp_seen);
  EXPECT_LE(probe->probes_sent, 3);  // the interface MTU is tried right after the floor
}

TEST(PathMtu, SearchStopsAtAnArbitraryLocalMtu) {
  auto listener = ListenTcp({"127.0.0.1", 0});
  ASSERT_TRUE(listener.ok());
  auto responder = PmtuResponder::StartBesides(listener->get());
  ASSERT_TRUE(responder.ok());
  (*responder)->Admit("127.0.0.1");  // as an authenticated Hello from here would
  PathMtuOptions options;
  options.local_mtu = 4321;  // everything up to here passes on loopback
  options.min_timeout_s = options.first_timeout_s;
  auto probe = ProbePathMtu({"127.0.0.1", (*responder)->port()}, options);
  ASSERT_TRUE(probe.ok() && probe->path_mtu.has_value());
  EXPECT_EQ(*probe->path_mtu, 4321u);
}

TEST(PathMtu, NobodyAnsweringLeavesThePathMtuUnknownQuickly) {
  // A bound UDP port that never answers: every probe is lost.
  uint16_t silent_port = 0;
  Fd silent = LoopbackUdp(&silent_port);
  PathMtuOptions options;
  options.first_timeout_s = 0.05;
  auto probe = ProbePathMtu({"127.0.0.1", silent_port}, options);
  ASSERT_TRUE(probe.ok()) << probe.status();
  EXPECT_FALSE(probe->path_mtu.has_value());
  // Quickly: the floor's tries (first_timeout_s each), then it gives up.
  EXPECT_EQ(probe->probes_sent, options.tries + 1);
}

TEST(PathMtu, ClosedPortIsRefusedNotWaitedOn) {
  auto listener = ListenTcp({"127.0.0.1", 0});
  ASSERT_TRUE(listener.ok());
  uint16_t port = 0;
  {
    auto responder = PmtuResponder::StartBesides(listener->get());
    ASSERT_TRUE(responder.ok());
    port = (*responder)->port();
  }  // responder gone: the kernel answers "port unreachable"
  PathMtuOptions options;
  options.first_timeout_s = 2;
  auto probe = ProbePathMtu({"127.0.0.1", port}, options);
  ASSERT_TRUE(probe.ok());
  EXPECT_FALSE(probe->path_mtu.has_value());
}

TEST(PathMtu, ResponderIgnoresForeignDatagramsAndKeepsServing) {
  auto listener = ListenTcp({"127.0.0.1", 0});
  ASSERT_TRUE(listener.ok());
  auto responder = PmtuResponder::StartBesides(listener->get());
  ASSERT_TRUE(responder.ok());
  (*responder)->Admit("127.0.0.1");  // as an authenticated Hello from here would
  Fd client(::socket(AF_INET, SOCK_DGRAM, 0));
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  to.sin_port = htons((*responder)->port());
  ASSERT_EQ(::connect(client.get(), reinterpret_cast<sockaddr*>(&to), sizeof to), 0);
  const char garbage[] = "GET / HTTP/1.0\r\n\r\nnot a probe at all";
  ASSERT_GT(::send(client.get(), garbage, sizeof garbage, 0), 0);
  ASSERT_GT(::send(client.get(), "x", 1, 0), 0);
  // Then a real probe (the wire format is the responder's: magic, nonce). The
  // responder handles datagrams in order, so the first answer must be this one's.
  const char probe_bytes[16] = {'N', 'P', 'M', 'T', 'U', 'Q', 0, 1, 42, 0, 0, 0, 0, 0, 0, 0};
  ASSERT_GT(::send(client.get(), probe_bytes, sizeof probe_bytes, 0), 0);
  SetReceiveTimeout(client.get(), 5);
  unsigned char reply[64];
  ASSERT_EQ(::recv(client.get(), reply, sizeof reply, 0), 20);
  EXPECT_EQ(reply[5], 'R');
  EXPECT_EQ(reply[8], 42);   // our nonce: the garbage before it got no answer
  EXPECT_EQ(reply[16], 16);  // the size it received

  PathMtuOptions options;
  options.local_mtu = 1500;
  auto probe = ProbePathMtu({"127.0.0.1", (*responder)->port()}, options);
  ASSERT_TRUE(probe.ok() && probe->path_mtu.has_value());
  EXPECT_EQ(*probe->path_mtu, 1500u);
}

// A relay in front of the responder holds back the answers to probes over 1500
// bytes for 150 ms, longer than a try waits once the loopback round trip is known
// (a busy responder). Those answers still prove the size passed: the search must
// end at the interface MTU, not at the largest size answered in time.
TEST(PathMtu, LateAnswersStillCountAsArrived) {
  auto listener = ListenTcp({"127.0.0.1", 0});
  ASSERT_TRUE(listener.ok());
  auto responder = PmtuResponder::StartBesides(listener->get());
  ASSERT_TRUE(responder.ok());
  (*responder)->Admit("127.0.0.1");  // as an authenticated Hello from here would
  uint16_t relay_port = 0;
  Fd relay = LoopbackUdp(&relay_port);
  Fd upstream(::socket(AF_INET, SOCK_DGRAM, 0));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons((*responder)->port());
  ASSERT_EQ(::connect(upstream.get(), reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  SetReceiveTimeout(upstream.get(), 5);

  std::atomic<bool> stop{false};
  std::thread relaying([&] {
    std::vector<uint8_t> datagram(65536);
    while (!stop.load()) {
      pollfd p{relay.get(), POLLIN, 0};
      if (::poll(&p, 1, 20) <= 0) continue;
      sockaddr_in from{};
      socklen_t from_length = sizeof from;
      ssize_t n = ::recvfrom(relay.get(), datagram.data(), datagram.size(), 0, reinterpret_cast<sockaddr*>(&from),
                             &from_length);
      if (n <= 0 || ::send(upstream.get(), datagram.data(), n, 0) != n) continue;
      uint8_t reply[64];
      ssize_t r = ::recv(upstream.get(), reply, sizeof reply, 0);
      if (r <= 0) continue;
      if (n + 28 > 1500) std::this_thread::sleep_for(std::chrono::milliseconds(150));
      ::sendto(relay.get(), reply, r, 0, reinterpret_cast<sockaddr*>(&from), from_length);
    }
  });
  PathMtuOptions options;
  options.local_mtu = 9000;
  auto probe = ProbePathMtu({"127.0.0.1", relay_port}, options);
  stop.store(true);
  relaying.join();
  ASSERT_TRUE(probe.ok() && probe->path_mtu.has_value()) << probe.status();
  EXPECT_EQ(*probe->path_mtu, 9000u);
}

// Only an address that passed an authenticated Hello gets answers: anyone else's
// probes (or datagrams with a forged source, aimed at a third party) go unanswered.
TEST(PathMtu, OnlyAdmittedAddressesGetAnswers) {
  auto listener = ListenTcp({"127.0.0.1", 0});
  ASSERT_TRUE(listener.ok());
  auto responder = PmtuResponder::StartBesides(listener->get());
  ASSERT_TRUE(responder.ok());
  PathMtuOptions options;
  options.local_mtu = 1500;
  options.first_timeout_s = 0.05;
  auto unanswered = ProbePathMtu({"127.0.0.1", (*responder)->port()}, options);
  ASSERT_TRUE(unanswered.ok());
  EXPECT_FALSE(unanswered->path_mtu.has_value()) << "answered a source nobody admitted";
  (*responder)->Admit("127.0.0.2");  // someone else
  unanswered = ProbePathMtu({"127.0.0.1", (*responder)->port()}, options);
  ASSERT_TRUE(unanswered.ok());
  EXPECT_FALSE(unanswered->path_mtu.has_value());
  (*responder)->Admit("::ffff:127.0.0.1");  // as gRPC names an IPv4 peer on a dual-stack port
  options.first_timeout_s = 2;
  auto answered = ProbePathMtu({"127.0.0.1", (*responder)->port()}, options);
  ASSERT_TRUE(answered.ok() && answered->path_mtu.has_value());
  EXPECT_EQ(*answered->path_mtu, 1500u);
}

}  // namespace
}  // namespace nasperf
