// The native transport (docs/DESIGN.md §3, protocols): Hello and the path
// check at Start; per transfer OpenTransfer on the control port, the raw TCP push
// (datapath/stream_pusher.h), and the receiver's own row; EndRun at Finish when the
// run cleans up at the end. Threading as transport/transport.h says.
#ifndef NASPERF_TRANSPORT_NATIVE_H_
#define NASPERF_TRANSPORT_NATIVE_H_

#include <memory>
#include <string>

#include "transport/registry.h"

namespace nasperf {

// `options` and `context` must outlive the transport.
std::unique_ptr<Transport> NewNativeTransport(const RunOptions& options, const RunContext& context);
// Its registry entry.
TransportEntry NativeTransportEntry();
// The entry's parse and begin (transport/native_deploy.cc): --to HOST[:PORT], or
// [user@]host:/dir to start a receiver there over SSH for the run (the command line's
// only; with the SSH login flags and --deploy-binary), stopped by the scope's End().
absl::StatusOr<std::unique_ptr<TransportConfig>> ParseNativeTo(const std::string& to, const ParsedFlags& flags,
                                                               Origin origin, std::string* bad_field);
absl::StatusOr<std::unique_ptr<RunScope>> BeginNativeRun(RunOptions& options, const ConsoleLine& say);

}  // namespace nasperf

#endif  // NASPERF_TRANSPORT_NATIVE_H_
