#include "common/file_set.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/fd.h"
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

// The names in the directory open as `dir`, "." and ".." left out, sorted; `dir` stays
// the caller's (the stream reads a duplicate of it).
absl::StatusOr<std::vector<std::string>> SortedNames(int dir, const std::string& path) {
  Fd copy(::dup(dir));
  if (!copy.valid()) return ErrnoStatus(errno, absl::StrCat("dup ", path));
  DIR* stream = ::fdopendir(copy.get());
  if (stream == nullptr) return ErrnoStatus(errno, absl::StrCat("read ", path));
  copy.release();  // the stream owns it now
  std::vector<std::string> names;
  errno = 0;
  while (const dirent* entry = ::readdir(stream)) {
    const absl::string_view name = entry->d_name;
    if (name != "." && name != "..") names.emplace_back(name);
    errno = 0;
  }
  const int err = errno;
  ::closedir(stream);
  if (err != 0) return ErrnoStatus(err, absl::StrCat("read ", path));
  std::sort(names.begin(), names.end());
  return names;
}

// `relative`: `path` beneath the tree's top, "" at the top.
absl::Status WalkDirectory(int dir, const std::string& path, const std::string& relative, int depth, TreeSizes& tree) {
  if (depth > kMaxTreeDepth) {
    return absl::InvalidArgumentError(absl::StrCat(path, " is more than ", kMaxTreeDepth, " levels deep"));
  }
  absl::StatusOr<std::vector<std::string>> names = SortedNames(dir, path);
  if (!names.ok()) return names.status();
  for (const std::string& name : *names) {
    const std::string child = absl::StrCat(path, "/", name);
    struct stat st {};
    if (::fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      if (errno == ENOENT) continue;  // removed since the listing
      return ErrnoStatus(errno, absl::StrCat("stat ", child));
    }
    if (S_ISDIR(st.st_mode)) {
      // Opened, never followed: a directory swapped for a link since the stat fails here.
      Fd sub(::openat(dir, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      if (!sub.valid()) return ErrnoStatus(errno, absl::StrCat("open ", child));
      if (absl::Status s = WalkDirectory(sub.get(), child, absl::StrCat(relative, name, "/"), depth + 1, tree); !s.ok())
        return s;
    } else if (!S_ISREG(st.st_mode)) {
      ++tree.other_entries;
    } else if (st.st_size == 0) {
      ++tree.empty_files;
    } else if (static_cast<uint64_t>(st.st_size) > kMaxSetFileSize) {
      return absl::InvalidArgumentError(absl::StrCat(child, " is over 64 GiB"));
    } else if (tree.files.size() == kMaxSetFiles) {
      return absl::InvalidArgumentError(absl::StrCat("more than ", kMaxSetFiles, " files beneath it"));
    } else {
      tree.files.push_back(TreeFile{absl::StrCat(relative, name), static_cast<uint64_t>(st.st_dev),
                                    static_cast<uint64_t>(st.st_ino), static_cast<uint64_t>(st.st_size)});
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<TreeSizes> WalkTree(const std::string& dir) {
  Fd top(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!top.valid()) return ErrnoStatus(errno, absl::StrCat("open ", dir));
  TreeSizes tree;
  if (absl::Status s = WalkDirectory(top.get(), dir, "", 0, tree); !s.ok()) return s;
  return tree;
}

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
