#include "transport/native.h"

#include <string.h>

#include <algorithm>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "common/checksum.h"
#include "common/clock.h"
#include "common/file_set.h"
#include "common/log.h"
#include "common/policy.h"
#include "common/units.h"
#include "datapath/rows.h"
#include "datapath/stream_puller.h"
#include "datapath/stream_pusher.h"
#include "datapath/target.h"
#include "measure/netinfo.h"
#include "measure/verdict.h"
#include "transport/path_check.h"
#include "transport/ssh.h"
#include "wire/receiver_client.h"

namespace nasperf {
namespace {

constexpr char kComponent[] = "sender";

bool IsConfigurationError(const absl::Status& s) {
  switch (s.code()) {
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kUnauthenticated:
    case absl::StatusCode::kPermissionDenied:
      return true;
    default:
      return false;
  }
}

std::string TrailerError(const DataTrailer& t) {
  if (t.error_code == EACCES && t.bytes_written == 0) {
    return "the receiver refused the data connection (ticket expired or already used)";
  }
  std::string what = t.status == TrailerStatus::kAborted ? "aborted the transfer" : "failed";
  return absl::StrCat("receiver ", what, ": ", t.error_code ? strerror(t.error_code) : "unknown error");
}

// The agent protocol (docs/DESIGN.md §3, protocols): Hello, then per transfer OpenTransfer,
// the raw TCP push and the receiver's own row.
class NativeTransport : public Transport {
 public:
  NativeTransport(const RunOptions& options, HostPort to, const RunContext& context)
      : options_(options),
        to_(std::move(to)),
        context_(context),
        client_(to_, options.token, options.trust, options.receiver_fingerprint) {}

  absl::Status Start(const std::string& run_id, uint64_t length, const ConsoleLine& say) override;
  void Push(const TransferSlot& slot, PayloadSource& source, const PushOptions& push, TransferResult& out) override;
  void Pull(const TransferSlot& slot, BlockWriter* into, const PipelineOptions& pipeline, TransferResult& out) override;
  void Finish(const std::string& run_id) override;
  std::optional<double> CeilingMBps() const override { return path_.CeilingMBps(); }
  uint64_t Length(uint64_t asked) const override { return read_length_ > 0 ? read_length_ : asked; }
  std::optional<proto::TransferReport> RowOfInterrupted(const TransferSlot& slot, uint64_t id) override;

 private:
  proto::OpenTransferRequest OpenRequest(const TransferSlot& slot) const;
  // Reads: the files on the NAS (laid out once, untimed) and the local target.
  absl::Status StartReads(const std::string& run_id, uint64_t length, const ConsoleLine& say);
  proto::PrepareReadRequest ReadSetup(const std::string& run_id, int stream, CacheState cache) const;
  // The path's cells (peer, MTUs, link) of a row in either direction.
  void FillPathCells(proto::TransferReport& row) const;
  // The opened transfer, or false with the row's error set (and the lab's barrier passed).
  std::optional<proto::OpenTransferReply> Open(const proto::OpenTransferRequest& request, TransferResult& out);
  void FetchReceiverRow(const proto::OpenTransferRequest& opened, uint64_t transfer_id, TransferResult& out);
  void Judge(const TransferSlot& slot, const PushResult& r, TransferResult& out) const;

  const RunOptions& options_;
  const HostPort to_;          // the agent's control port (the entry's config's)
  const RunContext& context_;  // the lab's barrier, the journal's transfer ids, the placement
  ReceiverClient client_;
  std::string local_host_ = LocalHostName();
  WriteMode write_mode_ = WriteMode::kBuffered;  // as asked, or buffered after --direct-fallback
  PathFacts path_;
  uint64_t window_bytes_ = 0;  // --window, or sized to the path; 0 = autotuning
  uint64_t read_length_ = 0;   // reads: the NAS file's length
};

void NativeTransport::Finish(const std::string& run_id) {
  // A read's laid-out files go at the end of the run too, unless --cleanup never.
  const bool ends_run = options_.cleanup == Cleanup::kEnd ||
                        (options_.direction == Direction::kRead && options_.cleanup != Cleanup::kNever);
  if (!ends_run) return;
  if (auto ended = client_.EndRun(run_id); !ended.ok()) {
    Log(LogLevel::kWarning, kComponent, "cleanup at the end failed: %s", ended.status().message());
  }
}

absl::Status NativeTransport::Start(const std::string& run_id, uint64_t length, const ConsoleLine& say) {
  absl::StatusOr<proto::HelloReply> hello = client_.Hello();
  if (!hello.ok()) return hello.status();
  say(absl::StrFormat(
      "receiver %s (nasperf %s) at %s: target %s%s, write modes %s", hello->host(), hello->version(),
      FormatHostPort(to_), hello->target(),
      hello->target() == kDiscardTarget ? "" : absl::StrCat(", ", FormatSize(hello->free_bytes()), " free"),
      absl::StrJoin(hello->write_modes(), "/")));
  write_mode_ = options_.write_mode;
  const auto& modes = hello->write_modes();
  if (options_.direct_fallback && write_mode_ == WriteMode::kDirect &&
      std::find(modes.begin(), modes.end(), Name(WriteMode::kDirect)) == modes.end()) {
    Log(LogLevel::kWarning, kComponent,
        "the target %s refuses O_DIRECT; --direct-fallback: writing buffered instead (rows say so)", hello->target());
    write_mode_ = WriteMode::kBuffered;
  }
  auto path = CheckPath(to_, *hello, options_.link_mbps);
  if (!path.ok()) return path.status();
  path_ = *path;
  window_bytes_ = options_.window_bytes > 0 ? options_.window_bytes : AutoWindowBytes(path_);
  say(PathLine(path_));
  for (const std::string& warning : PathWarnings(path_)) Log(LogLevel::kWarning, kComponent, "%s", warning);
  if (uint32_t mss = PathMaxSegment(path_)) {
    say(absl::StrFormat("mss: data connections capped at %d bytes to fit the path MTU %d", mss, *path_.path_mtu));
  }
  if (window_bytes_ > 0) {
    say(absl::StrFormat("window: %s socket buffers (%s)", FormatSize(window_bytes_),
                        options_.window_bytes > 0 ? "--window" : "2 x bandwidth-delay product"));
  }
  if (options_.direction == Direction::kRead) return StartReads(run_id, length, say);
  return absl::OkStatus();
}

proto::PrepareReadRequest NativeTransport::ReadSetup(const std::string& run_id, int stream, CacheState cache) const {
  proto::PrepareReadRequest request;
  request.set_run_id(run_id);
  request.set_stream(options_.remote_file.empty() ? stream : 0);
  request.set_size(options_.size);
  request.set_remote_file(options_.remote_file);
  request.set_cache(Name(cache));
  request.set_read_mode(Name(options_.read_mode));
  if (options_.cleanup) request.set_cleanup(Name(*options_.cleanup));
  return request;
}

absl::Status NativeTransport::StartReads(const std::string& run_id, uint64_t length, const ConsoleLine& say) {
  const RunOptions& o = options_;
  // Every stream's file exists before the first timed run: laying one out is not timed.
  const int streams = o.remote_file.empty() ? o.streams : 1;
  const int first = context_.first_stream;
  for (int s = first; s < first + streams; ++s) {
    absl::StatusOr<proto::PrepareReadReply> prepared = client_.PrepareRead(ReadSetup(run_id, s, CacheState::kCold));
    if (!prepared.ok()) return prepared.status();
    read_length_ = prepared->length();
    say(absl::StrFormat("read file on the NAS: %s, %s, %s in %.1f s (not timed)", prepared->file(),
                        FormatSize(prepared->length()), prepared->laid_out() ? "laid out" : "found",
                        prepared->setup_s()));
    const bool promised_cold = o.cache == CacheState::kCold || o.read_mode == ReadMode::kDirect;
    if (!prepared->caveat().empty() && promised_cold && s == first) {
      Log(LogLevel::kWarning, kComponent, "%s", prepared->caveat());
    }
  }
  if (o.remote_file.empty() && read_length_ != length) {
    return absl::InternalError("the NAS laid out a file of another size");
  }
  return absl::OkStatus();
}

std::optional<proto::OpenTransferReply> NativeTransport::Open(const proto::OpenTransferRequest& request,
                                                              TransferResult& out) {
  proto::TransferReport& row = out.sender;
  absl::StatusOr<proto::OpenTransferReply> open = client_.OpenTransfer(request);
  // A lab's barrier counts every stream, opened or refused, so one refusal never
  // holds the others back; a refused stream just ends after it.
  const absl::Status released = context_.before_first_byte ? context_.before_first_byte() : absl::OkStatus();
  if (!open.ok()) {
    row.set_error(std::string(open.status().message()));
    out.stop_loop = IsConfigurationError(open.status());
    return std::nullopt;
  }
  if (context_.transfer_opened) context_.transfer_opened(request.stream(), open->transfer_id());
  if (!released.ok()) {
    row.set_transfer_id(open->transfer_id());
    row.set_status(Name(absl::IsCancelled(released) ? Status::kAborted : Status::kFailed));
    row.set_error(std::string(released.message()));
    return std::nullopt;  // the ticket is never used; the receiver lets it expire
  }
  return *open;
}

PushTarget TargetOf(const HostPort& to, const proto::OpenTransferReply& open, uint64_t length) {
  PushTarget target;
  target.data = {to.host, static_cast<uint16_t>(open.data_port())};
  target.transfer_id = open.transfer_id();
  // ReceiverClient checked the reply: the ticket is exactly kTicketSize bytes.
  std::copy(open.ticket().begin(), open.ticket().end(), target.ticket.begin());
  target.length = length;
  target.send_footer = open.expects_footer();
  return target;
}

void NativeTransport::Pull(const TransferSlot& slot, BlockWriter* into, const PipelineOptions& pipeline,
                           TransferResult& out) {
  const RunOptions& o = options_;
  proto::TransferReport& row = out.sender;
  FillPathCells(row);
  row.set_cache(Name(o.cache));
  row.set_read_mode(Name(o.read_mode));
  // The cache state, set again before every run (untimed), then the transfer.
  absl::StatusOr<proto::PrepareReadReply> prepared = client_.PrepareRead(ReadSetup(slot.run_id, slot.stream, o.cache));
  // The local copy's room was checked for the length announced at the start.
  if (prepared.ok() && prepared->length() != read_length_) {
    prepared = absl::FailedPreconditionError(absl::StrCat("the NAS's read file ", prepared->file(), " now has ",
                                                          prepared->length(), " bytes, ", read_length_,
                                                          " when the run started"));
  }
  if (!prepared.ok()) {
    row.set_error(std::string(prepared.status().message()));
    out.stop_loop = IsConfigurationError(prepared.status());
    if (context_.before_first_byte) (void)context_.before_first_byte();
    return;
  }
  proto::OpenTransferRequest request = OpenRequest(slot);
  request.set_direction(Name(Direction::kRead));
  request.set_read_file(prepared->file());
  request.set_size(prepared->length());
  request.set_cache(Name(o.cache));
  request.set_read_mode(Name(o.read_mode));
  std::optional<proto::OpenTransferReply> open = Open(request, out);
  if (!open) return;
  PullResult pulled =
      PullNative(TargetOf(to_, *open, prepared->length()), into, pipeline, window_bytes_, PathMaxSegment(path_));
  row.set_transfer_id(open->transfer_id());
  row.set_peer(FormatHostPort({to_.host, static_cast<uint16_t>(open->data_port())}));
  if (pulled.mss) row.set_mss(*pulled.mss);
  if (!pulled.status.ok()) {
    row.set_error(std::string(pulled.status.message()));
    return;
  }
  AddReadClientFigures(pulled.pipeline, pulled.start_ns, into != nullptr, pulled.footer, path_.CeilingMBps(), &row);
  if (pulled.pipeline.first_byte_ns != 0) FetchReceiverRow(request, open->transfer_id(), out);
}

void NativeTransport::FillPathCells(proto::TransferReport& row) const {
  row.set_peer(FormatHostPort(to_));
  if (path_.mtu) row.set_mtu(*path_.mtu);
  if (path_.path_mtu) row.set_path_mtu(*path_.path_mtu);
  if (path_.link_mbps) row.set_link_mbps(*path_.link_mbps);
}

void NativeTransport::Push(const TransferSlot& slot, PayloadSource& source, const PushOptions& push,
                           TransferResult& out) {
  proto::TransferReport& row = out.sender;
  FillPathCells(row);
  row.set_write_mode(Name(write_mode_));

  const proto::OpenTransferRequest request = OpenRequest(slot);
  std::optional<proto::OpenTransferReply> open = Open(request, out);
  if (!open) return;
  PushTarget target = TargetOf(to_, *open, slot.length);
  if (request.file_size() == kTreeFileSize) target.file_sizes = options_.file_sizes.get();
  PushOptions native = push;
  native.window_bytes = window_bytes_;
  native.max_segment = PathMaxSegment(path_);
  PushResult r = PushNative(target, source, native);

  row.set_transfer_id(open->transfer_id());
  row.set_peer(FormatHostPort(target.data));
  RecordPush(r, row);
  // The receiver's own row: it exists whenever the data connection got that far.
  if (r.trailer || r.bytes_sent > 0) FetchReceiverRow(request, open->transfer_id(), out);
  Judge(slot, r, out);
  // A set's files were the receiver's to count; their rate end to end is this row's, so
  // files/s compares across transports as MB/s does (the latencies stay the receiver's).
  if (out.receiver && out.receiver->has_files()) {
    row.set_files(out.receiver->files());
    if (row.duration_s() > 0) row.set_files_per_s(static_cast<double>(row.files()) / row.duration_s());
    // Only the receiver times the files' own work: when it says they held the set back,
    // so does this row, whose waits alone read as the bytes' (the console shows this one).
    if (out.receiver->bottleneck() == Name(Bottleneck::kMetadata)) row.set_bottleneck(out.receiver->bottleneck());
  }
}

proto::OpenTransferRequest NativeTransport::OpenRequest(const TransferSlot& slot) const {
  const RunOptions& o = options_;
  proto::OpenTransferRequest request;
  request.set_run_id(slot.run_id);
  request.set_label(o.label);
  request.set_iteration(slot.iteration);
  request.set_stream(slot.stream);
  request.set_size(slot.length);
  request.set_write_mode(Name(write_mode_));
  request.set_sync_policy(SyncPolicyName(o.sync_policy));
  if (o.cleanup) request.set_cleanup(Name(*o.cleanup));
  if (path_.path_mtu) request.set_path_mtu(*path_.path_mtu);
  request.set_link_mbps(o.link_mbps);
  request.set_window_bytes(window_bytes_);
  request.set_checksum(o.verify);
  request.set_warmup(slot.warmup);
  request.set_interval_s(o.interval_s);
  request.set_sender_host(local_host_);
  request.set_sends_footer(true);
  if (o.file_sizes) {
    request.set_file_count(o.file_sizes->size());
    request.set_file_size(o.file_size_text);
    request.set_files_per_dir(o.files_per_dir);
  }
  return request;
}

std::optional<proto::TransferReport> NativeTransport::RowOfInterrupted(const TransferSlot& slot, uint64_t id) {
  TransferResult out;
  FetchReceiverRow(OpenRequest(slot), id, out);
  return out.receiver;
}

void NativeTransport::FetchReceiverRow(const proto::OpenTransferRequest& opened, uint64_t transfer_id,
                                       TransferResult& out) {
  auto fetched = client_.FetchReport(opened, transfer_id, absl::Seconds(30));
  if (fetched.ok()) {
    out.receiver = *fetched;
    if (!context_.receiver_name.empty()) out.receiver->set_host(context_.receiver_name);
  } else if (!absl::IsNotFound(fetched.status())) {
    Log(LogLevel::kWarning, kComponent, "no receiver row for transfer %d: %s", transfer_id, fetched.status().message());
  }
}

// The sender row's verdict on a pushed transfer: status, timings, bottleneck, and
// whether the receiver wrote (and, with --verify, hashed) every byte.
void NativeTransport::Judge(const TransferSlot& slot, const PushResult& r, TransferResult& out) const {
  const RunOptions& o = options_;
  proto::TransferReport& row = out.sender;
  if (!r.trailer) {
    if (absl::IsCancelled(r.status)) row.set_status(Name(Status::kAborted));
    row.set_error(std::string(r.status.message()));
    return;
  }
  const DataTrailer& t = *r.trailer;
  if (t.status != TrailerStatus::kOk) {
    row.set_status(Name(t.status == TrailerStatus::kAborted ? Status::kAborted : Status::kFailed));
    row.set_error(out.receiver && !out.receiver->error().empty() ? absl::StrCat("receiver: ", out.receiver->error())
                                                                 : TrailerError(t));
    return;
  }
  RecordTimings(r, path_.CeilingMBps(), row);
  int64_t duration = r.ack_ns - r.first_byte_ns;
  double source_pct = Pct(r.source_ns, duration);
  row.set_source_wait_pct(source_pct);  // file reads are timed apart from sends on the splice path too
  int64_t receiver_span = t.durable_ns > 0 ? static_cast<int64_t>(t.durable_ns) : duration;
  VerdictFigures figures;
  figures.net_wait_pct = Pct(t.net_wait_ns, receiver_span);
  figures.disk_wait_pct = Pct(t.disk_wait_ns + t.sync_ns, receiver_span);
  figures.source_wait_pct = source_pct;
  figures.line_rate_pct = row.has_line_rate_pct() ? row.line_rate_pct() : -1;
  figures.sender_cpu_pct = r.cpu_busy_pct;
  figures.receiver_cpu_pct = t.cpu_busy_pct;
  figures.sender_quota_pct = r.cpu_quota_pct;
  figures.receiver_quota_pct = t.cpu_quota_pct;
  row.set_bottleneck(Verdict(figures));
  if (t.bytes_written != slot.length) {
    row.set_error(absl::StrCat("receiver wrote ", t.bytes_written, " of ", slot.length, " bytes"));
    return;
  }
  if (o.verify) {
    bool verified = t.has_checksum && r.has_checksum && t.checksum == r.checksum;
    row.set_verified(verified);
    if (!verified) {
      row.set_error(absl::StrCat("checksum mismatch: sent ", ChecksumHex(r.checksum), ", receiver got ",
                                 t.has_checksum ? ChecksumHex(t.checksum) : "none"));
      return;
    }
  }
  row.set_status(Name(Status::kOk));
}

}  // namespace

std::unique_ptr<Transport> NewNativeTransport(const RunOptions& options, HostPort to, const RunContext& context) {
  return std::make_unique<NativeTransport>(options, std::move(to), context);
}

TransportEntry NativeTransportEntry() {
  TransportCaps caps;
  caps.agent = true;
  caps.write_modes = true;
  caps.verify = true;
  caps.verify_reads = true;
  caps.reads = true;
  caps.read_cache = true;
  caps.reads_laid_out = true;
  caps.barrier = true;    // NativeTransport::Open
  caps.file_sets = true;  // the receiver writes the set (OpenTransferRequest.file_count)
  TransportEntry entry{
      kWireTransport, "the receiver agent (nasperf receiver or agent on the NAS)", caps,
      [](const RunOptions& options, const RunContext& context) -> absl::StatusOr<std::unique_ptr<Transport>> {
        absl::StatusOr<const NativeConfig*> config = ConfigOf<NativeConfig>(options);
        if (!config.ok()) return config.status();
        if ((*config)->login) {  // begin replaces it with the receiver it started
          return absl::FailedPreconditionError(
              absl::StrCat("transport native: no receiver was started on ", (*config)->login->host));
        }
        return NewNativeTransport(options, (*config)->agent, context);
      }};
  entry.parse = ParseNativeTo;
  entry.borrowed_flags = AddSshLoginFlags;  // the login of a receiver started over SSH
  entry.begin = BeginNativeRun;
  entry.to_form =
      "the receiver's HOST[:PORT] (control port, default 7600), or [user@]host:/dir to start a receiver there over "
      "SSH for this run (nothing installed on the NAS)";
  return entry;
}

}  // namespace nasperf
