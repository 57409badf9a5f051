#include "common/allowed_source.h"

#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "common/log.h"

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

absl::StatusOr<AllowedPath> OpenAllowedPath(const std::string& dir, const std::vector<AllowedDirectory>& allowed) {
  if (allowed.empty()) {
    return absl::PermissionDeniedError(
        "this agent writes in no directory of its own host; start it with --allow-path DIR to let jobs write "
        "beneath DIR");
  }
  const absl::Status refused = absl::PermissionDeniedError(absl::StrCat(
      TerminalSafe(dir),
      " is not a directory under this agent's --allow-path directories (no \"..\", no symlink on the way)"));
  // A NUL or a control character would make the name mean less than it says (the job's
  // own check refuses it too, so CheckPath answers as the job will).
  const auto control = [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; };
  if (dir.size() >= PATH_MAX || std::any_of(dir.begin(), dir.end(), control)) return refused;
  const std::string trimmed = dir.size() > 1 ? std::string(absl::StripSuffix(dir, "/")) : dir;
  for (const AllowedDirectory& allowed_dir : allowed) {
    for (const std::string& name : {allowed_dir.given, allowed_dir.canonical}) {
      if (name.empty()) continue;
      AllowedPath path;
      path.path = dir;
      if (trimmed == name) {  // the allowed directory itself: its own descriptor
        path.fd = allowed_dir.fd;
        return path;
      }
      absl::string_view relative = trimmed;
      if (!absl::ConsumePrefix(&relative, name == "/" ? name : name + "/")) continue;
      auto fd = OpenDirectoryBeneath(allowed_dir.fd->get(), relative);
      if (!fd.ok()) return refused;
      path.fd = std::make_shared<const Fd>(std::move(*fd));
      return path;
    }
  }
  return refused;
}

}  // namespace nasperf
