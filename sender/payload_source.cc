#include "sender/payload_source.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "common/fd.h"

namespace nasperf {
namespace {

class Generated : public PayloadSource {
 public:
  Generated(Pattern pattern, uint64_t seed) : pattern_(pattern, seed) {}
  absl::StatusOr<const uint8_t*> Chunk(uint64_t offset, size_t size) override {
    return pattern_.Next(offset, size);
  }

 private:
  PatternSource pattern_;
};

class File : public PayloadSource {
 public:
  File(Fd fd, std::string path)
      : fd_(std::move(fd)), path_(std::move(path)),
        buffer_(static_cast<uint8_t*>(std::aligned_alloc(4096, kChunk))) {
    posix_fadvise(fd_.get(), 0, 0, POSIX_FADV_SEQUENTIAL);
  }
  ~File() override { std::free(buffer_); }
  absl::StatusOr<const uint8_t*> Chunk(uint64_t offset, size_t size) override {
    size_t done = 0;
    while (done < size) {
      ssize_t n = ::pread(fd_.get(), buffer_ + done, size - done, static_cast<off_t>(offset + done));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return ErrnoStatus(errno, absl::StrCat("read ", path_));
      if (n == 0) return absl::OutOfRangeError(absl::StrCat(path_, " shrank while being sent"));
      done += static_cast<size_t>(n);
    }
    return buffer_;
  }
  int file_fd() const override { return fd_.get(); }

 private:
  Fd fd_;
  std::string path_;
  uint8_t* buffer_;
};

}  // namespace

std::unique_ptr<PayloadSource> GeneratedSource(Pattern pattern, uint64_t seed) {
  return std::make_unique<Generated>(pattern, seed);
}

absl::StatusOr<std::unique_ptr<PayloadSource>> FileSource(const std::string& path) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return ErrnoStatus(errno, absl::StrCat("open ", path));
  return std::unique_ptr<PayloadSource>(new File(std::move(fd), path));
}

}  // namespace nasperf
