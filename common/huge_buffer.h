// Memory for I/O that bypasses the page cache (O_DIRECT): one region, aligned to and
// advised for the kernel's 2 MiB transparent huge pages, touched once before use. A
// buffer of 4 KiB pages scattered in physical memory reaches the disk as one segment
// per page, and a device that takes 128 segments (a loop device, many SATA
// controllers) splits each 1 MiB write into two requests; huge pages keep a 1 MiB
// piece in 16 segments of 64 KiB. Owned by one thread at a time; not copyable.
#ifndef NASPERF_COMMON_HUGE_BUFFER_H_
#define NASPERF_COMMON_HUGE_BUFFER_H_

#include <cstddef>
#include <cstdint>

namespace nasperf {

class HugeBuffer {
 public:
  // `size` bytes (rounded up to 2 MiB), zero-filled. Falls back to ordinary pages
  // where the kernel has no huge pages for it; data() is null only when no memory was
  // to be had at all.
  explicit HugeBuffer(size_t size);
  ~HugeBuffer();
  HugeBuffer(const HugeBuffer&) = delete;
  HugeBuffer& operator=(const HugeBuffer&) = delete;

  uint8_t* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  uint8_t* mapping_ = nullptr;  // what mmap gave, data_ rounded up to 2 MiB inside it
  size_t mapped_ = 0;
  uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace nasperf

#endif  // NASPERF_COMMON_HUGE_BUFFER_H_
