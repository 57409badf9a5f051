#include "ssh/ssh_options.h"

#include "absl/strings/str_cat.h"

namespace nasperf {

std::string ShellQuote(absl::string_view text) {
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

absl::StatusOr<SshDestination> ParseSshDestination(absl::string_view text) {
  const auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat("expected [user@]host:/remote/dir, got \"", text, "\" (", why, ")"));
  };
  SshDestination d;
  absl::string_view rest = text;
  size_t at = rest.find('@');
  size_t colon = rest.find(':');
  if (at != absl::string_view::npos && (colon == absl::string_view::npos || at < colon)) {
    d.user = std::string(rest.substr(0, at));
    if (d.user.empty()) return bad("empty user");
    rest.remove_prefix(at + 1);
  }
  if (!rest.empty() && rest.front() == '[') {
    size_t close = rest.find(']');
    if (close == absl::string_view::npos) return bad("no closing ]");
    d.host = std::string(rest.substr(1, close - 1));
    rest.remove_prefix(close + 1);
    if (rest.empty() || rest.front() != ':') return bad("no :/remote/dir after the host");
    rest.remove_prefix(1);
  } else {
    colon = rest.find(':');
    if (colon == absl::string_view::npos) return bad("no :/remote/dir after the host");
    d.host = std::string(rest.substr(0, colon));
    rest.remove_prefix(colon + 1);
  }
  if (d.host.empty()) return bad("empty host");
  if (rest.empty()) return bad("empty remote directory");
  d.dir = std::string(rest);
  return d;
}

}  // namespace nasperf
