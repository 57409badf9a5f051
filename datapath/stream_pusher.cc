#include "datapath/stream_pusher.h"

#include <errno.h>

#include <sys/socket.h>
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/clock.h"
#include "datapath/socket_writer.h"
#include "measure/netinfo.h"

namespace nasperf {
namespace {

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
  absl::Status sent = SendAll(sock.get(), header_bytes.data(), header_bytes.size(), MSG_MORE);
  if (sent.ok() && target.file_sizes != nullptr) {
    const std::vector<uint8_t> sizes = EncodeFileSizes(*target.file_sizes);
    sent = SendAll(sock.get(), sizes.data(), sizes.size(), MSG_MORE);
  }
  if (!sent.ok()) {
    result.status = sent;
    result.ack_ns = MonoNanos();
    return result;
  }
  SendOverConnection(sock.get(), source, target.length, target.send_footer, options, result);
  return result;
}

void SendOverConnection(int sock, PayloadSource& source, uint64_t length, bool send_footer, const PushOptions& options,
                        PushResult& result) {
  absl::Status sent;
  {
    SocketWriter writer(sock);
    LoopOutcome loop = PushLoop(source, length, options, writer, result);
    switch (loop.end) {
      case LoopEnd::kDone:
        break;
      case LoopEnd::kWriteFailed:
        sent = loop.status;
        break;
      case LoopEnd::kCancelled:
        // Closing without the half-close makes the receiver see a short stream: it
        // aborts the transfer and removes the partial file.
        ::shutdown(sock, SHUT_RDWR);
        [[fallthrough]];
      case LoopEnd::kSourceFailed:  // our own source failed: the receiver will abort
        result.status = loop.status;
        result.ack_ns = MonoNanos();
        return;
    }
  }
  if (sent.ok() && send_footer) {
    DataFooter footer;
    footer.source_wait_ns = static_cast<uint64_t>(result.source_ns);
    footer.send_ns = static_cast<uint64_t>(result.last_byte_ns - result.first_byte_ns);
    footer.source_wait_ns = std::min(footer.source_wait_ns, footer.send_ns);  // both on one clock; guard rounding
    footer.cpu_busy_pct = result.cpu_busy_pct;
    footer.cpu_quota_pct = result.cpu_quota_pct;
    auto footer_bytes = EncodeFooter(footer);
    sent = SendAll(sock, footer_bytes.data(), footer_bytes.size(), 0);
  }
  if (sent.ok()) ::shutdown(sock, SHUT_WR);

  absl::StatusOr<DataTrailer> trailer = ReadTrailer(sock, sent.ok() ? options.ack_timeout_s : 3.0);
  result.ack_ns = MonoNanos();
  if (trailer.ok()) {
    result.trailer = *trailer;
    result.status = absl::OkStatus();
    if (options.cpu_seen != nullptr) {
      options.cpu_seen->receiver_cpu_pct = trailer->cpu_busy_pct;
      options.cpu_seen->receiver_quota_pct = trailer->cpu_quota_pct;
    }
  } else {
    result.status = sent.ok() ? trailer.status() : sent;
  }
}

}  // namespace nasperf
