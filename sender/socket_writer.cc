#include "sender/socket_writer.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/tcp.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstddef>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/clock.h"
#include "sender/payload_source.h"

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

std::optional<uint64_t> SocketWriter::Acknowledged() const {
  tcp_info info{};
  socklen_t size = sizeof info;
  // tcpi_bytes_acked came with Linux 4.1: an older kernel's shorter answer lacks it.
  if (::getsockopt(fd_, IPPROTO_TCP, TCP_INFO, &info, &size) != 0 ||
      size < offsetof(tcp_info, tcpi_bytes_acked) + sizeof info.tcpi_bytes_acked) {
    return std::nullopt;
  }
  return info.tcpi_bytes_acked;
}

absl::Status SocketWriter::OpenPipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return ErrnoStatus(errno, "pipe for splice");
  pipe_read_ = Fd(fds[0]);
  pipe_write_ = Fd(fds[1]);
  // A bigger pipe moves a whole chunk per pair of calls; the default 64 KiB works too.
  (void)::fcntl(pipe_write_.get(), F_SETPIPE_SZ, static_cast<int>(PayloadSource::kChunk));
  const int capacity = ::fcntl(pipe_write_.get(), F_GETPIPE_SZ);
  pipe_bytes_ = capacity > 0 ? static_cast<size_t>(capacity) : 65536;
  return absl::OkStatus();
}

absl::StatusOr<size_t> SocketWriter::WriteFromFile(int file, uint64_t offset, size_t size, int64_t* source_ns) {
  if (pipe_broken_) return absl::FailedPreconditionError("an earlier send to the receiver failed");
  if (!pipe_write_.valid()) {
    if (absl::Status s = OpenPipe(); !s.ok()) return s;
  }
  loff_t at = static_cast<loff_t>(offset);
  const int64_t before = MonoNanos();
  ssize_t in;
  do {
    in = ::splice(file, &at, pipe_write_.get(), nullptr, std::min(size, pipe_bytes_), SPLICE_F_MOVE);
  } while (in < 0 && errno == EINTR);
  *source_ns += MonoNanos() - before;
  if (in < 0 && errno == EINVAL) return absl::UnimplementedError("this file cannot be spliced");
  if (in < 0) return ErrnoStatus(errno, "read the source file");
  if (in == 0) return absl::OutOfRangeError("the file shrank while being sent");
  for (size_t left = static_cast<size_t>(in); left > 0;) {
    ssize_t out = ::splice(pipe_read_.get(), nullptr, fd_, nullptr, left, SPLICE_F_MOVE | SPLICE_F_MORE);
    if (out < 0 && errno == EINTR) continue;
    if (out <= 0) {
      pipe_broken_ = true;
      return out < 0 ? ErrnoStatus(errno, "send to receiver") : absl::UnavailableError("send to receiver: nothing sent");
    }
    left -= static_cast<size_t>(out);
  }
  return static_cast<size_t>(in);
}

}  // namespace nasperf
