#include "measure/netinfo.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/fd.h"

namespace nasperf {
namespace {

std::optional<uint32_t> ReadSysfsNumber(const std::string& path) {
  std::ifstream in(path);
  std::string text;
  int64_t value = 0;
  // speed reads -1 or fails (EINVAL) when a link has no defined speed.
  if (!(in >> text) || !absl::SimpleAtoi(text, &value) || value <= 0 || value > 10000000) {
    return std::nullopt;
  }
  return static_cast<uint32_t>(value);
}

std::string AddressText(const sockaddr* addr) {
  char text[INET6_ADDRSTRLEN] = "";
  if (addr->sa_family == AF_INET) {
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(addr)->sin_addr, text, sizeof text);
  } else if (addr->sa_family == AF_INET6) {
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(addr)->sin6_addr, text, sizeof text);
  }
  return text;
}

// ETHTOOL_GLINKSETTINGS: the first call learns the mask size, the second reads it.
std::optional<uint32_t> NicMaxMbps(const std::string& interface) {
  Fd sock(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (!sock.valid() || interface.size() >= IFNAMSIZ) return std::nullopt;
  // The settings are followed by three masks (supported, advertised, peer) of up
  // to 127 words each.
  alignas(ethtool_link_settings) uint8_t buffer[sizeof(ethtool_link_settings) + 3 * 127 * 4] = {};
  auto* settings = reinterpret_cast<ethtool_link_settings*>(buffer);
  const auto* supported = reinterpret_cast<const uint32_t*>(buffer + sizeof(ethtool_link_settings));
  ifreq ifr{};
  std::strncpy(ifr.ifr_name, interface.c_str(), IFNAMSIZ - 1);
  ifr.ifr_data = reinterpret_cast<char*>(buffer);
  settings->cmd = ETHTOOL_GLINKSETTINGS;
  if (ioctl(sock.get(), SIOCETHTOOL, &ifr) != 0 || settings->link_mode_masks_nwords >= 0) {
    return std::nullopt;
  }
  const int words = -settings->link_mode_masks_nwords;
  settings->link_mode_masks_nwords = static_cast<int8_t>(words);
  settings->cmd = ETHTOOL_GLINKSETTINGS;
  if (ioctl(sock.get(), SIOCETHTOOL, &ifr) != 0) return std::nullopt;
  uint32_t fastest = 0;
  for (int bit = 0; bit < 32 * words; ++bit) {
    if (supported[bit / 32] & (1u << (bit % 32))) fastest = std::max(fastest, LinkModeMbps(bit));
  }
  if (fastest == 0) return std::nullopt;
  return fastest;
}

}  // namespace

uint32_t LinkModeMbps(int mode_bit) {
  switch (mode_bit) {
    case ETHTOOL_LINK_MODE_10baseT_Half_BIT:
    case ETHTOOL_LINK_MODE_10baseT_Full_BIT:
      return 10;
    case ETHTOOL_LINK_MODE_100baseT_Half_BIT:
    case ETHTOOL_LINK_MODE_100baseT_Full_BIT:
    case ETHTOOL_LINK_MODE_100baseT1_Full_BIT:
    case ETHTOOL_LINK_MODE_100baseFX_Full_BIT:
      return 100;
    case ETHTOOL_LINK_MODE_1000baseT_Half_BIT:
    case ETHTOOL_LINK_MODE_1000baseT_Full_BIT:
    case ETHTOOL_LINK_MODE_1000baseKX_Full_BIT:
    case ETHTOOL_LINK_MODE_1000baseX_Full_BIT:
    case ETHTOOL_LINK_MODE_1000baseT1_Full_BIT:
      return 1000;
    case ETHTOOL_LINK_MODE_2500baseT_Full_BIT:
    case ETHTOOL_LINK_MODE_2500baseX_Full_BIT:
      return 2500;
    case ETHTOOL_LINK_MODE_5000baseT_Full_BIT:
      return 5000;
    case ETHTOOL_LINK_MODE_10000baseT_Full_BIT:
    case ETHTOOL_LINK_MODE_10000baseKX4_Full_BIT:
    case ETHTOOL_LINK_MODE_10000baseKR_Full_BIT:
    case ETHTOOL_LINK_MODE_10000baseR_FEC_BIT:
    case ETHTOOL_LINK_MODE_10000baseCR_Full_BIT:
    case ETHTOOL_LINK_MODE_10000baseSR_Full_BIT:
    case ETHTOOL_LINK_MODE_10000baseLR_Full_BIT:
    case ETHTOOL_LINK_MODE_10000baseLRM_Full_BIT:
    case ETHTOOL_LINK_MODE_10000baseER_Full_BIT:
      return 10000;
    case ETHTOOL_LINK_MODE_25000baseCR_Full_BIT:
    case ETHTOOL_LINK_MODE_25000baseKR_Full_BIT:
    case ETHTOOL_LINK_MODE_25000baseSR_Full_BIT:
      return 25000;
    case ETHTOOL_LINK_MODE_40000baseKR4_Full_BIT:
    case ETHTOOL_LINK_MODE_40000baseCR4_Full_BIT:
    case ETHTOOL_LINK_MODE_40000baseSR4_Full_BIT:
    case ETHTOOL_LINK_MODE_40000baseLR4_Full_BIT:
      return 40000;
    case ETHTOOL_LINK_MODE_50000baseCR2_Full_BIT:
    case ETHTOOL_LINK_MODE_50000baseKR2_Full_BIT:
    case ETHTOOL_LINK_MODE_50000baseSR2_Full_BIT:
      return 50000;
    case ETHTOOL_LINK_MODE_100000baseKR4_Full_BIT:
    case ETHTOOL_LINK_MODE_100000baseSR4_Full_BIT:
    case ETHTOOL_LINK_MODE_100000baseCR4_Full_BIT:
    case ETHTOOL_LINK_MODE_100000baseLR4_ER4_Full_BIT:
      return 100000;
    default:
      return 0;
  }
}

absl::StatusOr<InterfaceFacts> InterfaceOwning(const std::string& local_address) {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return ErrnoStatus(errno, "getifaddrs");
  InterfaceFacts facts;
  for (ifaddrs* it = list; it != nullptr; it = it->ifa_next) {
    if (it->ifa_addr == nullptr) continue;
    if (AddressText(it->ifa_addr) == local_address) {
      facts.name = it->ifa_name;
      break;
    }
  }
  freeifaddrs(list);
  if (facts.name.empty()) {
    return absl::NotFoundError(absl::StrCat("no interface has the address ", local_address));
  }
  facts.local_address = local_address;
  facts.mtu = ReadSysfsNumber(absl::StrCat("/sys/class/net/", facts.name, "/mtu"));
  facts.link_mbps = ReadSysfsNumber(absl::StrCat("/sys/class/net/", facts.name, "/speed"));
  facts.max_link_mbps = NicMaxMbps(facts.name);
  return facts;
}

absl::StatusOr<InterfaceFacts> InterfaceToward(const std::string& host) {
  // A v4-mapped or bracketed literal from a peer string works as well.
  if (host.empty()) return absl::InvalidArgumentError("no host");
  addrinfo hints{};
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* resolved = nullptr;
  int rc = getaddrinfo(host.c_str(), "9", &hints, &resolved);
  if (rc != 0) return absl::UnavailableError(absl::StrCat("cannot resolve \"", host, "\": ", gai_strerror(rc)));
  Fd fd(::socket(resolved->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  bool connected = fd.valid() && ::connect(fd.get(), resolved->ai_addr, resolved->ai_addrlen) == 0;
  int err = errno;
  freeaddrinfo(resolved);
  if (!connected) return ErrnoStatus(err, absl::StrCat("route to ", host));
  sockaddr_storage local{};
  socklen_t len = sizeof local;
  if (getsockname(fd.get(), reinterpret_cast<sockaddr*>(&local), &len) != 0) {
    return ErrnoStatus(errno, "getsockname");
  }
  return InterfaceOwning(AddressText(reinterpret_cast<sockaddr*>(&local)));
}

absl::StatusOr<InterfaceFacts> InterfaceOfSocket(int fd) {
  sockaddr_storage local{};
  socklen_t len = sizeof local;
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&local), &len) != 0) {
    return ErrnoStatus(errno, "getsockname");
  }
  return InterfaceOwning(AddressText(reinterpret_cast<sockaddr*>(&local)));
}

std::optional<uint32_t> SocketMss(int fd) {
  int mss = 0;
  socklen_t len = sizeof mss;
  if (getsockopt(fd, IPPROTO_TCP, TCP_MAXSEG, &mss, &len) != 0 || mss <= 0) return std::nullopt;
  return static_cast<uint32_t>(mss);
}

double TcpGoodputCeilingMBps(uint32_t link_mbps, uint32_t mtu) {
  if (mtu <= 52) return 0;
  double payload = static_cast<double>(mtu) - 52;
  double wire = static_cast<double>(mtu) + 38;
  return static_cast<double>(link_mbps) * 1e6 * payload / wire / 8 / 1e6;
}

}  // namespace nasperf
