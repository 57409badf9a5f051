// The payload onto a connected TCP socket: `SendAll` for bytes in memory and
// `SocketWriter`, the push loop's ChunkWriter for a data connection: send(), or for
// a file splice() file → pipe → socket, no copy through us, and the two halves timed
// apart (a cold file's disk reads block the first, the network the second), which
// sendfile() could not tell. Whichever end sends bytes uses it: the sender today,
// the NAS agent for reads. One writer per socket and thread.
#ifndef NASPERF_DATAPATH_SOCKET_WRITER_H_
#define NASPERF_DATAPATH_SOCKET_WRITER_H_

#include <cstddef>
#include <cstdint>
#include <optional>

#include "absl/status/statusor.h"
#include "common/fd.h"
#include "datapath/push_loop.h"

namespace nasperf {

// Every byte, or the errno text; flags are added to MSG_NOSIGNAL (e.g. MSG_MORE).
absl::Status SendAll(int fd, const uint8_t* data, size_t size, int flags);

class SocketWriter : public ChunkWriter {
 public:
  explicit SocketWriter(int fd) : fd_(fd) {}
  absl::Status Write(const uint8_t* data, size_t size, uint64_t offset) override;
  bool ZeroCopy() const override { return true; }
  std::optional<uint64_t> Acknowledged() const override;
  absl::StatusOr<size_t> WriteFromFile(int file, uint64_t offset, size_t size, int64_t* source_ns) override;

 private:
  const int fd_;
  std::optional<SplicePipe> pipe_;  // made at the first file write
  bool pipe_broken_ = false;        // a send failed with bytes left in it
};

}  // namespace nasperf

#endif  // NASPERF_DATAPATH_SOCKET_WRITER_H_
