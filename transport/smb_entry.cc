// The SMB transport's entry, URL, login and flags: in every build, libsmbclient-free,
// so the static build knows the word and the flags and refuses in one line.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/fd.h"
#include "common/log.h"
#include "transport/share.h"
#include "transport/share_config.h"
#include "transport/share_url.h"
#include "transport/smb.h"

namespace nasperf {

#ifdef NASPERF_WITH_SMB
absl::StatusOr<std::unique_ptr<Transport>> MakeSmbTransport(const RunOptions& options,
                                                            const RunContext& context);  // smb.cc
#else
absl::StatusOr<std::unique_ptr<Transport>> MakeSmbTransport(const RunOptions&, const RunContext&) {
  return absl::UnimplementedError(
      "--transport smb: this is the static build, which has no SMB (libsmbclient ships no static archive); "
      "run a dynamic build (build/nasperf, as scripts/test.sh or cmake make it)");
}
int RunSmbWorker() {
  std::fprintf(stderr, "nasperf smb-worker: this is the static build, which has no SMB\n");
  return 2;
}
#endif

namespace {

constexpr size_t kMaxCredentialsBytes = 64 << 10;
constexpr size_t kMaxLoginChars = 256;

bool UserChar(char c) { return absl::ascii_isalnum(c) || c == '.' || c == '-' || c == '_' || c == '$'; }

}  // namespace

absl::StatusOr<SmbUrl> ParseSmbUrl(absl::string_view url) {
  auto bad = [](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat("not an smb://[user@]host[:port]/share[/dir] URL: ", why));
  };
  if (absl::Status scheme = ConsumeShareUrlScheme(&url, "smb://"); !scheme.ok()) return bad(scheme.message());
  if (url.find_first_of("?#;\\") != absl::string_view::npos)
    return bad("no ?, #, ; or \\ (a credential goes in a file)");
  const size_t slash = url.find('/');
  if (slash == absl::string_view::npos) return bad("no share after the host");
  absl::string_view authority = url.substr(0, slash);
  SmbUrl out;
  if (size_t at = authority.rfind('@'); at != absl::string_view::npos) {
    absl::string_view user = authority.substr(0, at);
    if (user.find(':') != absl::string_view::npos) return bad("no password in the URL (use --smb-credentials)");
    if (user.empty() || user.size() > kMaxLoginChars || !std::all_of(user.begin(), user.end(), UserChar)) {
      return bad("a bad user name");
    }
    out.user = std::string(user);
    authority = authority.substr(at + 1);
  }
  if (absl::Status host = ParseShareUrlHost(authority, &out.host, &out.port); !host.ok()) return bad(host.message());
  absl::StatusOr<std::vector<std::string>> parts = ShareUrlPathParts(url.substr(slash));
  if (!parts.ok()) return bad(parts.status().message());
  if (parts->empty()) return bad("no share after the host");
  out.share = (*parts)[0];
  out.dir = "/";
  for (size_t i = 1; i < parts->size(); ++i) absl::StrAppend(&out.dir, out.dir == "/" ? "" : "/", (*parts)[i]);
  return out;
}

namespace {

// mount.cifs's lines into login; `what` names the file in errors (a line may hold a
// password: never echoed).
absl::Status ParseCredentialLines(absl::string_view text, const std::string& what, SmbLogin& login) {
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_number;
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || line[0] == '#') continue;
    std::pair<absl::string_view, absl::string_view> kv = absl::StrSplit(line, absl::MaxSplits('=', 1));
    const absl::string_view key = absl::StripAsciiWhitespace(kv.first);
    std::string value(absl::StripAsciiWhitespace(kv.second));
    if (value.size() > kMaxLoginChars) {
      return absl::InvalidArgumentError(absl::StrCat(what, ":", line_number, ": longer than ", kMaxLoginChars));
    }
    if (key == "username" || key == "user") {
      login.user = value;
    } else if (key == "password" || key == "pass") {
      login.password = value;
    } else if (key == "domain" || key == "workgroup") {
      login.domain = value;
    } else {
      return absl::InvalidArgumentError(absl::StrCat(what, ":", line_number, ": not username=, password= or domain="));
    }
  }
  return absl::OkStatus();
}

// A user in the URL wins; none anywhere is refused.
absl::StatusOr<SmbLogin> WithUrlUser(const SmbUrl& url, SmbLogin login) {
  if (!url.user.empty()) login.user = url.user;
  if (login.user.empty()) {
    return absl::InvalidArgumentError(
        "--transport smb: no user (smb://user@host/share, username= in --smb-credentials, or $NASPERF_SMB_USER)");
  }
  return login;
}

}  // namespace

absl::StatusOr<SmbLogin> ReadSmbLogin(const SmbUrl& url, const std::string& credentials_file) {
  SmbLogin login;
  if (!credentials_file.empty()) {
    absl::StatusOr<std::string> read =
        ReadPrivateFile(credentials_file, absl::StrCat("--smb-credentials ", credentials_file), kMaxCredentialsBytes);
    if (!read.ok()) return read.status();
    if (absl::Status s = ParseCredentialLines(*read, credentials_file, login); !s.ok()) return s;
  } else {
    if (const char* user = std::getenv("NASPERF_SMB_USER")) login.user = std::string(user).substr(0, kMaxLoginChars);
    if (const char* pw = std::getenv("NASPERF_SMB_PASSWORD"))
      login.password = std::string(pw).substr(0, kMaxLoginChars);
  }
  return WithUrlUser(url, std::move(login));
}

absl::StatusOr<SmbLogin> SmbLoginFor(const SmbUrl& url, const ShareOptions& share) {
  if (!share.credentials_text) return ReadSmbLogin(url, share.smb_credentials);
  SmbLogin login;
  if (absl::Status s = ParseCredentialLines(*share.credentials_text, share.smb_credentials, login); !s.ok()) {
    return s;
  }
  return WithUrlUser(url, std::move(login));
}

namespace {

std::vector<CLI::Option*> BindSmbFlags(CLI::App& sender, ShareOptions& share) {
  return {
      sender.add_option("--smb-credentials", share.smb_credentials,
                        "smb: a file of username=, password=, domain= lines (mount.cifs's), readable by its owner only "
                        "(default: $NASPERF_SMB_USER, $NASPERF_SMB_PASSWORD)"),
      sender.add_option("--smb-encrypt", share.smb_encrypt, "smb: encryption asked of the server")
          ->check(CLI::IsMember({"default", "off", "desired", "required"}))
          ->capture_default_str(),
      sender
          .add_option("--smb-signing", share.smb_signing,
                      "smb: signing asked of the server (Samba's client signing; smbd's default signs SMB3 "
                      "session set-up only)")
          ->check(CLI::IsMember({"default", "off", "desired", "required"}))
          ->capture_default_str(),
      sender.add_option("--smb-min-protocol", share.smb_min_protocol, "smb: the oldest dialect allowed")
          ->check(CLI::IsMember({"NT1", "SMB2", "SMB2_10", "SMB3", "SMB3_00", "SMB3_02", "SMB3_11"}))
          ->capture_default_str(),
      sender
          .add_option("--smb-write-size", share.smb_write_size,
                      "smb: bytes per WRITE, 64 KiB to 8 MiB (libsmbclient waits for each answer)")
          ->check(CLI::Range(uint64_t{64} << 10, uint64_t{8} << 20))
          ->capture_default_str(),
      sender
          .add_option("--smb-channels", share.smb_channels,
                      "smb: connections per stream, 1 to 8, each with one WRITE in flight (libsmbclient waits for "
                      "every answer): 2 keeps two in flight, as smbclient and SMB multichannel do; 1 is one "
                      "connection, as one Explorer copy makes")
          ->check(CLI::Range(1, 8))
          ->capture_default_str(),
  };
}

std::vector<CLI::Option*> AddSmbFlags(CLI::App& sender, FlagScratch& scratch) {
  return BindSmbFlags(sender, scratch.Part<ShareOptions>());
}

// The entry's parse: the URL and the --smb-* flags; a plan's or a peer's login file
// comes by its own field (checked against the agent's --allow-source), never by flag.
absl::StatusOr<std::unique_ptr<TransportConfig>> ParseSmbConfig(const std::string& to, const ParsedFlags& flags,
                                                                Origin origin, std::string* bad_field) {
  absl::StatusOr<SmbUrl> url = ParseSmbUrl(to);
  if (!url.ok()) {
    *bad_field = "--to";
    return url.status();
  }
  if (origin != Origin::kUser && flags.Given("--smb-credentials")) {
    *bad_field = "--smb-credentials";
    return absl::InvalidArgumentError("give the login file as the transfer's `credentials`");
  }
  return MakeShareConfig(to, flags, &BindSmbFlags, PeerCell(url->host, url->port), bad_field);
}

}  // namespace

TransportEntry SmbTransportEntry() {
  TransportCaps caps;
  caps.url = true;
  caps.credentials_file = true;
  caps.verify = true;  // read back (RemoteFsRun)
  caps.reads = true;
  caps.reads_laid_out = true;  // RemoteFsRun::LayOutReadFile
  caps.barrier = true;         // a write waits in RemoteFsRun::Write
  caps.file_sets = true;       // RemoteFsRun::WriteSet
  TransportEntry entry{"smb", "SMB 3 to any SMB server through libsmbclient (no agent, no mount; dynamic builds only)",
                       caps, &MakeSmbTransport, &AddSmbFlags};
  entry.to_form = "smb://[user@]host[:port]/share[/dir]";
  entry.parse = &ParseSmbConfig;
  entry.worker = {kSmbWorkerCommand, "A parallel SMB stream's worker (started by SMB runs)", &RunSmbWorker};
  entry.nas_waited_hint = [](const RunOptions& options) -> std::string {
    const auto* config = dynamic_cast<const ShareConfig*>(options.config.get());
    if (config != nullptr && config->share().smb_channels != 1) return "";  // none: the defaults
    return "hint: the NAS waited for this client: one SMB connection here has one WRITE in flight (libsmbclient "
           "waits for each answer) where Explorer and smbclient keep several; --smb-channels 2 keeps two";
  };
#ifndef NASPERF_WITH_SMB
  entry.built = false;
#endif
  entry.unbuilt_why = "a static build has no SMB; install the .deb there or run a dynamic build";
  return entry;
}

}  // namespace nasperf
