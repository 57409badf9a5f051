#include "receiver/data_listener.h"

#include <errno.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>

#include "absl/strings/str_cat.h"
#include "common/clock.h"
#include "common/policy.h"
#include "common/units.h"
#include "datapath/rows.h"
#include "datapath/socket_source.h"
#include "measure/cache_knee.h"
#include "measure/disk_stats.h"
#include "measure/netinfo.h"
#include "receiver/read_session.h"

namespace nasperf {
namespace {

constexpr char kComponent[] = "receiver";
// A data connection must present its whole header this soon after accept, however
// it trickles in; one that arrives while more than half the unadmitted budget is in
// use (ConnectionThreads, "crowded") gets the shorter deadline: a real sender's
// header follows its connect at once, and a slow-header flood then turns its slots
// over five times as fast.
constexpr int64_t kHeaderDeadlineNs = 5'000'000'000;
constexpr int64_t kCrowdedHeaderDeadlineNs = 1'000'000'000;

}  // namespace

void DataListener::Stop() {
  if (stopping_.exchange(true)) return;
  ::shutdown(listener_.get(), SHUT_RDWR);
  if (accept_thread_.joinable()) accept_thread_.join();
  connections_.CloseAll();
}

void DataListener::AcceptLoop() {
  while (!stopping_.load()) {
    sockaddr_storage from{};
    socklen_t from_length = sizeof from;
    int fd = ::accept4(listener_.get(), reinterpret_cast<sockaddr*>(&from), &from_length, SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if (stopping_.load()) return;
      if (errno == EMFILE || errno == ENFILE) {
        Log(LogLevel::kError, kComponent, "accept: out of file descriptors");
        std::this_thread::sleep_for(std::chrono::milliseconds(100));  // back off, then retry
        continue;
      }
      Log(LogLevel::kError, kComponent, "accept: %s", strerror(errno));
      return;
    }
    const std::string source = SourceGroup(from);  // unadmitted connections are counted per source group
    switch (connections_.Start(fd, source, [this](int fd, bool crowded) { Serve(fd, crowded); })) {
      case ConnectionThreads::Refusal::kNone:
        break;
      case ConnectionThreads::Refusal::kTooMany:
        Refuse(source, "too many connections", &ReceiverCounters::over_limit);
        break;
      case ConnectionThreads::Refusal::kTooManyFromSource:
        Refuse(source, "too many connections from this source without a header yet", &ReceiverCounters::over_limit);
        break;
      case ConnectionThreads::Refusal::kUnadmittedBudgetFull:
        Refuse(source, "too many connections without a header yet", &ReceiverCounters::over_limit);
        break;
    }
  }
}

void DataListener::Count(uint64_t ReceiverCounters::*field) {
  absl::MutexLock lock(&counters_mu_);
  ++(counters_.*field);
}

// Counts the refusal; logs it unless a flood of them is under way.
void DataListener::Refuse(const std::string& peer, absl::string_view why, uint64_t ReceiverCounters::*counter) {
  Count(counter);
  uint64_t held = 0;
  if (refusal_log_.Allow(&held)) {
    Log(LogLevel::kWarning, kComponent, "refused data connection from %s: %s%s", peer, why, LogThrottle::Held(held));
  }
}

// The header phase: the whole header by header_deadline_ns and a ticket the table
// accepts, or the connection is refused (nothing exists yet).
std::optional<TransferPlan> DataListener::Admit(int fd, const std::string& peer, int64_t header_deadline_ns) {
  uint8_t header_bytes[kHeaderSize];
  absl::StatusOr<size_t> got = ReadFullBy(fd, header_bytes, sizeof header_bytes, header_deadline_ns, "read header");
  // A connection without a whole header is shut down before its slot is freed, so a
  // flood that turns its slots over never holds more than the budget open at once.
  if (!got.ok() || *got < kHeaderSize) ::shutdown(fd, SHUT_RDWR);
  if (!connections_.HeaderDone(fd)) {
    Refuse(peer, "dropped without a header to make room for another source", &ReceiverCounters::over_limit);
    return std::nullopt;
  }
  if (!got.ok()) {
    Refuse(peer, got.status().message(),
           absl::IsDeadlineExceeded(got.status()) ? &ReceiverCounters::timed_out : &ReceiverCounters::refused);
    return std::nullopt;
  }
  if (*got == 0) {
    // The sender's path check connects only to learn the MSS; not an attack.
    Log(LogLevel::kDebug, kComponent, "data connection from %s closed without a header", peer);
    return std::nullopt;
  }
  if (*got < kHeaderSize) {
    Refuse(peer, absl::StrCat("truncated header (", *got, " of ", kHeaderSize, " bytes)"));
    return std::nullopt;
  }
  absl::StatusOr<DataHeader> header = DecodeHeader(header_bytes, sizeof header_bytes);
  if (!header.ok()) {
    Refuse(peer, header.status().message());
    return std::nullopt;
  }
  absl::StatusOr<TransferPlan> claimed = table_.Claim(*header);
  if (!claimed.ok()) {
    Refuse(peer, claimed.status().message());
    DataTrailer refusal;
    refusal.status = TrailerStatus::kFailed;
    refusal.error_code = EACCES;
    SendTrailer(fd, refusal);
    return std::nullopt;
  }
  return std::move(*claimed);
}

// The sender's footer right after the payload. Without a usable one the transfer
// still counts (its bytes are all there); only the verdict cannot name the source.
std::optional<DataFooter> DataListener::ReadFooter(int fd, uint64_t id, const std::string& peer) {
  uint8_t bytes[kFooterSize];
  absl::StatusOr<size_t> got = ReadFull(fd, bytes, sizeof bytes, "read footer");
  absl::StatusOr<DataFooter> footer = !got.ok() ? absl::StatusOr<DataFooter>(got.status())
                                      : *got < kFooterSize
                                          ? absl::DataLossError("the connection ended before the footer")
                                          : DecodeFooter(bytes, sizeof bytes);
  if (footer.ok()) return *footer;
  Log(LogLevel::kWarning, kComponent,
      "transfer %d from %s: no usable footer (%s); its verdict cannot name the "
      "sender's source",
      id, peer, footer.status().message());
  return std::nullopt;
}

void DataListener::SendTrailer(int fd, const DataTrailer& trailer) {
  auto bytes = EncodeTrailer(trailer);
  (void)WriteAll(fd, bytes.data(), bytes.size(), "send trailer");  // the sender may be gone
}

// --tree: the set's sizes, right after the header, checked against the open request.
absl::Status DataListener::ReadFileSizes(int fd, TransferPlan& plan) {
  const uint64_t count = plan.request.file_count();  // 1..kMaxSetFiles, checked at open
  std::vector<uint8_t> bytes(count * kFileSizeBytes);
  absl::StatusOr<size_t> got = ReadFull(fd, bytes.data(), bytes.size(), "read file sizes");
  if (!got.ok()) return got.status();
  if (*got < bytes.size()) {
    return absl::DataLossError(absl::StrCat("the connection ended ", *got, " bytes into ", count, " files' sizes"));
  }
  auto sizes = DecodeFileSizes(bytes.data(), bytes.size(), count, plan.request.size());
  if (!sizes.ok()) return sizes.status();
  plan.file_sizes = std::make_shared<const std::vector<uint64_t>>(*std::move(sizes));
  return absl::OkStatus();
}

// The payload into a new file, or a set of them (or nowhere, for discard) through the
// write pipeline; a transfer that did not end ok leaves no file. *files: the files
// made, empty when none; *set: a set's tally.
PipelineResult DataListener::ReceiveInto(int fd, const TransferPlan& plan, std::vector<std::string>* files,
                                         FileSetTally* set) {
  const proto::OpenTransferRequest& request = plan.request;
  std::unique_ptr<BlockWriter> writer;
  PipelineResult result;
  if (!target_.discard()) {
    std::string name = TransferFileName(request.run_id(), request.iteration(), request.stream());
    absl::StatusOr<std::unique_ptr<BlockWriter>> created;
    if (plan.file_sizes) {
      created = target_.CreateSet(name, plan.file_sizes, request.files_per_dir(), plan.mode, plan.sync, set, files);
    } else {
      std::string file_name;
      created = target_.Create(name, plan.mode, plan.sync, &file_name);
      if (created.ok()) files->push_back(std::move(file_name));
    }
    if (!created.ok()) {
      result.end = PipelineEnd::kFailed;
      result.status = created.status();
      result.error_code = ErrnoOf(created.status());
    } else {
      writer = std::move(*created);
    }
  }
  if (result.end == PipelineEnd::kOk) {
    SetReceiveTimeout(fd, absl::ToDoubleSeconds(options_.idle_timeout));
    SocketSource source(fd);
    PipelineOptions pipeline;
    pipeline.sync_every = plan.sync.kind == SyncPolicy::kEvery ? plan.sync.every_bytes : 0;
    pipeline.checksum = request.checksum();
    pipeline.interval_s = request.interval_s();
    pipeline.cancel = &stopping_;
    result = RunPipeline(source, writer.get(), request.size(), pipeline);
    writer.reset();  // closes the file if the pipeline did not finish it
  }
  if (result.end != PipelineEnd::kOk) {
    for (const std::string& name : *files) {
      if (absl::Status s = target_.Remove(name); !s.ok()) Log(LogLevel::kError, kComponent, "%s", s.message());
    }
  }
  return result;
}

void DataListener::Serve(int fd, bool crowded) {
  const std::string peer = PeerName(fd);
  const int64_t accepted_ns = MonoNanos();
  const int64_t accepted_wall = WallNanos();
  std::optional<TransferPlan> admitted =
      Admit(fd, peer, accepted_ns + (crowded ? kCrowdedHeaderDeadlineNs : kHeaderDeadlineNs));
  if (!admitted) return;
  SetReceiveTimeout(fd, 10);  // the payload: a sender silent this long is gone
  TransferPlan& plan = *admitted;
  const proto::OpenTransferRequest& request = plan.request;

  SessionFacts facts;
  facts.host = host_;
  facts.peer = peer;
  facts.accepted_wall_ns = accepted_wall;
  facts.discard = target_.discard();
  if (auto interface = InterfaceOfSocket(fd); interface.ok()) {
    facts.mtu = interface->mtu;
    facts.link_mbps = interface->link_mbps;
  }
  if (request.link_mbps() > 0) facts.link_mbps = request.link_mbps();  // the sender's --link-speed
  facts.mss = SocketMss(fd);
  proto::TransferReport report = AdmittedRow(plan, facts);
  // The NAS's devices over this transfer: which one under the target held it back.
  std::optional<DeviceWatch> devices;
  if (!target_.discard()) devices.emplace(target_devices_);
  if (plan.direction == Direction::kRead) {
    ServeReadOn(fd, plan, accepted_ns, facts, report);
  } else {
    ServeWrite(fd, plan, peer, accepted_ns, facts, report);
  }
  if (devices) {
    const DeviceWatchResult figures = devices->Stop();
    AddDeviceColumns(figures, &report);
    // The samples count from the first byte.
    AddSampleDevices(figures, accepted_ns + static_cast<int64_t>(report.first_byte_s() * 1e9), &report);
  }
  const Status status = Parse<Status>(report.status()).value_or(Status::kFailed);
  Count(status == Status::kOk       ? &ReceiverCounters::ok
        : status == Status::kFailed ? &ReceiverCounters::failed
                                    : &ReceiverCounters::aborted);
  if (status == Status::kOk) {
    Log(LogLevel::kDebug, kComponent, "transfer %d %s %s: %s in %.3f s, %.1f MB/s, %s%s%s", plan.id,
        plan.direction == Direction::kRead ? "to" : "from", peer, FormatSize(report.bytes()), report.duration_s(),
        report.mb_per_s(), report.bottleneck(), report.disk_detail().empty() ? "" : ": ", report.disk_detail());
  } else {
    Log(LogLevel::kWarning, kComponent, "transfer %d %s %s %s: %s", plan.id,
        plan.direction == Direction::kRead ? "to" : "from", peer, report.status(), report.error());
  }
  if (options_.reports != nullptr) {
    if (absl::Status s = options_.reports->Submit(report); !s.ok()) {
      Log(LogLevel::kError, kComponent, "cannot keep the report of transfer %d: %s", plan.id, s.message());
    }
  }
  table_.Complete(plan.id, std::move(report));
}

// A write: the payload into the target, the footer, the trailer, cleanup, figures.
void DataListener::ServeWrite(int fd, TransferPlan& plan, const std::string& peer, int64_t accepted_ns,
                              const SessionFacts& facts, proto::TransferReport& report) {
  const proto::OpenTransferRequest& request = plan.request;
  if (request.window_bytes() > 0) SetSocketBuffer(fd, SO_RCVBUF, request.window_bytes());
  std::vector<std::string> files;
  FileSetTally set;
  PipelineResult result;
  if (absl::Status sizes = plan.file_sizes_follow ? ReadFileSizes(fd, plan) : absl::OkStatus(); !sizes.ok()) {
    result.end = PipelineEnd::kFailed;
    result.status = sizes;
    result.error_code = EPROTO;
  } else {
    result = ReceiveInto(fd, plan, &files, &set);
  }
  std::optional<DataFooter> footer;
  if (result.end == PipelineEnd::kOk && request.sends_footer()) footer = ReadFooter(fd, plan.id, peer);
  SendTrailer(fd, TrailerFor(result));
  if (result.end == PipelineEnd::kFailed) DrainBriefly(fd);

  if (result.end == PipelineEnd::kOk) {
    for (const std::string& name : files) {
      if (plan.cleanup == Cleanup::kEach) {
        (void)target_.Remove(name);
      } else if (plan.cleanup == Cleanup::kEnd) {
        table_.KeepUntilRunEnds(request.run_id(), name);
      }
    }
  }
  AddFigures(result, accepted_ns, facts.link_mbps, footer, &report);
  if (target_.in_memory()) ClearCacheKnee(report);
  if (plan.file_sizes && !target_.discard()) {
    RecordFileSet(set, *plan.file_sizes, result.first_byte_ns, result.durable_ns, report);
    // Half the span went on the files' fixed cost here (creates, fsyncs, closes: the
    // intercept, so no wait for bytes from the network or the sender's source is in it),
    // whatever the byte figures said: a set sent in milliseconds into socket buffers
    // reads as the sender's CPU busy to its last byte.
    if (report.metadata_pct() >= kMetadataVerdictPct) {
      report.set_bottleneck(Name(Bottleneck::kMetadata));
    }
  }
}

// A read: the file to the client (read_session.h); this thread's CPU is the row's.
void DataListener::ServeReadOn(int fd, const TransferPlan& plan, int64_t accepted_ns, const SessionFacts& facts,
                               proto::TransferReport& report) {
  const proto::OpenTransferRequest& request = plan.request;
  if (request.window_bytes() > 0) SetSocketBuffer(fd, SO_SNDBUF, request.window_bytes());
  // A client that stops taking bytes is gone after --idle-timeout, as a silent sender is.
  SetSendTimeout(fd, absl::ToDoubleSeconds(options_.idle_timeout));
  const CpuTime cpu_start = ThreadCpuTime();
  ServedRead served = ServeRead(fd, plan, target_, &stopping_);
  const CpuTime cpu = ThreadCpuTime() - cpu_start;
  if (!served.push.trailer) {
    if (ErrnoOf(served.push.status) == EAGAIN) {
      served.push.status = absl::DeadlineExceededError("the client took no data within --idle-timeout");
    }
    // Megabytes may still wait in the socket for a client that reads nothing: reset
    // the connection at close instead of holding them (and the client) until it does.
    const linger reset{1, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &reset, sizeof reset);
  }
  report.clear_write_mode();
  report.clear_sync_policy();
  report.set_cache(request.cache());
  report.set_read_mode(Name(plan.read_mode));
  if (served.resident_pct >= 0) report.set_cache_resident_pct(served.resident_pct);
  AddReadAgentFigures(served.push, accepted_ns, request.size(), request.checksum(), facts.link_mbps, &report);
  report.set_cpu_user_s(cpu.user_s);
  report.set_cpu_sys_s(cpu.sys_s);
}

// After a failure mid-stream the sender is still sending; reading (and dropping)
// for a moment lets it finish its writes and read the trailer instead of meeting a
// reset that would throw the trailer away.
void DataListener::DrainBriefly(int fd) {
  ::shutdown(fd, SHUT_WR);
  SetReceiveTimeout(fd, 0.25);
  static thread_local uint8_t sink[1 << 16];
  int64_t deadline = MonoNanos() + 2'000'000'000LL;
  while (MonoNanos() < deadline && !stopping_.load()) {
    ssize_t n = ::recv(fd, sink, sizeof sink, 0);
    if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) break;
  }
}

}  // namespace nasperf
