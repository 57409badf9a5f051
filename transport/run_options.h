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
#include <vector>

#include "absl/time/time.h"
#include "common/fd.h"
#include "common/file_set.h"
#include "common/payload.h"
#include "common/policy.h"
#include "datapath/stream_pusher.h"
#include "wire/grpc_auth.h"

namespace nasperf {

class TransportConfig;  // transport/registry.h

struct RunOptions {
  std::string transport = kWireTransport;  // an entry's word (transport/registry.h)
  std::string token;
  std::string file;  // send this file, or
  // When set, `file` was opened once where it was checked (an agent's
  // --allow-source): every read dups this and the name is never opened again.
  std::shared_ptr<const Fd> file_fd;
  uint64_t size = 0;  // generated data of this size (a many-files run: the set's total)
  // --files: each transfer writes these files one after another (common/file_set.h),
  // generated data (--tree: the tree's own bytes); null: one file of `size`. The same
  // sizes for every stream and run.
  std::shared_ptr<const std::vector<uint64_t>> file_sizes;
  uint64_t files_per_dir = 0;  // --files-per-dir: a new directory each this many files; 0 none
  std::string file_size_text;  // the distribution as given (--file-size); kTreeFileSize for --tree
  std::string tree;            // --tree DIR: the set is its files, read from there
  std::shared_ptr<const std::vector<TreeFile>> tree_files;  // --tree: its files (file_sizes holds their sizes)
  uint64_t tree_left_out = 0;  // --tree: its empty files, links and other entries, not copied
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
  std::shared_ptr<const PeerTrust> trust;  // TLS toward the receiver (wire/tls.h); null = plain
  std::string receiver_fingerprint;        // the receiver must show this key (lab); empty: trust decides
  // What the entry's parse made of `to`, its flags and files (registry.h): where the
  // far end is and how to reach it, read by that entry's make only (ConfigOf). Null:
  // the make refuses (a run built without its entry's parse).
  std::shared_ptr<const TransportConfig> config;
};

}  // namespace nasperf

#endif  // NASPERF_TRANSPORT_RUN_OPTIONS_H_
