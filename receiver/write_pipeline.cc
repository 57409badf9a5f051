#include "receiver/write_pipeline.h"

#include <cstdlib>
#include <deque>
#include <memory>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/checksum.h"
#include "common/clock.h"
#include "common/fd.h"

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

// Shared by both RunPipeline variants: checksum and samples over bytes moved.
struct Progress {
  Progress(const PipelineOptions& options, int64_t start_ns)
      : sampler(options.interval_s, start_ns) {
    if (options.checksum) checksum = std::make_unique<StreamChecksum>();
  }
  void Moved(const uint8_t* data, size_t size, int64_t now_ns) {
    if (checksum) checksum->Update(data, size);
    sampler.Add(size, now_ns);
  }
  void Finish(PipelineResult* result, int64_t now_ns) {
    sampler.Finish(now_ns);
    result->samples = sampler.samples();
    if (checksum) {
      result->has_checksum = true;
      result->checksum = checksum->Digest();
    }
  }
  std::unique_ptr<StreamChecksum> checksum;
  IntervalSampler sampler;
};

// Reads up to `want` bytes; sets *eof when the source ended first.
absl::Status Fill(ByteSource& source, uint8_t* data, size_t want, size_t* got,
                  PipelineResult* result, int64_t (*clock)()) {
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
  result->status = status.ok() ? absl::AbortedError(absl::StrCat(
                                     "sender closed the connection after ", result->bytes_received,
                                     " of ", length, " bytes"))
                               : status;
}

PipelineResult RunDiscard(ByteSource& source, uint64_t length, const PipelineOptions& options) {
  PipelineResult result;
  AlignedBuffer buffer = AllocateAligned(options.buffer_size);
  std::unique_ptr<Progress> progress;
  int64_t read_ns = 0;
  while (result.bytes_received < length) {
    if (options.cancel != nullptr && options.cancel->load(std::memory_order_relaxed)) {
      Abort(&result, absl::AbortedError("receiver shutting down"), length);
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
      progress = std::make_unique<Progress>(options, now);
    } else {
      read_ns += now - before;
    }
    result.bytes_received += *n;
    progress->Moved(buffer.get(), *n, now);
  }
  result.last_byte_ns = result.written_ns = result.durable_ns = options.clock();
  result.bytes_written = result.bytes_received;
  result.net_wait_ns = read_ns;
  progress->Finish(&result, result.durable_ns);
  return result;
}

// The writer thread: takes full blocks in order, writes them, syncs every
// sync_every bytes and finishes the file after the last one. Time it waits for a
// block after the first byte arrived is net wait.
absl::Status WriteBlocks(Exchange& exchange, BlockWriter* writer, const PipelineOptions& options,
                         const std::atomic<int64_t>& first_byte_ns, PipelineResult& result) {
  std::unique_ptr<Progress> progress;
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
    if (!progress) {
      progress = std::make_unique<Progress>(options, first);
    }
    if (now > std::max(wait_start, first)) result.net_wait_ns += now - std::max(wait_start, first);

    absl::Status status = writer->Write(block.data, block.size, block.last);
    int64_t written = options.clock();
    result.write_ns += written - now;
    if (status.ok()) {
      result.bytes_written += block.size;
      progress->Moved(block.data, block.size, written);
      if (options.sync_every > 0 && result.bytes_written >= next_sync && !block.last) {
        status = writer->SyncData();
        int64_t synced = options.clock();
        result.write_ns += synced - written;
        while (next_sync <= result.bytes_written) next_sync += options.sync_every;
      }
    }
    if (status.ok() && block.last) {
      result.written_ns = options.clock();
      status = writer->Finish();
      result.durable_ns = options.clock();
      result.sync_ns = result.durable_ns - result.written_ns;
      progress->Finish(&result, result.written_ns);
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
  while (result.bytes_received < length) {
    if (options.cancel != nullptr && options.cancel->load(std::memory_order_relaxed)) {
      end = {absl::AbortedError("receiver shutting down"), true};
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
    }
    if (!status.ok() || got < want) {
      end = {status, true};
      absl::MutexLock lock(&exchange.mu);
      exchange.free.push_back(buffer);
      break;
    }
    bool last = result.bytes_received == length;
    if (last) result.last_byte_ns = options.clock();
    absl::MutexLock lock(&exchange.mu);
    exchange.full.push_back({buffer, got, last});
  }
  return end;
}



// The reader on the calling thread, the writer on its own; the writer's CPU time is
// added to result.cpu.
PipelineResult RunWithWriter(ByteSource& source, BlockWriter* writer, uint64_t length,
                             const PipelineOptions& options) {
  PipelineResult result;
  std::vector<AlignedBuffer> buffers;
  Exchange exchange;
  {
    absl::MutexLock lock(&exchange.mu);
    for (int i = 0; i < options.buffer_count; ++i) {
      buffers.push_back(AllocateAligned(options.buffer_size));
      exchange.free.push_back(buffers.back().get());
    }
  }
  std::atomic<int64_t> first_byte_ns{0};
  absl::Status writer_status;
  CpuTime writer_cpu;
  std::thread writer_thread([&] {
    const CpuTime start = ThreadCpuTime();
    writer_status = WriteBlocks(exchange, writer, options, first_byte_ns, result);
    writer_cpu = ThreadCpuTime() - start;
  });
  ReadEnd read = ReadBlocks(source, length, exchange, options, first_byte_ns, result);
  {
    absl::MutexLock lock(&exchange.mu);
    exchange.reader_stopped = true;
  }
  writer_thread.join();
  result.cpu += writer_cpu;

  if (!writer_status.ok()) {
    result.end = PipelineEnd::kFailed;
    result.status = writer_status;
    result.error_code = ErrnoOf(writer_status);
  } else if (read.aborted) {
    Abort(&result, read.status, length);
  }
  return result;
}

}  // namespace

PipelineResult RunPipeline(ByteSource& source, BlockWriter* writer, uint64_t length,
                           const PipelineOptions& options) {
  const CpuTime start = ThreadCpuTime();
  PipelineResult result =
      writer == nullptr ? RunDiscard(source, length, options) : RunWithWriter(source, writer, length, options);
  result.cpu += ThreadCpuTime() - start;
  return result;
}

}  // namespace nasperf
