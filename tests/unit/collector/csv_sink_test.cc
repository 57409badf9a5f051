#include "collector/csv_sink.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/csv.h"
#include "gtest/gtest.h"

namespace nasperf {
namespace {

std::string TempDir() {
  char pattern[] = "/tmp/nasperf-sink-XXXXXX";
  return mkdtemp(pattern);
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::vector<std::string>> Rows(const std::string& path) {
  std::string text = ReadAll(path);
  CsvReader reader(text);
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> fields;
  while (*reader.Next(&fields)) rows.push_back(fields);
  EXPECT_FALSE(reader.torn());
  return rows;
}

proto::TransferReport Report(uint64_t id, const std::string& role) {
  proto::TransferReport r;
  r.set_run_id("run1");
  r.set_label("=cmd|' /C calc'!A0");
  r.set_iteration(3);
  r.set_stream(0);
  r.set_role(role);
  r.set_host("nas");
  r.set_transport("native");
  r.set_bytes(1000000);
  r.set_started_at_unix_ns(1764672000123000000LL);
  r.set_duration_s(0.5);
  r.set_mb_per_s(2.0);
  r.set_status("failed");
  r.set_error("write /mnt/x: No space left on device, \"really\"");
  r.set_transfer_id(id);
  proto::Sample* s = r.add_samples();
  s->set_t_s(1.0);
  s->set_bytes(500000);
  s->set_interval_s(1.0);
  return r;
}

TEST(CsvSink, ContractColumnsInOrder) {
  const std::vector<std::string> contract = {
      "run_id",        "label",      "iteration",  "stream",      "role",         "host",     "peer",   "transport",
      "bytes",         "started_at", "duration_s", "mb_per_s",    "first_byte_s", "write_s",  "sync_s", "net_wait_pct",
      "disk_wait_pct", "bottleneck", "write_mode", "sync_policy", "mtu",          "path_mtu", "mss",    "link_mbps",
      "line_rate_pct", "checksum",   "verified",   "status",      "error"};
  ASSERT_GE(TransferColumns().size(), contract.size());
  EXPECT_TRUE(std::equal(contract.begin(), contract.end(), TransferColumns().begin()));
  const std::vector<std::string> samples = {"run_id", "label", "iteration", "stream",  "role",
                                            "host",   "t_s",   "bytes",     "mb_per_s"};
  EXPECT_TRUE(std::equal(samples.begin(), samples.end(), SampleColumns().begin()));
}

TEST(CsvSink, RowsUnknownsAndGuards) {
  std::string dir = TempDir();
  auto sink = CsvSink::Open(dir);
  ASSERT_TRUE(sink.ok()) << sink.status();
  ASSERT_TRUE((*sink)->Submit(Report(1, "sender")).ok());
  auto rows = Rows(dir + "/transfers.csv");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0], TransferColumns());
  auto column = [&](const std::string& name) {
    for (size_t i = 0; i < rows[0].size(); ++i) {
      if (rows[0][i] == name) return rows[1][i];
    }
    return std::string("<missing>");
  };
  EXPECT_EQ(column("label"), "'=cmd|' /C calc'!A0");
  EXPECT_EQ(column("error"), "write /mnt/x: No space left on device, \"really\"");
  EXPECT_EQ(column("started_at"), "2025-12-02T10:40:00.123Z");
  EXPECT_EQ(column("mb_per_s"), "2.00");
  EXPECT_EQ(column("mtu"), "");  // unknown: empty, never 0
  EXPECT_EQ(column("net_wait_pct"), "");
  EXPECT_EQ(column("verified"), "");
  EXPECT_EQ(column("transfer_id"), "1");
  auto samples = Rows(dir + "/samples.csv");
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_EQ(samples[1][7], "500000");
  EXPECT_EQ(samples[1][8], "0.50");
  std::filesystem::remove_all(dir);
}

TEST(CsvSink, DuplicatesAreWrittenOnceAlsoAcrossRestarts) {
  std::string dir = TempDir();
  {
    auto sink = CsvSink::Open(dir);
    ASSERT_TRUE(sink.ok());
    bool duplicate = true;
    ASSERT_TRUE((*sink)->Append(Report(1, "sender"), &duplicate).ok());
    EXPECT_FALSE(duplicate);
    ASSERT_TRUE((*sink)->Append(Report(1, "sender"), &duplicate).ok());
    EXPECT_TRUE(duplicate);
    ASSERT_TRUE((*sink)->Append(Report(1, "receiver"), &duplicate).ok());
    EXPECT_FALSE(duplicate);
  }
  auto reopened = CsvSink::Open(dir);
  ASSERT_TRUE(reopened.ok());
  EXPECT_EQ((*reopened)->open_info().rows_found, 2u);
  bool duplicate = false;
  ASSERT_TRUE((*reopened)->Append(Report(1, "receiver"), &duplicate).ok());
  EXPECT_TRUE(duplicate);
  ASSERT_TRUE((*reopened)->Append(Report(2, "sender"), &duplicate).ok());
  EXPECT_FALSE(duplicate);
  auto rows = Rows(dir + "/transfers.csv");
  EXPECT_EQ(rows.size(), 4u);  // one header, three rows
  EXPECT_EQ(Rows(dir + "/samples.csv").size(), 4u);
  std::filesystem::remove_all(dir);
}

TEST(CsvSink, FailuresBeforeATransferIdAreAllKept) {
  std::string dir = TempDir();
  auto sink = CsvSink::Open(dir);
  ASSERT_TRUE(sink.ok());
  for (int iteration = 1; iteration <= 3; ++iteration) {
    proto::TransferReport r = Report(0, "sender");  // OpenTransfer failed: no id
    r.set_iteration(iteration);
    bool duplicate = true;
    ASSERT_TRUE((*sink)->Append(r, &duplicate).ok());
    EXPECT_FALSE(duplicate) << iteration;
  }
  proto::TransferReport other_nas = Report(0, "sender");
  other_nas.set_iteration(1);
  other_nas.set_host("client2");
  bool duplicate = true;
  ASSERT_TRUE((*sink)->Append(other_nas, &duplicate).ok());
  EXPECT_FALSE(duplicate);
  EXPECT_EQ(Rows(dir + "/transfers.csv").size(), 5u);
  std::filesystem::remove_all(dir);
}

TEST(CsvSink, GuardedCellsStillDeduplicateAfterARestart) {
  // Found by test_collector_restart_dedup: a host "=nas" is written as "'=nas".
  std::string dir = TempDir();
  proto::TransferReport r = Report(1, "receiver");
  r.set_host("=nas");
  {
    auto sink = CsvSink::Open(dir);
    ASSERT_TRUE((*sink)->Submit(r).ok());
  }
  auto reopened = CsvSink::Open(dir);
  bool duplicate = false;
  ASSERT_TRUE((*reopened)->Append(r, &duplicate).ok());
  EXPECT_TRUE(duplicate);
  EXPECT_EQ(Rows(dir + "/transfers.csv").size(), 2u);
  std::filesystem::remove_all(dir);
}

TEST(CsvSink, TornLastLineIsSetAside) {
  std::string dir = TempDir();
  {
    auto sink = CsvSink::Open(dir);
    ASSERT_TRUE((*sink)->Submit(Report(1, "sender")).ok());
  }
  {
    std::ofstream append(dir + "/transfers.csv", std::ios::app);
    append << "run1,half a row with \"an open quote";
  }
  auto sink = CsvSink::Open(dir);
  ASSERT_TRUE(sink.ok()) << sink.status();
  ASSERT_EQ((*sink)->open_info().set_aside.size(), 1u);
  EXPECT_NE(ReadAll((*sink)->open_info().set_aside[0]).find("half a row"), std::string::npos);
  ASSERT_TRUE((*sink)->Submit(Report(2, "sender")).ok());
  auto rows = Rows(dir + "/transfers.csv");
  ASSERT_EQ(rows.size(), 3u);
  const auto& columns = TransferColumns();
  const size_t transfer_id = std::find(columns.begin(), columns.end(), "transfer_id") - columns.begin();
  EXPECT_EQ(rows[2][transfer_id], "2");
  std::filesystem::remove_all(dir);
}

// A restart reads transfers.csv in 1 MiB pieces: rows whose quoted error cell spans
// lines, and so pieces, are keyed all the same, and a torn end is still set aside.
TEST(CsvSink, RestartReadsTransfersInPiecesAcrossMultiLineCells) {
  std::string dir = TempDir();
  constexpr uint64_t kRows = 3000;  // about 3 MiB of rows
  {
    ASSERT_TRUE(CsvSink::Open(dir).ok());  // the header
    std::ofstream append(dir + "/transfers.csv", std::ios::app);
    for (uint64_t id = 1; id <= kRows; ++id) {
      proto::TransferReport r = Report(id, "sender");
      r.set_error(std::string(500, 'x') + "\nsecond line, \"quoted\"\n" + std::string(500, 'y'));
      append << TransferRow(r);
    }
    append << "run1,\"half a row\n with an open quote";
  }
  ASSERT_GT(std::filesystem::file_size(dir + "/transfers.csv"), 2u << 20);
  auto sink = CsvSink::Open(dir);
  ASSERT_TRUE(sink.ok()) << sink.status();
  EXPECT_EQ((*sink)->open_info().rows_found, kRows);
  EXPECT_EQ((*sink)->open_info().set_aside.size(), 1u);
  for (uint64_t id : {uint64_t{1}, kRows / 2, kRows}) {
    bool duplicate = false;
    ASSERT_TRUE((*sink)->Append(Report(id, "sender"), &duplicate).ok());
    EXPECT_TRUE(duplicate) << id;
  }
  bool duplicate = true;
  ASSERT_TRUE((*sink)->Append(Report(kRows + 1, "sender"), &duplicate).ok());
  EXPECT_FALSE(duplicate);
  EXPECT_EQ(Rows(dir + "/transfers.csv").size(), kRows + 2);
  std::filesystem::remove_all(dir);
}

TEST(CsvSink, RefusesAForeignFile) {
  std::string dir = TempDir();
  { std::ofstream(dir + "/transfers.csv") << "name,age\nbob,3\n"; }
  auto sink = CsvSink::Open(dir);
  ASSERT_FALSE(sink.ok());
  EXPECT_NE(sink.status().message().find("not a nasperf CSV"), std::string::npos);
  std::filesystem::remove_all(dir);
}

// A results directory from an older nasperf (fewer columns, the same first ones)
// takes new rows: its header gains the new columns, its rows empty cells for them, and
// every line has the header's width again, so report can read the file.
TEST(CsvSink, AnOlderFilesHeaderGainsTheNewColumns) {
  std::string dir = TempDir();
  const std::vector<std::string>& columns = TransferColumns();
  const size_t old_width = columns.size() - 2;
  {
    auto sink = CsvSink::Open(dir);
    ASSERT_TRUE(sink.ok()) << sink.status();
    ASSERT_TRUE((*sink)->Submit(Report(1, "sender")).ok());
  }
  // Cut the file to the older width, as an older nasperf wrote it.
  std::vector<std::vector<std::string>> full = Rows(dir + "/transfers.csv");
  {
    std::ofstream out(dir + "/transfers.csv", std::ios::trunc);
    for (auto row : full) {
      row.resize(old_width);
      std::vector<std::string> quoted;
      for (const auto& cell : row) quoted.push_back(CsvQuote(cell));
      out << CsvLine(quoted);
    }
  }
  auto sink = CsvSink::Open(dir);
  ASSERT_TRUE(sink.ok()) << sink.status();
  EXPECT_EQ((*sink)->open_info().columns_added, 2u);
  EXPECT_EQ((*sink)->open_info().rows_found, 1u);
  bool duplicate = false;
  ASSERT_TRUE((*sink)->Append(Report(1, "sender"), &duplicate).ok());
  EXPECT_TRUE(duplicate) << "the old row's key survived the rewrite";
  ASSERT_TRUE((*sink)->Submit(Report(2, "receiver")).ok());
  std::vector<std::vector<std::string>> rows = Rows(dir + "/transfers.csv");
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0], columns);
  for (const auto& row : rows) EXPECT_EQ(row.size(), columns.size());
  EXPECT_EQ(rows[1][columns.size() - 1], "") << "an old row's new cell is empty (unknown)";
  EXPECT_EQ(std::vector<std::string>(rows[1].begin(), rows[1].begin() + old_width),
            std::vector<std::string>(full[1].begin(), full[1].begin() + old_width));
  std::filesystem::remove_all(dir);
}

// samples.csv of an older nasperf (before the device cells) is given the new columns
// too: its rows keep their cells and gain empty ones, new rows carry the devices.
TEST(CsvSink, AnOlderSamplesFileGainsTheDeviceColumns) {
  std::string dir = TempDir();
  const std::vector<std::string>& columns = SampleColumns();
  std::ofstream(dir + "/samples.csv") << "run_id,label,iteration,stream,role,host,t_s,bytes,mb_per_s,transfer_id\n"
                                         "run0,old,1,0,receiver,nas,1.000,100,0.00,7\n";
  auto sink = CsvSink::Open(dir);
  ASSERT_TRUE(sink.ok()) << sink.status();
  EXPECT_EQ((*sink)->open_info().columns_added, 0u) << "transfers.csv was new";
  proto::TransferReport report = Report(1, "receiver");
  report.mutable_samples(0)->set_busiest_device("loop7");
  report.mutable_samples(0)->set_busiest_busy_pct(98.04);
  report.mutable_samples(0)->set_device_busy("loop7=98;loop6=7");
  ASSERT_TRUE((*sink)->Submit(report).ok());
  std::vector<std::vector<std::string>> rows = Rows(dir + "/samples.csv");
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0], columns);
  for (const auto& row : rows) ASSERT_EQ(row.size(), columns.size());
  EXPECT_EQ(rows[1][0], "run0");
  EXPECT_EQ(rows[1][9], "7");
  EXPECT_EQ(rows[1][10], "") << "an old row's device cells are unknown";
  EXPECT_EQ(std::vector<std::string>(rows[2].begin() + 10, rows[2].end()),
            (std::vector<std::string>{"loop7", "98.0", "loop7=98;loop6=7", ""}))
      << "a row of one file has no files cell";
  std::filesystem::remove_all(dir);
}

TEST(CsvSink, RefusesAFileFromANewerOrOtherVersion) {
  std::string dir = TempDir();
  std::vector<std::string> header = TransferColumns();
  header.push_back("a_column_from_the_future");
  { std::ofstream(dir + "/transfers.csv") << CsvLine(header); }
  auto sink = CsvSink::Open(dir);
  ASSERT_FALSE(sink.ok());
  EXPECT_NE(sink.status().message().find("written by another nasperf version"), std::string::npos);
  EXPECT_NE(sink.status().message().find("give --out a new directory"), std::string::npos);
  std::filesystem::remove(dir + "/transfers.csv");
  std::vector<std::string> samples = SampleColumns();
  samples.push_back("a_column_from_the_future");
  { std::ofstream(dir + "/samples.csv") << CsvLine(samples); }
  sink = CsvSink::Open(dir);
  ASSERT_FALSE(sink.ok());
  EXPECT_NE(sink.status().message().find("samples.csv was written by another nasperf version"), std::string::npos)
      << sink.status();
  std::filesystem::remove_all(dir);
}

TEST(CsvSink, RefusesRowsPastItsStoreLimitAndKeepsTheFilesWhole) {
  std::string dir = TempDir();
  {
    auto sink = CsvSink::Open(dir, /*max_bytes=*/4096);
    ASSERT_TRUE(sink.ok()) << sink.status();
    absl::Status last;
    int written = 0;
    for (uint64_t id = 1; id <= 50 && last.ok(); ++id) {
      last = (*sink)->Submit(Report(id, "sender"));
      if (last.ok()) ++written;
    }
    ASSERT_FALSE(last.ok()) << "50 rows fit in 4 KiB?";
    EXPECT_TRUE(absl::IsFailedPrecondition(last)) << last;
    EXPECT_NE(last.message().find("--max-store"), std::string::npos) << last;
    EXPECT_GT(written, 0);
    EXPECT_LE(std::filesystem::file_size(dir + "/transfers.csv") + std::filesystem::file_size(dir + "/samples.csv"),
              4096u);
    EXPECT_EQ(Rows(dir + "/transfers.csv").size(), static_cast<size_t>(written) + 1);
  }
  // A restart counts what is there: still full.
  auto reopened = CsvSink::Open(dir, 4096);
  ASSERT_TRUE(reopened.ok());
  EXPECT_FALSE((*reopened)->Submit(Report(99, "sender")).ok());
  std::filesystem::remove_all(dir);
}

// samples.csv can be gigabytes: a restart reads its first line and its end only.
// Here its middle is 256 MiB of zero bytes (a sparse hole), which no CSV reader
// would take; only the torn last row is set aside.
TEST(CsvSink, RestartReadsOnlyTheEndsOfSamples) {
  std::string dir = TempDir();
  {
    auto sink = CsvSink::Open(dir);
    ASSERT_TRUE(sink.ok());
  }
  const std::string samples = dir + "/samples.csv";
  std::filesystem::resize_file(samples, std::filesystem::file_size(samples) + (256u << 20));
  {
    std::ofstream out(samples, std::ios::app | std::ios::binary);
    out << "\nrun1,cache,1,0,receiver,nas,1.000,100,0.000100,7\nrun1,cache,1,0,recei";
  }
  auto reopened = CsvSink::Open(dir);
  ASSERT_TRUE(reopened.ok()) << reopened.status();
  ASSERT_EQ((*reopened)->open_info().set_aside.size(), 1u);
  EXPECT_EQ(ReadAll((*reopened)->open_info().set_aside[0]), "run1,cache,1,0,recei");
  const std::string whole_row = "run1,cache,1,0,receiver,nas,1.000,100,0.000100,7\n";
  std::ifstream in(samples, std::ios::binary);
  in.seekg(-static_cast<std::streamoff>(whole_row.size()), std::ios::end);
  std::string end(whole_row.size(), '\0');
  in.read(end.data(), static_cast<std::streamsize>(end.size()));
  EXPECT_EQ(end, whole_row) << "the file should end with the last whole row";
  ASSERT_TRUE((*reopened)->Submit(Report(5, "receiver")).ok());
  std::filesystem::remove_all(dir);
}

TEST(CsvSink, SamplesThatAreNotOursAreRefused) {
  std::string dir = TempDir();
  std::ofstream(dir + "/samples.csv") << "name,value\nx,1\n";
  auto sink = CsvSink::Open(dir);
  ASSERT_FALSE(sink.ok());
  EXPECT_NE(sink.status().message().find("not a nasperf CSV"), std::string::npos) << sink.status();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace nasperf
