// `nasperf lab --ssh`: starts a host's agent over SSH (libssh) when none answers,
// running the `nasperf` already installed there, and stops it at the end. Host keys
// are checked against known_hosts strictly (OpenSSH's StrictHostKeyChecking=yes);
// keys come from ssh-agent and the default identities, or one identity file. The
// token travels on the channel's stdin, never on a command line. One RemoteAgent per
// host, used from one thread.
// The SSH session is the scp/sftp transport's (sender/ssh_session.h).
#ifndef NASPERF_LAB_REMOTE_START_H_
#define NASPERF_LAB_REMOTE_START_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace nasperf {

struct RemoteAgentOptions {
  std::string ssh;               // [user@]host[:port]
  std::string identity;          // private key file; empty: ssh-agent, then ~/.ssh/id_*
  std::string known_hosts;       // empty: ~/.ssh/known_hosts
  std::string nasperf = "nasperf";  // the binary on the remote host
  std::string listen;            // the agent's --listen
  std::string target;            // its --target; empty: discard
  std::vector<std::string> agent_flags;  // more agent flags, e.g. {"--min-free", "off"}
  std::string token;
};

class RemoteAgent {
 public:
  // Connects, checks the host key, authenticates, starts the agent in the background
  // and returns its remote pid; the agent's log goes to /tmp/nasperf-agent-<pid>.log there.
  static absl::StatusOr<std::unique_ptr<RemoteAgent>> Start(const RemoteAgentOptions& options);
  virtual ~RemoteAgent() = default;
  virtual int remote_pid() const = 0;
  // The agent's TLS key fingerprint, as `nasperf fingerprint` printed it over SSH.
  virtual const std::string& fingerprint() const = 0;
  // Stops the agent (SIGTERM: it aborts its transfers and removes partial files).
  virtual absl::Status Stop() = 0;
};

}  // namespace nasperf

#endif  // NASPERF_LAB_REMOTE_START_H_
