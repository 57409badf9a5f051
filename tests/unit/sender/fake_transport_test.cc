// The sender loop over a transport that is not one of nasperf's (no network): a
// fake Transport built from the pieces a real one uses (the push loop, the row
// assembly, the verdict, a write pipeline for reads) shows that the loop needs
// nothing but the Transport interface: rows, samples, verdicts, warm-ups, the
// summary, and a read into a local copy come out as for native or sftp.
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/policy.h"
#include "common/report_sink.h"
#include "common/verdict.h"
#include "datapath/push_loop.h"
#include "datapath/rows.h"
#include "datapath/write_pipeline.h"
#include "gtest/gtest.h"
#include "sender/sender.h"
#include "transport/transport.h"

namespace nasperf {
namespace {

// Takes every piece into memory, counting bytes.
class CountingWriter : public ChunkWriter {
 public:
  absl::Status Write(const uint8_t* data, size_t size, uint64_t offset) override {
    if (offset != bytes) return absl::InternalError("out of order");
    bytes += size;
    return absl::OkStatus();
  }
  uint64_t bytes = 0;
};

// Hands out `left` zero bytes, then EOF: the far end of a read.
class ZeroSource : public ByteSource {
 public:
  explicit ZeroSource(uint64_t length) : left_(length) {}
  absl::StatusOr<size_t> Read(uint8_t* data, size_t size) override {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(size, left_));
    std::memset(data, 0, n);
    left_ -= n;
    return n;
  }

 private:
  uint64_t left_;
};

class FakeTransport : public Transport {
 public:
  absl::Status Start(const std::string& run_id, uint64_t length, const ConsoleLine& say) override {
    say("fake: started");
    started = true;
    return absl::OkStatus();
  }
  void Push(const TransferSlot& slot, PayloadSource& source, const PushOptions& push, TransferResult& out) override {
    proto::TransferReport& row = out.sender;
    row.set_peer("fake:0");
    CountingWriter writer;
    PushResult r;
    r.start_wall_ns = WallNanos();
    r.start_ns = MonoNanos();
    LoopOutcome loop = PushLoop(source, slot.length, push, writer, r);
    r.ack_ns = MonoNanos();
    RecordPush(r, row);
    if (!loop.status.ok()) {
      row.set_error(std::string(loop.status.message()));
      return;
    }
    RecordTimings(r, std::nullopt, row);
    VerdictFigures figures;
    figures.net_wait_pct = 80;  // what this fake claims its far end saw
    row.set_bottleneck(Verdict(figures));
    row.set_status(Name(Status::kOk));
    std::lock_guard<std::mutex> lock(mu);
    pushed_bytes += writer.bytes;
  }
  void Pull(const TransferSlot& slot, BlockWriter* into, const PipelineOptions& pipeline,
            TransferResult& out) override {
    ZeroSource source(slot.length);
    const int64_t start_ns = MonoNanos();
    PipelineResult result = RunPipeline(source, into, slot.length, pipeline);
    AddReadClientFigures(result, start_ns, into != nullptr, std::nullopt, std::nullopt, &out.sender);
    std::lock_guard<std::mutex> lock(mu);
    pulled_into_file += into != nullptr ? 1 : 0;
  }
  void Finish(const std::string& run_id) override { finished = true; }

  bool started = false, finished = false;
  std::mutex mu;
  uint64_t pushed_bytes = 0;
  int pulled_into_file = 0;
};

class Rows : public ReportSink {
 public:
  absl::Status Submit(const proto::TransferReport& report) override {
    std::lock_guard<std::mutex> lock(mu);
    rows.push_back(report);
    return absl::OkStatus();
  }
  std::mutex mu;
  std::vector<proto::TransferReport> rows;
};

SenderOptions WriteOptions() {
  SenderOptions o;
  o.transport = "sftp";  // only the rows' transport word
  o.size = 3 << 20;
  o.runs = 3;
  o.warmup = 1;
  o.streams = 2;
  o.interval_s = 0.001;
  return o;
}

TEST(FakeTransport, TheLoopWritesRowsSamplesAndVerdictsThroughAnyTransport) {
  FakeTransport fake;
  Rows sink;
  std::FILE* console = std::tmpfile();
  auto outcome = RunSenderWith(WriteOptions(), RunContext(), fake, sink, console);
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  EXPECT_TRUE(fake.started);
  EXPECT_TRUE(fake.finished);
  EXPECT_EQ(outcome->transfers, 8);  // (1 warm-up + 3 runs) x 2 streams
  EXPECT_EQ(outcome->failed, 0);
  EXPECT_EQ(fake.pushed_bytes, 8ull * (3 << 20));
  ASSERT_EQ(sink.rows.size(), 8u);
  int warmups = 0;
  for (const proto::TransferReport& row : sink.rows) {
    EXPECT_EQ(row.role(), "sender");
    EXPECT_EQ(row.transport(), "sftp");
    EXPECT_EQ(row.status(), "ok") << row.error();
    EXPECT_EQ(row.bytes(), 3u << 20);
    EXPECT_GT(row.mb_per_s(), 0);
    EXPECT_EQ(row.bottleneck(), "network");
    EXPECT_GT(row.samples_size(), 0);
    EXPECT_TRUE(row.has_cpu_user_s());
    warmups += row.warmup() ? 1 : 0;
  }
  EXPECT_EQ(warmups, 2);
  std::rewind(console);
  char buffer[8192] = {};
  const size_t n = std::fread(buffer, 1, sizeof buffer - 1, console);
  const std::string text(buffer, n);
  EXPECT_NE(text.find("fake: started"), std::string::npos) << text;
  EXPECT_NE(text.find("summary: 6 transfers measured (warm-ups not counted), 0 failed"), std::string::npos) << text;
  EXPECT_NE(text.find("bottleneck: network 6"), std::string::npos) << text;
  std::fclose(console);
}

TEST(FakeTransport, AReadLandsInTheLocalCopyAndIsRemovedAfterEachRun) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("nasperf-fake-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  SenderOptions o = WriteOptions();
  o.direction = Direction::kRead;
  o.warmup = 0;
  o.local_target = dir.string();
  FakeTransport fake;
  Rows sink;
  std::FILE* console = std::tmpfile();
  auto outcome = RunSenderWith(o, RunContext(), fake, sink, console);
  std::fclose(console);
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  EXPECT_EQ(fake.pushed_bytes, 0u);  // a read pushes nothing and builds no payload
  EXPECT_EQ(fake.pulled_into_file, 6);
  for (const proto::TransferReport& row : sink.rows) {
    EXPECT_EQ(row.status(), "ok") << row.error();
    EXPECT_EQ(row.direction(), "read");
    EXPECT_EQ(row.write_mode(), "buffered");
    EXPECT_EQ(row.bytes(), 3u << 20);
  }
  EXPECT_TRUE(std::filesystem::is_empty(dir));  // --cleanup each, the default
  std::filesystem::remove_all(dir);
}

// Issue 29, row 13: a read whose announced length the local target cannot hold is
// refused with one line before any transfer, and nothing is written there.
TEST(FakeTransport, AReadLongerThanTheLocalTargetsRoomIsRefusedBeforeWriting) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("nasperf-fake-room-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  SenderOptions o = WriteOptions();
  o.direction = Direction::kRead;
  o.size = uint64_t{1} << 50;  // 1 PiB: no test machine's temporary directory has it free
  o.local_target = dir.string();
  FakeTransport fake;
  Rows sink;
  std::FILE* console = std::tmpfile();
  auto outcome = RunSenderWith(o, RunContext(), fake, sink, console);
  std::fclose(console);
  ASSERT_FALSE(outcome.ok());
  EXPECT_TRUE(absl::IsResourceExhausted(outcome.status())) << outcome.status();
  EXPECT_NE(outcome.status().message().find("--local-target"), std::string::npos) << outcome.status();
  EXPECT_EQ(outcome.status().message().find('\n'), std::string::npos) << outcome.status();
  EXPECT_EQ(fake.pulled_into_file, 0);
  EXPECT_TRUE(fake.finished) << "the far end is told the run ended (its laid-out files go)";
  EXPECT_TRUE(sink.rows.empty());
  EXPECT_TRUE(std::filesystem::is_empty(dir));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace nasperf
