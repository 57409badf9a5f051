// What an SSH login needs, without libssh: the destination `[user@]host:/dir`, keys,
// the host-key policy and the SFTP knobs, so roles and the CLI can carry them without
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
// SFTP writes sent before the oldest reply is awaited (1: plain sftp_write, one
// round trip each). See docs/PERFORMANCE.md.
constexpr size_t kSftpWritesInFlight = 16;

struct SshOptions {
  bool sftp = true;  // false: scp (ssh_scp_push_file64)
  SshDestination to;
  uint16_t port = 0;                 // --ssh-port; 0: ~/.ssh/config's, else 22
  std::string identity;              // --identity; empty: ssh-agent, then the default keys
  std::string known_hosts;           // empty: ~/.ssh/known_hosts
  std::string config_file;           // empty: ~/.ssh/config, then /etc/ssh/ssh_config
  bool accept_new_host_key = false;  // StrictHostKeyChecking=accept-new
  bool prompt = false;               // on a TTY: may ask for a password or passphrase
  size_t sftp_write_size = kMaxSftpWrite;
  size_t sftp_writes_in_flight = kSftpWritesInFlight;
  // A lab agent's job: the key's and the known_hosts file's own bytes, read through
  // the descriptor its --allow-source check opened. Given, they are used and the names
  // above only label them in messages: libssh never opens those names.
  std::optional<std::string> identity_text, known_hosts_text;
};

// `text` in single quotes for a POSIX shell.
std::string ShellQuote(absl::string_view text);

}  // namespace nasperf

#endif  // NASPERF_SSH_SSH_OPTIONS_H_
