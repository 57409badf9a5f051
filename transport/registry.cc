#include "transport/registry.h"

#include "absl/strings/str_join.h"
#include "transport/native.h"
#include "transport/ssh.h"

namespace nasperf {

const std::vector<TransportEntry>& Transports() {
  static const auto* entries = new std::vector<TransportEntry>{
      NativeTransportEntry(),
      ScpTransportEntry(),
      SftpTransportEntry(),
  };
  return *entries;
}

const TransportEntry& TransportFor(TransportKind kind) {
  for (const TransportEntry& entry : Transports()) {
    if (entry.kind == kind) return entry;
  }
  // Every TransportKind has an entry (registry_test walks them): not reached.
  return Transports().front();
}

std::string TransportsWith(bool TransportCaps::*cap) {
  std::vector<std::string> names;
  for (const TransportEntry& entry : Transports()) {
    if (entry.caps.*cap) names.push_back(Name(entry.kind));
  }
  return absl::StrJoin(names, "|");
}

}  // namespace nasperf
