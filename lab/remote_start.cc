#include "lab/remote_start.h"

#include <libssh/libssh.h>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "common/fd.h"

namespace nasperf {
namespace {

struct SessionFree {
  void operator()(ssh_session s) const {
    ssh_disconnect(s);
    ssh_free(s);
  }
};
using Session = std::unique_ptr<ssh_session_struct, SessionFree>;

// Single quotes for a POSIX shell.
std::string ShellQuote(const std::string& text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

absl::StatusOr<Session> OpenSession(const RemoteAgentOptions& o) {
  std::string user, host = o.ssh;
  if (size_t at = host.find('@'); at != std::string::npos) {
    user = host.substr(0, at);
    host = host.substr(at + 1);
  }
  auto hp = ParseHostPort(host, 22);
  if (!hp.ok()) return absl::InvalidArgumentError(absl::StrCat("ssh = \"", o.ssh, "\": ", hp.status().message()));
  const std::string where = absl::StrCat("ssh ", o.ssh);
  Session session(ssh_new());
  if (!session) return absl::InternalError("ssh_new failed");
  int port = hp->port, nodelay = 1;
  ssh_options_set(session.get(), SSH_OPTIONS_HOST, hp->host.c_str());
  ssh_options_set(session.get(), SSH_OPTIONS_PORT, &port);
  ssh_options_set(session.get(), SSH_OPTIONS_NODELAY, &nodelay);
  if (!user.empty()) ssh_options_set(session.get(), SSH_OPTIONS_USER, user.c_str());
  if (!o.known_hosts.empty()) ssh_options_set(session.get(), SSH_OPTIONS_KNOWNHOSTS, o.known_hosts.c_str());
  if (ssh_connect(session.get()) != SSH_OK) {
    return absl::UnavailableError(absl::StrCat(where, ": cannot connect: ", ssh_get_error(session.get())));
  }
  switch (ssh_session_is_known_server(session.get())) {
    case SSH_KNOWN_HOSTS_OK:
      break;
    case SSH_KNOWN_HOSTS_CHANGED:
    case SSH_KNOWN_HOSTS_OTHER:
      return absl::PermissionDeniedError(absl::StrCat(
          where, ": the host key differs from the one in known_hosts (possible man-in-the-middle); not connecting"));
    case SSH_KNOWN_HOSTS_NOT_FOUND:
    case SSH_KNOWN_HOSTS_UNKNOWN:
      return absl::PermissionDeniedError(absl::StrCat(
          where, ": host key not in known_hosts", o.known_hosts.empty() ? "" : absl::StrCat(" (", o.known_hosts, ")"),
          "; connect once with ssh to check and record it"));
    default:
      return absl::UnavailableError(absl::StrCat(where, ": cannot check the host key: ", ssh_get_error(session.get())));
  }
  int auth = SSH_AUTH_DENIED;
  if (!o.identity.empty()) {
    ssh_key key = nullptr;
    if (ssh_pki_import_privkey_file(o.identity.c_str(), nullptr, nullptr, nullptr, &key) != SSH_OK) {
      return absl::FailedPreconditionError(absl::StrCat(where, ": cannot read the identity ", o.identity));
    }
    auth = ssh_userauth_publickey(session.get(), nullptr, key);
    ssh_key_free(key);
  } else {
    auth = ssh_userauth_publickey_auto(session.get(), nullptr, nullptr);
  }
  if (auth != SSH_AUTH_SUCCESS) {
    return absl::PermissionDeniedError(absl::StrCat(where, ": public key authentication failed: ",
                                                    ssh_get_error(session.get())));
  }
  return session;
}

// Runs a shell command, writes `input` to its stdin, returns its stdout.
absl::StatusOr<std::string> Run(ssh_session session, const std::string& where, const std::string& command,
                                const std::string& input) {
  ssh_channel channel = ssh_channel_new(session);
  if (channel == nullptr) return absl::InternalError(absl::StrCat(where, ": no channel"));
  auto done = [&](absl::StatusOr<std::string> result) {
    ssh_channel_close(channel);
    ssh_channel_free(channel);
    return result;
  };
  if (ssh_channel_open_session(channel) != SSH_OK || ssh_channel_request_exec(channel, command.c_str()) != SSH_OK) {
    return done(absl::UnavailableError(absl::StrCat(where, ": cannot run a command: ", ssh_get_error(session))));
  }
  if (!input.empty()) ssh_channel_write(channel, input.data(), static_cast<uint32_t>(input.size()));
  ssh_channel_send_eof(channel);
  std::string out;
  char buffer[4096];
  int n;
  while ((n = ssh_channel_read_timeout(channel, buffer, sizeof buffer, 0, 15000)) > 0) out.append(buffer, n);
  ssh_channel_get_exit_status(channel);
  return done(out);
}

class RemoteAgentImpl final : public RemoteAgent {
 public:
  RemoteAgentImpl(Session session, std::string where, int pid)
      : session_(std::move(session)), where_(std::move(where)), pid_(pid) {}
  ~RemoteAgentImpl() override { (void)Stop(); }
  int remote_pid() const override { return pid_; }
  absl::Status Stop() override {
    if (stopped_) return absl::OkStatus();
    stopped_ = true;
    auto out = Run(session_.get(), where_, absl::StrCat("kill ", pid_, " && echo stopped"), "");
    if (!out.ok()) return out.status();
    if (out->find("stopped") == std::string::npos) {
      return absl::UnavailableError(absl::StrCat(where_, ": agent pid ", pid_, " was already gone"));
    }
    return absl::OkStatus();
  }

 private:
  Session session_;
  std::string where_;
  int pid_;
  bool stopped_ = false;
};

}  // namespace

absl::StatusOr<std::unique_ptr<RemoteAgent>> RemoteAgent::Start(const RemoteAgentOptions& o) {
  auto session = OpenSession(o);
  if (!session.ok()) return session.status();
  const std::string where = absl::StrCat("ssh ", o.ssh);
  // The token arrives on stdin; the agent runs detached, its log in /tmp.
  std::string agent = absl::StrCat(ShellQuote(o.nasperf), " agent --listen ", ShellQuote(o.listen), " --target ",
                                   ShellQuote(o.target.empty() ? "discard" : o.target));
  for (const std::string& flag : o.agent_flags) absl::StrAppend(&agent, " ", ShellQuote(flag));
  std::string command = absl::StrCat(
      "IFS= read -r NASPERF_TOKEN && export NASPERF_TOKEN && log=$(mktemp /tmp/nasperf-agent-XXXXXX.log) && ",
      "{ nohup ", agent, " >\"$log\" 2>&1 </dev/null & } && echo \"pid=$!\"");
  auto out = Run(session->get(), where, command, o.token + "\n");
  if (!out.ok()) return out.status();
  int pid = 0;
  size_t at = out->find("pid=");
  if (at == std::string::npos ||
      !absl::SimpleAtoi(absl::StripAsciiWhitespace(absl::string_view(*out).substr(at + 4)), &pid) || pid <= 0) {
    return absl::UnavailableError(absl::StrCat(where, ": could not start ", o.nasperf, " agent: ", *out));
  }
  return std::unique_ptr<RemoteAgent>(new RemoteAgentImpl(std::move(*session), where, pid));
}

}  // namespace nasperf
