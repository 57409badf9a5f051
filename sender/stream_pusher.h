// The sender's data path for the native transport (docs/DESIGN.md, the wire
// protocol): connect to the receiver's data port, write the header, push the payload
// through the shared loop (sender/push_loop.h; zero-copy with sendfile when nothing
// needs to see the bytes), half-close, and wait for the receiver's trailer. Times
// each step on the monotonic clock. One call per transfer; runs on the caller's thread.
#ifndef NASPERF_SENDER_STREAM_PUSHER_H_
#define NASPERF_SENDER_STREAM_PUSHER_H_

#include <cstdint>

#include "common/fd.h"
#include "common/wire.h"
#include "sender/payload_source.h"
#include "sender/push_loop.h"

namespace nasperf {

struct PushTarget {
  HostPort data;                 // the receiver's data port
  uint64_t transfer_id = 0;
  Ticket ticket{};
  uint64_t length = 0;
  bool send_footer = false;      // the receiver expects DataFooter after the payload
};

PushResult PushNative(const PushTarget& target, PayloadSource& source, const PushOptions& options);

}  // namespace nasperf

#endif  // NASPERF_SENDER_STREAM_PUSHER_H_
