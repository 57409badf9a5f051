// A many-files workload (--files N --file-size DIST): the sizes of a set of files a
// transfer writes one after another, as a photo folder or a source tree, from a
// fixed size, a log-uniform range ("2MiB-20MiB") or a preset ("photos",
// "source-tree"), or a real tree's (--tree DIR). Deterministic: the same text, count and
// seed give the same sizes on every run and host. Plain values, and functions any
// thread may call (WalkTree reads the file system).
#ifndef NASPERF_COMMON_FILE_SET_H_
#define NASPERF_COMMON_FILE_SET_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace nasperf {

inline constexpr uint64_t kMaxSetFiles = 1000000;               // files one transfer writes
inline constexpr uint64_t kMaxSetFileSize = uint64_t{1} << 36;  // 64 GiB each

// --tree DIR: a set of a real tree's files, in the file size field of an
// agent's open request; they follow the data header on the data connection
// (wire/wire.h), as a receiver cannot draw them.
inline constexpr char kTreeFileSize[] = "tree";
inline constexpr int kMaxTreeDepth = 64;

struct FileSizeDist {
  uint64_t min_bytes = 0;
  uint64_t max_bytes = 0;  // == min_bytes: a fixed size
  std::string text;        // as given, or the preset's name
};

// "1MiB" (fixed), "4KiB-64KiB" (log-uniform, low < high), "photos" (2MiB-20MiB, a
// camera's JPEGs and HEICs) or "source-tree" (512B-64KiB, a code checkout). Each size
// 1 B..64 GiB. A refusal is one line.
absl::StatusOr<FileSizeDist> ParseFileSizeDist(absl::string_view text);

// `count` sizes drawn from `dist` with `seed` (splitmix64; log-uniform between the
// bounds, each within them).
std::vector<uint64_t> FileSetSizes(const FileSizeDist& dist, uint64_t count, uint64_t seed);

// One of a tree's files as the walk saw it: a file found there later under its name
// but with another inode or size (swapped, rewritten) is not this one.
struct TreeFile {
  std::string path;  // beneath the tree's directory, '/'-separated
  uint64_t device = 0;
  uint64_t inode = 0;
  uint64_t size = 0;
};

struct TreeSizes {
  std::vector<TreeFile> files;  // each regular file of 1 byte or more, in the walk's order
  uint64_t empty_files = 0;     // regular files of no bytes: left out (a set's files hold bytes)
  uint64_t other_entries = 0;   // symbolic links, devices, sockets: not followed, not copied
};

// The sizes of the regular files beneath `dir`, depth first with each directory's names
// in byte order, each looked at beneath the descriptor of the
// directory above without following a link; no file is opened. Refused: no such directory, more than kMaxSetFiles
// files, deeper than kMaxTreeDepth, a file over kMaxSetFileSize; errors name the path.
absl::StatusOr<TreeSizes> WalkTree(const std::string& dir);

}  // namespace nasperf

#endif  // NASPERF_COMMON_FILE_SET_H_
