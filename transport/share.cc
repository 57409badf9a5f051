#include "transport/share.h"

#include <map>
#include <optional>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "common/clock.h"
#include "common/units.h"
#include "datapath/rows.h"
#include "measure/disk_stats.h"
#include "wire/validate.h"

namespace nasperf {

absl::Status StreamBarrier::Wait() {
  if (waited_ || !wait_) return absl::OkStatus();
  waited_ = true;
  absl::Status released = wait_();
  r_.start_wall_ns = WallNanos();
  r_.start_ns = MonoNanos();
  return released;
}

std::string PeerCell(const std::string& host, uint16_t port) {
  return port != 0 ? absl::StrCat(host, ":", port) : host;
}

namespace {

constexpr char kComponent[] = "sender";

// A transfer that pays what later ones on its session do not says so in its row.
void NoteStartup(ShareSession& s, TransferResult& out) {
  const char* note = s.StartupNote();
  if (note == nullptr) return;
  out.startup = true;
  AppendNote(note, out.sender);
}

class ShareTransport : public Transport {
 public:
  ShareTransport(std::unique_ptr<ShareDriver> driver, const RunOptions& options, const RunContext& context)
      : driver_(std::move(driver)), options_(options), context_(context), run_(RemoteRunPlanFor(options)) {}

  absl::Status Start(const std::string& run_id, uint64_t length, const ConsoleLine& say) override;
  void Push(const TransferSlot& slot, PayloadSource& source, const PushOptions& push, TransferResult& out) override;
  void Pull(const TransferSlot& slot, BlockWriter* into, const PipelineOptions& pipeline, TransferResult& out) override;
  void Finish(const std::string& run_id) override;
  std::optional<double> CeilingMBps() const override { return path_.ceiling_mb_per_s(); }
  uint64_t Length(uint64_t asked) const override { return read_length_ > 0 ? read_length_ : asked; }

 private:
  // The stream's session, connected anew when it is missing or no longer usable
  // (`say`: Start's).
  absl::StatusOr<ShareSession*> SessionFor(int stream, const ConsoleLine* say = nullptr);
  // Writes: the directory's free space and whether files can be synced; its words.
  absl::StatusOr<std::string> StartWrites(ShareSession& s, uint64_t length);
  // Reads: the file to read (--remote-file in the directory, or one laid out), checked.
  absl::Status StartReads(ShareSession& s, const std::string& run_id, uint64_t length, const ConsoleLine& say);
  absl::Status CheckReadFile(ShareSession& s, const ConsoleLine& say);
  // The cells of a row in either direction that say where and how.
  void FillPathCells(proto::TransferReport& row) const;

  const std::unique_ptr<ShareDriver> driver_;
  const RunOptions& options_;
  const RunContext& context_;
  RemoteFsRun run_;                   // free space, sync fallback, cleanup: as for every remote file system
  std::string protocol_;              // the share_protocol cell
  RemotePathCells path_;              // peer, MTU, link of every row
  std::string read_path_, laid_out_;  // a read's file; the one Start wrote for it (none named)
  uint64_t read_length_ = 0;

  absl::Mutex mu_;
  std::map<int, std::unique_ptr<ShareSession>> sessions_ ABSL_GUARDED_BY(mu_);
};

absl::StatusOr<ShareSession*> ShareTransport::SessionFor(int stream, const ConsoleLine* say) {
  {
    absl::MutexLock lock(&mu_);
    auto it = sessions_.find(stream);
    if (it != sessions_.end() && it->second->usable()) return it->second.get();
  }
  absl::StatusOr<std::unique_ptr<ShareSession>> connected = driver_->Connect(stream, say);
  if (!connected.ok()) return connected.status();
  absl::MutexLock lock(&mu_);
  std::unique_ptr<ShareSession>& slot = sessions_[stream];
  slot = *std::move(connected);
  return slot.get();
}

absl::Status ShareTransport::Start(const std::string& run_id, uint64_t length, const ConsoleLine& say) {
  // The run id becomes part of file names; no agent checks it on the other side.
  if (absl::Status valid = CheckRunId(run_id); !valid.ok()) return valid;
  absl::StatusOr<ShareSession*> session = SessionFor(context_.first_stream, &say);
  if (!session.ok()) return session.status();
  ShareSession& s = **session;
  if (RemoteFs* fs = s.housekeeping(); fs != nullptr) {  // else no way to look: the first transfer will say
    absl::StatusOr<RemoteStat> dir = fs->Stat(s.dir());
    if (!dir.ok()) return absl::Status(dir.status().code(), absl::StrCat("the directory ", dir.status().message()));
    if (!dir->is_dir)
      return absl::InvalidArgumentError(absl::StrCat(fs->Where(), ": ", s.dir(), " is not a directory"));
  }
  for (int i = 1; driver_->ConnectsEveryStreamAtStart() && i < options_.streams; ++i) {
    if (absl::StatusOr<ShareSession*> other = SessionFor(context_.first_stream + i); !other.ok()) return other.status();
  }
  std::string free_text = "a read";
  if (options_.direction == Direction::kRead) {
    if (absl::Status st = StartReads(s, run_id, length, say); !st.ok()) return st;
  } else {
    absl::StatusOr<std::string> started = StartWrites(s, length);
    if (!started.ok()) return started.status();
    free_text = *std::move(started);
  }
  protocol_ = driver_->ProtocolCell(s);
  const std::string host = driver_->host();
  path_.Resolve(host, driver_->peer(), options_.link_mbps);
  say(driver_->StartLine(s, free_text, run_.sync()));
  // No host to route toward (a local file system, a mount whose source names none):
  // no interface, MTU or link to tell.
  say(host.empty() ? absl::StrCat("path: ", driver_->peer(), ", no host to route toward: MTU and link unknown")
                   : path_.Describe());
  return absl::OkStatus();
}

absl::StatusOr<std::string> ShareTransport::StartWrites(ShareSession& s, uint64_t length) {
  RemoteFs* housekeeping = s.housekeeping();
  // With no way to look, the files' own file system says whether they can be synced.
  RemoteFs& fs = housekeeping != nullptr ? *housekeeping : s.fs();
  return run_.Start(housekeeping, fs.Where(), s.dir(), length, fs.CanSync());
}

absl::Status ShareTransport::StartReads(ShareSession& s, const std::string& run_id, uint64_t length,
                                        const ConsoleLine& say) {
  if (s.housekeeping() == nullptr) return absl::UnimplementedError(absl::StrCat(driver_->name(), ": no way to read"));
  if (options_.remote_file.empty()) {
    absl::StatusOr<std::string> laid_out = run_.LayOutReadFile(*s.housekeeping(), s.dir(), run_id, length);
    if (!laid_out.ok()) return laid_out.status();
    laid_out_ = *laid_out;
  }
  read_path_ = laid_out_.empty() ? PathInDir(s.dir(), options_.remote_file) : laid_out_;
  absl::Status checked = CheckReadFile(s, say);
  if (!checked.ok() && !laid_out_.empty()) (void)s.housekeeping()->Unlink(laid_out_);  // no Finish after a failed Start
  return checked;
}

absl::Status ShareTransport::CheckReadFile(ShareSession& s, const ConsoleLine& say) {
  RemoteFs& fs = *s.housekeeping();
  absl::StatusOr<RemoteStat> file = fs.Stat(read_path_);
  if (!file.ok()) return absl::Status(file.status().code(), absl::StrCat("remote file ", file.status().message()));
  read_length_ = file->size;
  if (!file->is_regular || read_length_ == 0) {
    return absl::InvalidArgumentError(absl::StrCat(fs.Where(), ": ", read_path_, " is not a non-empty regular file"));
  }
  if (read_length_ > kMaxReadLength) {
    return absl::InvalidArgumentError(
        absl::StrCat(fs.Where(), ": ", read_path_, " is said to hold ", read_length_, " bytes (more than 1 PiB)"));
  }
  const int in_flight = driver_->reads_in_flight();
  say(absl::StrFormat("%s read: %s%s, %s%s (the server's page cache is not ours to control: cache unknown)",
                      driver_->name(), read_path_, laid_out_.empty() ? "" : " (laid out first, untimed)",
                      FormatSize(read_length_),
                      in_flight > 1 ? absl::StrFormat(", %d READs in flight per stream", in_flight) : ""));
  return absl::OkStatus();
}

void ShareTransport::FillPathCells(proto::TransferReport& row) const {
  path_.Fill(row);
  row.set_share_protocol(protocol_);
}

void ShareTransport::Pull(const TransferSlot& slot, BlockWriter* into, const PipelineOptions& pipeline,
                          TransferResult& out) {
  proto::TransferReport& row = out.sender;
  FillPathCells(row);
  const int64_t start_ns = MonoNanos();
  absl::StatusOr<ShareSession*> session = SessionFor(slot.stream);
  if (!session.ok()) {
    row.set_error(std::string(session.status().message()));
    return;
  }
  NoteStartup(**session, out);
  absl::StatusOr<std::unique_ptr<ShareReader>> reader = (*session)->OpenReader(read_path_, read_length_);
  if (!reader.ok()) {
    row.set_error(std::string(reader.status().message()));
    return;
  }
  PipelineResult result = RunPipeline(**reader, into, read_length_, pipeline);
  if (const int64_t asked = (*reader)->first_request_ns(); result.first_byte_ns != 0 && asked != 0) {
    result.first_byte_ns = asked;
  }
  (*reader)->Close();
  AddReadClientFigures(result, start_ns, into != nullptr, std::nullopt, path_.ceiling_mb_per_s(), &row);
  (*reader)->FillReadRow(row);
  // With no agent there, only this end can be told apart: its own disk and CPU.
  KeepClientVerdicts(row);
}

void ShareTransport::Push(const TransferSlot& slot, PayloadSource& source, const PushOptions& push,
                          TransferResult& out) {
  RemoteFsRun::Turn turn(run_);
  proto::TransferReport& row = out.sender;
  FillPathCells(row);

  const std::vector<BlockDevice>* local_devices = driver_->LocalDevices();
  std::optional<DeviceWatch> devices;
  if (local_devices != nullptr) devices.emplace(*local_devices);
  PushResult r;
  r.start_wall_ns = WallNanos();
  r.start_ns = MonoNanos();
  StreamBarrier barrier(context_.before_first_byte, r);
  absl::StatusOr<ShareSession*> session = SessionFor(slot.stream);
  std::string path;
  absl::Status status = session.status();
  if (status.ok()) {
    NoteStartup(**session, out);
    path = PathInDir((*session)->dir(), TransferFileName(slot.run_id, slot.iteration, slot.stream));
    status =
        run_.Write((*session)->fs(), path, slot.length, source, push, [&barrier] { return barrier.Wait(); }, r, turn);
  }
  (void)barrier.Wait();  // a stream that failed before its first byte never holds the others back
  run_.RecordRow(r, status, path_.ceiling_mb_per_s(), local_devices != nullptr, row, &turn.files);
  if (devices) AddDeviceColumns(devices->Stop(), &row);
  driver_->FillPushRow(row);
  // A connection lost in the transfer leaves its file to housekeeping (NFS's says the
  // partial file stays; SMB's removes it through the run's own connection).
  if (session.ok()) run_.Done((*session)->AfterTransfer(), path, status.ok(), r.first_byte_ns != 0, &turn.files);
}

void ShareTransport::Finish(const std::string&) {
  if (run_.HasKept()) {
    absl::StatusOr<ShareSession*> s = SessionFor(context_.first_stream);
    if (!s.ok()) {
      Log(LogLevel::kWarning, kComponent, "cleanup at the end: %s", s.status().message());
    } else if (RemoteFs* fs = (*s)->housekeeping(); fs != nullptr) {
      run_.Finish(*fs);
    }
  }
  absl::MutexLock lock(&mu_);
  sessions_.clear();
}

}  // namespace

std::unique_ptr<Transport> NewShareTransport(std::unique_ptr<ShareDriver> driver, const RunOptions& options,
                                             const RunContext& context) {
  return std::unique_ptr<Transport>(new ShareTransport(std::move(driver), options, context));
}

}  // namespace nasperf
