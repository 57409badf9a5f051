// A many-files workload (--files N --file-size DIST): the sizes of a set of files a
// transfer writes one after another, as a photo folder or a source tree, from a
// fixed size, a log-uniform range ("2MiB-20MiB") or a preset ("photos",
// "source-tree"). Deterministic: the same text, count and seed give the same sizes
// on every run and host. Pure functions and plain values: any thread.
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

}  // namespace nasperf

#endif  // NASPERF_COMMON_FILE_SET_H_
