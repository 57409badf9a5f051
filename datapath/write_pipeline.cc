#include "datapath/write_pipeline.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <deque>
#include <memory>
#include <optional>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/checksum.h"
#include "common/clock.h"
#include "common/fd.h"
#include "common/huge_buffer.h"
#include "measure/cpu_quota.h"

namespace nasperf {
namespace {

struct AlignedFree {
  void operator()(uint8_t* p) const { std::free(p); }
};
using AlignedBuffer = std::unique_ptr<uint8_t, AlignedFree>;

AlignedBuffer AllocateAligned(size_t size) {
  return AlignedBuffer(static_cast<uint8_t*>(std::aligned_alloc(kPipelineAlignment, size)));
}

struct Block {
  uint8_t* data = nullptr;
  size_t size = 0;
  bool last = false;
};

// The bounded buffer between the reader and the writer, plus how each side ended.
struct Exchange {
  absl::Mutex mu;
  std::deque<Block> full ABSL_GUARDED_BY(mu);
  std::vector<uint8_t*> free ABSL_GUARDED_BY(mu);
  bool reader_stopped ABSL_GUARDED_BY(mu) = false;  // no more blocks will come
  bool writer_stopped ABSL_GUARDED_BY(mu) = false;  // failed: take no more blocks
};

std::unique_ptr<StreamChecksum> ChecksumFor(const PipelineOptions& options) {
  return options.checksum ? std::make_unique<StreamChecksum>() : nullptr;
}

void FinishChecksum(const std::unique_ptr<StreamChecksum>& checksum, PipelineResult* result) {
  if (checksum == nullptr) return;
  result->has_checksum = true;
  result->checksum = checksum->Digest();
}

// Samples count what has arrived: bytes read plus those still queued in the socket.
// Bytes moved on would do on an idle machine, but a reader that a busy core held
// back drains the queue at memory speed afterwards, which plots as a sample faster
// than the link. Owned by the thread that reads the source.
class ArrivalSampler {
 public:
  ArrivalSampler(const PipelineOptions& options, int64_t start_ns) : sampler_(options.interval_s, start_ns) {}
  // After each read: `received` bytes read of `length` so far. Asks the socket only
  // when a sample is due.
  void Read(const ByteSource& source, uint64_t received, uint64_t length, int64_t now_ns) {
    if (!sampler_.Due(now_ns)) return;
    uint64_t arrived = received;
    if (const std::optional<uint64_t> queued = source.Queued()) arrived = std::min(length, received + *queued);
    Count(arrived, now_ns);
  }
  // Closes the timeline at the last byte.
  std::vector<IntervalSample> Finish(uint64_t received, int64_t now_ns) {
    Count(received, now_ns);
    sampler_.Finish(now_ns);
    return sampler_.samples();
  }

 private:
  void Count(uint64_t arrived, int64_t now_ns) {
    arrived = std::max(arrived, sampled_);
    sampler_.Add(arrived - sampled_, now_ns);
    sampled_ = arrived;
  }
  IntervalSampler sampler_;
  uint64_t sampled_ = 0;
};

// Reads up to `want` bytes; sets *eof when the source ended first.
absl::Status Fill(ByteSource& source, uint8_t* data, size_t want, size_t* got, PipelineResult* result,
                  int64_t (*clock)()) {
  *got = 0;
  while (*got < want) {
    absl::StatusOr<size_t> n = source.Read(data + *got, want - *got);
    if (!n.ok()) return n.status();
    if (*n == 0) break;
    if (result->first_byte_ns == 0) result->first_byte_ns = clock();
    *got += *n;
    result->bytes_received += *n;
  }
  return absl::OkStatus();
}

void Abort(PipelineResult* result, absl::Status status, uint64_t length) {
  result->end = PipelineEnd::kAborted;
  result->error_code = ErrnoOf(status);
  result->status = status.ok() ? absl::AbortedError(absl::StrCat("sender closed the connection after ",
                                                                 result->bytes_received, " of ", length, " bytes"))
                               : status;
}

PipelineResult RunDiscard(ByteSource& source, uint64_t length, const PipelineOptions& options) {
  PipelineResult result;
  AlignedBuffer buffer = AllocateAligned(options.buffer_size);
  std::unique_ptr<StreamChecksum> checksum = ChecksumFor(options);
  std::optional<ArrivalSampler> arrivals;
  int64_t read_ns = 0;
  CpuBusy busy;
  busy.Start();
  while (result.bytes_received < length) {
    if (options.cancel != nullptr && options.cancel->load(std::memory_order_relaxed)) {
      Abort(&result, absl::AbortedError("stopped: shutting down or interrupted"), length);
      return result;
    }
    size_t want = static_cast<size_t>(std::min<uint64_t>(options.buffer_size, length - result.bytes_received));
    // One Read per loop: a discard target keeps up with whatever the socket hands over.
    int64_t before = options.clock();
    absl::StatusOr<size_t> n = source.Read(buffer.get(), want);
    int64_t now = options.clock();
    if (!n.ok() || *n == 0) {
      Abort(&result, n.ok() ? absl::OkStatus() : n.status(), length);
      return result;
    }
    if (result.first_byte_ns == 0) {
      result.first_byte_ns = now;
      arrivals.emplace(options, now);
    } else {
      read_ns += now - before;
    }
    result.bytes_received += *n;
    if (checksum) checksum->Update(buffer.get(), *n);
    arrivals->Read(source, result.bytes_received, length, now);
  }
  busy.Stop();
  result.cpu_busy_pct = busy.Pct();
  result.last_byte_ns = result.written_ns = result.durable_ns = options.clock();
  result.bytes_written = result.bytes_received;
  result.net_wait_ns = read_ns;
  result.samples = arrivals->Finish(result.bytes_received, result.durable_ns);
  FinishChecksum(checksum, &result);
  return result;
}

// The writer thread: takes full blocks in order, writes them, syncs every
// sync_every bytes and finishes the file after the last one. Time it waits for a
// block after the first byte arrived is net wait.
absl::Status WriteBlocks(Exchange& exchange, BlockWriter* writer, const PipelineOptions& options,
                         const std::atomic<int64_t>& first_byte_ns, PipelineResult& result, CpuBusy& busy) {
  std::unique_ptr<StreamChecksum> checksum = ChecksumFor(options);
  uint64_t next_sync = options.sync_every;
  while (true) {
    int64_t wait_start = options.clock();
    Block block;
    {
      absl::MutexLock lock(&exchange.mu);
      auto ready = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(exchange.mu) {
        return !exchange.full.empty() || exchange.reader_stopped;
      };
      exchange.mu.Await(absl::Condition(&ready));
      if (exchange.full.empty()) return absl::OkStatus();  // the reader aborted
      block = exchange.full.front();
      exchange.full.pop_front();
    }
    int64_t now = options.clock();
    int64_t first = first_byte_ns.load(std::memory_order_acquire);
    if (now > std::max(wait_start, first)) result.net_wait_ns += now - std::max(wait_start, first);

    absl::Status status = writer->Write(block.data, block.size, block.last);
    int64_t written = options.clock();
    result.write_ns += written - now;
    if (status.ok()) {
      result.bytes_written += block.size;
      if (checksum) checksum->Update(block.data, block.size);
      if (options.sync_every > 0 && result.bytes_written >= next_sync && !block.last) {
        status = writer->SyncData();
        int64_t synced = options.clock();
        result.write_ns += synced - written;
        while (next_sync <= result.bytes_written) next_sync += options.sync_every;
      }
    }
    if (status.ok() && block.last) {
      busy.Stop();
      result.written_ns = options.clock();
      status = writer->Finish();
      result.durable_ns = options.clock();
      result.sync_ns = result.durable_ns - result.written_ns;
      FinishChecksum(checksum, &result);
    }
    absl::MutexLock lock(&exchange.mu);
    exchange.free.push_back(block.data);
    if (!status.ok()) {
      exchange.writer_stopped = true;
      return status;
    }
    if (block.last) return absl::OkStatus();
  }
}

struct ReadEnd {
  absl::Status status;
  bool aborted = false;  // the stream ended short, failed or was cancelled
};

// The reader, on the caller's thread: fills free blocks from the source and hands
// them over in order. Time it waits for a free block is disk wait.
ReadEnd ReadBlocks(ByteSource& source, uint64_t length, Exchange& exchange, const PipelineOptions& options,
                   std::atomic<int64_t>& first_byte_ns, PipelineResult& result) {
  ReadEnd end;
  std::optional<ArrivalSampler> arrivals;
  while (result.bytes_received < length) {
    if (options.cancel != nullptr && options.cancel->load(std::memory_order_relaxed)) {
      end = {absl::AbortedError("stopped: shutting down or interrupted"), true};
      break;
    }
    int64_t wait_start = options.clock();
    uint8_t* buffer = nullptr;
    {
      absl::MutexLock lock(&exchange.mu);
      auto ready = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(exchange.mu) {
        return !exchange.free.empty() || exchange.writer_stopped;
      };
      exchange.mu.Await(absl::Condition(&ready));
      if (exchange.writer_stopped) break;
      buffer = exchange.free.back();
      exchange.free.pop_back();
    }
    if (result.first_byte_ns != 0) result.disk_wait_ns += options.clock() - wait_start;

    size_t want = static_cast<size_t>(std::min<uint64_t>(options.buffer_size, length - result.bytes_received));
    size_t got = 0;
    bool had_first = result.first_byte_ns != 0;
    absl::Status status = Fill(source, buffer, want, &got, &result, options.clock);
    if (!had_first && result.first_byte_ns != 0) {
      first_byte_ns.store(result.first_byte_ns, std::memory_order_release);
      arrivals.emplace(options, result.first_byte_ns);
    }
    if (arrivals) arrivals->Read(source, result.bytes_received, length, options.clock());
    if (!status.ok() || got < want) {
      end = {status, true};
      absl::MutexLock lock(&exchange.mu);
      exchange.free.push_back(buffer);
      break;
    }
    bool last = result.bytes_received == length;
    if (last) {
      result.last_byte_ns = options.clock();
      result.samples = arrivals->Finish(result.bytes_received, result.last_byte_ns);
    }
    absl::MutexLock lock(&exchange.mu);
    exchange.full.push_back({buffer, got, last});
  }
  return end;
}

// The reader on the calling thread, the writer on its own; the writer's CPU time is
// added to result.cpu.
PipelineResult RunWithWriter(ByteSource& source, BlockWriter* writer, uint64_t length, const PipelineOptions& options) {
  PipelineResult result;
  // One region of huge pages for every buffer: an O_DIRECT writer's 1 MiB reaches the
  // disk as one request, not two (common/huge_buffer.h).
  HugeBuffer buffers(options.buffer_size * static_cast<size_t>(options.buffer_count));
  if (buffers.data() == nullptr) {
    result.end = PipelineEnd::kFailed;
    result.status = absl::ResourceExhaustedError("no memory for the write pipeline's buffers");
    return result;
  }
  Exchange exchange;
  {
    absl::MutexLock lock(&exchange.mu);
    for (int i = 0; i < options.buffer_count; ++i) exchange.free.push_back(buffers.data() + i * options.buffer_size);
  }
  std::atomic<int64_t> first_byte_ns{0};
  absl::Status writer_status;
  CpuTime writer_cpu;
  CpuBusy writer_busy, reader_busy;
  std::thread writer_thread([&] {
    const CpuTime start = ThreadCpuTime();
    writer_busy.Start();
    writer_status = WriteBlocks(exchange, writer, options, first_byte_ns, result, writer_busy);
    writer_cpu = ThreadCpuTime() - start;
  });
  reader_busy.Start();
  ReadEnd read = ReadBlocks(source, length, exchange, options, first_byte_ns, result);
  reader_busy.Stop();
  {
    absl::MutexLock lock(&exchange.mu);
    exchange.reader_stopped = true;
  }
  writer_thread.join();
  result.cpu += writer_cpu;
  result.cpu_busy_pct = std::max(reader_busy.Pct(), writer_busy.Pct());

  if (!writer_status.ok()) {
    result.end = PipelineEnd::kFailed;
    result.status = writer_status;
    result.error_code = ErrnoOf(writer_status);
  } else if (read.aborted) {
    Abort(&result, read.status, length);
  }
  return result;
}

// The spliced path, all on the caller's thread: socket → pipe by page reference,
// pipe → file (the kernel's one copy, into the page cache) or → /dev/null. The
// socket's receive buffer is the queue between the halves: time blocked in the
// socket half after the first byte is net wait, time in the file half (and periodic
// syncs) is disk wait, since meanwhile nothing empties that buffer.
class SplicedRun {
 public:
  SplicedRun(const ByteSource& source, BlockWriter* writer, SplicePipe pipe, Fd null_device, uint64_t length,
             const PipelineOptions& options)
      : source_(source),
        socket_fd_(source.SpliceFd()),
        writer_(writer),
        pipe_(std::move(pipe)),
        null_(std::move(null_device)),
        length_(length),
        options_(options) {}

  PipelineResult Run() {
    result_.spliced = true;
    CpuBusy busy;
    busy.Start();
    uint64_t next_sync = options_.sync_every;
    while (result_.bytes_received < length_) {
      if (options_.cancel != nullptr && options_.cancel->load(std::memory_order_relaxed)) {
        Abort(&result_, absl::AbortedError("stopped: shutting down or interrupted"), length_);
        return std::move(result_);
      }
      absl::StatusOr<size_t> in = FromSocket();
      if (!in.ok() || *in == 0) {
        Abort(&result_, in.ok() ? absl::OkStatus() : in.status(), length_);
        return std::move(result_);
      }
      const int64_t before = options_.clock();
      absl::Status status = Drain(*in);
      if (status.ok() && options_.sync_every > 0 && result_.bytes_written >= next_sync &&
          result_.bytes_written < length_) {
        status = writer_->SyncData();
        while (next_sync <= result_.bytes_written) next_sync += options_.sync_every;
      }
      const int64_t after = options_.clock();
      result_.write_ns += after - before;
      result_.disk_wait_ns += after - before;
      if (!status.ok()) {
        result_.end = PipelineEnd::kFailed;
        result_.status = status;
        result_.error_code = ErrnoOf(status);
        return std::move(result_);
      }
      arrivals_->Read(source_, result_.bytes_received, length_, after);
    }
    busy.Stop();
    result_.cpu_busy_pct = busy.Pct();
    result_.written_ns = options_.clock();
    absl::Status finished = writer_ != nullptr ? writer_->Finish() : absl::OkStatus();
    result_.durable_ns = options_.clock();
    result_.sync_ns = result_.durable_ns - result_.written_ns;
    result_.samples = arrivals_->Finish(result_.bytes_received, result_.written_ns);
    if (!finished.ok()) {
      result_.end = PipelineEnd::kFailed;
      result_.status = finished;
      result_.error_code = ErrnoOf(finished);
    }
    return std::move(result_);
  }

 private:
  // Up to a pipe's worth from the socket; 0 at EOF.
  absl::StatusOr<size_t> FromSocket() {
    const size_t want = static_cast<size_t>(std::min<uint64_t>(pipe_.capacity, length_ - result_.bytes_received));
    const int64_t before = options_.clock();
    ssize_t n;
    do {
      n = ::splice(socket_fd_, nullptr, pipe_.write_end.get(), nullptr, want, SPLICE_F_MOVE);
    } while (n < 0 && errno == EINTR);
    const int64_t now = options_.clock();
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      return absl::DeadlineExceededError("no data from the sender within --idle-timeout");
    }
    if (n < 0) return ErrnoStatus(errno, "receive from sender");
    if (n == 0) return 0;
    if (result_.first_byte_ns == 0) {
      result_.first_byte_ns = now;
      arrivals_.emplace(options_, now);
    } else {
      result_.net_wait_ns += now - before;
    }
    result_.bytes_received += static_cast<uint64_t>(n);
    if (result_.bytes_received == length_) result_.last_byte_ns = now;
    return static_cast<size_t>(n);
  }

  // Empties the pipe into the file (or /dev/null).
  absl::Status Drain(size_t size) {
    if (writer_ != nullptr) {
      absl::Status written = writer_->WriteFromPipe(pipe_.read_end.get(), size);
      if (written.ok()) result_.bytes_written += size;
      return written;
    }
    for (size_t left = size; left > 0;) {
      ssize_t n = ::splice(pipe_.read_end.get(), nullptr, null_.get(), nullptr, left, SPLICE_F_MOVE);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return ErrnoStatus(n < 0 ? errno : EIO, "splice into /dev/null");
      left -= static_cast<size_t>(n);
    }
    result_.bytes_written += size;
    return absl::OkStatus();
  }

  const ByteSource& source_;
  const int socket_fd_;
  BlockWriter* const writer_;
  SplicePipe pipe_;
  Fd null_;
  const uint64_t length_;
  const PipelineOptions& options_;
  PipelineResult result_;
  std::optional<ArrivalSampler> arrivals_;
};

// The spliced run when nothing needs to see the bytes and both ends allow it; else
// nullopt (the caller copies).
std::optional<PipelineResult> TrySpliced(ByteSource& source, BlockWriter* writer, uint64_t length,
                                         const PipelineOptions& options) {
  if (options.checksum || source.SpliceFd() < 0 || (writer != nullptr && !writer->TakesPipe())) {
    return std::nullopt;
  }
  Fd null_device;
  if (writer == nullptr) {
    null_device = Fd(::open("/dev/null", O_WRONLY | O_CLOEXEC));
    if (!null_device.valid()) return std::nullopt;
  }
  absl::StatusOr<SplicePipe> pipe = OpenSplicePipe(options.buffer_size);
  if (!pipe.ok()) return std::nullopt;
  return SplicedRun(source, writer, std::move(*pipe), std::move(null_device), length, options).Run();
}

}  // namespace

PipelineResult RunPipeline(ByteSource& source, BlockWriter* writer, uint64_t length, const PipelineOptions& options) {
  const CpuTime start = ThreadCpuTime();
  CpuQuotaSpan quota;  // read here and at the end only: never per block
  quota.Start();
  std::optional<PipelineResult> spliced = TrySpliced(source, writer, length, options);
  PipelineResult result = spliced             ? std::move(*spliced)
                          : writer == nullptr ? RunDiscard(source, length, options)
                                              : RunWithWriter(source, writer, length, options);
  result.cpu += ThreadCpuTime() - start;
  quota.Stop();
  result.cpu_quota_pct = quota.ThrottledPct();
  return result;
}

}  // namespace nasperf
