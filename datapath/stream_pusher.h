// The sending side of the agent wire's data path (docs/DESIGN.md §3.1, data port):
// connect to the receiver's data port and write the header (PushNative), then push
// the payload through the shared loop (datapath/push_loop.h; zero-copy by splice when
// nothing needs to see the bytes), write the footer, half-close, and wait for the
// other end's trailer (SendOverConnection: also the NAS agent's half of a read, on
// the connection the client opened). Times each step on the monotonic clock. One
// call per transfer; runs on the caller's thread.
#ifndef NASPERF_DATAPATH_STREAM_PUSHER_H_
#define NASPERF_DATAPATH_STREAM_PUSHER_H_

#include <cstdint>
#include <vector>

#include "common/fd.h"
#include "datapath/payload_source.h"
#include "datapath/push_loop.h"
#include "wire/wire.h"

namespace nasperf {

// The transport word of a transfer over this wire (nasperf's own data port): the
// receiver's rows say it, and the transport registry's entry for it is named by it.
inline constexpr char kWireTransport[] = "native";

struct PushTarget {
  HostPort data;  // the receiver's data port
  uint64_t transfer_id = 0;
  Ticket ticket{};
  uint64_t length = 0;
  bool send_footer = false;  // the receiver expects DataFooter after the payload
  // --tree: the set's sizes, sent right after the header (wire/wire.h EncodeFileSizes).
  const std::vector<uint64_t>* file_sizes = nullptr;
};

PushResult PushNative(const PushTarget& target, PayloadSource& source, const PushOptions& options);

// On a connected socket whose header phase is done: `length` bytes of `source`, the
// footer when `send_footer`, the half-close, and the trailer (result.trailer). Fills
// result's timings from the first payload byte on; result.status is OK only with a
// trailer.
void SendOverConnection(int sock, PayloadSource& source, uint64_t length, bool send_footer, const PushOptions& options,
                        PushResult& result);

}  // namespace nasperf

#endif  // NASPERF_DATAPATH_STREAM_PUSHER_H_
