// One authenticated SSH session through libssh, set up the way OpenSSH would:
// ~/.ssh/config, strict known_hosts (accept-new on request), ssh-agent, an identity
// file, prompts only on a terminal. Shared by the SSH transports and by
// `nasperf lab --ssh` and the SSH deploy. The one place (with the SSH
// transports) that includes libssh. A connection is used by one thread at a time.
#ifndef NASPERF_SSH_SSH_SESSION_H_
#define NASPERF_SSH_SSH_SESSION_H_

#include <libssh/callbacks.h>
#include <libssh/libssh.h>
#include <libssh/sftp.h>

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "common/fd.h"
#include "common/log.h"
#include "ssh/ssh_options.h"

namespace nasperf {

// A readable name for an SFTP status code, with the likely cause where there is one.
std::string SftpCodeText(int code);

// Most stdout a command run over SSH (SshConnection::Run) may print.
constexpr size_t kMaxCommandOutput = 64 << 10;

// One authenticated SSH session (and its SFTP channel, opened on first use). Used by
// one thread at a time.
class SshConnection {
 public:
  // Connects, checks the host key, authenticates. say() hears about a host key
  // recorded under accept-new.
  static absl::StatusOr<std::unique_ptr<SshConnection>> Open(const SshOptions& options, const ConsoleLine& say);
  ~SshConnection() {
    if (sftp_ != nullptr) sftp_free(sftp_);
    ssh_disconnect(session_);
    ssh_free(session_);
  }
  SshConnection(const SshConnection&) = delete;
  SshConnection& operator=(const SshConnection&) = delete;

  ssh_session session() const { return session_; }
  bool connected() const { return ssh_is_connected(session_) != 0; }
  // After a failed pipelined write the SFTP channel may still owe replies that
  // libssh's SFTP layer would not expect: such a session is not used again.
  void MarkUnreusable() { reusable_ = false; }
  bool reusable() const { return reusable_ && connected(); }
  const std::string& where() const { return where_; }  // user@host:port
  const std::string& host() const { return host_; }    // after ~/.ssh/config
  uint16_t port() const { return port_; }
  const std::string& host_key() const { return host_key_; }  // "ssh-ed25519 SHA256:..."
  // True for the first bulk transfer over this session, false after. sshd grows its
  // channel buffers while the first one streams (OpenSSH's sshbuf reallocates and
  // copies its whole buffer at each step), so that transfer runs slower than the
  // next on the same session: the row says so.
  bool FirstTransfer() { return transfers_++ == 0; }

  // Runs a shell command on the host, writes `input` to its stdin, returns its stdout
  // once it exits. More than kMaxCommandOutput bytes, or no exit within `timeout`, is
  // an error.
  absl::StatusOr<std::string> Run(const std::string& command, const std::string& input, absl::Duration timeout);

  absl::StatusOr<sftp_session> Sftp() {
    if (sftp_ != nullptr) return sftp_;
    sftp_session sftp = sftp_new(session_);
    if (sftp == nullptr) return Failure("start SFTP");
    if (sftp_init(sftp) != SSH_OK) {
      sftp_free(sftp);
      return Failure("start SFTP (does the server offer the sftp subsystem?)");
    }
    sftp_ = sftp;
    return sftp_;
  }

  // A libssh failure: the connection's state first (a lost connection explains
  // everything after it), then the SFTP status code when there is one. libssh's text
  // may quote the server (a disconnect reason): it is escaped here, where it enters.
  absl::Status Failure(absl::string_view what) const {
    if (!connected()) {
      return absl::UnavailableError(
          absl::StrCat(what, " on ", where_, ": connection lost (", TerminalSafe(ssh_get_error(session_)), ")"));
    }
    int code = sftp_ != nullptr ? sftp_get_error(sftp_) : SSH_FX_OK;
    if (code != SSH_FX_OK) return absl::InternalError(absl::StrCat(what, " on ", where_, ": ", SftpCodeText(code)));
    return absl::InternalError(absl::StrCat(what, " on ", where_, ": ", TerminalSafe(ssh_get_error(session_))));
  }

 private:
  SshConnection() : session_(ssh_new()) {}
  absl::Status Connect(const SshOptions& options);
  absl::Status CheckHostKey(const SshOptions& options, const ConsoleLine& say);
  absl::Status Authenticate(const SshOptions& options);
  absl::Status UseKnownHostsText(const std::string& text);
  absl::StatusOr<ssh_key> ImportIdentity(const SshOptions& options);

  ssh_session session_;
  Fd known_hosts_;  // a sealed memfd holding SshOptions::known_hosts_text, when given
  sftp_session sftp_ = nullptr;
  struct ssh_callbacks_struct callbacks_ {};
  std::string where_, host_, user_, host_key_;
  uint16_t port_ = 22;
  bool reusable_ = true;
  uint64_t transfers_ = 0;
};

}  // namespace nasperf

#endif  // NASPERF_SSH_SSH_SESSION_H_
