// The sender's timed loop (`nasperf sender`): Hello, then for each iteration (warm-ups
// first) open one transfer per stream, push them in parallel, fetch the receiver's
// row, hand both rows to a ReportSink and print a console line each; a summary at
// the end. Transfer failures are recorded and the loop goes on. Run on one thread;
// it starts one thread per stream per iteration.
#ifndef NASPERF_SENDER_SENDER_H_
#define NASPERF_SENDER_SENDER_H_

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "transport/run_context.h"
#include "transport/run_options.h"
#include "transport/transport.h"
#include "wire/report_sink.h"

namespace nasperf {

// What a run asks for: the same for the loop (here) and the transports
// (transport/run_options.h), where it is declared.
using SenderOptions = RunOptions;

struct SenderOutcome {
  std::string run_id;
  int transfers = 0;  // sender rows written
  int failed = 0;     // not ok, warm-ups included
};

// Errors before the loop starts (unreachable receiver or SSH server, wrong token,
// refused host key or login, unreadable file) are returned; everything after is
// recorded in rows and counted. `options` is what the run asks; `context` the hooks
// and placement its caller lends it (transport/run_context.h).
absl::StatusOr<SenderOutcome> RunSender(const SenderOptions& options, const RunContext& context, ReportSink& sink,
                                        std::FILE* console);
// The same loop over a transport made elsewhere (a test's fake); options.transport
// only names it in the rows.
absl::StatusOr<SenderOutcome> RunSenderWith(const SenderOptions& options, const RunContext& context,
                                            Transport& transport, ReportSink& sink, std::FILE* console);

}  // namespace nasperf

#endif  // NASPERF_SENDER_SENDER_H_
