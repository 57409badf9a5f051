// The push loop every transport shares, with an in-memory writer: every byte once,
// in order, with a checksum that matches; cancel stops before the next piece; a
// failing writer or source ends the loop with the side that failed; zero copy is
// used only when nothing needs to see the bytes.
#include "datapath/push_loop.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <thread>

#include "common/checksum.h"
#include "common/fd.h"
#include "common/file_set.h"
#include "datapath/socket_writer.h"
#include "gtest/gtest.h"
#include "measure/page_cache.h"
#include "temp_dir.h"

namespace nasperf {
namespace {

class MemoryWriter : public ChunkWriter {
 public:
  absl::Status Write(const uint8_t* data, size_t size, uint64_t offset) override {
    if (offset != bytes.size()) return absl::InternalError("out of order");
    if (fail_after > 0 && bytes.size() >= fail_after) return absl::UnavailableError("peer went away");
    bytes.append(reinterpret_cast<const char*>(data), size);
    if (cancel_after > 0 && bytes.size() >= cancel_after) cancel->store(true);
    return absl::OkStatus();
  }
  bool ZeroCopy() const override { return zero_copy; }
  absl::StatusOr<size_t> WriteFromFile(int fd, uint64_t offset, size_t size, int64_t* source_ns) override {
    if (cannot_splice) return absl::UnimplementedError("no splice here");
    ++file_writes;
    *source_ns += file_wait_ns;
    std::string piece(size, '\0');
    ssize_t n = ::pread(fd, piece.data(), size, static_cast<off_t>(offset));
    if (n <= 0) return absl::OutOfRangeError("short file");
    bytes.append(piece.data(), static_cast<size_t>(n));
    return static_cast<size_t>(n);
  }
  std::string bytes;
  size_t fail_after = 0, cancel_after = 0;
  std::atomic<bool>* cancel = nullptr;
  bool zero_copy = false;
  bool cannot_splice = false;
  int64_t file_wait_ns = 0;  // what each file write says it waited on the file
  int file_writes = 0;
};

constexpr uint64_t kLength = 3 * PayloadSource::kChunk + 12345;

// A TCP-like writer: the peer acknowledges half of what it was handed, after a
// 100-byte header that came before the payload.
class HalfAcknowledgingWriter : public MemoryWriter {
 public:
  std::optional<uint64_t> Acknowledged() const override { return 100 + bytes.size() / 2; }
};

TEST(PushLoop, EveryByteOnceInOrderWithAMatchingChecksum) {
  auto source = GeneratedSource(Pattern::kRandom, 7);
  MemoryWriter writer;
  PushOptions options;
  options.checksum = true;
  std::atomic<uint64_t> progress{0};
  options.progress = &progress;
  PushResult r;
  LoopOutcome out = PushLoop(*source, kLength, options, writer, r);
  ASSERT_EQ(out.end, LoopEnd::kDone) << out.status;
  EXPECT_EQ(r.bytes_sent, kLength);
  EXPECT_EQ(writer.bytes.size(), kLength);
  EXPECT_EQ(progress.load(), kLength);
  ASSERT_TRUE(r.has_checksum);
  StreamChecksum check;
  check.Update(reinterpret_cast<const uint8_t*>(writer.bytes.data()), writer.bytes.size());
  EXPECT_EQ(r.checksum, check.Digest());
  EXPECT_FALSE(r.zero_copy);
  EXPECT_LE(r.first_byte_ns, r.last_byte_ns);
}

// Issue 18: single streams on a 118 MB/s link "hit" ~300 MB/s in the sender's samples,
// which counted bytes a socket buffer took. Where the writer can tell, samples count
// what the peer acknowledged; the rest is counted when the answer came (ack_ns), so
// every byte is in the samples once and none before it crossed.
TEST(PushLoop, SamplesCountAcknowledgedBytesAndTheRestByTheAnswer) {
  auto source = GeneratedSource(Pattern::kRandom, 7);
  HalfAcknowledgingWriter writer;
  PushOptions options;
  options.interval_s = 1e-6;  // every piece closes a sample
  PushResult r;
  ASSERT_EQ(PushLoop(*source, kLength, options, writer, r).end, LoopEnd::kDone);
  EXPECT_EQ(r.sampled_bytes, kLength / 2) << "the header's bytes are not payload";
  r.ack_ns = r.last_byte_ns + 1'000'000;
  uint64_t total = 0;
  for (const IntervalSample& s : FinishedSamples(r)) total += s.bytes;
  EXPECT_EQ(total, kLength);

  MemoryWriter handed;  // no acknowledgements (SSH): what was handed over
  PushResult h;
  ASSERT_EQ(PushLoop(*source, kLength, options, handed, h).end, LoopEnd::kDone);
  EXPECT_EQ(h.sampled_bytes, kLength);
}

TEST(PushLoop, TheUnacknowledgedRestArrivesByTheAnswerNotAtTheLastByte) {
  PushResult r;
  r.sampler = IntervalSampler(1.0, 0);
  r.sampler.Add(100, 1'000'000'000);  // [0, 1 s]: 100 bytes acknowledged
  r.sampled_bytes = 100;
  r.bytes_sent = 150;
  r.last_byte_ns = 1'200'000'000;
  r.ack_ns = 3'000'000'000;
  std::vector<IntervalSample> samples = FinishedSamples(r);
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_EQ(samples[1].bytes, 50u);
  EXPECT_DOUBLE_EQ(samples[1].t_s, 3.0);
  EXPECT_DOUBLE_EQ(samples[1].interval_s, 2.0);
}

TEST(PushLoop, CancelStopsBeforeTheNextPiece) {
  auto source = GeneratedSource(Pattern::kZero, 1);
  std::atomic<bool> cancel{false};
  MemoryWriter writer;
  writer.cancel = &cancel;
  writer.cancel_after = PayloadSource::kChunk;
  PushOptions options;
  options.cancel = &cancel;
  PushResult r;
  LoopOutcome out = PushLoop(*source, kLength, options, writer, r);
  EXPECT_EQ(out.end, LoopEnd::kCancelled);
  EXPECT_TRUE(absl::IsCancelled(out.status));
  EXPECT_EQ(r.bytes_sent, PayloadSource::kChunk);
}

TEST(PushLoop, AFailingWriterEndsTheLoopAsAWriteFailure) {
  auto source = GeneratedSource(Pattern::kZero, 1);
  MemoryWriter writer;
  writer.fail_after = 2 * PayloadSource::kChunk;
  PushResult r;
  LoopOutcome out = PushLoop(*source, kLength, PushOptions(), writer, r);
  EXPECT_EQ(out.end, LoopEnd::kWriteFailed);
  EXPECT_EQ(out.status.message(), "peer went away");
  EXPECT_EQ(r.bytes_sent, 2 * PayloadSource::kChunk);
}

class FileSourceTest : public testing::Test {
 protected:
  void SetUp() override {
    path_ = std::string(::testing::TempDir()) + "/push-loop-XXXXXX";
    int fd = mkstemp(path_.data());
    ASSERT_GE(fd, 0);
    std::string data(2 * PayloadSource::kChunk, 'x');
    ASSERT_EQ(::write(fd, data.data(), data.size()), static_cast<ssize_t>(data.size()));
    ::close(fd);
  }
  void TearDown() override { ::unlink(path_.c_str()); }
  std::string path_;
};

TEST_F(FileSourceTest, ASourceThatShrankIsTheSourcesFailure) {
  auto source = FileSource(path_);
  ASSERT_TRUE(source.ok());
  MemoryWriter writer;
  PushResult r;
  LoopOutcome out = PushLoop(**source, kLength, PushOptions(), writer, r);  // longer than the file
  EXPECT_EQ(out.end, LoopEnd::kSourceFailed);
  EXPECT_NE(out.status.message().find("shrank"), std::string::npos) << out.status;
}

// The real writer on a socket pair, a thread reading what arrives.
struct SocketPush {
  LoopOutcome out;
  PushResult r;
  std::string received;
};
SocketPush PushThroughSocket(PayloadSource& source, uint64_t length) {
  SocketPush push;
  int fds[2];
  EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
  std::thread reader([&] {
    char buffer[65536];
    ssize_t n;
    while ((n = ::read(fds[1], buffer, sizeof buffer)) > 0) push.received.append(buffer, static_cast<size_t>(n));
  });
  {
    SocketWriter writer(fds[0]);
    push.out = PushLoop(source, length, PushOptions(), writer, push.r);
  }
  ::close(fds[0]);
  reader.join();
  ::close(fds[1]);
  return push;
}

TEST_F(FileSourceTest, AFileThatShrankIsTheSourcesFailureOnTheZeroCopyPathToo) {
  auto source = FileSource(path_);
  ASSERT_TRUE(source.ok());
  SocketPush push = PushThroughSocket(**source, kLength);  // longer than the file
  EXPECT_EQ(push.out.end, LoopEnd::kSourceFailed);
  EXPECT_NE(push.out.status.message().find("shrank"), std::string::npos) << push.out.status;
}

TEST_F(FileSourceTest, ZeroCopyOnlyWhenNothingNeedsToSeeTheBytes) {
  auto source = FileSource(path_);
  ASSERT_TRUE(source.ok());
  MemoryWriter writer;
  writer.zero_copy = true;
  PushResult r;
  ASSERT_EQ(PushLoop(**source, 2 * PayloadSource::kChunk, PushOptions(), writer, r).end, LoopEnd::kDone);
  EXPECT_TRUE(r.zero_copy);
  EXPECT_GT(writer.file_writes, 0);

  auto again = FileSource(path_);
  ASSERT_TRUE(again.ok());
  MemoryWriter checked;
  checked.zero_copy = true;
  PushOptions options;
  options.checksum = true;
  PushResult r2;
  ASSERT_EQ(PushLoop(**again, 2 * PayloadSource::kChunk, options, checked, r2).end, LoopEnd::kDone);
  EXPECT_FALSE(r2.zero_copy);
  EXPECT_EQ(checked.file_writes, 0);
  EXPECT_EQ(checked.bytes, std::string(2 * PayloadSource::kChunk, 'x'));
}

TEST_F(FileSourceTest, TheZeroCopyPathStillCountsTheWaitOnTheFile) {
  auto source = FileSource(path_);
  ASSERT_TRUE(source.ok());
  MemoryWriter writer;
  writer.zero_copy = true;
  writer.file_wait_ns = 5'000'000;
  PushResult r;
  ASSERT_EQ(PushLoop(**source, 2 * PayloadSource::kChunk, PushOptions(), writer, r).end, LoopEnd::kDone);
  EXPECT_TRUE(r.zero_copy);
  EXPECT_EQ(r.source_ns, writer.file_writes * 5'000'000LL);
}

TEST_F(FileSourceTest, AFileThatCannotBeSplicedIsCopiedInstead) {
  auto source = FileSource(path_);
  ASSERT_TRUE(source.ok());
  MemoryWriter writer;
  writer.zero_copy = true;
  writer.cannot_splice = true;
  PushResult r;
  ASSERT_EQ(PushLoop(**source, 2 * PayloadSource::kChunk, PushOptions(), writer, r).end, LoopEnd::kDone);
  EXPECT_FALSE(r.zero_copy);
  EXPECT_EQ(writer.bytes, std::string(2 * PayloadSource::kChunk, 'x'));
}

// The real writer on a real socket: file -> pipe -> socket moves every byte in order,
// and its file half is timed.
TEST_F(FileSourceTest, SocketWriterSplicesAFileOntoASocket) {
  auto source = FileSource(path_);
  ASSERT_TRUE(source.ok());
  SocketPush push = PushThroughSocket(**source, 2 * PayloadSource::kChunk);
  EXPECT_EQ(push.out.end, LoopEnd::kDone);
  EXPECT_TRUE(push.r.zero_copy);
  EXPECT_GT(push.r.source_ns, 0);
  EXPECT_EQ(push.r.bytes_sent, 2 * PayloadSource::kChunk);
  EXPECT_EQ(push.received, std::string(2 * PayloadSource::kChunk, 'x'));
}

// --read-mode direct: an O_DIRECT file whose length is not whole blocks arrives whole,
// never spliced, and leaves the page cache as it found it (cold stays cold).
TEST(DirectFileSource, ReadsWholeBlocksPastTheCacheAndEndsAtTheFilesLength) {
  std::string path = std::string(::testing::TempDir()) + "/direct-XXXXXX";
  Fd fd(mkstemp(path.data()));
  ASSERT_TRUE(fd.valid());
  std::string data(2 * PayloadSource::kChunk + 1234, '\0');
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>(i * 7 + i / 4096);
  ASSERT_EQ(::write(fd.get(), data.data(), data.size()), static_cast<ssize_t>(data.size()));
  ASSERT_TRUE(DropCachedPages(fd.get(), path).ok());
  absl::Status direct = ReadPastCache(fd.get(), path);
  if (absl::IsFailedPrecondition(direct)) {
    ::unlink(path.c_str());
    GTEST_SKIP() << direct.message();
  }
  ASSERT_TRUE(direct.ok()) << direct;
  const int raw = fd.get();
  auto source = FileSource(std::move(fd), path, /*direct=*/true);
  EXPECT_EQ(source->file_fd(), -1);
  SocketPush push = PushThroughSocket(*source, data.size());
  EXPECT_EQ(push.out.end, LoopEnd::kDone) << push.out.status;
  EXPECT_FALSE(push.r.zero_copy);
  EXPECT_EQ(push.received, data);
  auto resident = ResidentPct(raw, data.size(), path);
  ASSERT_TRUE(resident.ok()) << resident.status();
  EXPECT_LT(*resident, 10) << "a direct read filled the page cache";
  ::unlink(path.c_str());
}

// The read-ahead thread of a direct source stops when the source goes away mid-file,
// and a loop that asks out of order is told so instead of getting the wrong bytes.
TEST(DirectFileSource, StopsReadingAheadWhenDroppedAndRefusesOutOfOrderChunks) {
  std::string path = std::string(::testing::TempDir()) + "/direct-XXXXXX";
  Fd fd(mkstemp(path.data()));
  ASSERT_TRUE(fd.valid());
  ASSERT_EQ(::ftruncate(fd.get(), 64 * PayloadSource::kChunk), 0);
  absl::Status direct = ReadPastCache(fd.get(), path);
  if (absl::IsFailedPrecondition(direct)) {
    ::unlink(path.c_str());
    GTEST_SKIP() << direct.message();
  }
  ASSERT_TRUE(direct.ok()) << direct;
  Fd again(::open(path.c_str(), O_RDONLY | O_DIRECT | O_CLOEXEC));
  ASSERT_TRUE(again.valid());
  {
    auto source = FileSource(std::move(fd), path, /*direct=*/true);
    ASSERT_TRUE(source->Chunk(0, PayloadSource::kChunk).ok());
  }  // destroyed 63 chunks early: the reader is joined, not left reading
  auto source = FileSource(std::move(again), path, /*direct=*/true);
  auto skipped = source->Chunk(2 * PayloadSource::kChunk, PayloadSource::kChunk);
  EXPECT_FALSE(skipped.ok());
  ::unlink(path.c_str());
}

using TreeSourceTest = TempDirTest;

// --tree sends the tree's own bytes: its files one after another in the walk's order,
// across chunk boundaries, through a push loop as every transport reads them.
TEST_F(TreeSourceTest, SendsTheTreesFilesBytesInTheWalksOrder) {
  std::filesystem::create_directories(dir_ + "/m");
  const std::string a = "abc", b(PayloadSource::kChunk + 5, 'b'), z = "0123456789";
  std::ofstream(dir_ + "/a") << a;
  std::ofstream(dir_ + "/m/b") << b;
  std::ofstream(dir_ + "/z") << z;
  auto tree = WalkTree(dir_);
  ASSERT_TRUE(tree.ok()) << tree.status();
  ASSERT_EQ(tree->files.size(), 3u);
  EXPECT_EQ(tree->files[1].path, "m/b");
  auto source = TreeSource(dir_, std::make_shared<std::vector<TreeFile>>(tree->files));
  ASSERT_TRUE(source.ok()) << source.status();
  MemoryWriter writer;
  PushResult r;
  LoopOutcome out = PushLoop(**source, a.size() + b.size() + z.size(), PushOptions(), writer, r);
  ASSERT_TRUE(out.status.ok()) << out.status;
  EXPECT_TRUE(writer.bytes == a + b + z) << "got " << writer.bytes.size() << " bytes";
}

// A file that is not the one the walk sized fails the transfer naming it: rewritten
// to another size, or swapped (a new inode of the same size, or a link to elsewhere).
TEST_F(TreeSourceTest, AFileChangedSinceTheWalkFailsTheTransferNamingIt) {
  const std::string outside = dir_ + "-outside";
  std::ofstream(outside) << "secret!";
  for (const std::string& change : {"grown", "swapped", "linked"}) {
    std::filesystem::remove_all(dir_ + "/t");
    std::filesystem::create_directories(dir_ + "/t");
    std::ofstream(dir_ + "/t/f") << "1234567";
    auto tree = WalkTree(dir_ + "/t");
    ASSERT_TRUE(tree.ok()) << tree.status();
    if (change == "grown") std::ofstream(dir_ + "/t/f", std::ios::app) << "8";
    if (change == "swapped") {
      std::ofstream(dir_ + "/t/g") << "7654321";
      std::filesystem::rename(dir_ + "/t/g", dir_ + "/t/f");
    }
    if (change == "linked") {
      std::filesystem::remove(dir_ + "/t/f");
      std::filesystem::create_symlink(outside, dir_ + "/t/f");
    }
    auto source = TreeSource(dir_ + "/t", std::make_shared<std::vector<TreeFile>>(tree->files));
    ASSERT_TRUE(source.ok()) << source.status();
    absl::StatusOr<const uint8_t*> chunk = (*source)->Chunk(0, 7);
    ASSERT_FALSE(chunk.ok()) << change;
    EXPECT_NE(chunk.status().message().find(dir_ + "/t/f"), std::string::npos) << chunk.status();
  }
  ::unlink(outside.c_str());
}

}  // namespace
}  // namespace nasperf
