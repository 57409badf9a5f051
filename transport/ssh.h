// The SSH transports (`--transport scp|sftp`): the baseline most people measure
// today with an scp loop, now with nasperf's loop, timings and rows, and no agent on
// the NAS. libssh does the protocol; keys and host keys work like OpenSSH
// (~/.ssh/config, ssh-agent, --identity, known_hosts checked strictly unless a new
// key may be recorded). The run is the share shell's (transport/share.h), SshDriver
// on it; each stream has its own SSH session, used only by that stream's thread; the
// transport follows Transport's threading contract.
#ifndef NASPERF_TRANSPORT_SSH_H_
#define NASPERF_TRANSPORT_SSH_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/policy.h"
#include "ssh/ssh_options.h"
#include "transport/registry.h"
#include "transport/remote_fs.h"

namespace nasperf {

// --ssh-port, --identity, --known-hosts, --ssh-config, --accept-new-host-key into
// `into` (transport/ssh_flags.cc): both entries' flags, and the native entry's login
// of a receiver it starts over SSH.
std::vector<CLI::Option*> BindSshLoginFlags(CLI::App& sender, SshOptions& into);
std::vector<CLI::Option*> AddSshLoginFlags(CLI::App& sender, FlagScratch& scratch);

// SFTP writes sent before the oldest reply is awaited (1: plain sftp_write, one
// round trip each). See docs/PERFORMANCE.md.
constexpr size_t kSftpWritesInFlight = 16;

// How the sftp transport writes: benchmark knobs (docs/PERFORMANCE.md), set only by
// the command line's environment (NASPERF_SFTP_WRITE, NASPERF_SFTP_IN_FLIGHT).
struct SftpKnobs {
  size_t write_size = kMaxSftpWrite;              // bytes per sftp_write, 1..kMaxSftpWrite
  size_t writes_in_flight = kSftpWritesInFlight;  // 1..256; 1: plain sftp_write
};

// What the scp and sftp entries' parse made of `to` and the login flags.
class SshConfig : public TransportConfig {
 public:
  SshOptions login;  // destination, port, keys, host-key policy, prompt
  SftpKnobs knobs;
  std::string Peer() const override;  // host, or host:port (PeerCell) when the login names one
  // "ssh_identity", "ssh_known_hosts": the login's key and known_hosts (path, or bytes).
  absl::Status TakeFile(absl::string_view role, const std::string& path, std::optional<std::string> bytes) override;
};

// The scp and sftp entries' parse (TransportEntry::parse, transport/ssh_flags.cc):
// `to` is [user@]host[:port]:/dir (the port only where --ssh-port is not given; the
// directory absolute unless the user gave it); the login flags by name. The
// environment's SFTP knobs count for Origin::kUser only; a plan or a peer may not
// name an ssh_config file nor record a new host key, and never gets a prompt.
absl::StatusOr<std::unique_ptr<TransportConfig>> ParseSshTo(const std::string& to, const ParsedFlags& flags,
                                                            Origin origin, std::string* bad_field);
// The registry entries: scp and sftp, one implementation.
TransportEntry ScpTransportEntry();
TransportEntry SftpTransportEntry();

}  // namespace nasperf

#endif  // NASPERF_TRANSPORT_SSH_H_
