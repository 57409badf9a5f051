// A run as asked (proto::RunSpec: a lab job's, `nasperf sender`'s flags) made into
// the RunOptions the sender loop runs, under the local policy of the host that runs
// it: which files a peer may have read (--allow-source), which directories of this
// host its run may write in (--allow-path), and the token and the TLS trust, which
// never come from the spec. The one path every front end takes, so the
// checks a peer's run gets are written once. Plain functions: any thread.
#ifndef NASPERF_TRANSPORT_RUN_SPEC_H_
#define NASPERF_TRANSPORT_RUN_SPEC_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/allowed_source.h"
#include "proto/nasperf.pb.h"
#include "transport/registry.h"
#include "transport/run_options.h"
#include "wire/grpc_auth.h"

namespace nasperf {

struct LocalPolicy {
  // Who gave the spec. Origin::kUser's files pass as paths (the transport reads them
  // at make); any other origin's are opened beneath allowed_sources and read there.
  Origin origin = Origin::kUser;
  const std::vector<AllowedDirectory>* allowed_sources = nullptr;  // null: none (generated data only)
  std::string token;                                               // this host's, never the spec's
  std::shared_ptr<const PeerTrust> trust;                          // this host's, never the spec's
  // false: every check, but no file opened nor read (CheckRunSpec: a plan's run, whose
  // files are on its agent's host). Refused for Origin::kPeer: an agent always opens.
  bool open_files = true;
  // Not kUser: the directories a run whose `to` is a directory of this host
  // (TransportCaps::local_dir) may write in; `to` is opened beneath one of them and
  // handed to the config (TakeDirectory). Null: none (every such run is refused).
  const std::vector<AllowedDirectory>* allowed_paths = nullptr;
};

// `spec` checked and made into a run. A refusal is one line; *bad_field names the
// spec's field it is about ("to", "files", "window_bytes", ...; "transport_flags"
// for a transport flag, whose name begins the line). Checks, every one before any
// file is opened: the transport's word, flags and `to` by its entry (the parse for
// policy.origin); each file by its role ("ssh_identity", "ssh_known_hosts": a
// transport with TransportCaps::ssh_login; "credentials": credentials_file), once,
// absolute; direction, cache, read mode; write mode, sync, cleanup, verify and
// RefusalsFor; streams 1..kMaxStreams, runs, warm-ups, pause, interval, window, run
// id, the receiver's fingerprint; size xor file. A peer's spec names no remote_file,
// local_target nor direct_fallback (no job ever could). Then (not kUser) the payload
// and each file are opened by OpenAllowedSource and read through that descriptor
// only (a secret after KeepOutOfCoreDumps, at most 64 KiB and owner-only; known_hosts
// at most 1 MiB); a transport's directory of this host (TransportCaps::local_dir) by
// OpenAllowedPath beneath allowed_paths, and only that descriptor is used.
// Origin::kUser (the command line's flags, cli/sender_spec.h) may also ask what only a
// user may: transport_flags are [name, value] pairs of any flag the entry takes or
// borrows (a login file stays a path the transport opens at make; --ssh-config,
// --accept-new-host-key, --deploy-binary and the SFTP environment knobs by the entry's
// parse), remote_file (a plain name), local_target and direct_fallback; a write names
// none of a read's fields.
absl::StatusOr<RunOptions> MakeRunOptions(const proto::RunSpec& spec, const LocalPolicy& policy,
                                          std::string* bad_field);

// MakeRunOptions' checks, in its order, for a run checked where its files are not
// (the lab's controller, Origin::kPlan, checks each transfer's run as its agent will):
// every text check (absolute, bounded, printable paths; roles the transport takes),
// no file opened. Not for Origin::kPeer.
absl::Status CheckRunSpec(const proto::RunSpec& spec, Origin origin, std::string* bad_field);

// A MakeRunOptions refusal decided by RefusalsFor (what the transport cannot do):
// which ask and the transports that can, so a front end says it in its own words.
// nullopt for any other status.
std::optional<Refusal> TransportRefusalOf(const absl::Status& status);

}  // namespace nasperf

#endif  // NASPERF_TRANSPORT_RUN_SPEC_H_
