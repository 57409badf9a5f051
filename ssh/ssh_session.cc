#include "ssh/ssh_session.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include <algorithm>
#include <vector>

#include "absl/strings/str_join.h"

namespace nasperf {
namespace {

constexpr long kConnectTimeoutS = 15;
constexpr long kReplyTimeoutS = 1800;  // an fsync of 45 GB onto a slow array takes minutes

// Asks on the terminal; libssh calls this for key passphrases.
int PromptOnTty(const char* prompt, char* buf, size_t len, int echo, int verify, void*) {
  return ssh_getpass(prompt, buf, len, echo, verify);
}

}  // namespace

std::string SftpCodeText(int code) {
  switch (code) {
    case SSH_FX_OK:
      return "ok";
    case SSH_FX_EOF:
      return "end of file";
    case SSH_FX_NO_SUCH_FILE:
      return "no such file or directory";
    case SSH_FX_PERMISSION_DENIED:
      return "permission denied";
    case SSH_FX_FAILURE:
      return "the server's write or open failed (disk full? quota? file exists?)";
    case SSH_FX_BAD_MESSAGE:
      return "bad message";
    case SSH_FX_NO_CONNECTION:
      return "no connection";
    case SSH_FX_CONNECTION_LOST:
      return "connection lost";
    case SSH_FX_OP_UNSUPPORTED:
      return "operation not supported by the server";
    case SSH_FX_FILE_ALREADY_EXISTS:
      return "file already exists";
    case SSH_FX_WRITE_PROTECT:
      return "write protected";
    default:
      return absl::StrCat("SFTP error ", code);
  }
}

absl::StatusOr<std::unique_ptr<SshConnection>> SshConnection::Open(const SshOptions& options, const ConsoleLine& say) {
  std::unique_ptr<SshConnection> c(new SshConnection());
  if (c->session_ == nullptr) return absl::ResourceExhaustedError("ssh_new failed");
  if (absl::Status s = c->Connect(options); !s.ok()) return s;
  if (absl::Status s = c->CheckHostKey(options, say); !s.ok()) return s;
  if (absl::Status s = c->Authenticate(options); !s.ok()) return s;
  long reply_timeout = kReplyTimeoutS;
  ssh_options_set(c->session_, SSH_OPTIONS_TIMEOUT, &reply_timeout);
  return c;
}

absl::Status SshConnection::Connect(const SshOptions& o) {
  const std::string alias =
      absl::StrCat(o.to.user.empty() ? "" : o.to.user + "@", o.to.host, o.port ? absl::StrCat(":", o.port) : "");
  // Order matters: the host picks the ~/.ssh/config section; flags given on the
  // command line then override what the config said, as with ssh.
  ssh_options_set(session_, SSH_OPTIONS_HOST, o.to.host.c_str());
  if (!o.to.user.empty()) ssh_options_set(session_, SSH_OPTIONS_USER, o.to.user.c_str());
  if (ssh_options_parse_config(session_, o.config_file.empty() ? nullptr : o.config_file.c_str()) < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "ssh config ", o.config_file.empty() ? "~/.ssh/config" : o.config_file, ": ", ssh_get_error(session_)));
  }
  if (!o.config_file.empty()) {
    struct stat st {};
    if (::stat(o.config_file.c_str(), &st) != 0) {
      return absl::InvalidArgumentError(absl::StrCat("ssh config ", o.config_file, ": no such file"));
    }
  }
  if (o.port != 0) {
    unsigned int port = o.port;
    ssh_options_set(session_, SSH_OPTIONS_PORT, &port);
  }
  if (o.known_hosts_text) {
    if (absl::Status s = UseKnownHostsText(*o.known_hosts_text); !s.ok()) return s;
  } else if (!o.known_hosts.empty()) {
    // Only this file counts: a test or a lab must not be swayed by the system's list.
    ssh_options_set(session_, SSH_OPTIONS_KNOWNHOSTS, o.known_hosts.c_str());
    ssh_options_set(session_, SSH_OPTIONS_GLOBAL_KNOWNHOSTS, "/dev/null");
  }
  int nodelay = 1;  // with Nagle on, SFTP's request/reply rhythm crawls at ~1 MiB/s
  ssh_options_set(session_, SSH_OPTIONS_NODELAY, &nodelay);
  long timeout = kConnectTimeoutS;
  ssh_options_set(session_, SSH_OPTIONS_TIMEOUT, &timeout);

  char* value = nullptr;
  if (ssh_options_get(session_, SSH_OPTIONS_HOST, &value) == SSH_OK) {
    host_ = value;
    ssh_string_free_char(value);
  } else {
    host_ = o.to.host;
  }
  if (ssh_options_get(session_, SSH_OPTIONS_USER, &value) == SSH_OK) {
    user_ = value;
    ssh_string_free_char(value);
  }
  unsigned int port = 22;
  if (ssh_options_get_port(session_, &port) == SSH_OK) port_ = static_cast<uint16_t>(port);
  where_ = absl::StrCat(user_.empty() ? "" : user_ + "@", host_, ":", port_);
  if (ssh_connect(session_) != SSH_OK) {
    return absl::UnavailableError(absl::StrCat("ssh ", where_, alias == where_ ? "" : absl::StrCat(" (", alias, ")"),
                                               ": cannot connect: ", ssh_get_error(session_)));
  }
  return absl::OkStatus();
}

// libssh reads known hosts only from a file: the lines go into a sealed memfd of this
// connection's, named through /proc/self/fd, which no other process or name can
// change; it lives as long as the session, which may read it again.
absl::Status SshConnection::UseKnownHostsText(const std::string& text) {
  known_hosts_.Reset(::memfd_create("nasperf-known-hosts", MFD_CLOEXEC | MFD_ALLOW_SEALING));
  if (!known_hosts_.valid()) return ErrnoStatus(errno, "memfd_create for the known hosts");
  if (absl::Status s = WriteAll(known_hosts_.get(), text.data(), text.size(), "the known hosts memfd"); !s.ok()) {
    return s;
  }
  if (::fcntl(known_hosts_.get(), F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) != 0) {
    return ErrnoStatus(errno, "seal the known hosts memfd");
  }
  const std::string path = absl::StrCat("/proc/self/fd/", known_hosts_.get());
  ssh_options_set(session_, SSH_OPTIONS_KNOWNHOSTS, path.c_str());
  ssh_options_set(session_, SSH_OPTIONS_GLOBAL_KNOWNHOSTS, "/dev/null");
  return absl::OkStatus();
}

absl::Status SshConnection::CheckHostKey(const SshOptions& o, const ConsoleLine& say) {
  ssh_key key = nullptr;
  if (ssh_get_server_publickey(session_, &key) != SSH_OK) {
    return absl::UnavailableError(absl::StrCat("ssh ", where_, ": no host key: ", ssh_get_error(session_)));
  }
  unsigned char* hash = nullptr;
  size_t hash_length = 0;
  int rc = ssh_get_publickey_hash(key, SSH_PUBLICKEY_HASH_SHA256, &hash, &hash_length);
  std::string type = ssh_key_type_to_char(ssh_key_type(key)) ? ssh_key_type_to_char(ssh_key_type(key)) : "?";
  ssh_key_free(key);
  if (rc != SSH_OK) return absl::InternalError(absl::StrCat("ssh ", where_, ": cannot hash the host key"));
  char* fingerprint = ssh_get_fingerprint_hash(SSH_PUBLICKEY_HASH_SHA256, hash, hash_length);
  ssh_clean_pubkey_hash(&hash);
  host_key_ = absl::StrCat(type, " ", fingerprint ? fingerprint : "?");
  ssh_string_free_char(fingerprint);

  const std::string file = o.known_hosts.empty() ? "~/.ssh/known_hosts" : o.known_hosts;
  switch (ssh_session_is_known_server(session_)) {
    case SSH_KNOWN_HOSTS_OK:
      return absl::OkStatus();
    case SSH_KNOWN_HOSTS_CHANGED:
    case SSH_KNOWN_HOSTS_OTHER:
      // Never accepted, not even with --accept-new-host-key (StrictHostKeyChecking
      // accept-new refuses a changed key too): it may be a man in the middle.
      return absl::PermissionDeniedError(
          absl::StrCat("ssh ", where_, ": the host key CHANGED: the server now shows ", host_key_,
                       ", which differs from the key recorded in ", file,
                       " (a reinstalled NAS, or someone in between); if you expect the change, remove the old "
                       "line (ssh-keygen -R '",
                       port_ == 22 ? host_ : absl::StrCat("[", host_, "]:", port_), "'",
                       o.known_hosts.empty() ? "" : absl::StrCat(" -f ", file), ") and run again"));
    case SSH_KNOWN_HOSTS_NOT_FOUND:
    case SSH_KNOWN_HOSTS_UNKNOWN:
      if (!o.accept_new_host_key) {
        return absl::PermissionDeniedError(
            absl::StrCat("ssh ", where_, ": unknown host key ", host_key_, " (not in ", file,
                         "); check the fingerprint on the NAS (ssh-keygen -lf /etc/ssh/ssh_host_*_key.pub) and "
                         "run again with --accept-new-host-key to record it"));
      }
      if (ssh_session_update_known_hosts(session_) != SSH_OK) {
        return absl::InternalError(
            absl::StrCat("ssh ", where_, ": cannot record the host key in ", file, ": ", ssh_get_error(session_)));
      }
      say(absl::StrCat("ssh ", where_, ": recorded new host key ", host_key_, " in ", file));
      return absl::OkStatus();
    case SSH_KNOWN_HOSTS_ERROR:
    default:
      return absl::InternalError(
          absl::StrCat("ssh ", where_, ": cannot check the host key against ", file, ": ", ssh_get_error(session_)));
  }
}

// The key of --identity, or of an agent's job the bytes its check read (never the
// name again).
absl::StatusOr<ssh_key> SshConnection::ImportIdentity(const SshOptions& o) {
  ssh_key key = nullptr;
  ssh_auth_callback ask = o.prompt ? PromptOnTty : nullptr;
  const int rc = o.identity_text ? ssh_pki_import_privkey_base64(o.identity_text->c_str(), nullptr, ask, nullptr, &key)
                                 : ssh_pki_import_privkey_file(o.identity.c_str(), nullptr, ask, nullptr, &key);
  if (rc == SSH_OK) return key;
  return absl::InvalidArgumentError(
      absl::StrCat("ssh ", where_, ": cannot read the private key ", o.identity,
                   o.prompt ? " (missing, not a key, or wrong passphrase)"
                            : " (missing, not a key, or it needs a passphrase and there is no terminal to ask on)"));
}

absl::Status SshConnection::Authenticate(const SshOptions& o) {
  if (o.prompt) {
    ssh_callbacks_init(&callbacks_);
    callbacks_.auth_function = PromptOnTty;
    ssh_set_callbacks(session_, &callbacks_);
  }
  int rc = ssh_userauth_none(session_, nullptr);
  if (rc == SSH_AUTH_SUCCESS) return absl::OkStatus();
  if (rc == SSH_AUTH_ERROR) {
    return absl::UnavailableError(absl::StrCat("ssh ", where_, ": ", ssh_get_error(session_)));
  }
  const int methods = ssh_userauth_list(session_, nullptr);
  std::string tried;
  if (methods & SSH_AUTH_METHOD_PUBLICKEY) {
    if (!o.identity.empty()) {
      tried = absl::StrCat("the key in ", o.identity);
      absl::StatusOr<ssh_key> key = ImportIdentity(o);
      if (!key.ok()) return key.status();
      rc = ssh_userauth_publickey(session_, nullptr, *key);
      ssh_key_free(*key);
    } else {
      tried = "ssh-agent and the default keys";
      rc = ssh_userauth_publickey_auto(session_, nullptr, nullptr);
    }
    if (rc == SSH_AUTH_SUCCESS) return absl::OkStatus();
  }
  if (o.prompt && (methods & SSH_AUTH_METHOD_INTERACTIVE)) {
    tried += tried.empty() ? "keyboard-interactive" : ", keyboard-interactive";
    rc = ssh_userauth_kbdint(session_, nullptr, nullptr);
    for (int rounds = 0; rc == SSH_AUTH_INFO && rounds < 8; ++rounds) {
      for (int i = 0; i < ssh_userauth_kbdint_getnprompts(session_); ++i) {
        char echo = 0;
        const char* question = ssh_userauth_kbdint_getprompt(session_, static_cast<unsigned>(i), &echo);
        char answer[512] = {};
        if (ssh_getpass(question, answer, sizeof answer, echo, 0) < 0) break;
        ssh_userauth_kbdint_setanswer(session_, static_cast<unsigned>(i), answer);
      }
      rc = ssh_userauth_kbdint(session_, nullptr, nullptr);
    }
    if (rc == SSH_AUTH_SUCCESS) return absl::OkStatus();
  } else if (o.prompt && (methods & SSH_AUTH_METHOD_PASSWORD)) {
    tried += tried.empty() ? "password" : ", password";
    char password[512] = {};
    std::string question = absl::StrCat(where_, " password: ");
    if (ssh_getpass(question.c_str(), password, sizeof password, 0, 0) == 0) {
      rc = ssh_userauth_password(session_, nullptr, password);
      if (rc == SSH_AUTH_SUCCESS) return absl::OkStatus();
    }
  }
  std::vector<std::string> offered;
  if (methods & SSH_AUTH_METHOD_PUBLICKEY) offered.push_back("publickey");
  if (methods & SSH_AUTH_METHOD_PASSWORD) offered.push_back("password");
  if (methods & SSH_AUTH_METHOD_INTERACTIVE) offered.push_back("keyboard-interactive");
  if (methods & SSH_AUTH_METHOD_GSSAPI_MIC) offered.push_back("gssapi");
  std::string hint = o.prompt ? "" : "; a password is asked only on a terminal";
  return absl::UnauthenticatedError(absl::StrCat("ssh ", where_, ": login refused (tried ",
                                                 tried.empty() ? "nothing usable" : tried, "; the server accepts ",
                                                 offered.empty() ? "none" : absl::StrJoin(offered, ", "), hint, ")"));
}

absl::StatusOr<std::string> SshConnection::Run(const std::string& command, const std::string& input,
                                               absl::Duration timeout) {
  ssh_channel channel = ssh_channel_new(session_);
  if (channel == nullptr) return Failure("open a channel");
  auto done = [&](absl::StatusOr<std::string> result) {
    ssh_channel_close(channel);
    ssh_channel_free(channel);
    return result;
  };
  if (ssh_channel_open_session(channel) != SSH_OK || ssh_channel_request_exec(channel, command.c_str()) != SSH_OK) {
    return done(Failure("run a command"));
  }
  if (!input.empty() && ssh_channel_write(channel, input.data(), static_cast<uint32_t>(input.size())) < 0) {
    return done(Failure("write to a command"));
  }
  ssh_channel_send_eof(channel);
  const absl::Time deadline = absl::Now() + timeout;
  std::string out;
  char buffer[4096];
  while (true) {
    const absl::Duration left = deadline - absl::Now();
    if (left <= absl::ZeroDuration()) {
      return done(absl::DeadlineExceededError(
          absl::StrCat("ssh ", where_, ": a command did not finish within ", absl::FormatDuration(timeout))));
    }
    int n = ssh_channel_read_timeout(channel, buffer, sizeof buffer, 0,
                                     static_cast<int>(std::max<int64_t>(1, absl::ToInt64Milliseconds(left))));
    if (n == SSH_ERROR) return done(Failure("read a command's output"));
    if (n == 0 && ssh_channel_is_eof(channel)) break;
    out.append(buffer, static_cast<size_t>(n));
    if (out.size() > kMaxCommandOutput) {
      return done(absl::ResourceExhaustedError(
          absl::StrCat("ssh ", where_, ": a command printed more than ", kMaxCommandOutput, " bytes")));
    }
  }
  return done(out);
}

}  // namespace nasperf
