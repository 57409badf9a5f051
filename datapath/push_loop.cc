#include "datapath/push_loop.h"

#include <algorithm>
#include <memory>

#include "common/checksum.h"
#include "common/clock.h"
#include "measure/cpu_quota.h"

namespace nasperf {

LoopOutcome PushLoop(PayloadSource& source, uint64_t length, const PushOptions& options, ChunkWriter& writer,
                     PushResult& r) {
  std::unique_ptr<StreamChecksum> checksum;
  if (options.checksum) checksum = std::make_unique<StreamChecksum>();
  const int file_fd = source.file_fd();
  bool zero_copy = checksum == nullptr && file_fd >= 0 && writer.ZeroCopy();
  CpuBusy busy;
  busy.Start();
  CpuQuotaSpan quota;  // read here and at the last byte only: never per piece
  quota.Start();
  r.first_byte_ns = MonoNanos();
  r.sampler = IntervalSampler(options.interval_s, r.first_byte_ns);
  // Acknowledged bytes count from here: what came before (the header) is not payload.
  const std::optional<uint64_t> acked_before = writer.Acknowledged();
  auto sample = [&](int64_t now_ns) {
    uint64_t crossed = r.bytes_sent;
    if (acked_before) {
      const std::optional<uint64_t> acked = writer.Acknowledged();
      crossed = acked ? std::min(r.bytes_sent, *acked - std::min(*acked, *acked_before)) : r.sampled_bytes;
    }
    crossed = std::max(crossed, r.sampled_bytes);
    r.sampler.Add(crossed - r.sampled_bytes, now_ns);
    r.sampled_bytes = crossed;
  };
  LoopOutcome outcome;
  while (r.bytes_sent < length) {
    if (options.cancel != nullptr && options.cancel->load(std::memory_order_relaxed)) {
      outcome = {LoopEnd::kCancelled,
                 absl::CancelledError("aborted: the run was stopped (Ctrl-C, or the lab controller)")};
      break;
    }
    size_t size = static_cast<size_t>(std::min<uint64_t>(PayloadSource::kChunk, length - r.bytes_sent));
    if (zero_copy) {
      absl::StatusOr<size_t> sent = writer.WriteFromFile(file_fd, r.bytes_sent, size, &r.source_ns);
      if (absl::IsUnimplemented(sent.status()) && r.bytes_sent == 0) {
        zero_copy = false;  // this file cannot go without a copy (no splice on its file system): copy it
        continue;
      }
      if (!sent.ok()) {
        // OUT_OF_RANGE: the file ended early, which is the source's failure, as on the copy path.
        outcome = {absl::IsOutOfRange(sent.status()) ? LoopEnd::kSourceFailed : LoopEnd::kWriteFailed, sent.status()};
        break;
      }
      size = *sent;
      r.zero_copy = true;
    } else {
      const int64_t before = MonoNanos();
      absl::StatusOr<const uint8_t*> chunk = source.Chunk(r.bytes_sent, size);
      r.source_ns += MonoNanos() - before;
      if (!chunk.ok()) {
        outcome = {LoopEnd::kSourceFailed, chunk.status()};
        break;
      }
      if (checksum != nullptr) checksum->Update(*chunk, size);
      if (absl::Status written = writer.Write(*chunk, size, r.bytes_sent); !written.ok()) {
        outcome = {LoopEnd::kWriteFailed, written};
        break;
      }
    }
    r.bytes_sent += size;
    if (const int64_t now = MonoNanos(); r.sampler.Due(now)) sample(now);
    if (options.progress != nullptr) options.progress->fetch_add(size, std::memory_order_relaxed);
  }
  r.last_byte_ns = MonoNanos();
  busy.Stop();
  quota.Stop();
  r.cpu_busy_pct = busy.Pct();
  r.cpu_quota_pct = quota.ThrottledPct();
  if (options.cpu_seen != nullptr) {
    options.cpu_seen->sender_cpu_pct = r.cpu_busy_pct;
    options.cpu_seen->sender_quota_pct = r.cpu_quota_pct;
  }
  sample(r.last_byte_ns);
  if (checksum != nullptr) {
    r.has_checksum = true;
    r.checksum = checksum->Digest();
  }
  return outcome;
}

std::vector<IntervalSample> FinishedSamples(const PushResult& r) {
  IntervalSampler sampler = r.sampler;
  if (r.sampled_bytes < r.bytes_sent) {
    const int64_t end = std::max(r.last_byte_ns, r.ack_ns);
    sampler.Add(r.bytes_sent - r.sampled_bytes, end);
    sampler.Finish(end);
  } else {
    sampler.Finish(r.last_byte_ns);
  }
  return sampler.samples();
}

}  // namespace nasperf
