#include "transport/remote_fs.h"

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/checksum.h"
#include "common/clock.h"
#include "common/log.h"
#include "common/units.h"
#include "datapath/file_set.h"
#include "datapath/rows.h"
#include "measure/netinfo.h"
#include "measure/verdict.h"

namespace nasperf {
namespace {

constexpr char kComponent[] = "sender";
constexpr size_t kReadBackBlock = size_t{1} << 20;

// The push loop's writer into one remote file: an fsync every `sync_every` bytes
// (every=SIZE) before the last, so the final one is the run's own.
class RemoteFileWriter : public ChunkWriter {
 public:
  RemoteFileWriter(RemoteFile& file, uint64_t length, uint64_t sync_every)
      : file_(file), length_(length), sync_every_(sync_every) {}

  absl::Status Write(const uint8_t* data, size_t size, uint64_t offset) override {
    if (absl::Status s = file_.PWrite(data, size, offset); !s.ok()) return s;
    since_sync_ += size;
    if (sync_every_ > 0 && since_sync_ >= sync_every_ && offset + size < length_) {
      if (absl::Status s = file_.Sync(); !s.ok()) return s;
      since_sync_ = 0;
    }
    return absl::OkStatus();
  }

 private:
  RemoteFile& file_;
  const uint64_t length_;
  const uint64_t sync_every_;
  uint64_t since_sync_ = 0;
};

// The push loop's writer into a set of files, one after another: each piece goes to
// the file its offset falls in; a file is created when its first byte comes and
// closed (after its fsync, when asked) when its last has gone.
class FileSetWriter : public ChunkWriter {
 public:
  FileSetWriter(RemoteFs& fs, const std::string& path, const std::vector<uint64_t>& sizes, uint64_t files_per_dir,
                bool sync, FileSetTally& tally)
      : fs_(fs), path_(path), sizes_(sizes), files_per_dir_(files_per_dir), sync_(sync), tally_(tally) {}
  ~FileSetWriter() override {
    if (file_) (void)file_->Close();  // a transfer that failed mid-file: its status says why
  }

  absl::Status Write(const uint8_t* data, size_t size, uint64_t) override {
    while (size > 0) {
      if (!file_) {
        if (next_ >= sizes_.size()) return absl::OutOfRangeError("more bytes than the file set holds");
        created_ns_ = MonoNanos();
        if (files_per_dir_ > 0 && next_ % files_per_dir_ == 0) {
          absl::Status made = fs_.Mkdir(SetDirName(path_, next_ / files_per_dir_));
          if (!made.ok()) return made;
          ++tally_.dirs_created;
        }
        absl::StatusOr<std::unique_ptr<RemoteFile>> file =
            fs_.CreateSized(SetFilePath(path_, next_, files_per_dir_), sizes_[next_]);
        tally_.metadata_ns += MonoNanos() - created_ns_;
        if (!file.ok()) return file.status();
        file_ = std::move(*file);
        ++tally_.created;
        at_ = 0;
      }
      const size_t n = static_cast<size_t>(std::min<uint64_t>(size, sizes_[next_] - at_));
      if (absl::Status s = file_->PWrite(data, n, at_); !s.ok()) return s;
      at_ += n;
      data += n;
      size -= n;
      if (at_ == sizes_[next_]) {
        if (absl::Status s = CloseFile(); !s.ok()) return s;
      }
    }
    return absl::OkStatus();
  }

 private:
  // Its fsync (bytes and metadata alike) once its writes are answered, then its close.
  // With no fsync the close waits for the writes itself: settling first would cost a
  // share's worker one more round trip per file (RemoteFile::Close).
  absl::Status CloseFile() {
    std::unique_ptr<RemoteFile> file = std::move(file_);
    ++next_;
    absl::Status status = sync_ ? file->Settle() : absl::OkStatus();
    const int64_t settled_ns = MonoNanos();
    if (status.ok() && sync_) status = file->Sync();
    const int64_t synced_ns = MonoNanos();
    absl::Status closed = file->Close();
    if (status.ok()) status = closed;
    const int64_t closed_ns = MonoNanos();
    tally_.sync_ns += synced_ns - settled_ns;
    tally_.metadata_ns += closed_ns - synced_ns;
    if (!status.ok()) return status;
    ++tally_.whole;
    tally_.latency_s.push_back(static_cast<double>(closed_ns - created_ns_) / 1e9);
    tally_.closed_ns.push_back(closed_ns);
    return absl::OkStatus();
  }

  RemoteFs& fs_;
  const std::string& path_;
  const std::vector<uint64_t>& sizes_;
  const uint64_t files_per_dir_;
  const bool sync_;
  FileSetTally& tally_;
  std::unique_ptr<RemoteFile> file_;
  size_t next_ = 0;  // the file being written, or the next to create
  uint64_t at_ = 0;  // bytes of it written
  int64_t created_ns_ = 0;
};

}  // namespace

RemoteRunPlan RemoteRunPlanFor(const RunOptions& options) {
  RemoteRunPlan plan;
  plan.sync_policy = options.sync_policy;
  plan.file_sizes = options.file_sizes;
  plan.files_per_dir = options.files_per_dir;
  plan.cleanup = options.cleanup.value_or(Cleanup::kEach);
  plan.files_at_once = static_cast<uint64_t>(options.streams) *
                       (plan.cleanup == Cleanup::kEach ? 1 : static_cast<uint64_t>(options.runs + options.warmup));
  plan.verify = options.verify;
  plan.streams = std::max(options.streams, 1);
  return plan;
}

std::string PathInDir(const std::string& dir, const std::string& name) {
  if (dir.empty() || dir.back() == '/') return dir + name;
  return absl::StrCat(dir, "/", name);
}

void RemotePathCells::Resolve(const std::string& host, const std::string& peer, uint32_t link_mbps_flag) {
  peer_ = peer;
  absl::StatusOr<InterfaceFacts> facts = InterfaceToward(host);
  if (facts.ok()) {
    interface_ = facts->name;
    local_address_ = facts->local_address;
    mtu_ = facts->mtu;
    link_mbps_ = facts->link_mbps;
  }
  if (link_mbps_flag > 0) {
    link_mbps_ = link_mbps_flag;
    link_from_flag_ = true;
  }
  if (mtu_ && link_mbps_) ceiling_mb_per_s_ = TcpGoodputCeilingMBps(*link_mbps_, *mtu_);
}

std::string RemotePathCells::Describe() const {
  return absl::StrFormat("path: %s via %s (%s), MTU %s, link %s%s; no agent there: receiver columns stay empty", peer_,
                         interface_, local_address_, mtu_ ? absl::StrCat(*mtu_) : "unknown",
                         link_mbps_ ? absl::StrCat(*link_mbps_, " Mb/s") : "unknown",
                         link_from_flag_ ? " (--link-speed)" : "");
}

void RemotePathCells::Fill(proto::TransferReport& row) const {
  row.set_peer(peer_);
  if (mtu_) row.set_mtu(*mtu_);
  if (link_mbps_) row.set_link_mbps(*link_mbps_);
}

void KeepClientVerdicts(proto::TransferReport& row) {
  if (row.bottleneck() != Name(Bottleneck::kClientDisk) && row.bottleneck() != Name(Bottleneck::kSenderCpu)) {
    row.clear_bottleneck();
  }
}

absl::StatusOr<std::string> RemoteFsRun::Start(RemoteFs* fs, const std::string& where, const std::string& dir,
                                               uint64_t length, const absl::Status& can_sync) {
  std::string free_text = "free space unknown";
  if (fs != nullptr) {
    absl::StatusOr<uint64_t> free_bytes = fs->FreeBytes(dir);
    if (!free_bytes.ok()) {
      free_text = absl::StrCat("free space unknown (", free_bytes.status().message(), ")");
    } else {
      const uint64_t needed = length * plan_.files_at_once;
      free_text = absl::StrCat(FormatSize(*free_bytes), " free");
      if (needed > *free_bytes) {
        return absl::FailedPreconditionError(absl::StrCat(
            where, ": ", dir, " has ", FormatSize(*free_bytes), " free, this run would write up to ",
            FormatSize(needed), " there (", plan_.files_at_once, " file", plan_.files_at_once == 1 ? "" : "s", " of ",
            FormatSize(length), " at once); use --cleanup each, fewer runs or a smaller size"));
      }
    }
  }
  sync_ = plan_.sync_policy;
  if (plan_.sync_policy.kind != SyncPolicy::kNone && !can_sync.ok()) {
    sync_ = SyncPolicy{SyncPolicy::kNone, 0};
    Log(LogLevel::kWarning, kComponent,
        "%s: %s, so --sync %s cannot be honoured: the figures end when the server has the last byte "
        "(sync_policy none in the CSV), not when it is on disk",
        where, can_sync.message(), SyncPolicyName(plan_.sync_policy));
  }
  return free_text;
}

absl::Status RemoteFsRun::Write(RemoteFs& fs, const std::string& path, uint64_t length, PayloadSource& source,
                                const PushOptions& push, const std::function<absl::Status()>& before_first_byte,
                                PushResult& r, Turn& turn) const {
  if (plan_.file_sizes) return WriteSet(fs, path, source, push, before_first_byte, r, turn);
  absl::StatusOr<std::unique_ptr<RemoteFile>> file = fs.CreateSized(path, length);
  if (!file.ok()) return file.status();
  if (absl::Status released = before_first_byte ? before_first_byte() : absl::OkStatus(); !released.ok()) {
    (void)(*file)->Close();
    (void)fs.Unlink(path);  // empty, and ours: Create made it
    return released;
  }
  const uint64_t sync_every = sync_.kind == SyncPolicy::kEvery ? sync_.every_bytes : 0;
  RemoteFileWriter writer(**file, length, sync_every);
  absl::Status status = PushLoop(source, length, push, writer, r).status;
  if (status.ok()) status = (*file)->Settle();
  const bool synced = sync_.kind != SyncPolicy::kNone;
  if (status.ok() && synced) status = (*file)->Sync();
  // --sync none: the clock stops at the last write's answer, so a close that flushes
  // (libnfs sends COMMIT with every CLOSE) is not in a figure that claims no sync.
  if (!synced) r.ack_ns = MonoNanos();
  absl::Status closed = (*file)->Close();
  if (status.ok()) status = closed;
  if (synced) r.ack_ns = MonoNanos();
  turn.ClockStopped();
  if (status.ok() && plan_.verify) {
    turn.AwaitEveryClock();
    status = ReadBack(fs, path, length, r);
  }
  return status;
}

absl::Status RemoteFsRun::WriteSet(RemoteFs& fs, const std::string& path, PayloadSource& source,
                                   const PushOptions& push, const std::function<absl::Status()>& before_first_byte,
                                   PushResult& r, Turn& turn) const {
  if (absl::Status released = before_first_byte ? before_first_byte() : absl::OkStatus(); !released.ok()) {
    return released;
  }
  const std::vector<uint64_t>& sizes = *plan_.file_sizes;
  uint64_t length = 0;
  for (uint64_t size : sizes) length += size;
  absl::Status status;
  {
    FileSetWriter writer(fs, path, sizes, plan_.files_per_dir, sync_.kind != SyncPolicy::kNone, turn.files);
    status = PushLoop(source, length, push, writer, r).status;
  }
  r.ack_ns = MonoNanos();  // the last file closed (synced as asked)
  turn.ClockStopped();
  return status;
}

void RemoteFsRun::Turn::ClockStopped() {
  if (stopped_) return;
  stopped_ = true;
  absl::MutexLock lock(&run_.clocks_mu_);
  round_ = run_.clock_round_;
  if (++run_.clocks_stopped_ >= run_.plan_.streams) {
    run_.clocks_stopped_ = 0;
    ++run_.clock_round_;
    run_.clocks_cv_.SignalAll();
  }
}

void RemoteFsRun::Turn::AwaitEveryClock() {
  ClockStopped();
  absl::MutexLock lock(&run_.clocks_mu_);
  // Every other stream's Push ends (and stops its Turn) on its own: no deadline needed.
  while (run_.clock_round_ == round_) run_.clocks_cv_.Wait(&run_.clocks_mu_);
}

absl::Status RemoteFsRun::ReadBack(RemoteFs& fs, const std::string& path, uint64_t length, PushResult& r) const {
  if (!r.has_checksum) return absl::InternalError("--verify: the push loop computed no checksum");
  const int64_t start_ns = MonoNanos();
  absl::StatusOr<std::unique_ptr<RemoteFile>> file = fs.Open(path);
  if (!file.ok()) return file.status();
  StreamChecksum read_back;
  std::vector<uint8_t> buffer(kReadBackBlock);
  uint64_t at = 0;
  while (at < length) {
    const size_t want = static_cast<size_t>(std::min<uint64_t>(buffer.size(), length - at));
    absl::StatusOr<size_t> got = (*file)->PRead(buffer.data(), want, at);
    if (!got.ok()) return got.status();
    if (*got == 0 || *got > want) break;
    read_back.Update(buffer.data(), *got);
    at += *got;
  }
  if (absl::Status closed = (*file)->Close(); !closed.ok()) return closed;
  const double seconds = static_cast<double>(MonoNanos() - start_ns) / 1e9;
  if (at != length) {
    r.verified = false;
    return absl::DataLossError(
        absl::StrCat("--verify: ", fs.Where(), ": ", path, " read back ", at, " of ", length, " bytes"));
  }
  r.verified = read_back.Digest() == r.checksum;
  Log(LogLevel::kInfo, kComponent, "--verify: %s read back in %.2f s (not in the row's figures): %s", path, seconds,
      *r.verified ? "the same bytes" : "DIFFERENT bytes");
  if (!*r.verified) {
    return absl::DataLossError(absl::StrCat("checksum mismatch: sent ", ChecksumHex(r.checksum), ", ", fs.Where(),
                                            " read back ", ChecksumHex(read_back.Digest())));
  }
  return absl::OkStatus();
}

void RemoteFsRun::RecordRow(const PushResult& r, const absl::Status& status, std::optional<double> ceiling_mb_per_s,
                            bool local_disk, proto::TransferReport& row, const FileSetTally* files) const {
  row.set_sync_policy(SyncPolicyName(sync_));
  RecordPush(r, row);
  if (files != nullptr && plan_.file_sizes) RecordFileSet(*files, *plan_.file_sizes, r.first_byte_ns, r.ack_ns, row);
  if (r.verified) row.set_verified(*r.verified);
  if (!status.ok()) {
    if (absl::IsCancelled(status)) row.set_status(Name(Status::kAborted));
    row.set_error(std::string(status.message()));
    return;
  }
  RecordTimings(r, ceiling_mb_per_s, row);
  const double source_pct = Pct(r.source_ns, r.ack_ns - r.first_byte_ns);
  row.set_source_wait_pct(source_pct);
  // The network, the server's cipher or protocol work and the far disk all look
  // alike from here.
  VerdictFigures figures;
  figures.source_wait_pct = source_pct;
  // The CPU was busy that share of the push; the sync after it (a local disk's fsync
  // of what the page cache took at memory speed) is time it waited.
  const int64_t pushed_ns = r.last_byte_ns - r.first_byte_ns, timed_ns = r.ack_ns - r.first_byte_ns;
  figures.sender_cpu_pct = r.cpu_busy_pct >= 0 && timed_ns > 0 && pushed_ns >= 0
                               ? r.cpu_busy_pct * static_cast<double>(pushed_ns) / static_cast<double>(timed_ns)
                               : r.cpu_busy_pct;
  // On a local file system the writer's time off the CPU and off its source was the
  // disk's. A push too short for a CPU figure still has its sync, all of it the disk's:
  // then that alone, a floor, and only the verdicts it can show (disk, source).
  const bool cpu_seen = figures.sender_cpu_pct >= 0;
  if (local_disk && timed_ns > 0) {
    figures.disk_wait_pct =
        cpu_seen ? std::max(0.0, 100.0 - figures.sender_cpu_pct - std::max(0.0, source_pct))
                 : 100.0 * static_cast<double>(r.ack_ns - r.last_byte_ns) / static_cast<double>(timed_ns);
  }
  if (local_disk && row.has_metadata_pct() && row.metadata_pct() >= kMetadataVerdictPct) {
    row.set_bottleneck(Name(Bottleneck::kMetadata));
  } else if (const std::string verdict = Verdict(figures);
             (local_disk && (cpu_seen || verdict == Name(Bottleneck::kDisk))) || verdict == Name(Bottleneck::kSource) ||
             verdict == Name(Bottleneck::kSenderCpu)) {
    row.set_bottleneck(verdict);
  }
  row.set_status(Name(Status::kOk));
}

void RemoteFsRun::Done(RemoteFs* fs, const std::string& path, bool ok, bool wrote, const FileSetTally* files) {
  if (files != nullptr && plan_.file_sizes) {
    for (uint64_t i = 0; i < files->created; ++i) {
      DoneWithFile(fs, SetFilePath(path, i, plan_.files_per_dir), ok, true);
    }
    for (uint64_t d = 0; d < files->dirs_created; ++d) DoneWithFile(fs, SetDirName(path, d) + "/", ok, true);
    return;
  }
  DoneWithFile(fs, path, ok, wrote);
}

void RemoteFsRun::DoneWithFile(RemoteFs* fs, const std::string& path, bool ok, bool wrote) {
  if (!ok) {
    // An existing file that was not ours stays: only one this transfer wrote goes.
    if (fs != nullptr && wrote && plan_.cleanup != Cleanup::kNever) Remove(*fs, path);
  } else if (plan_.cleanup == Cleanup::kEach) {
    if (fs != nullptr) Remove(*fs, path);
  } else if (plan_.cleanup == Cleanup::kEnd) {
    absl::MutexLock lock(&mu_);
    kept_.push_back(path);
  }
}

absl::StatusOr<std::string> RemoteFsRun::LayOutReadFile(RemoteFs& fs, const std::string& dir, const std::string& run_id,
                                                        uint64_t length) {
  const std::string path = PathInDir(dir, absl::StrCat("nasperf-", run_id, "-read.dat"));
  if (absl::StatusOr<uint64_t> free_bytes = fs.FreeBytes(dir); free_bytes.ok() && *free_bytes < length) {
    return absl::FailedPreconditionError(absl::StrCat(fs.Where(), ": ", dir, " has ", FormatSize(*free_bytes),
                                                      " free, the file to read needs ", FormatSize(length)));
  }
  absl::StatusOr<std::unique_ptr<RemoteFile>> file = fs.Create(path);
  if (!file.ok()) return file.status();
  std::unique_ptr<PayloadSource> source = GeneratedSource(Pattern::kRandom, /*seed=*/1);
  absl::Status status;
  for (uint64_t at = 0; at < length && status.ok();) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(PayloadSource::kChunk, length - at));
    absl::StatusOr<const uint8_t*> chunk = source->Chunk(at, n);
    status = chunk.ok() ? (*file)->PWrite(*chunk, n, at) : chunk.status();
    at += n;
  }
  if (status.ok()) status = (*file)->Settle();
  absl::Status closed = (*file)->Close();
  if (status.ok()) status = closed;
  if (!status.ok()) {
    Remove(fs, path);
    return absl::Status(status.code(), absl::StrCat("laying out the file to read: ", status.message()));
  }
  if (plan_.cleanup != Cleanup::kNever) {
    absl::MutexLock lock(&mu_);
    kept_.push_back(path);
  }
  return path;
}

bool RemoteFsRun::HasKept() {
  absl::MutexLock lock(&mu_);
  return !kept_.empty();
}

void RemoteFsRun::Finish(RemoteFs& fs) {
  std::vector<std::string> files;
  {
    absl::MutexLock lock(&mu_);
    files.swap(kept_);
  }
  for (const std::string& path : files) Remove(fs, path);
}

void RemoteFsRun::Remove(RemoteFs& fs, const std::string& path) const {
  const bool dir = !path.empty() && path.back() == '/';
  if (absl::Status s = dir ? fs.Rmdir(path.substr(0, path.size() - 1)) : fs.Unlink(path); !s.ok()) {
    Log(LogLevel::kWarning, kComponent, "%s", s.message());
  }
}

}  // namespace nasperf
