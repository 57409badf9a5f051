// What the smb:// and nfs:// URL parsers check the same way: the whole text, the
// host[:port], the path's parts. Pure functions, any thread. Each failure is an
// InvalidArgument holding only the reason; the caller says which URL it was.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace nasperf {

// At most 1024 characters, none a control character; then SCHEME ("nfs://") is
// taken off the front of *url.
absl::Status ConsumeShareUrlScheme(absl::string_view* url, absl::string_view scheme);

// AUTHORITY is host or host:port: a name or IPv4 address of letters, digits, '.',
// '-' and '_', at most 253 characters; a port 1..65535 (*port is left as is without one).
absl::Status ParseShareUrlHost(absl::string_view authority, std::string* host, uint16_t* port);

// The parts of PATH between slashes, empty ones skipped; "." and "..", and more than
// 32 parts, are refused. The result may be empty: the caller says what is missing.
absl::StatusOr<std::vector<std::string>> ShareUrlPathParts(absl::string_view path);

}  // namespace nasperf
