#include "common/checksum.h"

#include "absl/strings/str_format.h"
#define XXH_STATIC_LINKING_ONLY
#include "xxhash.h"

namespace nasperf {

struct StreamChecksum::State {
  XXH3_state_t xxh;
};

StreamChecksum::StreamChecksum() : state_(std::make_unique<State>()) { XXH3_64bits_reset(&state_->xxh); }
StreamChecksum::~StreamChecksum() = default;

void StreamChecksum::Update(const void* data, size_t size) { XXH3_64bits_update(&state_->xxh, data, size); }

uint64_t StreamChecksum::Digest() const { return XXH3_64bits_digest(&state_->xxh); }

std::string ChecksumHex(uint64_t digest) { return absl::StrFormat("%016x", digest); }

}  // namespace nasperf
