#include "sender/stream_pusher.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "common/checksum.h"
#include "common/clock.h"
#include "common/netinfo.h"

namespace nasperf {
namespace {

constexpr size_t kChunk = PatternSource::kChunk;

class Generated : public PayloadSource {
 public:
  Generated(Pattern pattern, uint64_t seed) : pattern_(pattern, seed) {}
  absl::StatusOr<const uint8_t*> Chunk(uint64_t offset, size_t size) override {
    return pattern_.Next(offset, size);
  }

 private:
  PatternSource pattern_;
};

class File : public PayloadSource {
 public:
  File(Fd fd, std::string path)
      : fd_(std::move(fd)), path_(std::move(path)),
        buffer_(static_cast<uint8_t*>(std::aligned_alloc(4096, kChunk))) {
    posix_fadvise(fd_.get(), 0, 0, POSIX_FADV_SEQUENTIAL);
  }
  ~File() override { std::free(buffer_); }
  absl::StatusOr<const uint8_t*> Chunk(uint64_t offset, size_t size) override {
    size_t done = 0;
    while (done < size) {
      ssize_t n = ::pread(fd_.get(), buffer_ + done, size - done, static_cast<off_t>(offset + done));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return ErrnoStatus(errno, absl::StrCat("read ", path_));
      if (n == 0) return absl::OutOfRangeError(absl::StrCat(path_, " shrank while being sent"));
      done += static_cast<size_t>(n);
    }
    return buffer_;
  }
  int sendfile_fd() const override { return fd_.get(); }

 private:
  Fd fd_;
  std::string path_;
  uint8_t* buffer_;
};

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

// Reads the receiver's trailer; after a send error only briefly, since a receiver
// that failed answers right away and one that died never will.
absl::StatusOr<DataTrailer> ReadTrailer(int fd, double timeout_s) {
  SetReceiveTimeout(fd, timeout_s);
  uint8_t bytes[kTrailerSize];
  absl::StatusOr<size_t> got = ReadFull(fd, bytes, sizeof bytes, "read trailer");
  if (!got.ok()) {
    if (absl::IsDeadlineExceeded(got.status())) {
      return absl::DeadlineExceededError(
          absl::StrCat("no answer from the receiver within ", timeout_s, " s after the last byte"));
    }
    return got.status();
  }
  if (*got < kTrailerSize) {
    return absl::UnavailableError("receiver closed the data connection without an answer");
  }
  return DecodeTrailer(bytes, sizeof bytes);
}

}  // namespace

std::unique_ptr<PayloadSource> GeneratedSource(Pattern pattern, uint64_t seed) {
  return std::make_unique<Generated>(pattern, seed);
}

absl::StatusOr<std::unique_ptr<PayloadSource>> FileSource(const std::string& path) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return ErrnoStatus(errno, absl::StrCat("open ", path));
  return std::unique_ptr<PayloadSource>(new File(std::move(fd), path));
}

PushResult PushNative(const PushTarget& target, PayloadSource& source, const PushOptions& options) {
  PushResult result;
  result.start_wall_ns = WallNanos();
  result.start_ns = MonoNanos();
  absl::StatusOr<Fd> connected = ConnectTcp(target.data, 10, options.max_segment);
  if (!connected.ok()) {
    result.status = connected.status();
    return result;
  }
  Fd sock = std::move(*connected);
  result.mss = SocketMss(sock.get());
  if (options.window_bytes > 0) SetSocketBuffer(sock.get(), SO_SNDBUF, options.window_bytes);

  DataHeader header;
  header.transfer_id = target.transfer_id;
  header.ticket = target.ticket;
  header.payload_length = target.length;
  auto header_bytes = EncodeHeader(header);
  absl::Status status = SendAll(sock.get(), header_bytes.data(), header_bytes.size(), MSG_MORE);

  std::unique_ptr<StreamChecksum> checksum;
  if (options.checksum) checksum = std::make_unique<StreamChecksum>();
  const bool zero_copy = !options.checksum && source.sendfile_fd() >= 0;
  result.first_byte_ns = MonoNanos();
  IntervalSampler sampler(options.interval_s, result.first_byte_ns);
  while (status.ok() && result.bytes_sent < target.length) {
    if (options.cancel != nullptr && options.cancel->load(std::memory_order_relaxed)) {
      // Closing without the half-close makes the receiver see a short stream: it
      // aborts the transfer and removes the partial file.
      result.last_byte_ns = MonoNanos();
      result.ack_ns = result.last_byte_ns;
      result.status = absl::CancelledError("aborted by the lab controller");
      ::shutdown(sock.get(), SHUT_RDWR);
      return result;
    }
    size_t size = static_cast<size_t>(std::min<uint64_t>(kChunk, target.length - result.bytes_sent));
    if (zero_copy) {
      off_t offset = static_cast<off_t>(result.bytes_sent);
      ssize_t n = ::sendfile(sock.get(), source.sendfile_fd(), &offset, size);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        status = n < 0 ? ErrnoStatus(errno, "sendfile to receiver")
                       : absl::OutOfRangeError("the file shrank while being sent");
        break;
      }
      size = static_cast<size_t>(n);
    } else {
      int64_t before = MonoNanos();
      absl::StatusOr<const uint8_t*> chunk = source.Chunk(result.bytes_sent, size);
      result.source_ns += MonoNanos() - before;
      if (!chunk.ok()) {
        result.status = chunk.status();  // our own source failed: the receiver will abort
        result.ack_ns = MonoNanos();
        return result;
      }
      if (checksum) checksum->Update(*chunk, size);
      status = SendAll(sock.get(), *chunk, size, 0);
      if (!status.ok()) break;
    }
    result.bytes_sent += size;
    sampler.Add(size, MonoNanos());
    if (options.progress != nullptr) options.progress->fetch_add(size, std::memory_order_relaxed);
  }
  result.last_byte_ns = MonoNanos();
  sampler.Finish(result.last_byte_ns);
  result.samples = sampler.samples();
  if (checksum) {
    result.has_checksum = true;
    result.checksum = checksum->Digest();
  }
  if (status.ok()) ::shutdown(sock.get(), SHUT_WR);

  absl::StatusOr<DataTrailer> trailer =
      ReadTrailer(sock.get(), status.ok() ? options.ack_timeout_s : 3.0);
  result.ack_ns = MonoNanos();
  if (trailer.ok()) {
    result.trailer = *trailer;
    result.status = absl::OkStatus();
  } else {
    result.status = status.ok() ? trailer.status() : status;
  }
  return result;
}

}  // namespace nasperf
