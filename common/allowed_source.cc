#include "common/allowed_source.h"

#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace nasperf {

absl::StatusOr<AllowedDirectory> OpenAllowedDirectory(const std::string& dir) {
  char resolved[PATH_MAX];
  auto fd = std::make_shared<Fd>(::open(dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!fd->valid() || ::realpath(dir.c_str(), resolved) == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(dir, " is not a directory"));
  }
  AllowedDirectory allowed;
  allowed.given = absl::StartsWith(dir, "/") ? std::string(absl::StripSuffix(dir, "/")) : "";
  allowed.canonical = resolved;
  allowed.fd = std::move(fd);
  return allowed;
}

absl::StatusOr<AllowedSource> OpenAllowedSource(const std::string& file, const std::vector<AllowedDirectory>& allowed) {
  if (allowed.empty()) {
    return absl::PermissionDeniedError(
        "this agent sends generated data only; start it with --allow-source DIR to send files under DIR");
  }
  const absl::Status refused =
      absl::PermissionDeniedError(absl::StrCat(file, " is not a file under this agent's --allow-source directories"));
  if (file.size() >= PATH_MAX) return refused;
  for (const AllowedDirectory& dir : allowed) {
    for (const std::string& name : {dir.given, dir.canonical}) {
      if (name.empty()) continue;
      absl::string_view relative = file;
      if (!absl::ConsumePrefix(&relative, name == "/" ? name : name + "/")) continue;
      auto fd = OpenBeneath(dir.fd->get(), relative);
      struct stat st {};
      if (!fd.ok() || ::fstat(fd->get(), &st) != 0) return refused;
      if (st.st_size == 0) return absl::FailedPreconditionError(absl::StrCat(file, " is empty on this host"));
      AllowedSource source;
      source.path = file;
      source.size = static_cast<uint64_t>(st.st_size);
      source.fd = std::make_shared<const Fd>(std::move(*fd));
      return source;
    }
  }
  return refused;
}

}  // namespace nasperf
