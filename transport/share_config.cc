#include "transport/share_config.h"

#include "CLI/CLI.hpp"

namespace nasperf {

absl::Status ShareConfig::TakeFile(absl::string_view role, const std::string& path, std::optional<std::string> bytes) {
  if (role != "credentials") return TransportConfig::TakeFile(role, path, std::move(bytes));
  share_.smb_credentials = path;
  share_.credentials_text = std::move(bytes);
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<TransportConfig>> MakeShareConfig(const std::string& to, const ParsedFlags& flags,
                                                                 BindShareFlags bind, std::string peer,
                                                                 std::string* bad_field) {
  ShareOptions share;  // the flags' defaults, as the command line declares them
  if (bind != nullptr) {
    if (absl::Status applied = ApplyTransportFlags(bind, flags, share, bad_field); !applied.ok()) return applied;
  } else if (absl::Status applied = ApplyTransportFlags([](CLI::App&) {}, flags, bad_field); !applied.ok()) {
    return applied;
  }
  share.url = to;
  return std::make_unique<ShareConfig>(std::move(share), std::move(peer));
}

}  // namespace nasperf
