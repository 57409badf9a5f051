// The share shell (transport/share.h) over a driver whose sessions are in-memory
// file systems (fake_remote_fs.h): a session that is no longer usable is replaced, a
// push whose file cannot be created still lets the lab's barrier go, files kept for
// --cleanup end go at Finish (through a new session if the old one broke), a read's
// file is checked, laid out and removed, and what SSH's driver asks of the shell: a
// session with no way to look or clean up (scp with no SFTP beside it), a start-up
// note, the length up front (scp), the console for Start's connection alone.
#include "transport/share.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/clock.h"
#include "common/policy.h"
#include "datapath/payload_source.h"
#include "gtest/gtest.h"
#include "transport/fake_remote_fs.h"

namespace nasperf {
namespace {

constexpr uint64_t kMiB = 1 << 20;

// A read through FakeFile::PRead, one request at a time.
class FakeReader : public ShareReader {
 public:
  FakeReader(std::unique_ptr<RemoteFile> file, uint64_t length) : file_(std::move(file)), length_(length) {}
  absl::StatusOr<size_t> Read(uint8_t* data, size_t size) override {
    if (at_ >= length_) return 0;
    if (first_request_ns_ == 0) first_request_ns_ = MonoNanos();
    absl::StatusOr<size_t> got = file_->PRead(data, std::min<uint64_t>(size, length_ - at_), at_);
    if (got.ok()) at_ += *got;
    return got;
  }
  int64_t first_request_ns() const override { return says_first_request ? first_request_ns_ : 0; }
  void Close() override { (void)file_->Close(); }
  bool says_first_request = true;

 private:
  std::unique_ptr<RemoteFile> file_;
  const uint64_t length_;
  uint64_t at_ = 0;
  int64_t first_request_ns_ = 0;
};

// The run's own connection beside a stream's (SMB's when workers serve the streams).
// With `length_first`, its Create needs the length up front, as scp's does.
class HousekeepingFs : public FakeFs {
 public:
  using FakeFs::FakeFs;
  absl::StatusOr<std::unique_ptr<RemoteFile>> Create(const std::string& path) override {
    if (length_first) return absl::InvalidArgumentError(absl::StrCat(path, ": the length goes first"));
    return FakeFs::Create(path);
  }
  absl::StatusOr<std::unique_ptr<RemoteFile>> CreateSized(const std::string& path, uint64_t length) override {
    sized.push_back(length);
    return FakeFs::Create(path);
  }
  std::vector<uint64_t> sized;
  bool length_first = false;
  absl::Status Unlink(const std::string& path) override {
    ++unlinks;
    return FakeFs::Unlink(path);
  }
  int unlinks = 0;
};

class FakeSession : public ShareSession {
 public:
  explicit FakeSession(FakeServer& server) : housekeeping_(server), fs_(server) {}
  RemoteFs& fs() override { return writes_sized ? static_cast<RemoteFs&>(housekeeping_) : fs_; }
  RemoteFs* housekeeping() override { return can_look ? &housekeeping_ : nullptr; }
  const std::string& dir() const override { return dir_; }
  bool usable() const override { return usable_; }
  absl::StatusOr<std::unique_ptr<ShareReader>> OpenReader(const std::string& path, uint64_t length) override {
    absl::StatusOr<std::unique_ptr<RemoteFile>> file = fs_.Open(path);
    if (!file.ok()) return file.status();
    auto reader = std::make_unique<FakeReader>(*std::move(file), length);
    reader->says_first_request = reader_says_first_request;
    return std::unique_ptr<ShareReader>(std::move(reader));
  }
  const char* StartupNote() override { return transfers++ == 0 ? "start-up: the session's first" : nullptr; }
  bool usable_ = true;
  bool can_look = true;                   // false: no housekeeping (scp with no SFTP)
  bool writes_sized = false;              // true: transfers go through housekeeping_'s CreateSized
  bool reader_says_first_request = true;  // false: as sftp's, the first byte starts a read's clock
  int transfers = 0;
  HousekeepingFs housekeeping_;

 private:
  FakeFs fs_;
  const std::string dir_ = "/dir";
};

// Every session on one fake server; the test keeps a view of the ones it made.
class FakeDriver : public ShareDriver {
 public:
  FakeDriver(FakeServer& server, std::vector<FakeSession*>& made) : server_(server), made_(made) {}
  bool every_stream_at_start = false;
  std::function<void(FakeSession&)> shape;  // each new session's knobs
  absl::StatusOr<std::unique_ptr<ShareSession>> Connect(int /*stream*/, const ConsoleLine* say) override {
    auto session = std::make_unique<FakeSession>(server_);
    if (shape) shape(*session);
    if (say != nullptr) (*say)(absl::StrCat("connected ", made_.size()));
    made_.push_back(session.get());
    return std::unique_ptr<ShareSession>(std::move(session));
  }
  bool ConnectsEveryStreamAtStart() const override { return every_stream_at_start; }
  const char* name() const override { return "fake"; }
  std::string host() const override { return "127.0.0.1"; }
  uint16_t port() const override { return 2222; }
  std::string ProtocolCell(ShareSession&) const override { return "fake1"; }
  std::string StartLine(ShareSession& s, const std::string& free_text, const SyncPolicy&) const override {
    return absl::StrCat("fake ", s.dir(), ": ", free_text);
  }

 private:
  FakeServer& server_;
  std::vector<FakeSession*>& made_;
};

struct Shell {
  explicit Shell(RunOptions o, RunContext c = {}, bool every_stream_at_start = false,
                 std::function<void(FakeSession&)> shape = nullptr)
      : options(std::move(o)), context(std::move(c)) {
    auto driver = std::make_unique<FakeDriver>(server, made);
    driver->every_stream_at_start = every_stream_at_start;
    driver->shape = std::move(shape);
    transport = NewShareTransport(std::move(driver), options, context);
  }
  absl::Status Start(uint64_t length) {
    return transport->Start("r1", length, [this](const std::string& line) { lines.push_back(line); });
  }
  TransferResult Push(int iteration, int stream, uint64_t length) {
    TransferSlot slot{"r1", iteration, false, stream, length};
    TransferResult out;
    out.sender.set_status(Name(Status::kFailed));
    auto source = GeneratedSource(Pattern::kRandom, 1);
    transport->Push(slot, *source, PushOptions{}, out);
    return out;
  }
  FakeServer server;
  std::vector<FakeSession*> made;
  std::vector<std::string> lines;
  RunOptions options;
  RunContext context;
  std::unique_ptr<Transport> transport;
};

RunOptions Writes(Cleanup cleanup) {
  RunOptions options;
  options.cleanup = cleanup;
  return options;
}

TEST(ShareTransport, AStreamWhoseSessionIsNoLongerUsableGetsANewOne) {
  Shell shell(Writes(Cleanup::kEach));
  ASSERT_TRUE(shell.Start(kMiB).ok());
  ASSERT_EQ(shell.made.size(), 1u);  // Start's is stream 0's
  EXPECT_EQ(shell.Push(0, 0, kMiB).sender.status(), "ok");
  EXPECT_EQ(shell.made.size(), 1u);

  shell.made[0]->usable_ = false;  // lost, or answers still owed
  EXPECT_EQ(shell.Push(1, 0, kMiB).sender.status(), "ok");
  ASSERT_EQ(shell.made.size(), 2u);
  EXPECT_EQ(shell.Push(1, 1, kMiB).sender.status(), "ok");  // stream 1: a session of its own
  EXPECT_EQ(shell.made.size(), 3u);
  EXPECT_EQ(shell.Push(2, 0, kMiB).sender.status(), "ok");  // stream 0's new one is kept
  EXPECT_EQ(shell.made.size(), 3u);
  shell.transport->Finish("r1");
}

// NFS and SMB used to let the barrier go after a failed push only when there was no
// session: a file that could not be created never counted in, and the lab waited out
// its barrier's timeout.
TEST(ShareTransport, ACreateThatFailsStillReleasesTheBarrier) {
  RunOptions options = Writes(Cleanup::kEach);
  int waited = 0;
  RunContext context;
  context.before_first_byte = [&waited] {
    ++waited;
    return absl::OkStatus();
  };
  Shell shell(options, context);
  ASSERT_TRUE(shell.Start(kMiB).ok());
  const std::string theirs = PathInDir("/dir", TransferFileName("r1", 0, 0));
  shell.server.files[theirs] = "somebody's data";  // Create refuses: never overwritten

  TransferResult out = shell.Push(0, 0, kMiB);
  EXPECT_EQ(out.sender.status(), "failed");
  EXPECT_NE(out.sender.error().find("already exists"), std::string::npos) << out.sender.error();
  EXPECT_EQ(waited, 1);  // counted in once, after the failure
  EXPECT_EQ(shell.server.files.at(theirs), "somebody's data");

  EXPECT_EQ(shell.Push(1, 0, kMiB).sender.status(), "ok");
  EXPECT_EQ(waited, 2);  // once per push, also when it works
  shell.transport->Finish("r1");
}

TEST(ShareTransport, FilesKeptForTheEndGoAtFinishThroughANewSessionIfNeeded) {
  Shell shell(Writes(Cleanup::kEnd));
  ASSERT_TRUE(shell.Start(kMiB).ok());
  ASSERT_EQ(shell.Push(0, 0, kMiB).sender.status(), "ok");
  ASSERT_EQ(shell.Push(0, 1, kMiB).sender.status(), "ok");
  EXPECT_EQ(shell.server.files.size(), 2u);  // kept until the run ends
  shell.made[0]->usable_ = false;

  shell.transport->Finish("r1");
  EXPECT_TRUE(shell.server.files.empty());
  EXPECT_EQ(shell.made.size(), 3u);  // stream 0's broken session was replaced for the cleanup
}

// SMB: a stream whose worker died mid-transfer leaves its partial file to the run's
// own connection.
TEST(ShareTransport, AFileWhoseConnectionDiedGoesThroughHousekeeping) {
  Shell shell(Writes(Cleanup::kEach));
  ASSERT_TRUE(shell.Start(kMiB).ok());
  shell.server.full_at = kMiB / 2;
  shell.server.on_close = [&shell] { shell.made[0]->usable_ = false; };  // the connection dies with the file
  TransferResult out = shell.Push(0, 0, kMiB);
  EXPECT_EQ(out.sender.status(), "failed");
  EXPECT_EQ(shell.made[0]->housekeeping_.unlinks, 1);
  EXPECT_TRUE(shell.server.files.empty());  // the partial file went

  shell.server.full_at.reset();
  shell.server.on_close = nullptr;
  EXPECT_EQ(shell.Push(1, 0, kMiB).sender.status(), "ok");  // a new session; its own fs removes the file
  ASSERT_EQ(shell.made.size(), 2u);
  EXPECT_EQ(shell.made[1]->housekeeping_.unlinks, 0);
  EXPECT_TRUE(shell.server.files.empty());
  shell.transport->Finish("r1");
}

// SMB's workers: a stream that cannot connect fails Start, not its first transfer.
// Streams are numbered from the run's first (a lab job's).
TEST(ShareTransport, EveryStreamConnectsAtStartWhenTheDriverAsks) {
  RunOptions options = Writes(Cleanup::kEach);
  options.streams = 3;
  RunContext context;
  context.first_stream = 4;
  Shell shell(options, context, /*every_stream_at_start=*/true);
  ASSERT_TRUE(shell.Start(kMiB).ok());
  EXPECT_EQ(shell.made.size(), 3u);
  for (int stream = 4; stream < 7; ++stream) EXPECT_EQ(shell.Push(0, stream, kMiB).sender.status(), "ok");
  EXPECT_EQ(shell.made.size(), 3u);
  shell.transport->Finish("r1");
}

TEST(ShareTransport, AReadChecksItsFileOrLaysOneOutAndRemovesIt) {
  RunOptions options;
  options.direction = Direction::kRead;
  options.remote_file = "dir-not-file";
  Shell refused(options);
  refused.server.dirs.insert("/dir/dir-not-file");
  absl::Status start = refused.Start(kMiB);
  EXPECT_NE(start.message().find("/dir/dir-not-file is not a non-empty regular file"), std::string::npos) << start;
  options.remote_file = "missing";
  Shell missing(options);
  start = missing.Start(kMiB);
  EXPECT_EQ(start.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(start.message().substr(0, 26), "remote file /dir/missing o") << start;

  options.remote_file.clear();  // laid out first, removed at Finish
  Shell shell(options);
  ASSERT_TRUE(shell.Start(3 * kMiB).ok());
  EXPECT_EQ(shell.transport->Length(kMiB), 3 * kMiB);
  EXPECT_NE(shell.lines[1].find("fake read: /dir/nasperf-r1-read.dat (laid out first, untimed), 3.00 MiB"),
            std::string::npos)
      << shell.lines[1];
  TransferResult out;
  out.sender.set_status(Name(Status::kFailed));
  shell.transport->Pull(TransferSlot{"r1", 0, false, 1, 3 * kMiB}, nullptr, PipelineOptions{}, out);
  EXPECT_EQ(out.sender.status(), "ok") << out.sender.error();
  EXPECT_EQ(out.sender.bytes(), 3 * kMiB);
  EXPECT_EQ(out.sender.share_protocol(), "fake1");
  EXPECT_TRUE(out.sender.has_first_byte_s());  // from the first request's time
  shell.transport->Finish("r1");
  EXPECT_TRUE(shell.server.files.empty());
}

// scp with no SFTP beside it: nothing to look with, so no directory check and free
// space unknown; --sync falls back through the files' own fs; Finish removes nothing.
TEST(ShareTransport, ASessionWithNoWayToLookStillWritesAndRemovesNothing) {
  RunOptions options = Writes(Cleanup::kEnd);
  options.sync_policy = SyncPolicy{SyncPolicy::kEnd, 0};
  Shell shell(options, {}, false, [](FakeSession& s) { s.can_look = false; });
  shell.server.dirs.clear();  // a Stat would fail: none is made
  shell.server.can_sync = false;
  ASSERT_TRUE(shell.Start(kMiB).ok());
  ASSERT_EQ(shell.lines.size(), 3u);
  EXPECT_EQ(shell.lines[1], "fake /dir: free space unknown");
  EXPECT_NE(shell.lines[2].find("path: 127.0.0.1:2222 via"), std::string::npos) << shell.lines[2];
  TransferResult out = shell.Push(0, 0, kMiB);
  EXPECT_EQ(out.sender.status(), "ok") << out.sender.error();
  EXPECT_EQ(out.sender.sync_policy(), "none");
  EXPECT_EQ(out.sender.peer(), "127.0.0.1:2222");
  EXPECT_EQ(shell.server.files.size(), 1u);  // kept for the end
  shell.transport->Finish("r1");             // which has no way to remove it
  EXPECT_EQ(shell.server.files.size(), 1u);
}

// SSH: only Start's connection may tell the console of a host key; a session's first
// transfer says it paid the start-up, later ones do not; scp's create is told the length.
TEST(ShareTransport, StartsConnectionTalksAndASessionsFirstTransferIsNoted) {
  Shell shell(Writes(Cleanup::kEach), {}, false, [](FakeSession& s) {
    s.writes_sized = true;
    s.housekeeping_.length_first = true;
  });
  ASSERT_TRUE(shell.Start(kMiB).ok());
  EXPECT_EQ(shell.lines[0], "connected 0");
  TransferResult first = shell.Push(0, 0, kMiB);
  EXPECT_EQ(first.sender.status(), "ok") << first.sender.error();
  EXPECT_TRUE(first.startup);
  EXPECT_NE(first.sender.notes().find("start-up: the session's first"), std::string::npos) << first.sender.notes();
  TransferResult second = shell.Push(1, 0, kMiB);
  EXPECT_FALSE(second.startup);
  EXPECT_EQ(second.sender.notes().find("start-up"), std::string::npos) << second.sender.notes();
  EXPECT_TRUE(shell.Push(0, 1, kMiB).startup);  // stream 1's own session
  EXPECT_EQ(shell.lines.size(), 3u);            // stream 1's Connect said nothing
  EXPECT_EQ(shell.made[0]->housekeeping_.sized, (std::vector<uint64_t>{kMiB, kMiB}));
  EXPECT_TRUE(shell.server.files.empty());
  shell.transport->Finish("r1");
}

// sftp's reader keeps no first request's time: the clock starts at the first byte back.
TEST(ShareTransport, AReaderThatKeepsNoRequestTimeLeavesTheFirstByte) {
  RunOptions options;
  options.direction = Direction::kRead;
  options.remote_file = "f";
  Shell shell(options, {}, false, [](FakeSession& s) { s.reader_says_first_request = false; });
  shell.server.files["/dir/f"] = std::string(kMiB, 'x');
  ASSERT_TRUE(shell.Start(kMiB).ok());
  TransferResult out;
  out.sender.set_status(Name(Status::kFailed));
  shell.transport->Pull(TransferSlot{"r1", 0, false, 0, kMiB}, nullptr, PipelineOptions{}, out);
  EXPECT_EQ(out.sender.status(), "ok") << out.sender.error();
  EXPECT_TRUE(out.sender.has_first_byte_s());
  EXPECT_TRUE(out.startup);  // a read's first transfer on the session too
  shell.transport->Finish("r1");
}

TEST(ShareTransport, PeerCellNamesThePortOnlyWhenThereIsOne) {
  EXPECT_EQ(PeerCell("nas", 0), "nas");
  EXPECT_EQ(PeerCell("nas", 22), "nas:22");
}

}  // namespace
}  // namespace nasperf
