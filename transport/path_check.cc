#include "transport/path_check.h"

#include <algorithm>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/log.h"
#include "common/policy.h"
#include "common/units.h"
#include "measure/netinfo.h"
#include "measure/pmtu.h"
#include "wire/receiver_client.h"

namespace nasperf {
namespace {

// IP + TCP headers plus the 12 bytes of the timestamp option Linux sends on every
// segment; TCP_MAXSEG reports the MSS net of it.
uint32_t TcpOverhead(bool ipv6) { return (ipv6 ? 60 : 40) + 12; }
// Slack for option layouts other than Linux's default before an MSS counts as clamped.
constexpr uint32_t kMssSlack = 32;
constexpr uint32_t kJumboAbove = 1500;
constexpr uint32_t kLargestJumbo = 16384;

uint64_t KernelSendBufferMax() {
  std::ifstream in("/proc/sys/net/ipv4/tcp_wmem");
  uint64_t min = 0, initial = 0, max = 0;
  if (in >> min >> initial >> max) return max;
  return 4 << 20;  // the kernel's default
}

std::string Show(const std::optional<uint32_t>& value, const char* unit = "") {
  return value ? absl::StrCat(*value, unit) : std::string("unknown");
}

}  // namespace

std::optional<uint32_t> PathFacts::EndsMtu() const {
  return mtu && peer_mtu ? std::optional<uint32_t>(std::min(*mtu, *peer_mtu)) : mtu;
}

std::optional<uint32_t> PathFacts::EffectiveMtu() const {
  std::optional<uint32_t> least;
  for (const auto& v : {mtu, peer_mtu, path_mtu}) {
    if (v) least = least ? std::min(*least, *v) : *v;
  }
  return least;
}

std::optional<double> PathFacts::CeilingMBps() const {
  auto m = EffectiveMtu();
  if (!link_mbps || !m) return std::nullopt;
  return TcpGoodputCeilingMBps(*link_mbps, *m);
}

absl::StatusOr<PathFacts> CheckPath(const HostPort& receiver, const proto::HelloReply& hello,
                                    uint32_t link_override_mbps) {
  PathFacts facts;
  facts.receiver = receiver;
  if (auto local = InterfaceToward(receiver.host); local.ok()) {
    facts.interface = local->name;
    facts.local_address = local->local_address;
    facts.mtu = local->mtu;
    facts.link_mbps = local->link_mbps;
    facts.nic_max_mbps = local->max_link_mbps;
    facts.ipv6 = local->local_address.find(':') != std::string::npos;
  }
  if (link_override_mbps > 0) {
    facts.link_mbps = link_override_mbps;
    facts.link_from_flag = true;
  }
  if (hello.has_mtu()) facts.peer_mtu = hello.mtu();

  // A data connection that sends nothing: the receiver closes it quietly, and the
  // handshake has told both kernels the MSS.
  HostPort data{receiver.host, static_cast<uint16_t>(hello.data_port())};
  auto connection = ConnectTcp(data, 10);
  if (!connection.ok()) return connection.status();
  facts.mss = SocketMss(connection->get());
  connection->Reset();

  facts.probe_offered = hello.probe_port() != 0;
  if (facts.probe_offered) {
    PathMtuOptions options;
    options.local_mtu = facts.mtu.value_or(1500);
    auto probe = ProbePathMtu({receiver.host, static_cast<uint16_t>(hello.probe_port())}, options);
    if (probe.ok()) {
      facts.path_mtu_probed = probe->path_mtu;
      if (probe->path_mtu) facts.path_mtu = MtuMeant(*probe->path_mtu);
      facts.rtt_ms = probe->rtt_ms;
      facts.icmp_seen = probe->icmp_seen;
    }
  }
  return facts;
}

uint32_t MtuMeant(uint32_t probed) {
  constexpr uint32_t kTagAllowance = 8;  // up to two VLAN tags (QinQ)
  for (uint32_t standard : {1500u, 9000u}) {
    if (probed > standard && probed <= standard + kTagAllowance) return standard;
  }
  return probed;
}

std::string PathMtuText(const PathFacts& f, bool say_how) {
  if (!f.path_mtu) return "unknown";
  std::vector<std::string> notes;
  if (say_how) notes.push_back(f.icmp_seen ? "ICMP" : "UDP probe");
  if (f.path_mtu_probed && *f.path_mtu_probed != *f.path_mtu) {
    notes.push_back(absl::StrCat("packets up to ", *f.path_mtu_probed,
                                 " pass: the few bytes a port allows beyond its MTU for VLAN tags"));
  }
  return notes.empty() ? absl::StrCat(*f.path_mtu) : absl::StrCat(*f.path_mtu, " (", absl::StrJoin(notes, "; "), ")");
}

std::vector<std::string> PathWarnings(const PathFacts& f) {
  std::vector<std::string> warnings;
  if (f.mtu && f.peer_mtu && *f.mtu != *f.peer_mtu) {
    warnings.push_back(
        absl::StrFormat("MTU mismatch: %d here, %d on the receiver; frames above %d bytes cannot be used end to "
                        "end - set the same MTU on both NICs (and the switch ports between them)",
                        *f.mtu, *f.peer_mtu, std::min(*f.mtu, *f.peer_mtu)));
  }
  const std::optional<uint32_t> ends = f.EndsMtu();
  if (!f.path_mtu && !f.probe_offered) {
    warnings.push_back(
        "path MTU unknown: the receiver does not answer path MTU probes (an older nasperf, or "
        "its UDP port was taken - see the receiver's log)");
  } else if (!f.path_mtu) {
    warnings.push_back(
        absl::StrFormat("path MTU unknown: no answer to UDP probes from %s - a firewall dropping UDP to the "
                        "receiver's data port",
                        f.receiver.host));
  } else if (ends && *f.path_mtu < *ends) {
    if (*ends > kJumboAbove) {
      warnings.push_back(
          absl::StrFormat("jumbo frames do not pass end to end: both ends allow %d but only %d-byte packets "
                          "arrive%s - check the switch or bridge between them (its ports' MTU)",
                          *ends, *f.path_mtu, f.icmp_seen ? " (a router said so)" : ""));
    } else {
      warnings.push_back(
          absl::StrFormat("path MTU %d is below the interfaces' %d - a tunnel or VPN on the way?", *f.path_mtu, *ends));
    }
  }
  // Above about 16 KiB MTU (loopback) Linux bounds the MSS to half the peer's
  // first window, so only ordinary and jumbo MTUs say what the MSS should be.
  if (f.mss && f.EffectiveMtu() && *f.EffectiveMtu() <= kLargestJumbo) {
    const uint32_t expected = *f.EffectiveMtu() - TcpOverhead(f.ipv6);
    if (*f.mss + kMssSlack < expected) {
      warnings.push_back(
          absl::StrFormat("MSS %d is lower than MTU %d implies (%d): something on the path clamps the MSS "
                          "(a firewall or router 'MSS clamping' rule) - check it",
                          *f.mss, *f.EffectiveMtu(), expected));
    }
  }
  if (!f.link_from_flag && f.link_mbps && f.nic_max_mbps && *f.link_mbps < *f.nic_max_mbps) {
    warnings.push_back(
        absl::StrFormat("link %s negotiated at %d Mb/s but the NIC can do %d Mb/s - check the cable, the switch "
                        "port and its speed setting",
                        f.interface, *f.link_mbps, *f.nic_max_mbps));
  }
  return warnings;
}

std::string PathLine(const PathFacts& f) {
  std::string line =
      absl::StrFormat("path: %s via %s (%s), MTU %s, link %s%s; receiver MTU %s; path MTU %s, MSS %s",
                      FormatHostPort(f.receiver), f.interface.empty() ? "?" : f.interface,
                      f.local_address.empty() ? "?" : f.local_address, Show(f.mtu), Show(f.link_mbps, " Mb/s"),
                      f.link_from_flag ? " (--link-speed)" : "", Show(f.peer_mtu), PathMtuText(f, false), Show(f.mss));
  if (f.rtt_ms > 0) absl::StrAppendFormat(&line, ", RTT %.2f ms", f.rtt_ms);
  if (auto ceiling = f.CeilingMBps()) absl::StrAppendFormat(&line, ", TCP ceiling %.0f MB/s", *ceiling);
  return line;
}

uint32_t PathMaxSegment(const PathFacts& f) {
  const std::optional<uint32_t> ends = f.EndsMtu();
  if (!f.path_mtu || !ends || *f.path_mtu >= *ends) return 0;
  return *f.path_mtu - TcpOverhead(f.ipv6) + 12;  // TCP_MAXSEG counts the timestamps in
}

uint64_t AutoWindowBytes(const PathFacts& f) {
  if (!f.link_mbps || f.rtt_ms <= 0) return 0;
  const double bdp = static_cast<double>(*f.link_mbps) * 1e6 / 8 * f.rtt_ms / 1e3;
  const uint64_t want = static_cast<uint64_t>(2 * bdp);
  if (want <= KernelSendBufferMax()) return 0;
  return std::min<uint64_t>(want, kMaxWindow);
}

absl::StatusOr<int> RunProbe(const ProbeOptions& options, std::FILE* out) {
  ReceiverClient client(options.to, options.token, options.trust);
  auto hello = client.Hello();
  if (!hello.ok()) return hello.status();
  auto facts = CheckPath(options.to, *hello, options.link_mbps);
  if (!facts.ok()) return facts.status();
  const PathFacts& f = *facts;
  // The receiver names its host and version and the interface's name comes from the
  // system: every value goes to the terminal through TerminalSafe.
  auto row = [out](const char* name, const std::string& value) {
    std::fprintf(out, "  %-16s %s\n", name, TerminalSafe(value).c_str());
  };
  std::fprintf(out, "receiver %s (nasperf %s) at %s\n", TerminalSafe(hello->host()).c_str(),
               TerminalSafe(hello->version()).c_str(), TerminalSafe(FormatHostPort(options.to)).c_str());
  row("interface", f.interface.empty() ? "unknown" : absl::StrCat(f.interface, " (", f.local_address, ")"));
  row("local MTU", Show(f.mtu));
  row("receiver MTU", Show(f.peer_mtu));
  row("path MTU", PathMtuText(f, true));
  row("MSS", Show(f.mss));
  row("link", absl::StrCat(Show(f.link_mbps, " Mb/s"), f.link_from_flag ? " (--link-speed)" : "",
                           f.nic_max_mbps ? absl::StrCat(", NIC max ", *f.nic_max_mbps, " Mb/s") : ""));
  row("RTT", f.rtt_ms > 0 ? absl::StrFormat("%.2f ms", f.rtt_ms) : "unknown");
  auto ceiling = f.CeilingMBps();
  row("TCP ceiling", ceiling ? absl::StrFormat("%.0f MB/s", *ceiling) : "unknown (no link speed)");
  const uint64_t window = AutoWindowBytes(f);
  row("socket buffers", window ? absl::StrCat(FormatSize(window), " (2 x bandwidth-delay product)")
                        : f.link_mbps && f.rtt_ms > 0 ? "kernel autotuning (covers the bandwidth-delay product)"
                                                      : "kernel autotuning (no link speed or RTT to size them by)");
  std::vector<std::string> warnings = PathWarnings(f);
  for (const std::string& w : warnings) std::fprintf(out, "warning: %s\n", TerminalSafe(w).c_str());
  std::fprintf(out, "%s\n", warnings.empty() ? "path ok" : "path has problems (see warnings)");
  std::fflush(out);
  return warnings.empty() ? 0 : 1;
}

}  // namespace nasperf
