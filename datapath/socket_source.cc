#include "datapath/socket_source.h"

#include <errno.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>
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

std::optional<uint64_t> SocketSource::Queued() const {
  int queued = 0;
  if (::ioctl(fd_, SIOCINQ, &queued) != 0 || queued < 0) return std::nullopt;
  return static_cast<uint64_t>(queued);
}

}  // namespace nasperf
