// Secrets for the control plane: random bytes, the shared token (NASPERF_TOKEN, a
// --token-file, or one generated and kept in the user's config directory) and a
// constant-time comparison. Thread-safe.
#ifndef NASPERF_COMMON_TOKEN_H_
#define NASPERF_COMMON_TOKEN_H_

#include <cstddef>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace nasperf {

void RandomBytes(void* out, size_t size);
std::string RandomHex(size_t bytes);
// A run id safe in file names: UTC time plus random hex.
std::string NewRunId();

// $XDG_CONFIG_HOME/nasperf/NAME, else ~/.config/nasperf/NAME.
std::string ConfigPath(absl::string_view name);
// ConfigPath("token").
std::string DefaultTokenPath();
// Creates `path` (mode 0600, parents 0700) holding `content`, written whole before it
// appears; ALREADY_EXISTS when another process created it first.
absl::Status CreatePrivateFile(const std::string& path, absl::string_view content);

struct TokenSource {
  std::string token;
  std::string origin;  // "NASPERF_TOKEN", the file path, ...
  bool generated = false;
};

// NASPERF_TOKEN wins, then token_file (must exist), then the default file. With
// generate_if_missing (the receiver and collector), a new token is written to the
// default file (mode 0600); otherwise a missing token is NOT_FOUND with a hint.
absl::StatusOr<TokenSource> LoadToken(absl::string_view token_file, bool generate_if_missing);

bool ConstantTimeEquals(absl::string_view a, absl::string_view b);

}  // namespace nasperf

#endif  // NASPERF_COMMON_TOKEN_H_
