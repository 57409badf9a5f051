// What an SSH login needs, without libssh: the destination `[user@]host:/dir`, keys
// and the host-key policy, so roles and the CLI can carry them without
// seeing libssh (ssh/ssh_session.h is the one that connects). Plain values.
#ifndef NASPERF_SSH_SSH_OPTIONS_H_
#define NASPERF_SSH_SSH_OPTIONS_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace nasperf {

// `[user@]host:/remote/dir` (host may be a bracketed IPv6 literal). An empty user
// means the one ~/.ssh/config names, else the local user, as with scp.
struct SshDestination {
  std::string user;
  std::string host;
  std::string dir;
};
absl::StatusOr<SshDestination> ParseSshDestination(absl::string_view text);

// Largest payload one sftp_write may carry: OpenSSH's sftp-server drops the channel
// on a message over 256 KiB (SFTP_MAX_MSG_LENGTH), and libssh 0.10 sends a write as
// one message. See docs/PERFORMANCE.md for the sizes measured.
constexpr size_t kMaxSftpWrite = 255 << 10;
struct SshOptions {
  SshDestination to;
  uint16_t port = 0;                 // --ssh-port; 0: ~/.ssh/config's, else 22
  std::string identity;              // --identity; empty: ssh-agent, then the default keys
  std::string known_hosts;           // empty: ~/.ssh/known_hosts
  std::string config_file;           // empty: ~/.ssh/config, then /etc/ssh/ssh_config
  bool accept_new_host_key = false;  // StrictHostKeyChecking=accept-new
  bool prompt = false;               // on a TTY: may ask for a password or passphrase
  // A lab agent's job: the key's and the known_hosts file's own bytes, read through
  // the descriptor its --allow-source check opened. Given, they are used and the names
  // above only label them in messages: libssh never opens those names.
  std::optional<std::string> identity_text, known_hosts_text;
};

// `text` in single quotes for a POSIX shell.
std::string ShellQuote(absl::string_view text);

}  // namespace nasperf

#endif  // NASPERF_SSH_SSH_OPTIONS_H_
