// The native entry's configuration (TransportEntry::parse) and its begin hook: --to
// HOST[:PORT] names a nasperf agent that is already running; --to [user@]host:/dir is
// an SSH login where a receiver is started for the run (uploading the static binary
// when needed, ssh/remote_start.h) and stopped after it. One thread: the run's caller.
#include <unistd.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/fd.h"
#include "common/log.h"
#include "common/token.h"
#include "ssh/remote_start.h"
#include "ssh/ssh_options.h"
#include "transport/native.h"
#include "transport/ssh.h"

namespace nasperf {
namespace {

constexpr char kLoginForm[] = "--to [user@]host:/dir";

// A login `to` (the old DeploysReceiver): [user@]host:/dir with an absolute dir.
std::optional<SshDestination> LoginOf(const std::string& to) {
  auto destination = ParseSshDestination(to);
  if (!destination.ok() || !absl::StartsWith(destination->dir, "/")) return std::nullopt;
  return *destination;
}

// A receiver started over SSH for the run; End() stops it.
class DeployedReceiver : public RunScope {
 public:
  DeployedReceiver(std::unique_ptr<RemoteAgent> remote, std::string host, ConsoleLine say)
      : remote_(std::move(remote)), host_(std::move(host)), say_(std::move(say)) {}
  absl::Status End() override {
    absl::Status stopped = remote_->Stop();
    if (stopped.ok()) say_(absl::StrCat("ssh ", host_, ": receiver stopped"));
    return stopped;
  }

 private:
  std::unique_ptr<RemoteAgent> remote_;
  std::string host_;
  ConsoleLine say_;
};

}  // namespace

std::string NativeConfig::Peer() const { return login ? login->host : FormatHostPort(agent); }

TransportConfig::Needs NativeConfig::needs() const {
  Needs needs;
  needs.trust = true;
  needs.shared_token = !login;  // a receiver started over SSH gets a token of its own
  needs.pins_own_key = login.has_value();
  return needs;
}

absl::StatusOr<std::unique_ptr<TransportConfig>> ParseNativeTo(const std::string& to, const ParsedFlags& flags,
                                                               Origin origin, std::string* bad_field) {
  auto refuse = [&](const std::string& field, absl::string_view why) {
    *bad_field = field;
    return absl::InvalidArgumentError(why);
  };
  auto config = std::make_unique<NativeConfig>();
  config->login = LoginOf(to);
  if (config->login && origin != Origin::kUser) {
    return refuse("--to",
                  "a receiver is started over SSH for the command line's runs only: give the agent's "
                  "HOST[:PORT]");
  }
  if (config->login) {
    config->deploy_binary = flags.Text("--deploy-binary");
    config->prompt = origin == Origin::kUser && isatty(STDIN_FILENO) != 0;
    ParsedFlags login;  // the receiver's login: the SSH entries' flags, checked as theirs
    for (const auto& [name, value] : flags.given()) {
      if (name != "--deploy-binary") login.Add(name, value);
    }
    if (absl::Status s = ApplyTransportFlags(&BindSshLoginFlags, login, config->ssh, bad_field); !s.ok()) return s;
    return config;
  }
  for (const auto& [name, value] : flags.given()) {  // the SSH login's flags: a receiver's login only
    if (name == "--deploy-binary") continue;
    return refuse(
        name, absl::StrCat("only with ", kLoginForm, " or --transport ", TransportsWith(&TransportCaps::ssh_login)));
  }
  auto agent = ParseHostPort(to, kAgentPort, /*allow_zero=*/false);
  if (!agent.ok()) return refuse("--to", agent.status().message());
  if (flags.Given("--deploy-binary")) return refuse("--deploy-binary", absl::StrCat("only with ", kLoginForm));
  config->agent = *agent;
  return config;
}

absl::StatusOr<std::unique_ptr<RunScope>> BeginNativeRun(RunOptions& options, const ConsoleLine& say) {
  const auto* config = dynamic_cast<const NativeConfig*>(options.config.get());
  if (config == nullptr || !config->login) return nullptr;  // an agent already there: nothing to start
  RemoteAgentOptions r;
  r.ssh = config->ssh;
  r.ssh.to = *config->login;
  r.ssh.prompt = config->prompt;
  r.role = "receiver";
  r.deploy_binary = config->deploy_binary;
  r.target = config->login->dir;
  r.token = RandomHex(32);
  auto remote = RemoteAgent::Start(r, say);  // a recorded host key, the upload
  if (!remote.ok()) return remote.status();
  say(absl::StrCat("ssh ", r.ssh.to.host, ": receiver started (pid ", (*remote)->remote_pid(), ") on ",
                   FormatHostPort((*remote)->address()), ", target ", r.target));
  auto started = std::make_shared<NativeConfig>();  // the run's far end from here on
  started->agent = (*remote)->address();
  options.config = std::move(started);
  options.receiver_fingerprint = (*remote)->fingerprint();
  options.token = r.token;
  return std::make_unique<DeployedReceiver>(std::move(*remote), r.ssh.to.host, say);
}

}  // namespace nasperf
