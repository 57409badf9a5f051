#include "datapath/socket_writer.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/tcp.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstddef>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/clock.h"
#include "datapath/payload_source.h"

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

absl::StatusOr<size_t> SocketWriter::WriteFromFile(int file, uint64_t offset, size_t size, int64_t* source_ns) {
  if (pipe_broken_) return absl::FailedPreconditionError("an earlier send to the receiver failed");
  if (!pipe_) {
    // A pipe as big as a chunk moves it with one pair of calls; the default 64 KiB works too.
    absl::StatusOr<SplicePipe> opened = OpenSplicePipe(PayloadSource::kChunk);
    if (!opened.ok()) return opened.status();
    pipe_ = std::move(*opened);
  }
  loff_t at = static_cast<loff_t>(offset);
  const int64_t before = MonoNanos();
  ssize_t in;
  do {
    in = ::splice(file, &at, pipe_->write_end.get(), nullptr, std::min(size, pipe_->capacity), SPLICE_F_MOVE);
  } while (in < 0 && errno == EINTR);
  *source_ns += MonoNanos() - before;
  if (in < 0 && errno == EINVAL) return absl::UnimplementedError("this file cannot be spliced");
  if (in < 0) return ErrnoStatus(errno, "read the source file");
  if (in == 0) return absl::OutOfRangeError("the file shrank while being sent");
  for (size_t left = static_cast<size_t>(in); left > 0;) {
    ssize_t out = ::splice(pipe_->read_end.get(), nullptr, fd_, nullptr, left, SPLICE_F_MOVE | SPLICE_F_MORE);
    if (out < 0 && errno == EINTR) continue;
    if (out <= 0) {
      pipe_broken_ = true;
      return out < 0 ? ErrnoStatus(errno, "send to receiver")
                     : absl::UnavailableError("send to receiver: nothing sent");
    }
    left -= static_cast<size_t>(out);
  }
  return static_cast<size_t>(in);
}

}  // namespace nasperf
