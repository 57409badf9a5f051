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
// `into.ssh` (transport/ssh_flags.cc): both entries' flags.
std::vector<CLI::Option*> AddSshLoginFlags(CLI::App& sender, RunOptions& into);
// The registry entries: scp and sftp, one implementation.
TransportEntry ScpTransportEntry();
TransportEntry SftpTransportEntry();

}  // namespace nasperf

#endif  // NASPERF_TRANSPORT_SSH_H_
