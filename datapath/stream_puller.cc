#include "datapath/stream_puller.h"

#include <sys/socket.h>

#include "common/clock.h"
#include "datapath/rows.h"
#include "datapath/socket_source.h"
#include "datapath/socket_writer.h"
#include "measure/netinfo.h"

namespace nasperf {

PullResult PullNative(const PushTarget& target, BlockWriter* writer, const PipelineOptions& options,
                      uint64_t window_bytes, uint32_t max_segment) {
  PullResult result;
  result.start_ns = MonoNanos();
  absl::StatusOr<Fd> connected = ConnectTcp(target.data, 10, max_segment);
  if (!connected.ok()) {
    result.status = connected.status();
    return result;
  }
  Fd sock = std::move(*connected);
  result.mss = SocketMss(sock.get());
  if (window_bytes > 0) SetSocketBuffer(sock.get(), SO_RCVBUF, window_bytes);
  DataHeader header;
  header.transfer_id = target.transfer_id;
  header.ticket = target.ticket;
  header.payload_length = target.length;
  auto header_bytes = EncodeHeader(header);
  if (absl::Status sent = SendAll(sock.get(), header_bytes.data(), header_bytes.size(), 0); !sent.ok()) {
    result.status = sent;
    return result;
  }
  // The agent reads and syncs nothing before its first byte but the cache check; a
  // minute of silence means it is gone.
  SetReceiveTimeout(sock.get(), 60);
  SocketSource source(sock.get());
  result.pipeline = RunPipeline(source, writer, target.length, options);
  if (result.pipeline.end == PipelineEnd::kOk) {
    uint8_t bytes[kFooterSize];
    absl::StatusOr<size_t> got = ReadFull(sock.get(), bytes, sizeof bytes, "read footer");
    if (got.ok() && *got == kFooterSize) {
      if (auto footer = DecodeFooter(bytes, sizeof bytes); footer.ok()) result.footer = *footer;
    }
  }
  auto trailer = EncodeTrailer(TrailerFor(result.pipeline));
  (void)SendAll(sock.get(), trailer.data(), trailer.size(), 0);  // the agent may be gone
  return result;
}

}  // namespace nasperf
