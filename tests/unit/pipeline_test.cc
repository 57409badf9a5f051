// The write pipeline's accounting: which side waited, byte counts, checksums, the
// O_DIRECT block rules and how it ends. Slow sources and writers sleep to play slow
// devices; no test waits on a sleep for synchronisation.
#include "receiver/write_pipeline.h"

#include <errno.h>

#include <chrono>
#include <cstring>
#include <thread>

#include "common/checksum.h"
#include "common/fd.h"
#include "common/payload.h"
#include "gtest/gtest.h"

namespace nasperf {
namespace {

class MemorySource : public ByteSource {
 public:
  MemorySource(uint64_t length, size_t max_read, std::chrono::microseconds delay = {})
      : pattern_(Pattern::kRandom, 5), length_(length), max_read_(max_read), delay_(delay) {}
  absl::StatusOr<size_t> Read(uint8_t* data, size_t size) override {
    if (offset_ >= length_) return 0;
    if (delay_.count() > 0) std::this_thread::sleep_for(delay_);
    size_t n = std::min({size, max_read_, static_cast<size_t>(length_ - offset_)});
    // Copy from the pattern at this offset so checksums are checkable.
    for (size_t done = 0; done < n;) {
      uint64_t at = offset_ + done;
      uint64_t chunk_start = at - at % PatternSource::kChunk;
      size_t in_chunk = static_cast<size_t>(at - chunk_start);
      size_t take = std::min(n - done, PatternSource::kChunk - in_chunk);
      std::memcpy(data + done, pattern_.Next(chunk_start, PatternSource::kChunk) + in_chunk, take);
      done += take;
    }
    checksum_.Update(data, n);
    offset_ += n;
    return n;
  }
  uint64_t checksum() const { return checksum_.Digest(); }

 private:
  PatternSource pattern_;
  uint64_t length_;
  uint64_t offset_ = 0;
  size_t max_read_;
  std::chrono::microseconds delay_;
  StreamChecksum checksum_;
};

class RecordingWriter : public BlockWriter {
 public:
  explicit RecordingWriter(std::chrono::microseconds delay = {}, int fail_at_block = -1)
      : delay_(delay), fail_at_block_(fail_at_block) {}
  absl::Status Write(const uint8_t* data, size_t size, bool last) override {
    if (reinterpret_cast<uintptr_t>(data) % kPipelineAlignment != 0) misaligned = true;
    if (!last && size % kPipelineAlignment != 0) misaligned = true;
    if (blocks == fail_at_block_) return ErrnoStatus(ENOSPC, "write /target/file");
    if (delay_.count() > 0) std::this_thread::sleep_for(delay_);
    ++blocks;
    bytes += size;
    saw_last = saw_last || last;
    return absl::OkStatus();
  }
  absl::Status SyncData() override {
    ++syncs;
    return absl::OkStatus();
  }
  absl::Status Finish() override {
    finished = true;
    return absl::OkStatus();
  }
  int blocks = 0;
  uint64_t bytes = 0;
  int syncs = 0;
  bool saw_last = false;
  bool finished = false;
  bool misaligned = false;

 private:
  std::chrono::microseconds delay_;
  int fail_at_block_;
};

constexpr uint64_t kMiB = 1 << 20;

TEST(Pipeline, SlowDiskShowsAsDiskWait) {
  MemorySource source(32 * kMiB, 256 * 1024);
  RecordingWriter writer(std::chrono::microseconds(3000));
  PipelineOptions options;
  options.checksum = true;
  PipelineResult r = RunPipeline(source, &writer, 32 * kMiB, options);
  ASSERT_EQ(r.end, PipelineEnd::kOk) << r.status;
  EXPECT_EQ(r.bytes_received, 32 * kMiB);
  EXPECT_EQ(r.bytes_written, 32 * kMiB);
  EXPECT_EQ(writer.bytes, 32 * kMiB);
  EXPECT_TRUE(writer.saw_last);
  EXPECT_TRUE(writer.finished);
  EXPECT_FALSE(writer.misaligned);
  EXPECT_TRUE(r.has_checksum);
  EXPECT_EQ(r.checksum, source.checksum());
  int64_t span = r.durable_ns - r.first_byte_ns;
  EXPECT_GT(r.disk_wait_ns, span / 2) << "the reader should have waited on a full queue";
  EXPECT_LT(r.net_wait_ns, span / 4);
}

TEST(Pipeline, SlowNetworkShowsAsNetWait) {
  MemorySource source(16 * kMiB, 128 * 1024, std::chrono::microseconds(1000));
  RecordingWriter writer;
  PipelineResult r = RunPipeline(source, &writer, 16 * kMiB, PipelineOptions{});
  ASSERT_EQ(r.end, PipelineEnd::kOk) << r.status;
  int64_t span = r.durable_ns - r.first_byte_ns;
  EXPECT_GT(r.net_wait_ns, span / 2) << "the writer should have waited on an empty queue";
  EXPECT_LT(r.disk_wait_ns, span / 10);
}

TEST(Pipeline, OddLengthKeepsBlocksAlignedUntilTheLast) {
  const uint64_t length = 5 * kMiB + 123;
  MemorySource source(length, 100000);
  RecordingWriter writer;
  PipelineResult r = RunPipeline(source, &writer, length, PipelineOptions{});
  ASSERT_EQ(r.end, PipelineEnd::kOk);
  EXPECT_FALSE(writer.misaligned);
  EXPECT_EQ(writer.bytes, length);
  EXPECT_EQ(writer.blocks, 6);
}

TEST(Pipeline, SyncEveryCallsSyncData) {
  MemorySource source(10 * kMiB, kMiB);
  RecordingWriter writer;
  PipelineOptions options;
  options.sync_every = 3 * kMiB;
  PipelineResult r = RunPipeline(source, &writer, 10 * kMiB, options);
  ASSERT_EQ(r.end, PipelineEnd::kOk);
  EXPECT_EQ(writer.syncs, 3);  // at 3, 6 and 9 MiB; the end is Finish's job
}

TEST(Pipeline, EarlyEofAborts) {
  MemorySource source(3 * kMiB, kMiB);
  RecordingWriter writer;
  PipelineResult r = RunPipeline(source, &writer, 8 * kMiB, PipelineOptions{});
  EXPECT_EQ(r.end, PipelineEnd::kAborted);
  EXPECT_EQ(r.bytes_received, 3 * kMiB);
  EXPECT_NE(r.status.message().find("after 3145728 of 8388608 bytes"), std::string::npos) << r.status;
  EXPECT_FALSE(writer.finished);
}

TEST(Pipeline, WriteErrorFailsWithErrnoAndStopsReading) {
  MemorySource source(64 * kMiB, kMiB);
  RecordingWriter writer({}, /*fail_at_block=*/2);
  PipelineOptions options;
  PipelineResult r = RunPipeline(source, &writer, 64 * kMiB, options);
  EXPECT_EQ(r.end, PipelineEnd::kFailed);
  EXPECT_EQ(r.error_code, ENOSPC);
  EXPECT_NE(r.status.message().find("No space left on device"), std::string::npos);
  EXPECT_FALSE(writer.finished);
  // The reader stops within the queue's reach, not at the end of the stream.
  EXPECT_LE(r.bytes_received, (2 + 1 + options.buffer_count + 1) * kMiB);
}

TEST(Pipeline, DiscardReadsEverythingOnTheCallersThread) {
  MemorySource source(20 * kMiB + 7, 300000);
  PipelineOptions options;
  options.checksum = true;
  options.interval_s = 0.0001;
  PipelineResult r = RunPipeline(source, nullptr, 20 * kMiB + 7, options);
  ASSERT_EQ(r.end, PipelineEnd::kOk);
  EXPECT_EQ(r.bytes_written, 20 * kMiB + 7);
  EXPECT_EQ(r.checksum, source.checksum());
  uint64_t sampled = 0;
  for (const auto& s : r.samples) sampled += s.bytes;
  EXPECT_EQ(sampled, 20 * kMiB + 7);
}

TEST(Pipeline, SamplesAddUpToTheBytesWritten) {
  MemorySource source(12 * kMiB, kMiB, std::chrono::microseconds(200));
  RecordingWriter writer;
  PipelineOptions options;
  options.interval_s = 0.001;
  PipelineResult r = RunPipeline(source, &writer, 12 * kMiB, options);
  ASSERT_EQ(r.end, PipelineEnd::kOk);
  uint64_t sampled = 0;
  for (const auto& s : r.samples) sampled += s.bytes;
  EXPECT_EQ(sampled, 12 * kMiB);
  EXPECT_GT(r.samples.size(), 1u);
}

TEST(Pipeline, CancelAborts) {
  std::atomic<bool> cancel{true};
  MemorySource source(8 * kMiB, kMiB);
  RecordingWriter writer;
  PipelineOptions options;
  options.cancel = &cancel;
  PipelineResult r = RunPipeline(source, &writer, 8 * kMiB, options);
  EXPECT_EQ(r.end, PipelineEnd::kAborted);
  EXPECT_NE(r.status.message().find("shutting down"), std::string::npos);
}

}  // namespace
}  // namespace nasperf
