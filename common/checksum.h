// Streaming XXH3-64 of a payload, for --verify: both ends hash what they moved and
// the sender compares. One instance per transfer, owned by one thread.
#ifndef NASPERF_COMMON_CHECKSUM_H_
#define NASPERF_COMMON_CHECKSUM_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace nasperf {

class StreamChecksum {
 public:
  StreamChecksum();
  ~StreamChecksum();
  StreamChecksum(const StreamChecksum&) = delete;
  StreamChecksum& operator=(const StreamChecksum&) = delete;

  void Update(const void* data, size_t size);
  uint64_t Digest() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

std::string ChecksumHex(uint64_t digest);

}  // namespace nasperf

#endif  // NASPERF_COMMON_CHECKSUM_H_
