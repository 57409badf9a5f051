#include "datapath/target.h"

#include <errno.h>
#include <linux/magic.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <thread>
#include <vector>

#include "common/fd.h"
#include "datapath/socket_source.h"
#include "datapath/write_pipeline.h"
#include "gtest/gtest.h"

namespace nasperf {
namespace {

std::string TempDir(const char* base = "/var/tmp") {
  std::string pattern = std::string(base) + "/nasperf-target-XXXXXX";
  char* made = mkdtemp(pattern.data());
  return made ? std::string(made) : std::string();
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(Target, CreatesOnlyNewFilesAndNeverFollowsSymlinks) {
  std::string dir = TempDir();
  ASSERT_FALSE(dir.empty());
  std::string outside = dir + "-outside";
  { std::ofstream(outside) << "precious"; }
  ASSERT_EQ(symlink(outside.c_str(), (dir + "/nasperf-r-1-0.dat").c_str()), 0);

  auto target = Target::Open(dir);
  ASSERT_TRUE(target.ok()) << target.status();
  std::string name;
  auto writer = (*target)->Create("nasperf-r-1-0.dat", WriteMode::kBuffered, SyncPolicy{}, &name);
  ASSERT_TRUE(writer.ok()) << writer.status();
  EXPECT_EQ(name, "nasperf-r-1-0.1.dat");
  std::string data = "hello";
  ASSERT_TRUE((*writer)->Write(reinterpret_cast<const uint8_t*>(data.data()), data.size(), true).ok());
  ASSERT_TRUE((*writer)->Finish().ok());
  EXPECT_EQ(ReadAll(outside), "precious");
  EXPECT_EQ(ReadAll(dir + "/" + name), "hello");

  for (const char* bad : {"../escape.dat", "a/b.dat", ".hidden", ""}) {
    std::string ignored;
    EXPECT_FALSE((*target)->Create(bad, WriteMode::kBuffered, SyncPolicy{}, &ignored).ok()) << bad;
  }
  ASSERT_TRUE((*target)->Remove(name).ok());
  EXPECT_NE(access((dir + "/" + name).c_str(), F_OK), 0);
  std::filesystem::remove_all(dir);
  std::filesystem::remove_all(outside);
}

// A set of files from blocks that cross their boundaries: each file whole under its
// set name, synced and closed in turn and tallied; a name already taken (a symlink an
// attacker planted) fails the set there, following nothing.
TEST(Target, ASetOfFilesIsWrittenFileByFileBeneathTheTarget) {
  std::string dir = TempDir();
  ASSERT_FALSE(dir.empty());
  auto target = Target::Open(dir);
  ASSERT_TRUE(target.ok()) << target.status();
  auto sizes = std::make_shared<const std::vector<uint64_t>>(std::vector<uint64_t>{5000, 1, 8192, 3});
  FileSetTally tally;
  std::vector<std::string> created;
  auto writer =
      (*target)->CreateSet("nasperf-r-1-0.dat", sizes, 0, WriteMode::kBuffered, SyncPolicy{}, &tally, &created);
  ASSERT_TRUE(writer.ok()) << writer.status();
  std::string payload(5000 + 1 + 8192 + 3, '\0');
  for (size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<char>('a' + i % 26);
  const auto* bytes = reinterpret_cast<const uint8_t*>(payload.data());
  ASSERT_TRUE((*writer)->Write(bytes, 4096, false).ok());
  ASSERT_TRUE((*writer)->Write(bytes + 4096, 8192, false).ok());
  ASSERT_TRUE((*writer)->Write(bytes + 4096 + 8192, payload.size() - 4096 - 8192, true).ok());
  ASSERT_TRUE((*writer)->Finish().ok());
  ASSERT_EQ(created, (std::vector<std::string>{"nasperf-r-1-0-000001.dat", "nasperf-r-1-0-000002.dat",
                                               "nasperf-r-1-0-000003.dat", "nasperf-r-1-0-000004.dat"}));
  EXPECT_EQ(ReadAll(dir + "/" + created[0]), payload.substr(0, 5000));
  EXPECT_EQ(ReadAll(dir + "/" + created[1]), payload.substr(5000, 1));
  EXPECT_EQ(ReadAll(dir + "/" + created[2]), payload.substr(5001, 8192));
  EXPECT_EQ(ReadAll(dir + "/" + created[3]), payload.substr(5001 + 8192));
  EXPECT_EQ(tally.whole, 4u);
  EXPECT_EQ(tally.latency_s.size(), 4u);

  std::string outside = dir + "-outside";
  { std::ofstream(outside) << "precious"; }
  ASSERT_EQ(symlink(outside.c_str(), (dir + "/nasperf-r-2-0-000002.dat").c_str()), 0);
  FileSetTally planted_tally;
  std::vector<std::string> planted_created;
  auto planted = (*target)->CreateSet("nasperf-r-2-0.dat", sizes, 0, WriteMode::kBuffered, SyncPolicy{}, &planted_tally,
                                      &planted_created);
  ASSERT_TRUE(planted.ok());
  const absl::Status s = (*planted)->Write(bytes, 8192, false);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(std::string(s.message()).find("nasperf-r-2-0-000002.dat"), std::string::npos) << s;
  EXPECT_EQ(planted_created.size(), 1u);
  EXPECT_EQ(ReadAll(outside), "precious");
  EXPECT_FALSE((*target)->CreateSet("a/b.dat", sizes, 0, WriteMode::kBuffered, SyncPolicy{}, &tally, &created).ok());
  std::filesystem::remove_all(dir);
  std::filesystem::remove_all(outside);
}

// --files-per-dir: each directory new, its files made beneath it, listed after them so
// that removing in order leaves nothing; a directory already there fails the set.
TEST(Target, ASetSpreadOverDirectoriesIsRemovedInTheOrderListed) {
  std::string dir = TempDir();
  auto target = Target::Open(dir);
  ASSERT_TRUE(target.ok()) << target.status();
  auto sizes = std::make_shared<const std::vector<uint64_t>>(std::vector<uint64_t>{100, 200, 300, 400, 500});
  FileSetTally tally;
  std::vector<std::string> created;
  auto writer =
      (*target)->CreateSet("nasperf-r-1-0.dat", sizes, 2, WriteMode::kBuffered, SyncPolicy{}, &tally, &created);
  ASSERT_TRUE(writer.ok()) << writer.status();
  const std::string payload(1500, 'x');
  ASSERT_TRUE((*writer)->Write(reinterpret_cast<const uint8_t*>(payload.data()), payload.size(), true).ok());
  ASSERT_TRUE((*writer)->Finish().ok());
  writer->reset();
  EXPECT_EQ(created,
            (std::vector<std::string>{"nasperf-r-1-0-d000001/nasperf-r-1-0-000001.dat",
                                      "nasperf-r-1-0-d000001/nasperf-r-1-0-000002.dat", "nasperf-r-1-0-d000001/",
                                      "nasperf-r-1-0-d000002/nasperf-r-1-0-000003.dat",
                                      "nasperf-r-1-0-d000002/nasperf-r-1-0-000004.dat", "nasperf-r-1-0-d000002/",
                                      "nasperf-r-1-0-d000003/nasperf-r-1-0-000005.dat", "nasperf-r-1-0-d000003/"}));
  EXPECT_EQ(tally.dirs_created, 3u);
  EXPECT_EQ(ReadAll(dir + "/nasperf-r-1-0-d000002/nasperf-r-1-0-000004.dat"), std::string(400, 'x'));
  for (const std::string& name : created) EXPECT_TRUE((*target)->Remove(name).ok()) << name;
  EXPECT_TRUE(std::filesystem::is_empty(dir));

  ASSERT_TRUE(std::filesystem::create_directory(dir + "/nasperf-r-2-0-d000001"));
  FileSetTally taken_tally;
  std::vector<std::string> taken_created;
  auto taken = (*target)->CreateSet("nasperf-r-2-0.dat", sizes, 2, WriteMode::kBuffered, SyncPolicy{}, &taken_tally,
                                    &taken_created);
  ASSERT_TRUE(taken.ok());
  const absl::Status s = (*taken)->Write(reinterpret_cast<const uint8_t*>(payload.data()), 10, false);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(std::string(s.message()).find("mkdir"), std::string::npos) << s;
  EXPECT_TRUE(taken_created.empty());
  std::filesystem::remove_all(dir);
}

// A tmpfs has no disks behind its cache: the receiver keeps a knee out of its rows.
TEST(Target, KnowsATargetInMemory) {
  std::string shm = TempDir("/dev/shm");
  if (shm.empty()) GTEST_SKIP() << "no /dev/shm here";
  auto in_memory = Target::Open(shm);
  ASSERT_TRUE(in_memory.ok()) << in_memory.status();
  EXPECT_TRUE((*in_memory)->in_memory());
  std::filesystem::remove_all(shm);
  std::string disk = TempDir();
  auto on_disk = Target::Open(disk);
  ASSERT_TRUE(on_disk.ok()) << on_disk.status();
  struct statfs fs {};
  ASSERT_EQ(statfs(disk.c_str(), &fs), 0);
  EXPECT_EQ((*on_disk)->in_memory(), fs.f_type == TMPFS_MAGIC) << "/var/tmp";
  std::filesystem::remove_all(disk);
}

TEST(Target, DirectWritesAnOddLengthExactly) {
  std::string dir = TempDir();
  auto target = Target::Open(dir);
  ASSERT_TRUE(target.ok()) << target.status();
  if (!(*target)->Supports(WriteMode::kDirect)) GTEST_SKIP() << "no O_DIRECT on /var/tmp here";
  std::string name;
  auto writer = (*target)->Create("odd.dat", WriteMode::kDirect, SyncPolicy{}, &name);
  ASSERT_TRUE(writer.ok()) << writer.status();
  const size_t length = 3 * 4096 + 100;
  uint8_t* block = static_cast<uint8_t*>(std::aligned_alloc(4096, 4 * 4096));
  for (size_t i = 0; i < length; ++i) block[i] = static_cast<uint8_t>(i * 13);
  ASSERT_TRUE((*writer)->Write(block, length, true).ok());
  ASSERT_TRUE((*writer)->Finish().ok());
  std::string written = ReadAll(dir + "/" + name);
  ASSERT_EQ(written.size(), length);
  EXPECT_EQ(std::memcmp(written.data(), block, length), 0);
  std::free(block);
  std::filesystem::remove_all(dir);
}

TEST(Target, RamfsRefusesDirectWithAClearReason) {
  // tmpfs takes O_DIRECT since Linux 6.6; ramfs still refuses it at open.
  if (geteuid() != 0) GTEST_SKIP() << "needs root to mount a ramfs";
  std::string dir = TempDir();
  ASSERT_EQ(mount("ramfs", dir.c_str(), "ramfs", 0, nullptr), 0) << strerror(errno);
  // Unmounted however the test ends: a failed ASSERT returns early.
  std::unique_ptr<const std::string, void (*)(const std::string*)> unmount(&dir, [](const std::string* d) {
    umount2(d->c_str(), MNT_DETACH);
    std::filesystem::remove_all(*d);
  });
  auto target = Target::Open(dir);
  ASSERT_TRUE(target.ok()) << target.status();
  EXPECT_TRUE((*target)->Supports(WriteMode::kBuffered));
  EXPECT_FALSE((*target)->Supports(WriteMode::kDirect));
  EXPECT_NE((*target)->Unsupported(WriteMode::kDirect).find("O_DIRECT"), std::string::npos);
  target->reset();
}

TEST(Target, MissingDirectoryNamesThePath) {
  auto target = Target::Open("/nonexistent/nasperf");
  ASSERT_FALSE(target.ok());
  EXPECT_NE(target.status().message().find("/nonexistent/nasperf"), std::string::npos);
}

TEST(Target, DiscardNeedsNoDirectory) {
  auto target = Target::Open("discard");
  ASSERT_TRUE(target.ok());
  EXPECT_TRUE((*target)->discard());
  EXPECT_EQ(*(*target)->FreeBytes(), 0u);
}

// The one free-space guard (issue 29, rows 4 and 13): what is free, less what is
// promised to writes in flight, must hold the size and leave min_free.
TEST(Target, CheckRoomCountsReservedBytesAndMinFree) {
  const std::string dir = TempDir();
  auto target = Target::Open(dir);
  ASSERT_TRUE(target.ok()) << target.status();
  auto free = (*target)->FreeBytes();
  ASSERT_TRUE(free.ok()) << free.status();
  ASSERT_GT(*free, 1u << 20) << "the test needs 1 MiB free in /var/tmp";
  EXPECT_TRUE((*target)->CheckRoom(4096, 0, 0).ok());
  absl::Status over = (*target)->CheckRoom(*free + (1ull << 30), 0, 0);
  EXPECT_TRUE(absl::IsResourceExhausted(over)) << over;
  EXPECT_NE(over.message().find(dir), std::string::npos) << over;
  EXPECT_FALSE((*target)->CheckRoom(4096, *free + (1ull << 30), 0).ok()) << "reserved bytes are not free";
  absl::Status margin = (*target)->CheckRoom(4096, 0, *free + (1ull << 30));
  EXPECT_NE(margin.message().find("--min-free"), std::string::npos) << margin;
  EXPECT_TRUE((*Target::Open("discard"))->CheckRoom(UINT64_MAX, 0, UINT64_MAX).ok());
  std::filesystem::remove_all(dir);
}

// Bytes that differ from page to page, so a misplaced page shows.
std::string StreamBytes(size_t size) {
  std::string bytes(size, '\0');
  for (size_t i = 0; i < size; ++i) bytes[i] = static_cast<char>(i * 7 + i / 4096);
  return bytes;
}

// A stream of `length` bytes plus `extra` bytes after them (the sender's footer),
// written from another thread into one end of a socket pair.
class PeerStream {
 public:
  PeerStream(size_t length, size_t extra) : bytes_(StreamBytes(length + extra)) {
    int fds[2];
    EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
    ours_ = Fd(fds[0]);
    Fd theirs(fds[1]);
    writer_ = std::thread([this, peer = std::move(theirs)]() mutable {
      EXPECT_TRUE(WriteAll(peer.get(), bytes_.data(), bytes_.size(), "peer").ok());
    });
  }
  ~PeerStream() { writer_.join(); }
  int fd() const { return ours_.get(); }

 private:
  std::string bytes_;
  Fd ours_;
  std::thread writer_;
};

struct Received {
  PipelineResult result;
  std::string file;   // what the target holds
  std::string after;  // what the socket still had after the payload
};

Received ReceiveOver(const std::string& dir, WriteMode mode, bool checksum, size_t length, size_t extra) {
  Received out;
  PeerStream peer(length, extra);
  SocketSource source(peer.fd());
  auto target = Target::Open(dir);
  EXPECT_TRUE(target.ok()) << target.status();
  std::string name;
  auto writer = (*target)->Create("in.dat", mode, SyncPolicy{}, &name);
  EXPECT_TRUE(writer.ok()) << writer.status();
  PipelineOptions options;
  options.checksum = checksum;
  options.interval_s = 0.001;  // samples, however fast this machine is
  out.result = RunPipeline(source, writer->get(), length, options);
  out.file = ReadAll(dir + "/" + name);
  out.after.resize(extra);
  auto got = ReadFull(peer.fd(), out.after.data(), extra, "rest");
  EXPECT_TRUE(got.ok() && *got == extra);
  EXPECT_TRUE((*target)->Remove(name).ok());
  return out;
}

TEST(Target, BufferedWritesFromASocketAreSplicedExactlyToTheLength) {
  std::string dir = TempDir();
  const size_t length = 5 * (1 << 20) + 123;  // several pipes' worth and an odd tail
  const std::string expected = StreamBytes(length + 40);
  Received got = ReceiveOver(dir, WriteMode::kBuffered, false, length, 40);
  ASSERT_EQ(got.result.end, PipelineEnd::kOk) << got.result.status;
  EXPECT_TRUE(got.result.spliced);
  EXPECT_EQ(got.result.bytes_received, length);
  EXPECT_EQ(got.result.bytes_written, length);
  EXPECT_EQ(got.file, expected.substr(0, length));
  EXPECT_EQ(got.after, expected.substr(length)) << "the bytes after the payload must stay in the socket";
  uint64_t sampled = 0;
  for (const auto& s : got.result.samples) sampled += s.bytes;
  EXPECT_EQ(sampled, length);
  std::filesystem::remove_all(dir);
}

TEST(Target, AChecksumOrODirectKeepsTheCopyPath) {
  std::string dir = TempDir();
  const size_t length = 3 * (1 << 20) + 5;
  Received hashed = ReceiveOver(dir, WriteMode::kBuffered, true, length, 8);
  ASSERT_EQ(hashed.result.end, PipelineEnd::kOk) << hashed.result.status;
  EXPECT_FALSE(hashed.result.spliced);
  EXPECT_TRUE(hashed.result.has_checksum);
  EXPECT_EQ(hashed.file.size(), length);
  auto target = Target::Open(dir);
  ASSERT_TRUE(target.ok());
  if ((*target)->Supports(WriteMode::kDirect)) {
    Received direct = ReceiveOver(dir, WriteMode::kDirect, false, length, 8);
    ASSERT_EQ(direct.result.end, PipelineEnd::kOk) << direct.result.status;
    EXPECT_FALSE(direct.result.spliced);
    EXPECT_EQ(direct.file, hashed.file);
  }
  std::filesystem::remove_all(dir);
}

TEST(Target, DiscardSplicesIntoNothingAndAShortStreamAborts) {
  const size_t length = 2 * (1 << 20) + 7;
  {
    PeerStream peer(length, 16);
    SocketSource source(peer.fd());
    PipelineResult r = RunPipeline(source, nullptr, length, PipelineOptions{});
    ASSERT_EQ(r.end, PipelineEnd::kOk) << r.status;
    EXPECT_TRUE(r.spliced);
    EXPECT_EQ(r.bytes_written, length);
    std::string rest(16, '\0');
    auto got = ReadFull(peer.fd(), rest.data(), rest.size(), "rest");
    ASSERT_TRUE(got.ok());
    EXPECT_EQ(*got, 16u);
    EXPECT_EQ(rest, StreamBytes(length + 16).substr(length));
  }
  PeerStream peer(length, 0);
  SocketSource source(peer.fd());
  PipelineResult r = RunPipeline(source, nullptr, length + 100, PipelineOptions{});  // the peer stops short
  EXPECT_EQ(r.end, PipelineEnd::kAborted);
  EXPECT_NE(r.status.message().find("sender closed the connection after"), std::string::npos) << r.status;
}

TEST(Target, ReadsOnlyPlainRegularFilesInsideTheTarget) {
  std::string dir = TempDir();
  auto target = Target::Open(dir);
  ASSERT_TRUE(target.ok());
  { std::ofstream(dir + "/movie.mov") << "frames"; }
  uint64_t size = 0;
  auto fd = (*target)->OpenForRead("movie.mov", &size);
  ASSERT_TRUE(fd.ok()) << fd.status();
  EXPECT_EQ(size, 6u);
  ASSERT_EQ(::symlink("/etc/passwd", (dir + "/escape").c_str()), 0);
  auto escaped = (*target)->OpenForRead("escape", &size);
  ASSERT_FALSE(escaped.ok());
  EXPECT_NE(escaped.status().message().find("symlink"), std::string::npos) << escaped.status();
  ASSERT_EQ(::mkdir((dir + "/sub").c_str(), 0755), 0);
  EXPECT_FALSE((*target)->OpenForRead("sub", &size).ok()) << "a directory";
  for (const char* bad : {"", ".", "..", "../etc/passwd", "sub/x"}) {
    EXPECT_FALSE((*target)->OpenForRead(bad, &size).ok()) << bad;
  }
  ASSERT_EQ(::mkfifo((dir + "/fifo").c_str(), 0600), 0);
  EXPECT_FALSE((*target)->OpenForRead("fifo", &size).ok()) << "a FIFO, without blocking on it";
  auto discard = Target::Open("discard");
  ASSERT_TRUE(discard.ok());
  EXPECT_FALSE((*discard)->OpenForRead("movie.mov", &size).ok());
  std::filesystem::remove_all(dir);
}

TEST(Target, LaysOutAReadFileOnceAndKeepsItForLaterRuns) {
  std::string dir = TempDir();
  auto target = Target::Open(dir);
  ASSERT_TRUE(target.ok());
  bool written = false;
  const uint64_t size = 3 * (1 << 20) + 11;
  ASSERT_TRUE((*target)->LayOut("read.dat", size, 9, &written).ok());
  EXPECT_TRUE(written);
  const std::string first = ReadAll(dir + "/read.dat");
  EXPECT_EQ(first.size(), size);
  ASSERT_TRUE((*target)->LayOut("read.dat", size, 9, &written).ok());
  EXPECT_FALSE(written) << "the same size again: kept";
  EXPECT_EQ(ReadAll(dir + "/read.dat"), first);
  auto other = (*target)->LayOut("read.dat", size + 1, 9, &written);
  EXPECT_FALSE(other.ok()) << "another size under the same name";
  EXPECT_EQ(ReadAll(dir + "/read.dat"), first) << "and the file is left alone";
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace nasperf
