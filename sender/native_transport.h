// The native transport (docs/DESIGN.md, the wire protocol): Hello and the path
// check at Start; per transfer OpenTransfer on the control port, the raw TCP push
// (sender/stream_pusher.h), and the receiver's own row; EndRun at Finish when the
// run cleans up at the end. Threading as sender/transport.h says.
#ifndef NASPERF_SENDER_NATIVE_TRANSPORT_H_
#define NASPERF_SENDER_NATIVE_TRANSPORT_H_

#include <memory>

#include "sender/sender.h"
#include "sender/transport.h"

namespace nasperf {

// `options` must outlive the transport.
std::unique_ptr<Transport> NewNativeTransport(const SenderOptions& options);

}  // namespace nasperf

#endif  // NASPERF_SENDER_NATIVE_TRANSPORT_H_
