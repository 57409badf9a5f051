// Facts about the network path (docs/DESIGN.md §6, measurement semantics): which local interface leads to
// a peer, its MTU and negotiated link speed (from sysfs; unknown stays unknown), and
// the TCP goodput ceiling a link of that speed and MTU allows. Thread-safe.
#ifndef NASPERF_MEASURE_NETINFO_H_
#define NASPERF_MEASURE_NETINFO_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"

namespace nasperf {

struct InterfaceFacts {
  std::string name;           // e.g. "eth0", "lo"
  std::string local_address;  // the source address the kernel picks toward the peer
  std::optional<uint32_t> mtu;
  std::optional<uint32_t> link_mbps;      // absent when the driver does not say (veth, lo, Wi-Fi)
  std::optional<uint32_t> max_link_mbps;  // the fastest mode the NIC supports (ethtool)
};

// The interface the kernel routes toward host (no packet is sent: a UDP connect).
absl::StatusOr<InterfaceFacts> InterfaceToward(const std::string& host);
// The interface that owns a local address (the receiver side of an accepted socket).
absl::StatusOr<InterfaceFacts> InterfaceOwning(const std::string& local_address);

// The interface a connected socket's local address belongs to.
absl::StatusOr<InterfaceFacts> InterfaceOfSocket(int fd);
// TCP_MAXSEG of a connected TCP socket, when the kernel tells.
std::optional<uint32_t> SocketMss(int fd);

// The speed of one ethtool link mode (ETHTOOL_LINK_MODE_*_BIT), 0 for modes that
// are not a plain Ethernet speed (pause, autoneg, FEC).
uint32_t LinkModeMbps(int mode_bit);

// TCP payload bytes per second, in MB/s, on Ethernet at link_mbps with this MTU:
// each frame carries MTU - 20 (IPv4) - 20 (TCP) - 12 (timestamps) payload bytes and
// occupies MTU + 38 bytes of wire time (header 14, FCS 4, preamble 8, gap 12).
// 10GbE: about 1177 MB/s at MTU 1500 and 1238 MB/s at 9000.
double TcpGoodputCeilingMBps(uint32_t link_mbps, uint32_t mtu);

}  // namespace nasperf

#endif  // NASPERF_MEASURE_NETINFO_H_
