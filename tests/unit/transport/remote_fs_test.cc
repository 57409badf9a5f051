// What every remote file system's run does (transport/remote_fs.h), proved over an
// in-memory RemoteFs with no network: the free-space refusal, the sync fallback, the
// syncs a policy asks for, cleanup, and a failing write as a failed row.
#include "transport/remote_fs.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "common/policy.h"
#include "datapath/payload_source.h"
#include "gtest/gtest.h"
#include "measure/verdict.h"
#include "transport/fake_remote_fs.h"

namespace nasperf {
namespace {

constexpr uint64_t kMiB = 1 << 20;

RemoteRunPlan Plan(SyncPolicy sync, Cleanup cleanup, uint64_t files_at_once = 1, bool verify = false) {
  RemoteRunPlan plan;
  plan.verify = verify;
  plan.sync_policy = sync;
  plan.cleanup = cleanup;
  plan.files_at_once = files_at_once;
  return plan;
}

// One transfer as a transport makes it: the row arrives "failed", as the loop hands it over.
struct Transfer {
  absl::Status status;
  PushResult r;
  proto::TransferReport row;
};
Transfer Write(RemoteFsRun& run, FakeFs& fs, const std::string& path, uint64_t length) {
  Transfer t;
  t.row.set_status(Name(Status::kFailed));
  t.r.start_wall_ns = WallNanos();
  t.r.start_ns = MonoNanos();
  auto source = GeneratedSource(Pattern::kRandom, 1);
  PushOptions push;
  push.checksum = true;  // as the loop asks with --verify; a plan without it ignores the sum
  RemoteFsRun::Turn turn(run);
  t.status = run.Write(fs, path, length, *source, push, nullptr, t.r, turn);
  run.RecordRow(t.r, t.status, std::nullopt, /*local_disk=*/false, t.row);
  run.Done(&fs, path, t.status.ok(), t.r.first_byte_ns != 0);
  return t;
}

// A local disk's buffered write: the page cache takes the bytes at memory speed (the
// CPU busy all the push), then the fsync waits nine tenths of the time.
PushResult FastPushThenLongSync() {
  PushResult r;
  r.start_ns = 1;
  r.first_byte_ns = 1;
  r.last_byte_ns = 1 + 100'000'000;
  r.ack_ns = 1 + 1'000'000'000;
  r.bytes_sent = 64 * kMiB;
  r.cpu_busy_pct = 100;
  return r;
}

// The CPU was not the bottleneck (the verdict said sender-cpu before issue 45's path
// transport).
TEST(RemoteFsRun, ASyncAfterAFastPushIsNotTheSendersCpu) {
  RemoteFsRun run(Plan(SyncPolicy{}, Cleanup::kEach));
  PushResult r = FastPushThenLongSync();
  proto::TransferReport row;
  run.RecordRow(r, absl::OkStatus(), std::nullopt, /*local_disk=*/false, row);
  EXPECT_EQ(row.status(), Name(Status::kOk));
  EXPECT_NE(row.bottleneck(), Name(Bottleneck::kSenderCpu));
  r.ack_ns = r.last_byte_ns;  // no sync: the CPU was the bottleneck
  proto::TransferReport busy;
  run.RecordRow(r, absl::OkStatus(), std::nullopt, /*local_disk=*/false, busy);
  EXPECT_EQ(busy.bottleneck(), Name(Bottleneck::kSenderCpu));
}

// The same push into this machine's own file system (path on a local disk): the
// fsync's nine tenths are the disk's wait, so the verdict is the disk's; over a network
// that time could be the link's or the server's, so no verdict names them.
TEST(RemoteFsRun, ALocalFileSystemsWaitsAreItsDisks) {
  RemoteFsRun run(Plan(SyncPolicy{}, Cleanup::kEach));
  PushResult r = FastPushThenLongSync();
  proto::TransferReport local, remote;
  run.RecordRow(r, absl::OkStatus(), std::nullopt, /*local_disk=*/true, local);
  run.RecordRow(r, absl::OkStatus(), std::nullopt, /*local_disk=*/false, remote);
  EXPECT_EQ(local.bottleneck(), Name(Bottleneck::kDisk));
  EXPECT_EQ(remote.bottleneck(), "");
  // In memory (tmpfs): the writer never waited, its CPU was the limit.
  r.ack_ns = r.last_byte_ns;
  proto::TransferReport in_memory;
  run.RecordRow(r, absl::OkStatus(), std::nullopt, /*local_disk=*/true, in_memory);
  EXPECT_EQ(in_memory.bottleneck(), Name(Bottleneck::kSenderCpu));
  // Waits that were its source's (a slow --source disk) are not the target's disk.
  r.cpu_busy_pct = 30;
  r.source_ns = 60'000'000;
  proto::TransferReport fed_slowly;
  run.RecordRow(r, absl::OkStatus(), std::nullopt, /*local_disk=*/true, fed_slowly);
  EXPECT_EQ(fed_slowly.bottleneck(), Name(Bottleneck::kSource));
  // No CPU figure (a push too short for one) and no sync: nothing is known, no verdict
  // (not balanced).
  r.cpu_busy_pct = -1;
  r.source_ns = 0;
  proto::TransferReport unseen;
  run.RecordRow(r, absl::OkStatus(), std::nullopt, /*local_disk=*/true, unseen);
  EXPECT_EQ(unseen.bottleneck(), "");
  // No CPU figure, but a sync nine tenths of the time: the disk's, all of it (a CI run's
  // first row into a throttled ext4 said nothing: 2.43 s of fsync after a 40 ms push).
  PushResult short_push = FastPushThenLongSync();
  short_push.cpu_busy_pct = -1;
  proto::TransferReport synced;
  run.RecordRow(short_push, absl::OkStatus(), std::nullopt, /*local_disk=*/true, synced);
  EXPECT_EQ(synced.bottleneck(), Name(Bottleneck::kDisk));
  proto::TransferReport over_a_network;
  run.RecordRow(short_push, absl::OkStatus(), std::nullopt, /*local_disk=*/false, over_a_network);
  EXPECT_EQ(over_a_network.bottleneck(), "");
}

// A many-files transfer: each file of the set created, written whole and closed in
// turn (synced, with the default policy), its figures in the row, and cleanup removing
// every file; a full disk partway fails the row and removes what it made.
TEST(RemoteFsRun, AFileSetWritesEachFileInTurnAndCountsThem) {
  RemoteRunPlan plan = Plan(SyncPolicy{}, Cleanup::kEach);
  const std::vector<uint64_t> sizes = {1000, 1, 300000, 4096, 2 * kMiB + 3};
  plan.file_sizes = std::make_shared<const std::vector<uint64_t>>(sizes);
  RemoteFsRun run(plan);
  FakeServer server;
  FakeFs fs(server);
  const std::string path = "/dir/nasperf-r-1-0.dat";
  uint64_t total = 0;
  for (uint64_t size : sizes) total += size;
  int closes = 0;
  std::vector<size_t> files_when_closed;
  server.on_close = [&] { files_when_closed.push_back(server.files.size()); };
  Transfer t;
  {
    t.row.set_status(Name(Status::kFailed));
    auto source = GeneratedSource(Pattern::kRandom, 1);
    RemoteFsRun::Turn turn(run);
    t.status = run.Write(fs, path, total, *source, PushOptions{}, nullptr, t.r, turn);
    ASSERT_TRUE(t.status.ok()) << t.status;
    for (size_t i = 0; i < sizes.size(); ++i) {
      const auto file = server.files.find(SetFileName(path, i));
      ASSERT_NE(file, server.files.end()) << i;
      EXPECT_EQ(file->second.size(), sizes[i]) << i;
    }
    EXPECT_EQ(SetFileName(path, 0), "/dir/nasperf-r-1-0-000001.dat");
    run.RecordRow(t.r, t.status, std::nullopt, /*local_disk=*/false, t.row, &turn.files);
    run.Done(&fs, path, true, true, &turn.files);
  }
  closes = static_cast<int>(files_when_closed.size());
  EXPECT_EQ(closes, 5);
  EXPECT_EQ(files_when_closed, (std::vector<size_t>{1, 2, 3, 4, 5}));  // one file open at a time
  EXPECT_EQ(server.syncs, 5);
  EXPECT_EQ(t.row.status(), Name(Status::kOk));
  EXPECT_EQ(t.row.bytes(), total);
  EXPECT_EQ(t.row.files(), 5u);
  EXPECT_GT(t.row.files_per_s(), 0);
  EXPECT_LE(t.row.file_p50_s(), t.row.file_p90_s());
  EXPECT_LE(t.row.file_p90_s(), t.row.file_p99_s());
  EXPECT_LE(t.row.file_p99_s(), t.row.file_max_s());
  EXPECT_LE(t.row.file_max_s(), t.row.duration_s());
  EXPECT_TRUE(server.files.empty());  // --cleanup each: every file of the set

  server.full_at = 4000;  // the third file (300000 bytes) fails
  Transfer full;
  {
    auto source = GeneratedSource(Pattern::kRandom, 1);
    RemoteFsRun::Turn turn(run);
    full.status = run.Write(fs, path, total, *source, PushOptions{}, nullptr, full.r, turn);
    EXPECT_EQ(full.status.code(), absl::StatusCode::kResourceExhausted);
    EXPECT_EQ(turn.files.created, 3u);
    EXPECT_EQ(turn.files.whole, 2u);
    run.RecordRow(full.r, full.status, std::nullopt, false, full.row, &turn.files);
    run.Done(&fs, path, false, true, &turn.files);
  }
  EXPECT_EQ(full.row.files(), 2u);
  EXPECT_TRUE(server.files.empty());
}

// --files-per-dir: a new directory each K files, the files in it, and cleanup taking the
// files and then their directories, leaving the server as it was.
TEST(RemoteFsRun, AFileSetSpreadOverDirectoriesLeavesNothingBehind) {
  RemoteRunPlan plan = Plan(SyncPolicy{}, Cleanup::kEnd);
  const std::vector<uint64_t> sizes = {1000, 1, 3000, 4096, 7};
  plan.file_sizes = std::make_shared<const std::vector<uint64_t>>(sizes);
  plan.files_per_dir = 2;
  RemoteFsRun run(plan);
  FakeServer server;
  FakeFs fs(server);
  const std::string path = "/dir/nasperf-r-1-0.dat";
  Transfer t;
  auto source = GeneratedSource(Pattern::kRandom, 1);
  RemoteFsRun::Turn turn(run);
  t.status = run.Write(fs, path, 1000 + 1 + 3000 + 4096 + 7, *source, PushOptions{}, nullptr, t.r, turn);
  ASSERT_TRUE(t.status.ok()) << t.status;
  EXPECT_EQ(server.dirs, (std::set<std::string>{"/dir", "/dir/nasperf-r-1-0-d000001", "/dir/nasperf-r-1-0-d000002",
                                                "/dir/nasperf-r-1-0-d000003"}));
  EXPECT_EQ(server.files.at("/dir/nasperf-r-1-0-d000002/nasperf-r-1-0-000004.dat").size(), 4096u);
  EXPECT_EQ(server.files.count("/dir/nasperf-r-1-0-d000003/nasperf-r-1-0-000005.dat"), 1u);
  EXPECT_EQ(turn.files.dirs_created, 3u);
  run.Done(&fs, path, true, true, &turn.files);
  EXPECT_EQ(server.files.size(), 5u) << "--cleanup end keeps them until the run ends";
  run.Finish(fs);
  EXPECT_TRUE(server.files.empty());
  EXPECT_EQ(server.dirs, (std::set<std::string>{"/dir"}));
}

// The metadata share is each file's fixed cost (the line through size and latency
// meets zero size at it), not its fsync: a disk that writes 40 MB/s after 2 ms per file
// spends 2 ms x 5 of a second on metadata whichever way the bytes went.
TEST(RemoteFsRun, TheMetadataShareIsTheFixedCostPerFile) {
  RemoteRunPlan plan = Plan(SyncPolicy{}, Cleanup::kEach);
  const std::vector<uint64_t> sizes = {4 * kMiB, 64 * 1024, 16 * kMiB, kMiB, 256 * 1024};
  plan.file_sizes = std::make_shared<const std::vector<uint64_t>>(sizes);
  RemoteFsRun run(plan);
  FileSetTally tally;
  double total_s = 0;
  for (uint64_t size : sizes) {
    tally.latency_s.push_back(0.002 + static_cast<double>(size) / 40e6);
    total_s += tally.latency_s.back();
  }
  tally.created = tally.whole = sizes.size();
  tally.sync_ns = static_cast<int64_t>(total_s * 0.9e9);  // the fsyncs: nearly all of it, bytes mostly
  PushResult r;
  r.first_byte_ns = 1;
  r.last_byte_ns = 1 + static_cast<int64_t>(total_s * 0.1e9);
  r.ack_ns = 1 + static_cast<int64_t>(total_s * 1e9);
  proto::TransferReport row;
  run.RecordRow(r, absl::OkStatus(), std::nullopt, /*local_disk=*/true, row, &tally);
  EXPECT_NEAR(row.metadata_pct(), 100.0 * 0.010 / total_s, 0.01);
  EXPECT_NE(row.bottleneck(), Name(Bottleneck::kMetadata));
  // Small files: the same 2 ms each is most of their time.
  const std::vector<uint64_t> small = {512, 4096, 65536, 1024, 16384};
  plan.file_sizes = std::make_shared<const std::vector<uint64_t>>(small);
  RemoteFsRun small_run(plan);
  FileSetTally small_tally;
  total_s = 0;
  for (uint64_t size : small) {
    small_tally.latency_s.push_back(0.002 + static_cast<double>(size) / 40e6);
    total_s += small_tally.latency_s.back();
  }
  small_tally.created = small_tally.whole = small.size();
  r.ack_ns = 1 + static_cast<int64_t>(total_s * 1e9);
  r.last_byte_ns = 1 + static_cast<int64_t>(total_s * 0.1e9);
  proto::TransferReport small_row;
  small_run.RecordRow(r, absl::OkStatus(), std::nullopt, /*local_disk=*/true, small_row, &small_tally);
  EXPECT_NEAR(small_row.metadata_pct(), 100.0 * 0.010 / total_s, 0.01);
  EXPECT_GT(small_row.metadata_pct(), 50);
  EXPECT_EQ(small_row.bottleneck(), Name(Bottleneck::kMetadata));
}

TEST(RemoteFsRun, RefusesWhenTheFilesTheRunLeavesDoNotFit) {
  FakeServer server;
  server.free_bytes = 10 * kMiB;
  FakeFs fs(server);
  RemoteFsRun run(Plan({}, Cleanup::kEnd, /*files_at_once=*/3));
  absl::StatusOr<std::string> started = run.Start(&fs, fs.Where(), "/dir", 4 * kMiB, fs.CanSync());
  ASSERT_FALSE(started.ok());
  EXPECT_EQ(started.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(started.status().message().find("fake:22: /dir has"), std::string::npos) << started.status();
  EXPECT_NE(started.status().message().find("this run would write up to"), std::string::npos) << started.status();
  EXPECT_NE(started.status().message().find("3 files"), std::string::npos) << started.status();

  server.free_bytes = 12 * kMiB;  // exactly enough
  started = run.Start(&fs, fs.Where(), "/dir", 4 * kMiB, fs.CanSync());
  ASSERT_TRUE(started.ok()) << started.status();
  EXPECT_NE(started->find(" free"), std::string::npos) << *started;
}

// --verify over a share: the file is read back after the clock stopped, and only the
// same bytes make an ok row.
TEST(RemoteFsRun, VerifyReadsTheFileBackAndFailsOnAnyDifference) {
  FakeServer server;
  FakeFs fs(server);
  RemoteFsRun run(Plan({}, Cleanup::kEnd, 1, /*verify=*/true));
  ASSERT_TRUE(run.Start(&fs, fs.Where(), "/dir", 3 * kMiB, fs.CanSync()).ok());
  Transfer good = Write(run, fs, "/dir/good", 3 * kMiB);
  ASSERT_TRUE(good.status.ok()) << good.status;
  EXPECT_EQ(good.row.status(), "ok");
  ASSERT_TRUE(good.row.has_verified());
  EXPECT_TRUE(good.row.verified());
  EXPECT_EQ(good.row.checksum().size(), 16u);

  server.flip_at = 2 * kMiB + 5;
  Transfer flipped = Write(run, fs, "/dir/flipped", 3 * kMiB);
  EXPECT_EQ(flipped.status.code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(flipped.row.status(), "failed");
  ASSERT_TRUE(flipped.row.has_verified());
  EXPECT_FALSE(flipped.row.verified());
  EXPECT_NE(flipped.row.error().find("checksum mismatch: sent " + flipped.row.checksum()), std::string::npos)
      << flipped.row.error();
  EXPECT_EQ(server.files.count("/dir/flipped"), 0u);  // a failed transfer's file goes

  server.flip_at.reset();
  server.keep = kMiB;
  Transfer short_file = Write(run, fs, "/dir/short", 3 * kMiB);
  EXPECT_EQ(short_file.row.status(), "failed");
  EXPECT_NE(short_file.row.error().find("read back 1048576 of 3145728 bytes"), std::string::npos)
      << short_file.row.error();

  // Without --verify nothing is read back and no verdict on the bytes is given.
  server.keep.reset();
  server.flip_at = 5;
  RemoteFsRun plain(Plan({}, Cleanup::kEach));
  Transfer unverified = Write(plain, fs, "/dir/plain", kMiB);
  EXPECT_EQ(unverified.row.status(), "ok");
  EXPECT_FALSE(unverified.row.has_verified());
}

// With parallel streams, a stream done first reads its file back only once every
// stream's clock stopped: its read-back must not share the link with a timed transfer.
TEST(RemoteFsRun, AReadBackWaitsForEveryStreamsClock) {
  FakeServer fast, slow;  // one server each: the fakes are not thread-safe
  FakeFs fast_fs(fast), slow_fs(slow);
  RemoteRunPlan plan = Plan({}, Cleanup::kEach, 2, /*verify=*/true);
  plan.sync_policy.kind = SyncPolicy::kNone;
  plan.streams = 2;
  RemoteFsRun run(plan);
  absl::Notification fast_read_back;
  fast.on_open = [&] { fast_read_back.Notify(); };
  // The slow stream's clock stops at its close: before it, give the fast stream's
  // read-back every chance to run (it must not).
  bool read_back_before_slow_stopped = false, slow_closed = false;
  slow.on_close = [&] {
    if (std::exchange(slow_closed, true)) return;  // its own read-back's close
    read_back_before_slow_stopped = fast_read_back.WaitForNotificationWithTimeout(absl::Seconds(2));
  };
  Transfer slow_transfer;
  std::thread slow_stream([&] { slow_transfer = Write(run, slow_fs, "/dir/slow", 4 * kMiB); });
  Transfer fast_transfer = Write(run, fast_fs, "/dir/fast", kMiB);
  slow_stream.join();
  EXPECT_FALSE(read_back_before_slow_stopped) << "a read-back ran while another stream was still timed";
  EXPECT_TRUE(fast_read_back.HasBeenNotified());
  EXPECT_EQ(fast_transfer.row.status(), "ok") << fast_transfer.row.error();
  EXPECT_EQ(slow_transfer.row.status(), "ok") << slow_transfer.row.error();
  EXPECT_TRUE(fast_transfer.row.verified());
  EXPECT_TRUE(slow_transfer.row.verified());
}

TEST(RemoteFsRun, FreeSpaceTheServerCannotTellIsSaidNotRefused) {
  FakeServer server;
  FakeFs fs(server);
  RemoteFsRun run(Plan({}, Cleanup::kEach));
  absl::StatusOr<std::string> started = run.Start(&fs, fs.Where(), "/dir", 4 * kMiB, fs.CanSync());
  ASSERT_TRUE(started.ok()) << started.status();
  EXPECT_EQ(*started, "free space unknown (no statvfs)");
}

TEST(RemoteFsRun, FallsBackToSyncNoneWhenTheServerCannotSyncAndTheRowSaysSo) {
  FakeServer server;
  server.can_sync = false;
  FakeFs fs(server);
  RemoteFsRun run(Plan(SyncPolicy{SyncPolicy::kEnd, 0}, Cleanup::kEach));
  ASSERT_TRUE(run.Start(&fs, fs.Where(), "/dir", kMiB, fs.CanSync()).ok());
  EXPECT_EQ(run.sync().kind, SyncPolicy::kNone);
  Transfer t = Write(run, fs, "/dir/a", kMiB);
  ASSERT_TRUE(t.status.ok()) << t.status;
  EXPECT_EQ(server.syncs, 0);
  EXPECT_EQ(t.row.sync_policy(), "none");
  EXPECT_EQ(t.row.status(), Name(Status::kOk));
}

TEST(RemoteFsRun, SyncsAsThePolicySays) {
  for (const SyncPolicy& policy :
       {SyncPolicy{SyncPolicy::kNone, 0}, SyncPolicy{SyncPolicy::kEnd, 0}, SyncPolicy{SyncPolicy::kEvery, kMiB}}) {
    FakeServer server;
    FakeFs fs(server);
    RemoteFsRun run(Plan(policy, Cleanup::kEach));
    ASSERT_TRUE(run.Start(&fs, fs.Where(), "/dir", 8 * kMiB, fs.CanSync()).ok());
    Transfer t = Write(run, fs, "/dir/a", 8 * kMiB);
    ASSERT_TRUE(t.status.ok()) << t.status;
    EXPECT_EQ(t.row.sync_policy(), SyncPolicyName(policy));
    if (policy.kind == SyncPolicy::kNone) EXPECT_EQ(server.syncs, 0);
    if (policy.kind == SyncPolicy::kEnd) EXPECT_EQ(server.syncs, 1);
    if (policy.kind == SyncPolicy::kEvery) EXPECT_GT(server.syncs, 1);
  }
}

TEST(RemoteFsRun, CleansUpEachAtTheEndOrNever) {
  FakeServer server;
  FakeFs fs(server);
  RemoteFsRun each(Plan({}, Cleanup::kEach));
  ASSERT_TRUE(Write(each, fs, "/dir/each", kMiB).status.ok());
  EXPECT_EQ(server.files.count("/dir/each"), 0u);

  RemoteFsRun end(Plan({}, Cleanup::kEnd));
  ASSERT_TRUE(Write(end, fs, "/dir/end", kMiB).status.ok());
  EXPECT_EQ(server.files.at("/dir/end").size(), kMiB);  // whole, until the run ends
  EXPECT_TRUE(end.HasKept());
  end.Finish(fs);
  EXPECT_EQ(server.files.count("/dir/end"), 0u);

  RemoteFsRun never(Plan({}, Cleanup::kNever));
  ASSERT_TRUE(Write(never, fs, "/dir/never", kMiB).status.ok());
  EXPECT_FALSE(never.HasKept());
  EXPECT_EQ(server.files.count("/dir/never"), 1u);
}

TEST(RemoteFsRun, AFailingWriteIsAFailedRowWithTheServersReasonAndLeavesNoPartialFile) {
  FakeServer server;
  server.full_at = 2 * kMiB;
  FakeFs fs(server);
  RemoteFsRun run(Plan(SyncPolicy{SyncPolicy::kEnd, 0}, Cleanup::kEnd));
  ASSERT_TRUE(run.Start(&fs, fs.Where(), "/dir", 8 * kMiB, fs.CanSync()).ok());
  Transfer t = Write(run, fs, "/dir/full", 8 * kMiB);
  EXPECT_FALSE(t.status.ok());
  EXPECT_EQ(t.row.status(), Name(Status::kFailed));
  EXPECT_NE(t.row.error().find("write /dir/full at byte"), std::string::npos) << t.row.error();
  EXPECT_NE(t.row.error().find("No space left on device"), std::string::npos) << t.row.error();
  EXPECT_EQ(server.syncs, 0);                      // nothing to claim on disk
  EXPECT_EQ(server.files.count("/dir/full"), 0u);  // a partial file helps nobody
  EXPECT_FALSE(run.HasKept());
}

TEST(RemoteFsRun, AnExistingFileIsNeitherOverwrittenNorRemoved) {
  FakeServer server;
  server.files["/dir/theirs"] = "somebody's data";
  FakeFs fs(server);
  RemoteFsRun run(Plan({}, Cleanup::kEach));
  Transfer t = Write(run, fs, "/dir/theirs", kMiB);
  EXPECT_EQ(t.status.code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(t.row.status(), Name(Status::kFailed));
  EXPECT_EQ(server.files.at("/dir/theirs"), "somebody's data");
}

TEST(RemoteFsRun, ABarrierThatFailsRemovesTheEmptyFile) {
  FakeServer server;
  FakeFs fs(server);
  RemoteFsRun run(Plan({}, Cleanup::kNever));
  PushResult r;
  auto source = GeneratedSource(Pattern::kZero, 1);
  RemoteFsRun::Turn turn(run);
  absl::Status status = run.Write(
      fs, "/dir/a", kMiB, *source, PushOptions{}, [] { return absl::CancelledError("the lab gave up"); }, r, turn);
  EXPECT_TRUE(absl::IsCancelled(status)) << status;
  EXPECT_EQ(server.files.count("/dir/a"), 0u);
}

TEST(RemoteFsRun, WhatWasWrittenReadsBack) {
  FakeServer server;
  FakeFs fs(server);
  RemoteFsRun run(Plan({}, Cleanup::kNever));
  ASSERT_TRUE(Write(run, fs, "/dir/a", 3 * kMiB + 5).status.ok());
  auto file = fs.Open("/dir/a");
  ASSERT_TRUE(file.ok()) << file.status();
  std::string back(3 * kMiB + 5, '\0');
  auto got = (*file)->PRead(reinterpret_cast<uint8_t*>(back.data()), back.size(), 0);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, back.size());
  auto source = GeneratedSource(Pattern::kRandom, 1);
  for (uint64_t at = 0; at < back.size(); at += PayloadSource::kChunk) {
    const size_t n = std::min<uint64_t>(PayloadSource::kChunk, back.size() - at);
    auto expected = source->Chunk(at, n);
    ASSERT_TRUE(expected.ok());
    ASSERT_EQ(0, std::memcmp(back.data() + at, *expected, n)) << "at byte " << at;
  }
}

}  // namespace
}  // namespace nasperf
