// Payload bytes from a connected TCP socket, as the write pipeline's ByteSource. A
// receive timeout set on the socket (SetReceiveTimeout) ends a silent peer with
// DEADLINE_EXCEEDED. Whichever end takes bytes uses it: the receiver today, the
// client for reads. One source per socket and thread.
#ifndef NASPERF_DATAPATH_SOCKET_SOURCE_H_
#define NASPERF_DATAPATH_SOCKET_SOURCE_H_

#include "datapath/write_pipeline.h"

namespace nasperf {

class SocketSource : public ByteSource {
 public:
  explicit SocketSource(int fd) : fd_(fd) {}
  absl::StatusOr<size_t> Read(uint8_t* data, size_t size) override;
  int SpliceFd() const override { return fd_; }
  std::optional<uint64_t> Queued() const override;

 private:
  const int fd_;
};

}  // namespace nasperf

#endif  // NASPERF_DATAPATH_SOCKET_SOURCE_H_
