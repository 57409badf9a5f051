#include "watch/smb_status.h"

#include <sys/stat.h>

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/fd.h"
#include "google/protobuf/util/json_util.h"
#include "measure/devices.h"
#include "proto/nasperf.pb.h"

namespace nasperf {
namespace {

constexpr int kSmbstatusTimeoutMs = 3000;
constexpr size_t kMaxSmbstatusBytes = 1 << 20;
constexpr size_t kMaxWordChars = 32;

// A word from smbstatus as the row may carry it: letters, digits and -_. only.
std::string SafeWord(const std::string& word) {
  if (word.empty() || word.size() > kMaxWordChars) return "?";
  for (char c : word) {
    if (!absl::ascii_isalnum(c) && c != '-' && c != '_' && c != '.') return "?";
  }
  return word;
}

std::string CryptoWords(const proto::SmbStatusJson::Crypto& crypto) {
  if (crypto.degree() == "none" || crypto.degree().empty()) return "none";
  return absl::StrCat(SafeWord(crypto.cipher()), "(", SafeWord(crypto.degree()), ")");
}

}  // namespace

std::string SmbdConfigFile(absl::string_view cmdline) {
  const std::vector<absl::string_view> args = absl::StrSplit(cmdline, '\0');
  for (size_t i = 0; i < args.size(); ++i) {
    absl::string_view arg = args[i];
    const bool next_is_file = arg == "-s" || arg == "--configfile";
    if (next_is_file && i + 1 < args.size()) return std::string(args[i + 1]);
    if (absl::ConsumePrefix(&arg, "--configfile=") || absl::ConsumePrefix(&arg, "-s")) {
      if (!arg.empty()) return std::string(arg);
    }
  }
  return "";
}

std::optional<std::string> SmbSessionOf(absl::string_view json, int pid) {
  proto::SmbStatusJson status;
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = true;
  if (!google::protobuf::util::JsonStringToMessage(std::string(json), &status, options).ok()) return std::nullopt;
  // The lowest session id first: the same answer for the same text, whatever the map's order.
  std::vector<const std::string*> ids;
  for (const auto& [id, session] : status.sessions()) ids.push_back(&id);
  std::sort(ids.begin(), ids.end(), [](const std::string* a, const std::string* b) { return *a < *b; });
  const std::string wanted = absl::StrCat(pid);
  for (const std::string* id : ids) {
    const proto::SmbStatusJson::Session& s = status.sessions().at(*id);
    if (s.server_id().pid() != wanted) continue;
    return absl::StrCat("smb ", SafeWord(s.session_dialect()), " signing=", CryptoWords(s.signing()),
                        " encryption=", CryptoWords(s.encryption()), " (smbstatus)");
  }
  return std::nullopt;
}

absl::StatusOr<std::string> NegotiatedSmb(int pid, const std::string& proc) {
  const char* smbstatus = FirstExecutable(
      {"/usr/bin/smbstatus", "/usr/sbin/smbstatus", "/usr/local/bin/smbstatus", "/usr/local/samba/bin/smbstatus"});
  if (smbstatus == nullptr) return absl::NotFoundError("no smbstatus on this host (Samba's tools)");
  // Anyone can name a process smbd: only root's is asked about, and only with a
  // configuration file root owns and only root may change, since smbstatus (as root)
  // loads it.
  const std::string status = ReadFileBounded(absl::StrCat(proc, "/", pid, "/status"), 1 << 14).value_or("");
  if (!absl::StrContains(status, "\nUid:\t0\t")) {
    return absl::PermissionDeniedError(absl::StrCat("smbd[", pid, "] is not root's: smbstatus not asked"));
  }
  absl::StatusOr<std::string> cmdline = ReadFileBounded(absl::StrCat(proc, "/", pid, "/cmdline"), 1 << 16);
  if (!cmdline.ok()) return cmdline.status();
  std::vector<std::string> argv{smbstatus, "--json"};
  if (const std::string conf = SmbdConfigFile(*cmdline); !conf.empty()) {
    struct stat st {};
    if (conf[0] != '/' || ::stat(conf.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != 0 ||
        (st.st_mode & 022) != 0) {
      return absl::PermissionDeniedError(
          absl::StrCat("smbd[", pid, "]'s configuration is not a file only root may change: smbstatus not asked"));
    }
    argv.push_back("-s");
    argv.push_back(conf);
  }
  absl::StatusOr<std::string> out = RunForOutput(argv, kSmbstatusTimeoutMs, kMaxSmbstatusBytes);
  if (!out.ok()) return out.status();
  std::optional<std::string> session = SmbSessionOf(*out, pid);
  if (!session) return absl::NotFoundError(absl::StrCat("smbstatus --json names no session of smbd[", pid, "]"));
  return *session;
}

}  // namespace nasperf
