// The native transport (docs/DESIGN.md §3, protocols): Hello and the path
// check at Start; per transfer OpenTransfer on the control port, the raw TCP push
// (datapath/stream_pusher.h), and the receiver's own row; EndRun at Finish when the
// run cleans up at the end. Threading as transport/transport.h says.
#ifndef NASPERF_TRANSPORT_NATIVE_H_
#define NASPERF_TRANSPORT_NATIVE_H_

#include <memory>
#include <optional>
#include <string>

#include "common/fd.h"
#include "common/policy.h"
#include "ssh/ssh_options.h"
#include "transport/registry.h"

namespace nasperf {

// What the entry's parse made of `to` and its flags (transport/native_deploy.cc): an
// agent's address, or a login where begin starts a receiver and then replaces the
// run's config with one naming that receiver's address.
class NativeConfig : public TransportConfig {
 public:
  HostPort agent{"", kAgentPort};       // the agent's control port, or
  std::optional<SshDestination> login;  // where a receiver is started over SSH
  SshOptions ssh;                       // that login's flags (--ssh-port, --identity, ...)
  std::string deploy_binary;            // --deploy-binary: the static nasperf to upload there
  bool prompt = false;                  // the login may ask for a password (a user at a TTY)

  std::string Peer() const override;
  Needs needs() const override;
};

// To the agent at `to`; `options` and `context` must outlive the transport.
std::unique_ptr<Transport> NewNativeTransport(const RunOptions& options, HostPort to, const RunContext& context);
// Its registry entry.
TransportEntry NativeTransportEntry();
// The entry's parse and begin (transport/native_deploy.cc): --to HOST[:PORT], or
// [user@]host:/dir to start a receiver there over SSH for the run (the command line's
// only; with the SSH login flags and --deploy-binary), stopped by the scope's End().
absl::StatusOr<std::unique_ptr<TransportConfig>> ParseNativeTo(const std::string& to, const ParsedFlags& flags,
                                                               Origin origin, std::string* bad_field);
absl::StatusOr<std::unique_ptr<RunScope>> BeginNativeRun(RunOptions& options, const ConsoleLine& say);

}  // namespace nasperf

#endif  // NASPERF_TRANSPORT_NATIVE_H_
