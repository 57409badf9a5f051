// Path MTU discovery with don't-fragment UDP probes (docs/DESIGN.md §6, measurement semantics:
// path facts; the packets: docs/DESIGN.md §3.2, control RPCs): the receiver runs a PmtuResponder
// that echoes a small acknowledgement for each probe; the sender binary-searches the largest
// datagram that arrives whole. A responder owns one thread; ProbePathMtu blocks its caller and
// is safe to call concurrently.
#ifndef NASPERF_MEASURE_PMTU_H_
#define NASPERF_MEASURE_PMTU_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "common/fd.h"

namespace nasperf {

// Answers probes on a UDP port. Replies are 20 bytes, never larger than the probe
// that caused them, so the port cannot be used to amplify traffic; and only
// addresses admitted by an authenticated call get any, at most kRepliesPerSecond in
// all, so nobody can bounce datagrams off it toward a third party.
class PmtuResponder {
 public:
  static constexpr int kRepliesPerSecond = 500;
  // Binds UDP on the address and port a listening TCP socket has (the data port).
  static absl::StatusOr<std::unique_ptr<PmtuResponder>> StartBesides(int tcp_listener);
  ~PmtuResponder();
  uint16_t port() const { return port_; }
  // Answer probes from this IP address (as PeerHost gives it) for ttl_s seconds:
  // called after a Hello whose token checked out. Thread-safe.
  void Admit(const std::string& address, double ttl_s = 60);

 private:
  PmtuResponder(Fd socket, uint16_t port);
  void Loop();
  bool Admitted(const std::string& address, int64_t now_ns);

  Fd socket_;
  uint16_t port_;
  absl::Mutex mu_;
  absl::flat_hash_map<std::string, int64_t> admitted_until_ns_ ABSL_GUARDED_BY(mu_);
  // Replies in the current one-second window (the Loop thread's own).
  int64_t window_start_ns_ = 0;
  int replies_in_window_ = 0;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

// An IP address as text, IPv4-mapped IPv6 ("::ffff:10.0.0.2") written as IPv4.
std::string PlainAddress(const std::string& address);

struct PathMtuProbe {
  // The largest IP packet (headers included) that reached the responder with DF
  // set; absent when not even the smallest probe got an answer.
  std::optional<uint32_t> path_mtu;
  double rtt_ms = 0;       // the fastest round trip seen
  bool icmp_seen = false;  // a router said "fragmentation needed"
  int probes_sent = 0;
};

struct PathMtuOptions {
  uint32_t local_mtu = 1500;     // upper bound of the search (the interface MTU)
  double first_timeout_s = 0.5;  // per try, until the first answer gives an RTT
  double min_timeout_s = 0.05;   // per try after that: at least this, at most first_timeout_s
  int tries = 2;                 // per size, before a size counts as lost
};

// Binary search between 1280 (or local_mtu, if lower) and local_mtu. A probe that
// gets no answer counts as too big; an ICMP "fragmentation needed" (seen as
// EMSGSIZE) lowers the bound to what the router said. Errors only when the socket
// cannot be made; an unanswered port yields an empty path_mtu.
absl::StatusOr<PathMtuProbe> ProbePathMtu(const HostPort& responder, const PathMtuOptions& options);

}  // namespace nasperf

#endif  // NASPERF_MEASURE_PMTU_H_
