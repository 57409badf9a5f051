#include "transport/share_config.h"

namespace nasperf {

absl::StatusOr<std::unique_ptr<TransportConfig>> MakeShareConfig(const std::string& to, const ParsedFlags& flags,
                                                                 AddTransportFlags add, std::string peer,
                                                                 std::string* bad_field) {
  RunOptions scratch;  // the flags' defaults, as the command line declares them
  if (absl::Status applied = ApplyTransportFlags(add, flags, scratch, bad_field); !applied.ok()) return applied;
  scratch.share.url = to;
  return std::make_unique<ShareConfig>(std::move(scratch.share), std::move(peer));
}

}  // namespace nasperf
