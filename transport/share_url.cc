#include "transport/share_url.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace nasperf {
namespace {

constexpr size_t kMaxUrlChars = 1024;
constexpr size_t kMaxHostChars = 253;  // DNS's longest name
constexpr size_t kMaxPathParts = 32;

bool HostChar(char c) { return absl::ascii_isalnum(c) || c == '.' || c == '-' || c == '_'; }

}  // namespace

absl::Status ConsumeShareUrlScheme(absl::string_view* url, absl::string_view scheme) {
  if (url->size() > kMaxUrlChars) {
    return absl::InvalidArgumentError(absl::StrCat("longer than ", kMaxUrlChars, " characters"));
  }
  for (char c : *url) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return absl::InvalidArgumentError("a control character");
  }
  if (!absl::ConsumePrefix(url, scheme)) return absl::InvalidArgumentError(absl::StrCat("it must begin with ", scheme));
  return absl::OkStatus();
}

absl::Status ParseShareUrlHost(absl::string_view authority, std::string* host, uint16_t* port) {
  if (size_t colon = authority.find(':'); colon != absl::string_view::npos) {
    uint32_t number = 0;
    if (!absl::SimpleAtoi(authority.substr(colon + 1), &number) || number < 1 || number > 65535) {
      return absl::InvalidArgumentError("a bad port");
    }
    *port = static_cast<uint16_t>(number);
    authority = authority.substr(0, colon);
  }
  if (authority.empty() || authority.size() > kMaxHostChars ||
      !std::all_of(authority.begin(), authority.end(), HostChar)) {
    return absl::InvalidArgumentError("a bad host name");
  }
  *host = std::string(authority);
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::string>> ShareUrlPathParts(absl::string_view path) {
  std::vector<std::string> parts;
  for (absl::string_view part : absl::StrSplit(path, '/', absl::SkipEmpty())) {
    if (part == "." || part == "..") return absl::InvalidArgumentError("\".\" and \"..\" are not allowed in the path");
    if (parts.size() == kMaxPathParts) {
      return absl::InvalidArgumentError(absl::StrCat("more than ", kMaxPathParts, " path parts"));
    }
    parts.emplace_back(part);
  }
  return parts;
}

}  // namespace nasperf
