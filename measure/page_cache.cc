#include "measure/page_cache.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/fd.h"

namespace nasperf {

namespace {
constexpr long kZfsSuperMagic = 0x2fc12fc1;
constexpr char kZfsModuleVersion[] = "/sys/module/zfs/version";  // "2.3.0-1" on Linux
constexpr size_t kReadThroughChunk = 1 << 20;
}  // namespace

absl::StatusOr<double> ResidentPct(int fd, uint64_t length, const std::string& path) {
  if (length == 0) return 100.0;
  void* map = ::mmap(nullptr, length, PROT_READ, MAP_SHARED, fd, 0);
  if (map == MAP_FAILED) return ErrnoStatus(errno, absl::StrCat("map ", path));
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> pages((length + page - 1) / page);
  const int rc = ::mincore(map, length, pages.data());
  const int err = errno;
  ::munmap(map, length);
  if (rc != 0) return ErrnoStatus(err, absl::StrCat("mincore ", path));
  const size_t resident =
      static_cast<size_t>(std::count_if(pages.begin(), pages.end(), [](unsigned char p) { return (p & 1) != 0; }));
  return 100.0 * static_cast<double>(resident) / static_cast<double>(pages.size());
}

absl::Status DropCachedPages(int fd, const std::string& path) {
  // Dirty pages cannot be dropped: write them first.
  if (::fdatasync(fd) != 0 && errno != EINVAL && errno != EROFS) {
    return ErrnoStatus(errno, absl::StrCat("fdatasync ", path));
  }
  if (int err = ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED); err != 0) {
    return ErrnoStatus(err, absl::StrCat("drop the cached pages of ", path));
  }
  return absl::OkStatus();
}

absl::Status ReadThrough(int fd, uint64_t length, const std::string& path) {
  std::unique_ptr<uint8_t[]> buffer(new uint8_t[kReadThroughChunk]);
  for (uint64_t done = 0; done < length;) {
    ssize_t n = ::pread(fd, buffer.get(), static_cast<size_t>(std::min<uint64_t>(kReadThroughChunk, length - done)),
                        static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoStatus(errno, absl::StrCat("read ", path));
    if (n == 0) return absl::OutOfRangeError(absl::StrCat(path, " is shorter than ", length, " bytes"));
    done += static_cast<uint64_t>(n);
  }
  return absl::OkStatus();
}

absl::Status ReadPastCache(int fd, const std::string& path) {
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0) return ErrnoStatus(errno, absl::StrCat("fcntl ", path));
  if (::fcntl(fd, F_SETFL, flags | O_DIRECT) != 0) {
    if (errno == EINVAL) {
      return absl::FailedPreconditionError(absl::StrCat(
          "the file system of ", path, " refuses O_DIRECT reads: use --read-mode buffered (and --cache cold)"));
    }
    return ErrnoStatus(errno, absl::StrCat("fcntl O_DIRECT ", path));
  }
  return absl::OkStatus();
}

bool ZfsHonoursDirectIo(absl::string_view module_version) {
  int major = 0, minor = 0;
  const std::string text(module_version.substr(0, 32));
  if (std::sscanf(text.c_str(), "%d.%d", &major, &minor) != 2) return false;
  return major > 2 || (major == 2 && minor >= 3);
}

std::string ColdCacheCaveat(int fd, ReadMode mode) {
  struct statfs fs {};
  if (::fstatfs(fd, &fs) != 0 || static_cast<long>(fs.f_type) != kZfsSuperMagic) return "";
  if (mode == ReadMode::kBuffered) {
    return "this target is ZFS, whose ARC is not the page cache: dropping the file's pages does not make it cold. "
           "Use --read-mode direct on OpenZFS 2.3+, a file larger than the ARC, or a test dataset with "
           "`zfs set primarycache=metadata`";
  }
  std::string version;  // its first word; empty when the file is not there
  std::ifstream(kZfsModuleVersion) >> version;
  if (ZfsHonoursDirectIo(version)) return "";
  return absl::StrCat(
      "this target is ZFS ", version.empty() ? "of unknown version" : version,
      ", which takes O_DIRECT but reads through its ARC before OpenZFS 2.3: the read may come from RAM. "
      "Use a file larger than the ARC, or a test dataset with `zfs set primarycache=metadata`");
}

}  // namespace nasperf
