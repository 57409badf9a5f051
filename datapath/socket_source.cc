#include "datapath/socket_source.h"

#include <errno.h>
#include <sys/socket.h>

#include "common/fd.h"

namespace nasperf {

absl::StatusOr<size_t> SocketSource::Read(uint8_t* data, size_t size) {
  while (true) {
    ssize_t n = ::recv(fd_, data, size, 0);
    if (n >= 0) return static_cast<size_t>(n);
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      return absl::DeadlineExceededError("no data from the sender within --idle-timeout");
    }
    return ErrnoStatus(errno, "receive from sender");
  }
}

}  // namespace nasperf
