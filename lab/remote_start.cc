#include "lab/remote_start.h"

#include <libssh/libssh.h>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "common/fd.h"
#include "common/log.h"
#include "common/policy.h"
#include "common/validate.h"
#include "sender/ssh_session.h"

namespace nasperf {
namespace {

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

// The same session set-up as the scp/sftp transport (host keys strictly against
// known_hosts, ssh-agent or one identity, ~/.ssh/config); never a prompt: a lab
// runs unattended.
absl::StatusOr<std::unique_ptr<SshConnection>> OpenSession(const RemoteAgentOptions& o) {
  SshOptions options;
  std::string host = o.ssh;
  if (size_t at = host.find('@'); at != std::string::npos) {
    options.to.user = host.substr(0, at);
    host = host.substr(at + 1);
  }
  auto hp = ParseHostPort(host, 22);
  if (!hp.ok()) return absl::InvalidArgumentError(absl::StrCat("ssh = \"", o.ssh, "\": ", hp.status().message()));
  options.to.host = hp->host;
  options.port = hp->port;
  options.identity = o.identity;
  options.known_hosts = o.known_hosts;
  return SshConnection::Open(options, [](const std::string&) {});
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
  RemoteAgentImpl(std::unique_ptr<SshConnection> connection, int pid, std::string fingerprint)
      : connection_(std::move(connection)),
        where_(absl::StrCat("ssh ", connection_->where())),
        pid_(pid),
        fingerprint_(std::move(fingerprint)) {}
  ~RemoteAgentImpl() override { (void)Stop(); }
  int remote_pid() const override { return pid_; }
  const std::string& fingerprint() const override { return fingerprint_; }
  absl::Status Stop() override {
    if (stopped_) return absl::OkStatus();
    stopped_ = true;
    auto out = Run(connection_->session(), where_, absl::StrCat("kill ", pid_, " && echo stopped"), "");
    if (!out.ok()) return out.status();
    if (out->find("stopped") == std::string::npos) {
      return absl::UnavailableError(absl::StrCat(where_, ": agent pid ", pid_, " was already gone"));
    }
    return absl::OkStatus();
  }

 private:
  std::unique_ptr<SshConnection> connection_;
  std::string where_;
  int pid_;
  std::string fingerprint_;
  bool stopped_ = false;
};

}  // namespace

absl::StatusOr<std::unique_ptr<RemoteAgent>> RemoteAgent::Start(const RemoteAgentOptions& o) {
  auto session = OpenSession(o);
  if (!session.ok()) return session.status();
  const std::string where = absl::StrCat("ssh ", o.ssh);
  // The token arrives on stdin; the agent runs detached, its log in /tmp. Its TLS key
  // is read (made if new) first: this authenticated channel is how the controller
  // learns which key to pin.
  std::string agent = absl::StrCat(ShellQuote(o.nasperf), " agent --listen ", ShellQuote(o.listen), " --target ",
                                   ShellQuote(o.target.empty() ? kDiscardTarget : o.target));
  for (const std::string& flag : o.agent_flags) absl::StrAppend(&agent, " ", ShellQuote(flag));
  std::string command = absl::StrCat(
      "IFS= read -r NASPERF_TOKEN && export NASPERF_TOKEN && log=$(mktemp /tmp/nasperf-agent-XXXXXX.log) && ",
      "key=$(", ShellQuote(o.nasperf), " fingerprint) && echo \"key=${key%% *}\" && ",
      "{ nohup ", agent, " >\"$log\" 2>&1 </dev/null & } && echo \"pid=$!\"");
  auto out = Run((*session)->session(), where, command, o.token + "\n");
  if (!out.ok()) return out.status();
  int pid = 0;
  size_t at = out->find("pid=");
  if (at == std::string::npos ||
      !absl::SimpleAtoi(absl::StripAsciiWhitespace(absl::string_view(*out).substr(at + 4)), &pid) || pid <= 0) {
    return absl::UnavailableError(absl::StrCat(where, ": could not start ", o.nasperf, " agent: ", *out));
  }
  at = out->find("key=");
  std::string key = at == std::string::npos ? "" : out->substr(at + 4, out->find('\n', at) - at - 4);
  if (key.empty() || !CheckFingerprint("key", key).ok()) {
    return absl::UnavailableError(absl::StrCat(where, ": ", o.nasperf, " fingerprint printed no TLS key: ",
                                               Printable(out->substr(0, 200))));
  }
  return std::unique_ptr<RemoteAgent>(new RemoteAgentImpl(std::move(*session), pid, key));
}

}  // namespace nasperf
