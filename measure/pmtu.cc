#include "measure/pmtu.h"

#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/clock.h"
#include "common/log.h"

namespace nasperf {
namespace {

constexpr char kComponent[] = "pmtu";
constexpr char kProbeMagic[8] = {'N', 'P', 'M', 'T', 'U', 'Q', 0, 1};
constexpr char kReplyMagic[8] = {'N', 'P', 'M', 'T', 'U', 'R', 0, 1};
constexpr size_t kProbeMin = 16;        // magic + nonce
constexpr size_t kReplySize = 20;       // magic + nonce + received length
constexpr uint32_t kMinimumMtu = 1280;  // IPv6's floor; every sane IPv4 path carries it too
constexpr uint32_t kLargestIpPacket = 65535;

void PutU64(uint8_t* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
uint64_t GetU64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
}
void PutU32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
uint32_t GetU32(const uint8_t* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(p[i]) << (8 * i);
  return v;
}

enum class Outcome { kArrived, kTooBig, kLost, kRefused };

struct TryResult {
  Outcome outcome = Outcome::kLost;
  uint32_t reported_mtu = 0;  // kTooBig: what the kernel's route cache now says
  double rtt_ms = 0;
};

// The path MTU the kernel learned from ICMP for this connected socket.
uint32_t RouteMtu(int fd, int family) {
  int mtu = 0;
  socklen_t len = sizeof mtu;
  int rc = family == AF_INET6 ? getsockopt(fd, IPPROTO_IPV6, IPV6_MTU, &mtu, &len)
                              : getsockopt(fd, IPPROTO_IP, IP_MTU, &mtu, &len);
  return rc == 0 && mtu > 0 ? static_cast<uint32_t>(mtu) : 0;
}

class Prober {
 public:
  Prober(Fd fd, int family, PathMtuProbe* result)
      : fd_(std::move(fd)), family_(family), result_(result), nonce_(std::random_device{}()) {}

  uint32_t header_bytes() const { return family_ == AF_INET6 ? 48 : 28; }
  // The largest probe whose answer came only after its try had given up (a busy
  // responder, not a lost datagram): that size passes after all. 0 = none.
  uint32_t late_arrived() const { return late_arrived_; }

  // Up to `tries` datagrams of ip_size bytes (IP and UDP headers included).
  TryResult Try(uint32_t ip_size, double timeout_s, int tries) {
    TryResult last;
    for (int t = 0; t < tries; ++t) {
      last = TryOnce(ip_size, timeout_s);
      if (last.outcome != Outcome::kLost) return last;
    }
    return last;
  }

  // Waits up to timeout_s for answers to earlier probes only.
  void CollectLate(double timeout_s) {
    const int64_t deadline = MonoNanos() + static_cast<int64_t>(timeout_s * 1e9);
    for (;;) {
      const int64_t left_ms = (deadline - MonoNanos()) / 1000000;
      if (left_ms <= 0) return;
      pollfd p{fd_.get(), POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left_ms)) <= 0) continue;
      uint8_t reply[64];
      ssize_t n = ::recv(fd_.get(), reply, sizeof reply, 0);
      if (n == static_cast<ssize_t>(kReplySize) && std::memcmp(reply, kReplyMagic, 8) == 0) {
        NoteLate(GetU64(reply + 8), GetU32(reply + 16));
      }
    }
  }

 private:
  TryResult TryOnce(uint32_t ip_size, double timeout_s) {
    TryResult r;
    const size_t payload = ip_size - header_bytes();
    std::vector<uint8_t> datagram(std::max(payload, kProbeMin), 0);
    const uint64_t nonce = ++nonce_;
    sent_.push_back({nonce, ip_size, datagram.size()});
    std::memcpy(datagram.data(), kProbeMagic, sizeof kProbeMagic);
    PutU64(datagram.data() + 8, nonce);
    ++result_->probes_sent;
    const int64_t sent_ns = MonoNanos();
    if (::send(fd_.get(), datagram.data(), datagram.size(), 0) < 0) {
      return Failed(errno);
    }
    const int64_t deadline = sent_ns + static_cast<int64_t>(timeout_s * 1e9);
    for (;;) {
      const int64_t left_ms = (deadline - MonoNanos()) / 1000000;
      if (left_ms <= 0) return r;  // lost
      pollfd p{fd_.get(), POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left_ms)) <= 0) continue;
      uint8_t reply[64];
      ssize_t n = ::recv(fd_.get(), reply, sizeof reply, 0);
      if (n < 0) {
        if (errno == EINTR || errno == EAGAIN) continue;
        return Failed(errno);
      }
      if (static_cast<size_t>(n) != kReplySize || std::memcmp(reply, kReplyMagic, 8) != 0) continue;
      if (GetU64(reply + 8) != nonce) {
        NoteLate(GetU64(reply + 8), GetU32(reply + 16));  // an earlier probe's answer
        continue;
      }
      if (GetU32(reply + 16) != datagram.size()) return r;  // arrived cut short: lost
      r.outcome = Outcome::kArrived;
      r.rtt_ms = static_cast<double>(MonoNanos() - sent_ns) / 1e6;
      return r;
    }
  }

  struct Sent {
    uint64_t nonce;
    uint32_t ip_size;
    size_t datagram_bytes;
  };

  void NoteLate(uint64_t nonce, uint32_t received_bytes) {
    for (const Sent& sent : sent_) {
      if (sent.nonce == nonce && sent.datagram_bytes == received_bytes) {
        late_arrived_ = std::max(late_arrived_, sent.ip_size);
      }
    }
  }

  TryResult Failed(int err) {
    TryResult r;
    if (err == EMSGSIZE) {
      // Either the route cache already knows a smaller path MTU, or an ICMP
      // "fragmentation needed" for an earlier probe just arrived.
      r.outcome = Outcome::kTooBig;
      r.reported_mtu = RouteMtu(fd_.get(), family_);
      result_->icmp_seen = result_->icmp_seen || r.reported_mtu > 0;
    } else if (err == ECONNREFUSED) {
      r.outcome = Outcome::kRefused;  // ICMP port unreachable: nobody answers there
    }
    return r;
  }

  Fd fd_;
  int family_;
  PathMtuProbe* result_;
  uint64_t nonce_;
  std::vector<Sent> sent_;  // every probe of this search (a few dozen at most)
  uint32_t late_arrived_ = 0;
};

}  // namespace

// ------------------------------------------------------------------ responder

PmtuResponder::PmtuResponder(Fd socket, uint16_t port)
    : socket_(std::move(socket)), port_(port), thread_([this] { Loop(); }) {}

PmtuResponder::~PmtuResponder() {
  stopping_.store(true);
  if (thread_.joinable()) thread_.join();
}

absl::StatusOr<std::unique_ptr<PmtuResponder>> PmtuResponder::StartBesides(int tcp_listener) {
  sockaddr_storage address{};
  socklen_t length = sizeof address;
  if (getsockname(tcp_listener, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    return ErrnoStatus(errno, "getsockname (data port)");
  }
  Fd fd(::socket(address.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return ErrnoStatus(errno, "socket (UDP path MTU responder)");
  if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&address), length) != 0) {
    return ErrnoStatus(errno, "bind UDP path MTU responder beside the data port");
  }
  uint16_t port = ntohs(address.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&address)->sin6_port
                                                      : reinterpret_cast<sockaddr_in*>(&address)->sin_port);
  return std::unique_ptr<PmtuResponder>(new PmtuResponder(std::move(fd), port));
}

std::string PlainAddress(const std::string& address) {
  constexpr absl::string_view kMapped = "::ffff:";
  if (absl::StartsWith(address, kMapped) && address.find('.') != std::string::npos) {
    return address.substr(kMapped.size());
  }
  return address;
}

void PmtuResponder::Admit(const std::string& address, double ttl_s) {
  const int64_t now = MonoNanos();
  absl::MutexLock lock(&mu_);
  if (admitted_until_ns_.size() >= 4096) {  // forget the expired before growing further
    absl::erase_if(admitted_until_ns_, [now](const auto& entry) { return entry.second < now; });
  }
  if (admitted_until_ns_.size() < 4096) {
    admitted_until_ns_[PlainAddress(address)] = now + static_cast<int64_t>(ttl_s * 1e9);
  }
}

bool PmtuResponder::Admitted(const std::string& address, int64_t now_ns) {
  absl::MutexLock lock(&mu_);
  auto it = admitted_until_ns_.find(address);
  return it != admitted_until_ns_.end() && it->second >= now_ns;
}

void PmtuResponder::Loop() {
  std::vector<uint8_t> buffer(kLargestIpPacket);
  while (!stopping_.load()) {
    pollfd p{socket_.get(), POLLIN, 0};
    if (::poll(&p, 1, 200) <= 0) continue;  // wakes to notice Shutdown
    sockaddr_storage from{};
    socklen_t from_length = sizeof from;
    ssize_t n =
        ::recvfrom(socket_.get(), buffer.data(), buffer.size(), 0, reinterpret_cast<sockaddr*>(&from), &from_length);
    if (n < static_cast<ssize_t>(kProbeMin) || std::memcmp(buffer.data(), kProbeMagic, 8) != 0) {
      continue;  // not ours: ignored, never answered
    }
    const int64_t now = MonoNanos();
    if (!Admitted(PlainAddress(AddressText(from)), now)) continue;  // no authenticated Hello from there lately
    if (now - window_start_ns_ >= 1'000'000'000) {
      window_start_ns_ = now;
      replies_in_window_ = 0;
    }
    if (++replies_in_window_ > kRepliesPerSecond) continue;
    uint8_t reply[kReplySize];
    std::memcpy(reply, kReplyMagic, sizeof kReplyMagic);
    std::memcpy(reply + 8, buffer.data() + 8, 8);
    PutU32(reply + 16, static_cast<uint32_t>(n));
    if (::sendto(socket_.get(), reply, sizeof reply, 0, reinterpret_cast<sockaddr*>(&from), from_length) < 0) {
      Log(LogLevel::kDebug, kComponent, "reply: %s", strerror(errno));
    }
  }
}

// ------------------------------------------------------------------ prober

// A UDP socket connected to the responder with don't-fragment on every datagram:
// sends above the known path MTU fail with EMSGSIZE. Sets *family.
static absl::StatusOr<Fd> OpenProbeSocket(const HostPort& responder, int* family_out) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* resolved = nullptr;
  std::string port = absl::StrCat(responder.port);
  if (int rc = getaddrinfo(responder.host.c_str(), port.c_str(), &hints, &resolved); rc != 0) {
    return absl::UnavailableError(absl::StrCat("cannot resolve \"", responder.host, "\": ", gai_strerror(rc)));
  }
  const int family = resolved->ai_family;
  Fd fd(::socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) {
    freeaddrinfo(resolved);
    return ErrnoStatus(errno, "socket (path MTU probe)");
  }
  int discover = family == AF_INET6 ? IPV6_PMTUDISC_DO : IP_PMTUDISC_DO;
  int rc = family == AF_INET6 ? setsockopt(fd.get(), IPPROTO_IPV6, IPV6_MTU_DISCOVER, &discover, sizeof discover)
                              : setsockopt(fd.get(), IPPROTO_IP, IP_MTU_DISCOVER, &discover, sizeof discover);
  if (rc != 0 || ::connect(fd.get(), resolved->ai_addr, resolved->ai_addrlen) != 0) {
    int err = errno;
    freeaddrinfo(resolved);
    return ErrnoStatus(err, absl::StrCat("path MTU probe toward ", FormatHostPort(responder)));
  }
  freeaddrinfo(resolved);
  *family_out = family;
  return fd;
}

absl::StatusOr<PathMtuProbe> ProbePathMtu(const HostPort& responder, const PathMtuOptions& options) {
  int family = AF_INET;
  absl::StatusOr<Fd> fd = OpenProbeSocket(responder, &family);
  if (!fd.ok()) return fd.status();

  PathMtuProbe result;
  Prober prober(std::move(*fd), family, &result);
  const uint32_t top = std::min(options.local_mtu, kLargestIpPacket);
  uint32_t good = std::min(kMinimumMtu, top);
  TryResult first = prober.Try(good, options.first_timeout_s, options.tries + 1);
  if (first.outcome == Outcome::kTooBig && first.reported_mtu >= prober.header_bytes() + kProbeMin &&
      first.reported_mtu < good) {
    good = first.reported_mtu;  // a path below 1280 (old IPv4 tunnels): start from there
    first = prober.Try(good, options.first_timeout_s, options.tries);
  }
  if (first.outcome != Outcome::kArrived) return result;  // nobody answers: path MTU unknown
  result.rtt_ms = first.rtt_ms;
  // Wait long enough for a slow link's round trip, short enough that a search
  // through silently dropped sizes takes about a second.
  const double timeout_s = std::clamp(
      4 * first.rtt_ms / 1e3 + 0.02, std::min(options.min_timeout_s, options.first_timeout_s), options.first_timeout_s);

  uint32_t bad = top + 1;    // smallest size believed not to pass
  uint32_t candidate = top;  // the interface MTU passes on most paths: try it first
  // A late answer proves its size passed and that a "lost" verdict above it may be
  // wrong: the search resumes from there (good only grows, so this ends).
  auto take_late = [&] {
    if (prober.late_arrived() <= good) return false;
    good = prober.late_arrived();
    if (bad <= good) bad = top + 1;
    candidate = 0;
    return true;
  };
  for (;;) {
    while (good + 1 < bad) {
      if (candidate <= good || candidate >= bad) candidate = good + (bad - good) / 2;
      TryResult r = prober.Try(candidate, timeout_s, options.tries);
      if (r.outcome == Outcome::kArrived) {
        good = candidate;
        result.rtt_ms = std::min(result.rtt_ms, r.rtt_ms);
        candidate = 0;
      } else if (r.outcome == Outcome::kTooBig && r.reported_mtu > 0 && r.reported_mtu < candidate) {
        bad = std::min(bad, r.reported_mtu + 1);  // trust the router: try exactly its figure next
        candidate = r.reported_mtu;
      } else {
        bad = candidate;
        candidate = 0;
      }
      take_late();
    }
    // Below the interface MTU only because probes went unanswered: give answers
    // still on their way one first-try timeout before believing the drops.
    if (good >= top || result.icmp_seen) break;
    prober.CollectLate(options.first_timeout_s);
    if (!take_late()) break;
  }
  result.path_mtu = good;
  // The largest IP packet passed: the path is as wide as the interface (loopback's 65536).
  if (good == kLargestIpPacket && options.local_mtu > kLargestIpPacket) {
    result.path_mtu = options.local_mtu;
  }
  return result;
}

}  // namespace nasperf
