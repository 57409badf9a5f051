// `nasperf sender`'s flags as CLI11 fills them, and their flat copy into the one
// proto::RunSpec a run is made from (transport/run_spec.h MakeRunOptions, the lab
// agent's path too). Main thread, while the command starts.
#pragma once

#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "cli/flags.h"
#include "cli/observer.h"
#include "proto/nasperf.pb.h"
#include "transport/registry.h"
#include "transport/run_options.h"

namespace nasperf::cli {

struct SenderFlags {
  std::string to, file, size, pattern = "random", pause = "0s", label, run_id, cleanup, out = "./nasperf-results",
                              interval = "1s", token_file, link_speed, window, resume;
  std::string write_mode = Name(WriteMode::kBuffered), sync = SyncPolicyName({});
  std::string transport = DefaultTransport(), deploy_binary;
  std::string direction = Name(Direction::kWrite), cache, read_mode, remote_file, local_target;
  std::string file_size;                      // --file-size, with --files
  uint64_t files = 0;                         // --files: many files per transfer
  uint64_t files_per_dir = 0;                 // --files-per-dir, with --files or --tree
  std::string tree;                           // --tree DIR: many files, its files
  FlagScratch from_transport_flags;           // where the transports' own flags are bound (read back as words)
  std::vector<CLI::Option*> transport_flags;  // those flags (TransportEntry::add_flags), in --help order
  int runs = 1, warmup = 0, streams = 1;
  bool verify = false, no_progress = false, direct_fallback = false;
  ReportingFlags reporting;
  ObserverFlags observer;
};

// The flags as a spec, field for field: a size, duration or speed parsed (a bad one
// is UsageError's line and exit 2, "--size 0" too; "--window 0" is none), each
// transport flag given and --deploy-binary as the words [name, value] (a switch's
// value as CLI11 keeps it). Files stay paths the transport opens itself. No other
// check: MakeRunOptions makes them all.
proto::RunSpec SpecOfFlags(const SenderFlags& f);

}  // namespace nasperf::cli
