#include "sender/socket_writer.h"

#include <errno.h>
#include <sys/sendfile.h>
#include <sys/socket.h>

#include "common/fd.h"

namespace nasperf {

absl::Status SendAll(int fd, const uint8_t* data, size_t size, int flags) {
  while (size > 0) {
    ssize_t n = ::send(fd, data, size, flags | MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus(errno, "send to receiver");
    }
    data += n;
    size -= static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

absl::Status SocketWriter::Write(const uint8_t* data, size_t size, uint64_t) { return SendAll(fd_, data, size, 0); }

absl::StatusOr<size_t> SocketWriter::WriteFromFile(int file, uint64_t offset, size_t size) {
  off_t at = static_cast<off_t>(offset);
  ssize_t n;
  do {
    n = ::sendfile(fd_, file, &at, size);
  } while (n < 0 && errno == EINTR);
  if (n < 0) return ErrnoStatus(errno, "sendfile to receiver");
  if (n == 0) return absl::OutOfRangeError("the file shrank while being sent");
  return static_cast<size_t>(n);
}

}  // namespace nasperf
