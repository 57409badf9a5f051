#include "cli/sender_spec.h"

#include "absl/time/time.h"

namespace nasperf::cli {

namespace {

// The transport flags given, and --deploy-binary, as [name, value] words.
void CopyTransportFlags(const SenderFlags& f, proto::RunSpec& spec) {
  for (const CLI::Option* option : f.transport_flags) {
    if (option->count() == 0) continue;
    const std::vector<std::string>& values = option->results();
    spec.add_transport_flags(option->get_name());
    spec.add_transport_flags(values.empty() ? "" : values.back());
  }
  if (!f.deploy_binary.empty()) {
    spec.add_transport_flags("--deploy-binary");
    spec.add_transport_flags(f.deploy_binary);
  }
}

}  // namespace

proto::RunSpec SpecOfFlags(const SenderFlags& f) {
  const std::string cmd = "sender";
  proto::RunSpec spec;
  spec.set_transport(f.transport);
  spec.set_to(f.to);
  CopyTransportFlags(f, spec);
  if (!f.size.empty()) {
    spec.set_size(SizeFlag(cmd, "--size", f.size));
    if (spec.size() == 0) UsageError(cmd, "--size", "must be more than 0");
  }
  spec.set_file(f.file);
  spec.set_file_count(f.files);
  spec.set_file_size(f.file_size);
  spec.set_files_per_dir(f.files_per_dir);
  spec.set_tree(f.tree);
  spec.set_pattern(f.pattern);
  spec.set_streams(f.streams);
  spec.set_runs(f.runs);
  spec.set_warmup(f.warmup);
  spec.set_pause_s(absl::ToDoubleSeconds(DurationFlag(cmd, "--pause", f.pause)));
  spec.set_label(f.label);
  spec.set_run_id(f.run_id);
  spec.set_write_mode(f.write_mode);
  spec.set_sync(f.sync);
  spec.set_cleanup(f.cleanup);
  spec.set_verify(f.verify);
  spec.set_direct_fallback(f.direct_fallback);
  spec.set_direction(f.direction);
  spec.set_cache(f.cache);
  spec.set_read_mode(f.read_mode);
  spec.set_remote_file(f.remote_file);
  spec.set_local_target(f.local_target);
  spec.set_interval_s(absl::ToDoubleSeconds(DurationFlag(cmd, "--interval", f.interval)));
  spec.set_link_mbps(LinkSpeedFlag(cmd, f.link_speed));
  if (!f.window.empty()) spec.set_window_bytes(SizeFlag(cmd, "--window", f.window));  // 0: none, as a plan's
  return spec;
}

}  // namespace nasperf::cli
