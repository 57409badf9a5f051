// The NAS agent's half of a read (docs/DESIGN.md §6, measurement semantics: Reads): PrepareRead lays out
// or finds the file a read streams and sets its cache state (untimed); ServeRead
// streams it over the data connection the client opened and the agent admitted,
// through the push loop (splice file → pipe → socket, the file half timed as the
// NAS's disk), writes the footer and waits for the client's trailer. Called from the
// receiver's RPC and connection threads; no state of its own.
#ifndef NASPERF_RECEIVER_READ_SESSION_H_
#define NASPERF_RECEIVER_READ_SESSION_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "datapath/push_loop.h"
#include "datapath/target.h"
#include "proto/nasperf.pb.h"
#include "receiver/transfer_table.h"

namespace nasperf {

// The file the request names (an existing one in the target), or the one it lays out
// (nasperf-read-RUN-STREAM.dat, the generated payload, synced), then the cache state:
// cold drops the file's pages, warm reads it through once. A file already there under
// the laid-out name is read again only when `reuse_existing` (this receiver laid it
// out, or it serves existing files): anyone may name a file nasperf-read-*. A file
// that is not there yet is written only after `admit(size)` said yes. *laid_out:
// this call wrote the file (it goes when the run ends, per cleanup).
using LayOutAdmission = std::function<absl::Status(uint64_t size)>;
absl::StatusOr<proto::PrepareReadReply> PrepareRead(Target& target, const proto::PrepareReadRequest& request,
                                                    bool reuse_existing, const LayOutAdmission& admit, bool* laid_out);

// The name PrepareRead lays a stream's file out under.
std::string ReadFileName(const std::string& run_id, int stream);
// The refusal for an existing file when the receiver does not serve them.
absl::Status ExistingFilesNotServed(const std::string& name);

struct ServedRead {
  PushResult push;
  double resident_pct = -1;  // the file's pages in the page cache as the run began
};

// Streams plan.request.read_file() on `sock` (its header already admitted) and waits
// up to ack_timeout_s for the client's trailer. `cancel`: the receiver is stopping.
ServedRead ServeRead(int sock, const TransferPlan& plan, const Target& target, const std::atomic<bool>* cancel);

}  // namespace nasperf

#endif  // NASPERF_RECEIVER_READ_SESSION_H_
