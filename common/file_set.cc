#include "common/file_set.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/units.h"

namespace nasperf {
namespace {

constexpr struct {
  const char* name;
  uint64_t min_bytes, max_bytes;
} kPresets[] = {
    {"photos", uint64_t{2} << 20, uint64_t{20} << 20},
    {"source-tree", 512, uint64_t{64} << 10},
};

absl::StatusOr<uint64_t> OneSize(absl::string_view text) {
  absl::StatusOr<uint64_t> size = ParseSize(text);
  if (!size.ok()) return size.status();
  if (*size == 0 || *size > kMaxSetFileSize) {
    return absl::InvalidArgumentError(absl::StrCat("--file-size ", text, ": each file must be 1 B..64 GiB"));
  }
  return size;
}

uint64_t SplitMix64(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

}  // namespace

absl::StatusOr<FileSizeDist> ParseFileSizeDist(absl::string_view text) {
  for (const auto& preset : kPresets) {
    if (text == preset.name) return FileSizeDist{preset.min_bytes, preset.max_bytes, preset.name};
  }
  std::vector<absl::string_view> parts = absl::StrSplit(text, '-');
  if (parts.empty() || parts.size() > 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("--file-size ", text, ": give SIZE, LOW-HIGH (log-uniform) or a preset (photos, source-tree)"));
  }
  absl::StatusOr<uint64_t> low = OneSize(parts[0]);
  if (!low.ok()) return low.status();
  absl::StatusOr<uint64_t> high = parts.size() == 2 ? OneSize(parts[1]) : low;
  if (!high.ok()) return high.status();
  if (*high < *low || (parts.size() == 2 && *high == *low)) {
    return absl::InvalidArgumentError(absl::StrCat("--file-size ", text, ": the low size must be under the high one"));
  }
  return FileSizeDist{*low, *high, std::string(text)};
}

std::vector<uint64_t> FileSetSizes(const FileSizeDist& dist, uint64_t count, uint64_t seed) {
  std::vector<uint64_t> sizes;
  sizes.reserve(count);
  uint64_t state = seed;
  const double log_low = std::log(static_cast<double>(dist.min_bytes));
  const double log_span = std::log(static_cast<double>(dist.max_bytes)) - log_low;
  for (uint64_t i = 0; i < count; ++i) {
    if (dist.max_bytes == dist.min_bytes) {
      sizes.push_back(dist.min_bytes);
      continue;
    }
    const double unit = static_cast<double>(SplitMix64(state) >> 11) / static_cast<double>(uint64_t{1} << 53);
    const auto size = static_cast<uint64_t>(std::llround(std::exp(log_low + unit * log_span)));
    sizes.push_back(std::clamp(size, dist.min_bytes, dist.max_bytes));
  }
  return sizes;
}

}  // namespace nasperf
