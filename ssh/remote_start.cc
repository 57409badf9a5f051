#include "ssh/remote_start.h"

#include <arpa/inet.h>
#include <libssh/libssh.h>

#include <algorithm>
#include <atomic>
#include <thread>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "common/log.h"
#include "common/policy.h"
#include "ssh/deploy.h"
#include "ssh/ssh_session.h"
#include "wire/validate.h"

namespace nasperf {
namespace {

constexpr absl::Duration kStartTimeout = absl::Seconds(45);  // a first key on a slow NAS CPU, then the listen
constexpr absl::Duration kStopTimeout = absl::Seconds(30);   // open transfers abort, partial files go
constexpr size_t kKeptOutput = 4096;                         // of what the process printed after the start

// The start script: token from stdin, the TLS key printed, then the process in the
// background with the channel as its stdin (fd 3 carries it past the shell's
// /dev/null for background jobs), its ports once listening, and at the end its exit
// status and the last lines of its log.
// A private temporary directory the binary was put in goes when the script ends.
std::string StartScript(const RemoteAgentOptions& o, const std::string& binary, const std::string& temporary) {
  const std::string bin = ShellQuote(binary);
  std::string listen = o.listen.empty() ? "\"$listen\"" : ShellQuote(o.listen);
  std::string run = absl::StrCat(bin, " ", o.role, " --listen ", listen, " --target ",
                                 ShellQuote(o.target.empty() ? kDiscardTarget : o.target),
                                 " --port-file \"$dir/ports\" --stop-with-stdin");
  for (const std::string& flag : o.flags) absl::StrAppend(&run, " ", ShellQuote(flag));
  return absl::StrCat(
      temporary.empty()
          ? ""
          : absl::StrCat("bin_dir=", ShellQuote(temporary), "; trap 'rm -rf -- \"$bin_dir\"' EXIT HUP INT PIPE TERM\n"),
      "IFS= read -r NASPERF_TOKEN || exit 90; export NASPERF_TOKEN\n"
      "dir=$(mktemp -d \"${TMPDIR:-/tmp}/nasperf-XXXXXX\") || exit 91\n"
      "key=$(",
      bin,
      " fingerprint 2>&1) || { echo \"error=$key\"; exit 92; }\n"
      "echo \"key=${key%% *}\"\n"
      "set -- $SSH_CONNECTION; echo \"addr=$3\"\n"
      "case $3 in *:*) listen=\"[$3]:0\" ;; *) listen=\"$3:0\" ;; esac\n"
      "exec 3<&0\n",
      run,
      " >\"$dir/log\" 2>&1 <&3 3<&- &\n"
      "pid=$!; exec 3<&-; echo \"pid=$pid\"\n"
      "n=0; while [ ! -s \"$dir/ports\" ] && kill -0 $pid 2>/dev/null && [ $n -lt 400 ]; do sleep 0.1; n=$((n+1)); "
      "done\n"
      "cat \"$dir/ports\" 2>/dev/null; echo ready\n"
      "wait $pid; echo \"exit=$?\"; tail -n 5 \"$dir/log\"; rm -rf \"$dir\"\n");
}

// The value of the first "name=value" line of out, or "".
std::string Field(absl::string_view out, absl::string_view name) {
  for (absl::string_view line : absl::StrSplit(out, '\n')) {
    if (absl::ConsumePrefix(&line, name) && absl::ConsumePrefix(&line, "=")) {
      return std::string(absl::StripAsciiWhitespace(line));
    }
  }
  return "";
}

// ": " and the lines after the first line starting with `marker`, or "".
std::string LinesAfter(absl::string_view out, absl::string_view marker) {
  size_t at = absl::StartsWith(out, marker) ? 0 : out.find(absl::StrCat("\n", marker));
  if (at == absl::string_view::npos) return "";
  size_t end = out.find('\n', at + 1);
  absl::string_view rest = absl::StripAsciiWhitespace(end == absl::string_view::npos ? "" : out.substr(end + 1));
  return rest.empty() ? "" : absl::StrCat(": ", TerminalSafe(rest.substr(0, 600)));
}

class RemoteAgentImpl final : public RemoteAgent {
 public:
  RemoteAgentImpl(std::unique_ptr<SshConnection> connection, ssh_channel channel, int pid, HostPort address,
                  std::string fingerprint, std::string binary)
      : connection_(std::move(connection)),
        channel_(channel),
        pid_(pid),
        address_(std::move(address)),
        fingerprint_(std::move(fingerprint)),
        binary_(std::move(binary)),
        watcher_([this] { Watch(); }) {}
  ~RemoteAgentImpl() override { (void)Stop(); }

  int remote_pid() const override { return pid_; }
  const HostPort& address() const override { return address_; }
  const std::string& fingerprint() const override { return fingerprint_; }
  const std::string& binary() const override { return binary_; }

  absl::Status Stop() override {
    if (!watcher_.joinable()) return outcome_;
    stop_ = true;
    watcher_.join();
    ssh_channel_close(channel_);
    ssh_channel_free(channel_);
    return outcome_;
  }

 private:
  // Keeps the session answered (keepalives) while the run goes on, notices an early
  // end, and on Stop closes the process's stdin and waits for its exit.
  void Watch() {
    std::string output;
    char buffer[1024];
    bool ended_early = false;
    auto keep = [&](int n) {
      output.append(buffer, static_cast<size_t>(n));
      if (output.size() > kKeptOutput) output.erase(0, output.size() - kKeptOutput);
    };
    // False once the channel ended; what it still held is read first (the exit status).
    auto read_some = [&](int timeout_ms) {
      int n = ssh_channel_read_timeout(channel_, buffer, sizeof buffer, 0, timeout_ms);
      if (n > 0) keep(n);
      if (n >= 0 && !ssh_channel_is_eof(channel_)) return true;
      for (int rounds = 0; rounds < 64 && (n = ssh_channel_read_nonblocking(channel_, buffer, sizeof buffer, 0)) > 0;
           ++rounds) {
        keep(n);
      }
      return false;
    };
    while (!stop_) {
      if (!read_some(500)) {
        ended_early = true;
        break;
      }
    }
    const std::string where = absl::StrCat("ssh ", connection_->where());
    if (!ended_early) {
      ssh_channel_send_eof(channel_);
      const absl::Time deadline = absl::Now() + kStopTimeout;
      while (absl::Now() < deadline && read_some(500)) {
      }
      if (!ssh_channel_is_eof(channel_)) {
        (void)connection_->Run(absl::StrCat("kill ", pid_), "", absl::Seconds(10));
        outcome_ = absl::DeadlineExceededError(absl::StrCat(where, ": nasperf (pid ", pid_, ") did not stop within ",
                                                            absl::FormatDuration(kStopTimeout), "; killed it"));
        return;
      }
    }
    const std::string exit_code = Field(output, "exit");
    if (ended_early || exit_code != "0") {
      outcome_ = absl::UnavailableError(absl::StrCat(
          where, ": nasperf (pid ", pid_, ") ", ended_early ? "ended during the run" : "did not stop cleanly",
          exit_code.empty() ? " (connection lost)" : absl::StrCat(" (exit ", exit_code, ")"),
          LinesAfter(output, "exit=")));
    }
  }

  const std::unique_ptr<SshConnection> connection_;  // used by watcher_ alone once it runs
  const ssh_channel channel_;
  const int pid_;
  const HostPort address_;
  const std::string fingerprint_;
  const std::string binary_;
  std::atomic<bool> stop_{false};
  absl::Status outcome_;  // written by watcher_, read after joining it
  std::thread watcher_;   // last: starts once everything above exists
};

// Reads the start script's output until "ready" (or its end), within the deadline.
absl::StatusOr<std::string> ReadUntilReady(SshConnection& c, ssh_channel channel) {
  const absl::Time deadline = absl::Now() + kStartTimeout;
  std::string out;
  char buffer[4096];
  while (out.find("\nready\n") == std::string::npos && out.rfind("ready\n", 0) != 0) {
    const absl::Duration left = deadline - absl::Now();
    if (left <= absl::ZeroDuration()) {
      return absl::DeadlineExceededError(absl::StrCat("ssh ", c.where(), ": nasperf did not start within ",
                                                      absl::FormatDuration(kStartTimeout), ": ", TerminalSafe(out)));
    }
    int n = ssh_channel_read_timeout(channel, buffer, sizeof buffer, 0,
                                     static_cast<int>(std::max<int64_t>(1, absl::ToInt64Milliseconds(left))));
    if (n == SSH_ERROR) return c.Failure("read the start's output");
    if (n == 0 && ssh_channel_is_eof(channel)) break;
    out.append(buffer, static_cast<size_t>(n));
    if (out.size() > kMaxCommandOutput)
      return absl::ResourceExhaustedError(absl::StrCat("ssh ", c.where(), ": the start printed too much"));
  }
  return out;
}

}  // namespace

absl::StatusOr<std::string> ParseRemoteAddress(const std::string& addr) {
  const size_t percent = addr.find('%');
  const std::string ip = addr.substr(0, percent);
  const std::string zone = percent == std::string::npos ? "" : addr.substr(percent + 1);
  in6_addr v6{};
  in_addr v4{};
  const bool is_v6 = inet_pton(AF_INET6, ip.c_str(), &v6) == 1;
  const bool zone_ok =
      percent == std::string::npos ||
      (is_v6 && !zone.empty() && zone.size() <= 16 && std::all_of(zone.begin(), zone.end(), [](char z) {
         return absl::ascii_isalnum(z) || z == '.' || z == '_' || z == '-';
       }));
  if ((is_v6 || (percent == std::string::npos && inet_pton(AF_INET, ip.c_str(), &v4) == 1)) && zone_ok) return addr;
  return absl::InvalidArgumentError(absl::StrCat("the host gave \"", TerminalSafe(addr.substr(0, 100)),
                                                 "\" as the address this connection reached (SSH_CONNECTION), "
                                                 "which is not an IP address"));
}

absl::StatusOr<SshOptions> LabSshOptions(const std::string& ssh, std::string identity, std::string known_hosts) {
  SshOptions options;
  std::string host = ssh;
  if (size_t at = host.find('@'); at != std::string::npos) {
    options.to.user = host.substr(0, at);
    host = host.substr(at + 1);
  }
  auto hp = ParseHostPort(host, 22);
  if (!hp.ok()) return absl::InvalidArgumentError(absl::StrCat("ssh = \"", ssh, "\": ", hp.status().message()));
  options.to.host = hp->host;
  options.port = hp->port;
  options.identity = std::move(identity);
  options.known_hosts = std::move(known_hosts);
  return options;
}

absl::StatusOr<std::unique_ptr<RemoteAgent>> RemoteAgent::Start(const RemoteAgentOptions& o, const ConsoleLine& say) {
  auto connection = SshConnection::Open(o.ssh, say);
  if (!connection.ok()) return connection.status();
  SshConnection& c = **connection;
  const std::string where = absl::StrCat("ssh ", c.where());
  std::string binary = o.nasperf;
  std::string temporary;  // the binary's private directory for this run, if any
  if (binary.empty()) {
    auto deployed = DeployBinary(c, o.deploy_binary);
    if (!deployed.ok()) return deployed.status();
    if (!deployed->note.empty()) say(deployed->note);
    temporary = deployed->temporary;
    say(absl::StrFormat("%s: %s nasperf for %s (%.1f MiB) %s %s in %.1f s", where,
                        deployed->uploaded ? "uploaded" : "reusing the cached", MachineName(deployed->machine),
                        static_cast<double>(deployed->bytes) / (1 << 20), deployed->uploaded ? "to" : "at",
                        deployed->path, deployed->seconds));
    binary = deployed->path;
  }

  ssh_channel channel = ssh_channel_new(c.session());
  if (channel == nullptr) return c.Failure("open a channel");
  auto fail = [&](absl::Status status) {
    ssh_channel_close(channel);
    ssh_channel_free(channel);
    if (!temporary.empty()) (void)c.Run(absl::StrCat("rm -rf -- ", ShellQuote(temporary)), "", absl::Seconds(20));
    return status;
  };
  const std::string script = StartScript(o, binary, temporary);
  if (ssh_channel_open_session(channel) != SSH_OK || ssh_channel_request_exec(channel, script.c_str()) != SSH_OK) {
    return fail(c.Failure("start nasperf"));
  }
  const std::string token_line = o.token + "\n";
  if (ssh_channel_write(channel, token_line.data(), static_cast<uint32_t>(token_line.size())) < 0) {
    return fail(c.Failure("hand nasperf its token"));
  }
  auto out = ReadUntilReady(c, channel);
  if (!out.ok()) return fail(out.status());

  int pid = 0, port = 0;
  const std::string key = Field(*out, "key");
  if (!absl::SimpleAtoi(Field(*out, "pid"), &pid) || pid <= 0 || !absl::SimpleAtoi(Field(*out, "control"), &port) ||
      port <= 0 || port > 65535) {
    // The script goes on to print the exit status and the log's last lines.
    std::string rest = *out;
    char buffer[4096];
    int n;
    while (rest.size() < kMaxCommandOutput &&
           (n = ssh_channel_read_timeout(channel, buffer, sizeof buffer, 0, 5000)) > 0) {
      rest.append(buffer, static_cast<size_t>(n));
    }
    const std::string error = Field(rest, "error");
    return fail(absl::UnavailableError(
        absl::StrCat(where, ": ", binary, " ", o.role, " did not start",
                     error.empty() ? LinesAfter(rest, "exit=") : absl::StrCat(": ", TerminalSafe(error)))));
  }
  if (key.empty() || !CheckFingerprint("key", key).ok()) {
    return fail(absl::UnavailableError(
        absl::StrCat(where, ": ", binary, " fingerprint printed no TLS key: ", TerminalSafe(out->substr(0, 200)))));
  }
  HostPort address;
  if (!o.listen.empty()) {
    auto listen = ParseHostPort(o.listen, kAgentPort, /*allow_zero=*/true);
    if (!listen.ok()) return fail(listen.status());
    address = *listen;
  }
  if (address.host.empty() || address.host == "0.0.0.0" || address.host == "::") {
    auto reached = ParseRemoteAddress(Field(*out, "addr"));  // never a name to look up
    if (!reached.ok()) return fail(absl::UnavailableError(absl::StrCat(where, ": ", reached.status().message())));
    address.host = *reached;
  }
  auto checked = ParseHostPort(FormatHostPort({address.host, static_cast<uint16_t>(port)}), kAgentPort);
  if (address.host.empty() || !checked.ok()) {
    return fail(absl::UnavailableError(
        absl::StrCat(where, ": cannot tell the host's address (SSH_CONNECTION): ", TerminalSafe(out->substr(0, 200)))));
  }
  return std::unique_ptr<RemoteAgent>(new RemoteAgentImpl(std::move(*connection), channel, pid, *checked, key, binary));
}

}  // namespace nasperf
