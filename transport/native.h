// The native transport (docs/DESIGN.md §3, protocols): Hello and the path
// check at Start; per transfer OpenTransfer on the control port, the raw TCP push
// (datapath/stream_pusher.h), and the receiver's own row; EndRun at Finish when the
// run cleans up at the end. Threading as transport/transport.h says.
#ifndef NASPERF_TRANSPORT_NATIVE_H_
#define NASPERF_TRANSPORT_NATIVE_H_

#include <memory>

#include "transport/registry.h"

namespace nasperf {

// `options` and `context` must outlive the transport.
std::unique_ptr<Transport> NewNativeTransport(const RunOptions& options, const RunContext& context);
// Its registry entry.
TransportEntry NativeTransportEntry();

}  // namespace nasperf

#endif  // NASPERF_TRANSPORT_NATIVE_H_
