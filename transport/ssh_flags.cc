// The SSH login of the scp and sftp entries: their flags on `nasperf sender` (also
// read for a receiver started over SSH with --to user@host:/dir) and their parse of
// `to` and those flags into an SshConfig. Here, not in ssh.cc, so that declaring and
// parsing them needs CLI11 and not libssh. Plain functions: any thread.
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/units.h"
#include "transport/share.h"
#include "transport/ssh.h"

namespace nasperf {

std::vector<CLI::Option*> BindSshLoginFlags(CLI::App& sender, SshOptions& ssh) {
  return {
      sender.add_option("--ssh-port", ssh.port, "SSH port (default: ~/.ssh/config's, else 22)")
          ->check(CLI::Range(1, 65535)),
      sender.add_option("--identity", ssh.identity,
                        "SSH private key file to log in with (default: ssh-agent, then ~/.ssh/id_*)"),
      sender.add_option("--known-hosts", ssh.known_hosts,
                        "known_hosts file to check the SSH host key against (default ~/.ssh/known_hosts)"),
      sender.add_option("--ssh-config", ssh.config_file,
                        "ssh_config file to read (default ~/.ssh/config and /etc/ssh/ssh_config)"),
      sender.add_flag("--accept-new-host-key", ssh.accept_new_host_key,
                      "Record an unknown SSH host key (a changed one is still refused)"),
  };
}

std::vector<CLI::Option*> AddSshLoginFlags(CLI::App& sender, FlagScratch& scratch) {
  return BindSshLoginFlags(sender, scratch.Part<SshOptions>());
}

namespace {

absl::Status Refuse(std::string* bad_field, const std::string& field, absl::string_view why) {
  *bad_field = field;
  return absl::InvalidArgumentError(why);
}

// `[user@]host[:port]:/dir`: the port taken out of the destination's dir (0: none).
absl::StatusOr<uint16_t> TakePort(const std::string& text, SshDestination& to) {
  uint32_t port = 0;
  if (size_t colon = to.dir.find(':');
      colon != std::string::npos && colon > 0 && absl::SimpleAtoi(to.dir.substr(0, colon), &port)) {
    if (port == 0 || port > 65535) {
      return absl::InvalidArgumentError(absl::StrCat("port ", port, " in \"", text, "\" is not 1..65535"));
    }
    to.dir = to.dir.substr(colon + 1);
  }
  return static_cast<uint16_t>(port);
}

// What a plan's or a peer's user and host may hold: a POSIX user name's and a host
// name's or address's characters, so that neither reaches a shell an
// ssh_config's ProxyCommand or Match exec runs with %r or %h as anything but a name.
bool IsLoginNameChar(char c, bool host) {
  if (absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_') return true;
  return host && (c == ':' || c == '%');  // an IPv6 address (ParseSshDestination takes off its [ ])
}

// A plan's or a peer's login (the old agent's CheckLoginText): user, host and
// directory printable, with no space, bounded, and none starting with '-', so that
// neither libssh nor a shell reads one as an option; user and host name characters only.
absl::Status CheckLoginWords(const SshDestination& to, std::string* bad_field) {
  for (const auto& [what, value, max] :
       {std::tuple{"user", &to.user, size_t{64}}, std::tuple{"host", &to.host, size_t{255}},
        std::tuple{"directory", &to.dir, size_t{4096}}}) {
    if (value->size() > max)
      return Refuse(bad_field, "--to", absl::StrCat("the login's ", what, " is over ", max, " bytes"));
    for (char c : *value) {
      if (static_cast<unsigned char>(c) <= ' ' || c == 0x7f) {
        return Refuse(bad_field, "--to", absl::StrCat("the login's ", what, " has a space or a control character"));
      }
    }
    if (absl::StartsWith(*value, "-"))
      return Refuse(bad_field, "--to", absl::StrCat("the login's ", what, " starts with -"));
  }
  for (const auto& [what, value, host] : {std::tuple{"user", &to.user, false}, std::tuple{"host", &to.host, true}}) {
    for (char c : *value) {
      if (!IsLoginNameChar(c, host)) {
        return Refuse(bad_field, "--to",
                      absl::StrCat("the login's ", what, " may hold only letters, digits and ._-", host ? ":%" : ""));
      }
    }
  }
  return absl::OkStatus();
}

// The login flags by name. A plan or a peer names no ssh_config file (it could say
// ProxyCommand) and records no new host key: the known_hosts check stays strict.
absl::Status ReadLoginFlags(const ParsedFlags& flags, Origin origin, SshOptions& login, std::string* bad_field) {
  for (const auto& [name, value] : flags.given()) {
    if (name == "--ssh-port") {
      uint32_t port = 0;
      if (!absl::SimpleAtoi(value, &port) || port == 0 || port > 65535) {
        return Refuse(bad_field, name, "must be 1 to 65535");
      }
      login.port = static_cast<uint16_t>(port);
    } else if (name == "--identity" || name == "--known-hosts") {
      // A plan's or a peer's key and known_hosts are files it names by role, opened
      // beneath the agent's --allow-source (transport/run_spec.cc), never a path libssh opens.
      if (origin != Origin::kUser)
        return Refuse(bad_field, name, "only on the command line (a plan names it as a file)");
      (name == "--identity" ? login.identity : login.known_hosts) = value;
    } else if (name == "--ssh-config" || name == "--accept-new-host-key") {
      if (origin != Origin::kUser) return Refuse(bad_field, name, "only on the command line");
      if (name == "--ssh-config") login.config_file = value;
      if (name == "--accept-new-host-key") login.accept_new_host_key = value != "false" && value != "0";
    } else if (name != "--deploy-binary") {
      return Refuse(bad_field, name, "not a flag of an SSH login");
    }
  }
  return absl::OkStatus();
}

// Benchmark knobs (docs/PERFORMANCE.md), the command line's environment only: bytes
// per SFTP write (at most kMaxSftpWrite) and writes in flight (1 = plain sftp_write).
absl::Status ReadSftpKnobs(SftpKnobs& knobs, std::string* bad_field) {
  if (const char* size = std::getenv("NASPERF_SFTP_WRITE"); size != nullptr) {
    auto parsed = ParseSize(size);
    if (!parsed.ok() || *parsed == 0 || *parsed > kMaxSftpWrite) {
      return Refuse(bad_field, "NASPERF_SFTP_WRITE",
                    absl::StrCat("must be a size from 1 to ", kMaxSftpWrite, " bytes"));
    }
    knobs.write_size = *parsed;
  }
  if (const char* depth = std::getenv("NASPERF_SFTP_IN_FLIGHT"); depth != nullptr) {
    int parsed = std::atoi(depth);
    if (parsed < 1 || parsed > 256) return Refuse(bad_field, "NASPERF_SFTP_IN_FLIGHT", "must be 1 to 256");
    knobs.writes_in_flight = static_cast<size_t>(parsed);
  }
  return absl::OkStatus();
}

}  // namespace

std::string SshConfig::Peer() const { return PeerCell(login.to.host, login.port); }

absl::Status SshConfig::TakeFile(absl::string_view role, const std::string& path, std::optional<std::string> bytes) {
  if (role == "ssh_identity") {
    login.identity = path;
    login.identity_text = std::move(bytes);
  } else if (role == "ssh_known_hosts") {
    login.known_hosts = path;
    login.known_hosts_text = std::move(bytes);
  } else {
    return TransportConfig::TakeFile(role, path, std::move(bytes));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<TransportConfig>> ParseSshTo(const std::string& to, const ParsedFlags& flags,
                                                            Origin origin, std::string* bad_field) {
  auto config = std::make_unique<SshConfig>();
  SshOptions& login = config->login;
  auto destination = ParseSshDestination(to);
  if (!destination.ok()) return Refuse(bad_field, "--to", destination.status().message());
  login.to = *std::move(destination);
  auto port = TakePort(to, login.to);
  if (!port.ok()) return Refuse(bad_field, "--to", port.status().message());
  if (origin != Origin::kUser && !absl::StartsWith(login.to.dir, "/")) {
    return Refuse(bad_field, "--to",
                  absl::StrCat("expected [user@]host[:port]:/dir, got \"", to, "\" (the directory must be absolute)"));
  }
  if (origin != Origin::kUser) {
    if (absl::Status words = CheckLoginWords(login.to, bad_field); !words.ok()) return words;
  }
  if (origin == Origin::kUser) {
    if (absl::Status knobs = ReadSftpKnobs(config->knobs, bad_field); !knobs.ok()) return knobs;
  }
  if (absl::Status read = ReadLoginFlags(flags, origin, login, bad_field); !read.ok()) return read;
  if (*port != 0 && flags.Given("--ssh-port")) {
    return Refuse(bad_field, "--ssh-port", absl::StrCat("not with a port in --to \"", to, "\": give one of them"));
  }
  if (*port != 0) login.port = *port;
  if (flags.Given("--deploy-binary")) return Refuse(bad_field, "--deploy-binary", "only with --to [user@]host:/dir");
  login.prompt = origin == Origin::kUser && isatty(STDIN_FILENO) != 0;
  return config;
}

}  // namespace nasperf
