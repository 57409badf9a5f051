#include "common/huge_buffer.h"

#include <sys/mman.h>

#include <cstring>

namespace nasperf {
namespace {
constexpr size_t kHugePage = size_t{2} << 20;
}  // namespace

HugeBuffer::HugeBuffer(size_t size) {
  size_ = (size + kHugePage - 1) / kHugePage * kHugePage;
  mapped_ = size_ + kHugePage;  // room to start on a huge page's boundary
  void* mapping = ::mmap(nullptr, mapped_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mapping == MAP_FAILED) {
    size_ = mapped_ = 0;
    return;
  }
  mapping_ = static_cast<uint8_t*>(mapping);
  const uintptr_t at = reinterpret_cast<uintptr_t>(mapping_);
  data_ = mapping_ + ((kHugePage - at % kHugePage) % kHugePage);
  // Advice only: with transparent huge pages "never", or none free, the kernel gives
  // ordinary pages and the buffer works as an aligned_alloc one would.
  (void)::madvise(data_, size_, MADV_HUGEPAGE);
  std::memset(data_, 0, size_);  // fault it in now, not in the first timed write
}

HugeBuffer::~HugeBuffer() {
  if (mapping_ != nullptr) ::munmap(mapping_, mapped_);
}

}  // namespace nasperf
