// The loop's journal (sender/loop_journal.h): what a loop writes it reads back, and a
// journal that is not one of ours (edited, cut, from elsewhere) is one clear error.
#include "sender/loop_journal.h"

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "gtest/gtest.h"
#include "temp_dir.h"

namespace nasperf {
namespace {

class LoopJournalTest : public TempDirTest {
 protected:
  void Write(const std::string& text) { std::ofstream(dir_ + "/resume") << text; }
};

TEST_F(LoopJournalTest, WhatTheLoopWritesReadsBack) {
  LoopState state;
  state.run_id = "20261205-003738-82e9";
  state.label = "cache, 2 disks";
  state.runs = 6;
  state.warmup = 1;
  state.streams = 2;
  state.size = 25165824;
  LoopJournal journal(dir_, state);
  ASSERT_TRUE(journal.BeginCopy(3).ok());
  ASSERT_TRUE(journal.Opened(1, 17).ok());
  ASSERT_TRUE(journal.Opened(0, 16).ok());
  absl::StatusOr<LoopState> read = ReadLoopJournal(dir_);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->run_id, state.run_id);
  EXPECT_EQ(read->label, state.label);
  EXPECT_EQ(read->copy, 3);
  EXPECT_FALSE(read->recorded);
  EXPECT_EQ(read->transfers, (std::map<int, uint64_t>{{0, 16}, {1, 17}}));
  ASSERT_TRUE(journal.Recorded().ok());
  EXPECT_TRUE(ReadLoopJournal(dir_)->recorded);
  ASSERT_TRUE(journal.BeginCopy(4).ok());
  EXPECT_TRUE(ReadLoopJournal(dir_)->transfers.empty()) << "a new copy has opened nothing yet";
  ASSERT_TRUE(journal.Remove().ok());
  EXPECT_TRUE(absl::IsNotFound(ReadLoopJournal(dir_).status()));
}

TEST_F(LoopJournalTest, AJournalThatIsNotOursIsOneError) {
  const std::string good = "run_id=20261205-003738-82e9\nlabel=x\nruns=6\nwarmup=0\nstreams=1\nsize=1\ncopy=2\n";
  Write(good);
  ASSERT_TRUE(ReadLoopJournal(dir_).ok()) << ReadLoopJournal(dir_).status();
  for (const std::string& bad :
       {good + "rm -rf /\n", good + "transfer=0:0\n", good + "transfer=99999:5\n", good + "copy=6\n",
        good + "runs=-1\n", good + "recorded=yes\n", std::string("run_id=../../etc\nruns=1\nstreams=1\n"),
        good + "label=\x1b[2J\n", good + std::string(70000, '#')}) {
    Write(bad);
    absl::StatusOr<LoopState> read = ReadLoopJournal(dir_);
    EXPECT_FALSE(read.ok()) << bad.substr(0, 120);
    if (!read.ok()) EXPECT_TRUE(absl::IsDataLoss(read.status())) << read.status();
  }
}

// Issue 42, row 11: a copy's rows are taken (durably, with the copy to go on at)
// before any is stored; they read back whole, and rows of another run are refused.
TEST_F(LoopJournalTest, TakenRowsReadBackUntilTheLoopMovesOn) {
  LoopState state;
  state.run_id = "20261205-003738-82e9";
  state.runs = 3;
  state.streams = 1;
  state.size = 1 << 20;
  LoopJournal journal(dir_, state);
  ASSERT_TRUE(journal.BeginCopy(1).ok());
  ASSERT_TRUE(journal.Opened(0, 16).ok());
  proto::TransferReport sender, receiver;
  for (proto::TransferReport* row : {&sender, &receiver}) {
    row->set_run_id(state.run_id);
    row->set_iteration(2);
    row->set_transfer_id(16);
    row->set_transport("native");
    row->set_status("ok");
    proto::Sample* sample = row->add_samples();
    sample->set_bytes(1 << 20);
    sample->set_interval_s(1);
  }
  sender.set_role("sender");
  receiver.set_role("receiver");
  ASSERT_TRUE(journal.RowsTaken({&sender, &receiver}, 2).ok());
  absl::StatusOr<LoopState> read = ReadLoopJournal(dir_);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_TRUE(read->rows_taken);
  EXPECT_EQ(read->copy, 1);
  EXPECT_EQ(read->next, 2);
  ASSERT_EQ(read->rows.size(), 2u);
  EXPECT_EQ(read->rows[0].SerializeAsString(), sender.SerializeAsString());
  EXPECT_EQ(read->rows[1].SerializeAsString(), receiver.SerializeAsString());

  ASSERT_TRUE(journal.BeginCopy(2).ok());  // the loop moved on: the rows are not read again
  read = ReadLoopJournal(dir_);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_FALSE(read->rows_taken);
  EXPECT_TRUE(read->rows.empty());

  receiver.set_run_id("20261205-003738-ffff");
  ASSERT_TRUE(journal.RowsTaken({&sender, &receiver}, 3).ok());
  EXPECT_TRUE(absl::IsDataLoss(ReadLoopJournal(dir_).status())) << "a row of another run";
  std::ofstream(dir_ + "/resume.rows") << std::string("\0\0\x10\0short", 9);  // 4096 bytes said, 5 there
  EXPECT_TRUE(absl::IsDataLoss(ReadLoopJournal(dir_).status())) << "a cut row";
  ASSERT_TRUE(journal.Remove().ok());
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/resume.rows"));
}

}  // namespace
}  // namespace nasperf
