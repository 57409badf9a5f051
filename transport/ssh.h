// The SSH transports (`--transport scp|sftp`): the baseline most people measure
// today with an scp loop, now with nasperf's loop, timings and rows, and no agent on
// the NAS. libssh does the protocol; keys and host keys work like OpenSSH
// (~/.ssh/config, ssh-agent, --identity, known_hosts checked strictly unless a new
// key may be recorded). Each stream has its own SSH session, used only by that
// stream's thread; the transport follows Transport's threading contract.
#ifndef NASPERF_TRANSPORT_SSH_H_
#define NASPERF_TRANSPORT_SSH_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/policy.h"
#include "ssh/ssh_options.h"
#include "transport/registry.h"
#include "transport/remote_fs.h"

namespace nasperf {

// What the SSH transport needs from the run beyond the destination.
struct SshRunPlan {
  RemoteRunPlan remote;    // sync: sftp with fsync@openssh.com; scp: none (reads: the local target's)
  uint32_t link_mbps = 0;  // --link-speed
  // Reads over sftp (`--direction read`): pull remote_file (in the destination
  // directory); where it lands is the loop's (sender/local_copy.h).
  Direction direction = Direction::kWrite;
  std::string remote_file;
  // A lab's barrier (RunContext::before_first_byte), on each stream's thread once
  // its SSH session is up, before the file is opened and the first byte sent.
  std::function<absl::Status()> before_first_byte;
};

absl::StatusOr<std::unique_ptr<Transport>> NewSshTransport(const SshOptions& options, const SshRunPlan& plan);
// --ssh-port, --identity, --known-hosts, --ssh-config, --accept-new-host-key into
// `into.ssh` (transport/ssh_flags.cc): both entries' flags.
std::vector<CLI::Option*> AddSshLoginFlags(CLI::App& sender, RunOptions& into);
// The registry entries: scp and sftp, one implementation.
TransportEntry ScpTransportEntry();
TransportEntry SftpTransportEntry();

}  // namespace nasperf

#endif  // NASPERF_TRANSPORT_SSH_H_
