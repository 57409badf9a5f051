// Everything a run of the sender loop asks for (`nasperf sender`, or one job of a lab
// agent): what to send or read, how often, where, and how the far end should write; its
// hooks and a lab job's placement are a RunContext (run_context.h). The CLI and the lab
// fill it, the loop and every transport read it: a plain value, shared read-only.
#ifndef NASPERF_TRANSPORT_RUN_OPTIONS_H_
#define NASPERF_TRANSPORT_RUN_OPTIONS_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "absl/time/time.h"
#include "common/fd.h"
#include "common/grpc_auth.h"
#include "common/payload.h"
#include "common/policy.h"
#include "datapath/stream_pusher.h"
#include "ssh/ssh_options.h"

namespace nasperf {

class TransportConfig;  // transport/registry.h

// A share reached by URL with no agent and no kernel mount on the client (nfs://, smb://).
struct ShareOptions {
  std::string url;              // --to as given; the transport parses and checks it
  int in_flight = 16;           // --nfs-in-flight: requests kept outstanding per stream, as the kernel client does
  int timeout_s = 20;           // --nfs-timeout (SMB: always 20 s): an unanswered request fails the transfer
  std::string smb_credentials;  // --smb-credentials: a mount.cifs-style file only its owner may read
  // Set: that file's bytes, read once through the descriptor an agent checked
  // (--allow-source); the transport parses these and never opens the name again.
  std::optional<std::string> credentials_text;
  std::string smb_encrypt = "default";    // --smb-encrypt default|off|desired|required
  std::string smb_signing = "default";    // --smb-signing default|off|desired|required (client signing)
  std::string smb_min_protocol = "SMB3";  // --smb-min-protocol: the oldest dialect allowed
  uint64_t smb_write_size = 8 << 20;      // --smb-write-size: bytes per SMB WRITE (libsmbclient waits for each)
  int smb_channels = 1;                   // --smb-channels: connections per stream, one WRITE in flight on each
};

struct RunOptions {
  std::string transport = kWireTransport;  // an entry's word (transport/registry.h)
  HostPort to{"", kAgentPort};             // native: the receiver's control port
  SshOptions ssh;                          // scp, sftp: destination, keys, host key policy
  ShareOptions share;                      // nfs: the URL and the client's knobs
  std::string token;
  std::string file;  // send this file, or
  // When set, `file` was opened once where it was checked (an agent's
  // --allow-source): every read dups this and the name is never opened again.
  std::shared_ptr<const Fd> file_fd;
  uint64_t size = 0;  // generated data of this size
  Pattern pattern = Pattern::kRandom;
  int runs = 1;
  int warmup = 0;
  int streams = 1;
  absl::Duration pause = absl::ZeroDuration();
  std::string label;
  std::string run_id;  // empty: generated
  WriteMode write_mode = WriteMode::kBuffered;
  SyncPolicy sync_policy;          // default: end
  std::optional<Cleanup> cleanup;  // none: the receiver's default (over SSH: each)
  bool verify = false;
  // Reads (--direction read): the NAS agent streams a file of its target to us.
  Direction direction = Direction::kWrite;
  CacheState cache = CacheState::kCold;      // the NAS's page cache before each run
  ReadMode read_mode = ReadMode::kBuffered;  // how the NAS agent reads: page cache or O_DIRECT
  std::string remote_file;                   // read this existing file of the target; empty: lay one out of --size
  std::string local_target;  // write what arrives here (write mode, sync, cleanup apply); empty: discard
  double interval_s = 1.0;
  uint32_t link_mbps = 0;                  // --link-speed: overrides what the NIC reports (veth, shaping)
  uint64_t window_bytes = 0;               // --window: fixed socket buffers; 0 = sized to the path
  bool direct_fallback = false;            // --direct-fallback: buffered when the target refuses O_DIRECT
  std::shared_ptr<const PeerTrust> trust;  // TLS toward the receiver (common/tls.h); null = plain
  std::string receiver_fingerprint;        // the receiver must show this key (lab); empty: trust decides
  // What the entry's parse made of `to` and its flags (registry.h); null where the
  // entry has no parse yet or the run was built field by field (a lab job with an
  // agent or an SSH login at the far end).
  std::shared_ptr<const TransportConfig> config;
};

}  // namespace nasperf

#endif  // NASPERF_TRANSPORT_RUN_OPTIONS_H_
