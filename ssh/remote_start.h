// Starts a receiver or agent on a host over SSH (`nasperf sender --to
// user@host:/dir`, `nasperf lab --ssh`) and stops it at the end: the binary is either
// one already there or this nasperf's static build uploaded first (ssh/deploy.h).
// The process lives exactly as long as the SSH channel that started it: it stops when
// its stdin closes, so a client that is killed, loses the network or exits leaves
// nothing running. Host keys, logins and keys as in the SSH transports
// (ssh/ssh_session.h); the token travels on the channel, never on a command line.
// One RemoteAgent per host, driven from one thread; it owns one helper thread that
// keeps the SSH session serviced while the run goes on.
#ifndef NASPERF_SSH_REMOTE_START_H_
#define NASPERF_SSH_REMOTE_START_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/fd.h"
#include "common/log.h"
#include "ssh/ssh_options.h"

namespace nasperf {

struct RemoteAgentOptions {
  SshOptions ssh;                  // destination (its dir unused), port, keys, host-key policy
  std::string role = "agent";      // "agent" or "receiver"
  std::string nasperf;             // a nasperf already on the host; empty: upload deploy_binary
  std::string deploy_binary;       // local static binary to upload; empty: this process's own
  std::string listen;              // --listen; empty: the host's address this SSH connection reached, port 0
  std::string target;              // --target; empty: discard
  std::vector<std::string> flags;  // more flags, e.g. {"--min-free", "off"}
  std::string token;
};

// The start script's `addr=` line (the host's own address of this SSH connection, from
// SSH_CONNECTION): an IPv4 or IPv6 literal (IPv6 with a %zone), returned as it is;
// anything else, a name (never looked up) or an escape sequence, is refused with one
// line.
absl::StatusOr<std::string> ParseRemoteAddress(const std::string& addr);

// Parses a lab host's `ssh = "[user@]host[:port]"` into the destination and port.
absl::StatusOr<SshOptions> LabSshOptions(const std::string& ssh, std::string identity, std::string known_hosts);

class RemoteAgent {
 public:
  // Connects, checks the host key, authenticates, uploads when asked, starts the
  // process and waits until it listens. say() hears about a recorded host key and
  // the upload.
  static absl::StatusOr<std::unique_ptr<RemoteAgent>> Start(const RemoteAgentOptions& options, const ConsoleLine& say);
  virtual ~RemoteAgent() = default;
  virtual int remote_pid() const = 0;
  // Where its control port listens, as reachable from here.
  virtual const HostPort& address() const = 0;
  // Its TLS key fingerprint, as `nasperf fingerprint` printed it over SSH.
  virtual const std::string& fingerprint() const = 0;
  // The binary that runs there (uploaded, cached or given).
  virtual const std::string& binary() const = 0;
  // Stops it (its stdin closes: it aborts open transfers and removes partial files)
  // and waits for it to exit; an error says why it ended early or would not end.
  virtual absl::Status Stop() = 0;
};

}  // namespace nasperf

#endif  // NASPERF_SSH_REMOTE_START_H_
