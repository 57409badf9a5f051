// What a sender learns about the network path before it sends (docs/DESIGN.md §6, measurement semantics):
// interface, MTU and link speed at both ends, the path MTU from DF UDP probes, the
// MSS a data connection negotiates, the RTT, and the warnings a user should act on.
// Shared by `nasperf sender` and `nasperf probe`. Blocking; one thread per call.
#ifndef NASPERF_TRANSPORT_PATH_CHECK_H_
#define NASPERF_TRANSPORT_PATH_CHECK_H_

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/fd.h"
#include "common/policy.h"
#include "proto/nasperf.pb.h"
#include "wire/grpc_auth.h"

namespace nasperf {

struct PathFacts {
  HostPort receiver;      // the control address
  std::string interface;  // local interface toward the receiver; empty = unknown
  std::string local_address;
  std::optional<uint32_t> mtu;        // that interface's MTU
  std::optional<uint32_t> link_mbps;  // --link-speed, else the negotiated NIC speed
  bool link_from_flag = false;
  std::optional<uint32_t> nic_max_mbps;     // fastest mode the local NIC supports
  std::optional<uint32_t> peer_mtu;         // the receiver's interface MTU (Hello)
  std::optional<uint32_t> path_mtu;         // the MTU the probe's finding means (MtuMeant)
  std::optional<uint32_t> path_mtu_probed;  // largest DF datagram that arrived whole
  std::optional<uint32_t> mss;              // TCP_MAXSEG of a data connection
  bool ipv6 = false;
  bool icmp_seen = false;
  bool probe_offered = false;  // the receiver's Hello named a probe port
  double rtt_ms = 0;           // 0 = not measured

  // The smaller of the two interfaces' MTUs (the local one when the peer's is unknown).
  std::optional<uint32_t> EndsMtu() const;
  // The MTU the TCP ceiling is computed for: the smallest of what is known.
  std::optional<uint32_t> EffectiveMtu() const;
  // TCP goodput the link allows, in MB/s; absent without a link speed or an MTU.
  std::optional<double> CeilingMBps() const;
};

// What a probed path MTU means: a port at a standard MTU (1500, 9000) usually passes
// frames a few bytes bigger (room for VLAN tags), so 1501..1508 means 1500. Else as probed.
uint32_t MtuMeant(uint32_t probed);
// "1500 (UDP probe; packets up to 1504 pass: ...)": the meaning, with say_how how it
// was found, and the raw finding when the two differ.
std::string PathMtuText(const PathFacts& facts, bool say_how);

// Collects the facts; link_override_mbps > 0 stands for --link-speed. Fails only
// when the receiver's data port cannot be reached at all.
absl::StatusOr<PathFacts> CheckPath(const HostPort& receiver, const proto::HelloReply& hello,
                                    uint32_t link_override_mbps);

// One line per problem, each saying what to check. Empty when the path looks right.
std::vector<std::string> PathWarnings(const PathFacts& facts);

// "path: HOST via IF (ADDR), MTU m, link l; receiver MTU r; path MTU p, MSS s, RTT t, TCP ceiling c"
std::string PathLine(const PathFacts& facts);

// An MSS that fits the probed path MTU when it is below what both interfaces
// announce (jumbo frames blocked by a switch that drops them without an ICMP
// answer would otherwise stall TCP); 0 when the interfaces' MSS fits.
uint32_t PathMaxSegment(const PathFacts& facts);

// Socket buffer bytes for the path: 2 x bandwidth-delay product when that is more
// than the kernel's autotuning reaches (net.ipv4.tcp_wmem max), else 0 = leave
// autotuning alone. Needs a link speed and an RTT.
uint64_t AutoWindowBytes(const PathFacts& facts);

struct ProbeOptions {
  HostPort to{"", kAgentPort};
  std::string token;
  uint32_t link_mbps = 0;  // --link-speed
  std::shared_ptr<const PeerTrust> trust;
};

// `nasperf probe`: the checks alone, as a short table. Returns 0 when nothing is
// wrong, 1 when a warning was printed; errors (receiver unreachable) are returned.
absl::StatusOr<int> RunProbe(const ProbeOptions& options, std::FILE* out);

}  // namespace nasperf

#endif  // NASPERF_TRANSPORT_PATH_CHECK_H_
