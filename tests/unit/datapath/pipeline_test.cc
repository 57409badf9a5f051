// The write pipeline's accounting: which side waited, byte counts, checksums, the
// O_DIRECT block rules and how it ends. Slow devices are played on a test clock that
// only the slow side advances, and only once the other side is provably asleep
// waiting for it, so the wait figures are exact on any machine, however busy.
#include "datapath/write_pipeline.h"

#include <errno.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <fstream>
#include <functional>
#include <optional>
#include <thread>

#include "common/checksum.h"
#include "common/clock.h"
#include "common/fd.h"
#include "common/payload.h"
#include "gtest/gtest.h"
#include "measure/verdict.h"

namespace nasperf {
namespace {

// The pipeline's clock in these tests: time moves only when a test says so.
std::atomic<int64_t> test_now{1'000'000'000};
int64_t TestClock() { return test_now.load(); }
void Advance(int64_t ns) { test_now.fetch_add(ns); }

pid_t ThreadId() { return static_cast<pid_t>(::syscall(SYS_gettid)); }

// True when thread `tid` of this process is asleep ('S'): in these tests the only
// place the pipeline's threads sleep is waiting on the other side.
bool Asleep(pid_t tid) {
  std::ifstream stat("/proc/self/task/" + std::to_string(tid) + "/stat");
  std::string line;
  std::getline(stat, line);
  size_t paren = line.rfind(')');
  return paren != std::string::npos && paren + 2 < line.size() && line[paren + 2] == 'S';
}

// Waits, bounded, until `ready` holds; a failure instead of a hang if it never does.
void WaitUntil(const std::function<bool()>& ready, const char* what) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!ready()) {
    if (std::chrono::steady_clock::now() > deadline) {
      ADD_FAILURE() << "gave up waiting: " << what;
      return;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

class MemorySource : public ByteSource {
 public:
  // before_read runs at the start of every Read that returns data (a slow network).
  MemorySource(uint64_t length, size_t max_read, std::function<void()> before_read = {})
      : pattern_(Pattern::kRandom, 5), length_(length), max_read_(max_read), before_read_(std::move(before_read)) {}
  absl::StatusOr<size_t> Read(uint8_t* data, size_t size) override {
    if (offset_ >= length_) return 0;
    if (before_read_) before_read_();
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
    offset_.store(offset_ + n);
    return n;
  }
  uint64_t checksum() const { return checksum_.Digest(); }
  uint64_t delivered() const { return offset_.load(); }

 private:
  PatternSource pattern_;
  uint64_t length_;
  std::atomic<uint64_t> offset_{0};
  size_t max_read_;
  std::function<void()> before_read_;
  StreamChecksum checksum_;
};

class RecordingWriter : public BlockWriter {
 public:
  // before_write runs at the start of every successful Write (a slow disk).
  explicit RecordingWriter(int fail_at_block = -1, std::function<void()> before_write = {})
      : fail_at_block_(fail_at_block), before_write_(std::move(before_write)) {}
  absl::Status Write(const uint8_t* data, size_t size, bool last) override {
    if (reinterpret_cast<uintptr_t>(data) % kPipelineAlignment != 0) misaligned = true;
    if (!last && size % kPipelineAlignment != 0) misaligned = true;
    if (blocks == fail_at_block_) return ErrnoStatus(ENOSPC, "write /target/file");
    thread_id.store(ThreadId());
    if (before_write_) before_write_();
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
  std::atomic<pid_t> thread_id{0};

 private:
  int fail_at_block_;
  std::function<void()> before_write_;
};

constexpr uint64_t kMiB = 1 << 20;
constexpr int64_t kMs = 1'000'000;

double PctOf(int64_t part, int64_t whole) { return 100.0 * static_cast<double>(part) / whole; }

// A disk that takes 3 ms per 1 MiB block behind a network that delivers at once:
// each Write waits until the reader has filled every buffer and fallen asleep on
// the full queue, then spends its 3 ms. The reader therefore waits through every
// write except the last buffer_count (the drain after the last byte arrived).
TEST(Pipeline, SlowDiskShowsAsDiskWait) {
  constexpr int kBlocks = 32;
  PipelineOptions options;
  options.checksum = true;
  options.clock = &TestClock;
  const pid_t reader = ThreadId();  // RunPipeline reads on the caller's thread
  MemorySource* source_ptr = nullptr;
  int writes = 0;
  RecordingWriter writer(-1, [&] {
    uint64_t in_flight = std::min<uint64_t>(kBlocks, writes + options.buffer_count) * kMiB;
    WaitUntil([&] { return source_ptr->delivered() >= in_flight && Asleep(reader); },
              "the reader to fill the queue and wait");
    ++writes;
    Advance(3 * kMs);
  });
  MemorySource source(kBlocks * kMiB, 256 * 1024);
  source_ptr = &source;
  PipelineResult r = RunPipeline(source, &writer, kBlocks * kMiB, options);
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
  EXPECT_EQ(span, kBlocks * 3 * kMs);
  EXPECT_EQ(r.disk_wait_ns, (kBlocks - options.buffer_count) * 3 * kMs)
      << "the reader should have waited on a full queue through every write but the drain";
  EXPECT_EQ(r.net_wait_ns, 0);
  EXPECT_EQ(Verdict({PctOf(r.net_wait_ns, span), PctOf(r.disk_wait_ns + r.sync_ns, span)}), "disk");
}

// A network that takes 1 ms per 128 KiB read in front of a disk that writes at once:
// each read spends its time only once the writer is asleep on the empty queue, so
// all the time after the first byte is the writer waiting on the network.
TEST(Pipeline, SlowNetworkShowsAsNetWait) {
  RecordingWriter writer;
  MemorySource* source_ptr = nullptr;
  MemorySource source(16 * kMiB, 128 * 1024, [&] {
    if (source_ptr->delivered() < kMiB) return;  // the first block: no one waits yet
    WaitUntil([&] { return writer.thread_id.load() != 0 && Asleep(writer.thread_id.load()); },
              "the writer to wait on the empty queue");
    Advance(kMs);
  });
  source_ptr = &source;
  PipelineOptions options;
  options.clock = &TestClock;
  PipelineResult r = RunPipeline(source, &writer, 16 * kMiB, options);
  ASSERT_EQ(r.end, PipelineEnd::kOk) << r.status;
  int64_t span = r.durable_ns - r.first_byte_ns;
  EXPECT_EQ(span, 15 * 8 * kMs) << "blocks 2..16, eight reads each";
  EXPECT_EQ(r.net_wait_ns, span) << "the writer should have waited on an empty queue";
  EXPECT_EQ(r.disk_wait_ns, 0);
  EXPECT_EQ(Verdict({PctOf(r.net_wait_ns, span), PctOf(r.disk_wait_ns + r.sync_ns, span)}), "network");
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

// cpu_user_s/cpu_sys_s: the pipeline's CPU time holds the writer thread's, not only
// the caller's. The writer burns 2 ms of its own CPU time per block (measured on its
// thread, so a busy machine only makes it take longer).
TEST(Pipeline, CpuTimeCountsTheWriterThreadToo) {
  MemorySource source(8 * kMiB, kMiB);
  double burned_s = 0;
  RecordingWriter writer(-1, [&burned_s] {
    const CpuTime start = ThreadCpuTime();
    CpuTime now = start;
    for (int spins = 0; spins < 100'000'000 && (now - start).user_s + (now - start).sys_s < 0.002; ++spins) {
      now = ThreadCpuTime();
    }
    burned_s += (now - start).user_s + (now - start).sys_s;
  });
  PipelineResult r = RunPipeline(source, &writer, 8 * kMiB, PipelineOptions{});
  ASSERT_EQ(r.end, PipelineEnd::kOk);
  EXPECT_GE(burned_s, 8 * 0.002);
  EXPECT_GE(r.cpu.user_s + r.cpu.sys_s, burned_s) << "the writer thread's CPU is missing";
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
  RecordingWriter writer(/*fail_at_block=*/2);
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
  MemorySource source(12 * kMiB, kMiB, [] { Advance(kMs / 5); });
  RecordingWriter writer;
  PipelineOptions options;
  options.interval_s = 0.001;
  options.clock = &TestClock;
  PipelineResult r = RunPipeline(source, &writer, 12 * kMiB, options);
  ASSERT_EQ(r.end, PipelineEnd::kOk);
  uint64_t sampled = 0;
  for (const auto& s : r.samples) sampled += s.bytes;
  EXPECT_EQ(sampled, 12 * kMiB);
  EXPECT_GT(r.samples.size(), 1u);
}

// A link that delivers 1 MiB per ms on the test clock, and a reader that a busy core
// holds back for 20 ms once: it then drains 20 MiB at once. The samples count what
// had arrived (read plus queued), so none is faster than the link; counting what
// was read would plot that drain as one sample at ten times the link.
class LinkSource : public ByteSource {
 public:
  static constexpr uint64_t kBurst = 64 << 10;
  explicit LinkSource(uint64_t length) : length_(length), start_(TestClock()) {}
  absl::StatusOr<size_t> Read(uint8_t* data, size_t size) override {
    if (offset_ >= length_) return 0;
    if (offset_ >= 4 * kMiB && !stalled_) {
      stalled_ = true;
      Advance(20 * kMs);
    }
    while (Arrived() == offset_) Advance(kMs / 16);  // blocks in recv until the next bytes land
    const size_t n = static_cast<size_t>(std::min<uint64_t>(size, Arrived() - offset_));
    std::memset(data, 0, n);
    offset_ += n;
    return n;
  }
  std::optional<uint64_t> Queued() const override { return Arrived() - offset_; }

 private:
  uint64_t Arrived() const {
    return std::min(length_, kBurst + static_cast<uint64_t>(TestClock() - start_) * kMiB / kMs);
  }
  const uint64_t length_;
  const int64_t start_;
  uint64_t offset_ = 0;
  bool stalled_ = false;
};

TEST(Pipeline, SamplesCountArrivalsSoADrainIsNotFasterThanTheLink) {
  constexpr uint64_t kLength = 48 * kMiB;
  RecordingWriter recording;
  for (BlockWriter* writer : {static_cast<BlockWriter*>(nullptr), static_cast<BlockWriter*>(&recording)}) {
    LinkSource source(kLength);
    PipelineOptions options;
    options.interval_s = 0.002;
    options.clock = &TestClock;
    PipelineResult r = RunPipeline(source, writer, kLength, options);
    ASSERT_EQ(r.end, PipelineEnd::kOk) << r.status;
    uint64_t sampled = 0;
    double fastest = 0;
    for (const IntervalSample& s : r.samples) {
      sampled += s.bytes;
      fastest = std::max(fastest, static_cast<double>(s.bytes) / kMiB / (s.interval_s * 1000));
    }
    EXPECT_EQ(sampled, kLength) << (writer ? "write" : "discard");
    // 1 MiB/ms is the link; the first sample also holds the 64 KiB that came at once.
    EXPECT_LE(fastest, 1.05) << (writer ? "write" : "discard") << ": a sample of " << fastest << " MiB/ms";
    EXPECT_GT(r.samples.size(), 10u);
  }
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
