// Local policy on the files a peer may name (a lab job's payload, its login files):
// only regular files beneath the operator's --allow-source directories, and on the
// directories a peer's job may write in: only beneath its --allow-path ones. Each is
// opened once beneath a directory descriptor and then used through that descriptor,
// never by a name a peer could redirect. Plain functions and values: any thread.
#ifndef NASPERF_COMMON_ALLOWED_SOURCE_H_
#define NASPERF_COMMON_ALLOWED_SOURCE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/fd.h"

namespace nasperf {

// An --allow-source (or --allow-path) directory, opened once when the agent starts:
// files are opened beneath this descriptor, never by a path a peer could redirect.
struct AllowedDirectory {
  std::string given;      // as the operator wrote it, when absolute
  std::string canonical;  // realpath
  std::shared_ptr<const Fd> fd;
};
absl::StatusOr<AllowedDirectory> OpenAllowedDirectory(const std::string& dir);

// A file a peer may have read: `file` must name, without "..", a path beneath one of
// `allowed` (as given or canonical) that is a regular file reached through no
// symlink (OpenBeneath). It is opened here, once; the caller reads this descriptor and
// never opens the name again, so swapping the file for a link after the check reads
// nothing new. Every refusal is the same line, whether or not anything exists there.
struct AllowedSource {
  std::string path;
  std::shared_ptr<const Fd> fd;
  uint64_t size = 0;
};
absl::StatusOr<AllowedSource> OpenAllowedSource(const std::string& file, const std::vector<AllowedDirectory>& allowed);

// A directory a peer's job may write in (a mounted directory's transfer): `dir` must
// be one of `allowed` (the agent's --allow-path, as given or canonical) or a directory
// beneath one, reached without ".." and through no symlink (OpenDirectoryBeneath). The
// descriptor (O_PATH: for openat, fstatat, fstatfs) is the one the job then uses; the
// name is never opened again. Every refusal is the same line naming --allow-path.
struct AllowedPath {
  std::string path;
  std::shared_ptr<const Fd> fd;
};
absl::StatusOr<AllowedPath> OpenAllowedPath(const std::string& dir, const std::vector<AllowedDirectory>& allowed);

}  // namespace nasperf

#endif  // NASPERF_COMMON_ALLOWED_SOURCE_H_
