// Per-device figures (measure/disk_stats.h): /proc/diskstats and /proc/meminfo parsed with
// malformed and oversized input, busy % and rates from two readings, the device_busy cell
// and the sentence the disk verdict says, and a DeviceWatch over fake /proc files.
#include "measure/disk_stats.h"

#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "wire/validate.h"  // kMaxSampleDeviceBusyBytes

namespace nasperf {
namespace {

// Two lines as kernel 6.x prints them (20 fields), one as 4.4 does (14).
constexpr char kDiskstats[] =
    "   7       6 loop6 120 0 2048 30 5000 0 409600 9000 0 700 9030 0 0 0 0 0 0\n"
    "   7       7 loop7 130 0 4096 40 5200 0 409600 80000 1 9800 80040 0 0 0 0 0 0\n"
    " 253       0 vda 1 2 3 4 5 6 7 8 0 10 11\n";

TEST(ParseDiskstats, CountersOfEveryKernelsLayout) {
  const std::vector<DiskCounters> c = ParseDiskstats(kDiskstats);
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(c[1].name, "loop7");
  EXPECT_EQ(c[1].sectors_read, 4096u);
  EXPECT_EQ(c[1].sectors_written, 409600u);
  EXPECT_EQ(c[1].io_ticks_ms, 9800u);
  EXPECT_EQ(c[1].weighted_ms, 80040u);
  EXPECT_EQ(c[2].name, "vda");
  EXPECT_EQ(c[2].io_ticks_ms, 10u);
}

TEST(ParseDiskstats, MalformedAndOversizedLinesAreSkipped) {
  const std::string text = std::string("   8 0 sda 1 2 3\n") +                            // too few fields
                           "   8 0 sdb 1 2 x 4 5 6 7 8 0 10 11\n" +                       // not a number
                           "   8 0 sdc 1 2 3 4 5 6 7 8 0 10 -11\n" +                      // negative
                           "   8 0 sdd 1 2 3 4 5 6 7 8 0 10 99999999999999999999999\n" +  // past 64 bits
                           "   8 0 " + std::string(600, 'e') + " 1 2 3 4 5 6 7 8 0 10 11\n" + "\n" +
                           "   8 16 sde 1 2 3 4 5 6 7 8 0 10 11\n";
  const std::vector<DiskCounters> c = ParseDiskstats(text);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].name, "sde");
  std::string many;
  for (int i = 0; i < 10000; ++i) many += "8 0 sd" + std::to_string(i) + " 1 2 3 4 5 6 7 8 0 10 11\n";
  EXPECT_EQ(ParseDiskstats(many).size(), 4096u);  // a bounded read
}

TEST(ParseDirtyBytes, DirtyPlusWriteback) {
  EXPECT_EQ(ParseDirtyBytes("MemTotal: 100 kB\nDirty:            2048 kB\nWriteback:  1024 kB\nWritebackTmp: 5 kB\n"),
            3072u * 1024);
  EXPECT_FALSE(ParseDirtyBytes("MemTotal: 100 kB\n").has_value());
  EXPECT_FALSE(ParseDirtyBytes("Dirty: lots kB\nWriteback: 99999999999999999 kB\n").has_value());
}

DiskCounters Counters(const std::string& name, uint64_t io_ticks_ms, uint64_t sectors_written, uint64_t weighted_ms) {
  DiskCounters c;
  c.name = name;
  c.io_ticks_ms = io_ticks_ms;
  c.sectors_written = sectors_written;
  c.weighted_ms = weighted_ms;
  return c;
}

// Ten seconds of a btrfs raid1 with a slow member (loop7), a fast one and a busy disk
// elsewhere; an idle disk elsewhere is left out.
std::vector<DeviceFigure> Mirror() {
  const std::vector<BlockDevice> devices = {{"loop6", "member 1 of the btrfs raid1", true},
                                            {"loop7", "member 2 of the btrfs raid1", true},
                                            {"vda", "", false},
                                            {"sda", "", false}};
  const std::vector<DiskCounters> before = {Counters("loop6", 1000, 0, 0), Counters("loop7", 0, 0, 0),
                                            Counters("vda", 0, 0, 0), Counters("sda", 5, 5, 5)};
  const std::vector<DiskCounters> after = {Counters("loop6", 1700, 1'200'000, 800),
                                           Counters("loop7", 9800, 1'200'000, 10'000), Counters("vda", 4000, 100, 4000),
                                           Counters("sda", 5, 5, 5)};
  return FigureDevices(devices, before, after, 10.0);
}

TEST(FigureDevices, BusyRatesAndQueueFromTwoReadings) {
  const std::vector<DeviceFigure> f = Mirror();
  ASSERT_EQ(f.size(), 3u);
  EXPECT_EQ(f[0].device.name, "loop7");
  EXPECT_DOUBLE_EQ(f[0].busy_pct, 98);
  EXPECT_NEAR(f[0].write_mb_s, 61.44, 1e-9);  // 1.2e6 sectors * 512 / 10 s
  EXPECT_DOUBLE_EQ(f[0].queue_depth, 1.0);
  EXPECT_EQ(f[1].device.name, "loop6");
  EXPECT_DOUBLE_EQ(f[1].busy_pct, 7);
  EXPECT_EQ(f[2].device.name, "vda");  // outside the target, after every device under it
  ASSERT_NE(BusiestUnderTarget(f), nullptr);
  EXPECT_EQ(BusiestUnderTarget(f)->device.name, "loop7");
}

TEST(FigureDevices, CountersThatWentBackAndNoElapsedTime) {
  const std::vector<BlockDevice> devices = {{"sdb", "", true}};
  const std::vector<DeviceFigure> f =
      FigureDevices(devices, {Counters("sdb", 500, 10, 10)}, {Counters("sdb", 100, 5, 5)}, 1.0);
  ASSERT_EQ(f.size(), 1u);  // recreated device: an idle figure, not a huge one
  EXPECT_EQ(f[0].busy_pct, 0);
  EXPECT_TRUE(FigureDevices(devices, {}, {}, 0).empty());
  EXPECT_TRUE(FigureDevices(devices, {Counters("sdb", 0, 0, 0)}, {Counters("sdb", 5000, 0, 0)}, 1.0)[0].busy_pct <=
              100);
}

TEST(DeviceColumns, BusyCellAndTheSentence) {
  const std::vector<DeviceFigure> f = Mirror();
  EXPECT_EQ(DeviceBusyCell(f), "loop7=98;loop6=7;vda=40");
  EXPECT_EQ(DeviceSentence(f),
            "loop7, member 2 of the btrfs raid1 under the target, 98 % busy, 61.4 MB/s written, queue 1.0; "
            "loop6 7 %; vda 40 % (not under the target)");
  proto::TransferReport row;
  AddDeviceColumns({f, 12345, {}, {}}, &row);
  EXPECT_EQ(row.busiest_device(), "loop7");
  EXPECT_DOUBLE_EQ(row.busiest_busy_pct(), 98);
  EXPECT_EQ(row.device_busy(), "loop7=98;loop6=7;vda=40");
  EXPECT_EQ(row.dirty_peak_bytes(), 12345u);
}

TEST(DeviceColumns, ABusyDiskOutsideTheTargetIsNeverTheTargets) {
  std::vector<DeviceFigure> f = Mirror();
  f.erase(f.begin(), f.begin() + 2);  // only vda: nothing under the target was found
  EXPECT_EQ(BusiestUnderTarget(f), nullptr);
  EXPECT_EQ(DeviceSentence(f), "no device under the target was found; vda 40 % (not under the target)");
  proto::TransferReport row;
  AddDeviceColumns({f, std::nullopt, {}, {}}, &row);
  EXPECT_TRUE(row.busiest_device().empty());
  EXPECT_FALSE(row.has_busiest_busy_pct());
  EXPECT_EQ(row.device_busy(), "vda=40");
  EXPECT_FALSE(row.has_dirty_peak_bytes());
}

TEST(DeviceColumns, UnraidsParityOutsideTheTargetIsNamedWithItsRole) {
  std::vector<DeviceFigure> f = Mirror();
  f.erase(f.begin(), f.begin() + 2);
  f[0].device.role = "Unraid parity";
  EXPECT_EQ(DeviceSentence(f), "no device under the target was found; vda 40 % (Unraid parity, not under the target)");
}

TEST(DeviceColumns, AnIdleDeviceUnderTheTargetIsNotMadeTheCulprit) {
  std::vector<DeviceFigure> f = Mirror();
  f[0].busy_pct = 3;  // a throttle above the device held the writes: it looks idle
  f[1].busy_pct = 1;
  f.pop_back();
  const std::string sentence = DeviceSentence(f);
  EXPECT_NE(sentence.find("3 % busy"), std::string::npos) << sentence;
  EXPECT_NE(sentence.find("(no device under the target was 20 % busy: what held the data back sits above them"),
            std::string::npos)
      << sentence;
}

TEST(DeviceColumns, TheSentenceStaysWithinItsColumn) {
  std::vector<DeviceFigure> f(kMaxDevices);
  for (size_t i = 0; i < f.size(); ++i) {
    f[i].device = {"device-with-a-long-name-" + std::to_string(i), std::string(i == 0 ? 2000 : 0, 'r'), true};
  }
  EXPECT_LE(DeviceSentence(f).size(), kMaxDetailBytes);
  f[0].device.role = "member";
  const std::string sentence = DeviceSentence(f);
  EXPECT_LE(sentence.size(), kMaxDetailBytes);
  EXPECT_NE(sentence.find("device-with-a-long-name-1 0 %"), std::string::npos);
}

// Per-interval figures: each sample is figured between the readings nearest its start
// and end, so a device that was busy in one second and idle in the next says so.
TEST(SampleDevices, EachSampleGetsItsOwnIntervalsFigures) {
  DeviceWatchResult result;
  result.watched = {{"loop6", "member 1 of the btrfs raid1", true}, {"loop7", "member 2 of the btrfs raid1", true}};
  const int64_t t0 = 5'000'000'000;  // the watch began before the first byte
  result.readings = {
      {t0, {Counters("loop6", 0, 0, 0), Counters("loop7", 0, 0, 0)}},
      {t0 + 1'000'000'000, {Counters("loop6", 100, 0, 0), Counters("loop7", 900, 0, 0)}},
      {t0 + 2'000'000'000, {Counters("loop6", 900, 0, 0), Counters("loop7", 950, 0, 0)}},
  };
  proto::TransferReport row;
  for (double t : {1.0, 2.0}) {
    proto::Sample* s = row.add_samples();
    s->set_t_s(t);
    s->set_interval_s(1.0);
  }
  proto::Sample* within = row.add_samples();  // shorter than the readings' grain: nothing to say
  within->set_t_s(1.45);
  within->set_interval_s(0.1);
  AddSampleDevices(result, t0, &row);
  EXPECT_EQ(row.samples(0).busiest_device(), "loop7");
  EXPECT_DOUBLE_EQ(row.samples(0).busiest_busy_pct(), 90);
  EXPECT_EQ(row.samples(0).device_busy(), "loop7=90;loop6=10");
  EXPECT_EQ(row.samples(1).busiest_device(), "loop6");
  EXPECT_DOUBLE_EQ(row.samples(1).busiest_busy_pct(), 80);
  EXPECT_EQ(row.samples(1).device_busy(), "loop6=80;loop7=5");
  EXPECT_TRUE(row.samples(2).busiest_device().empty());
  EXPECT_FALSE(row.samples(2).has_busiest_busy_pct());

  // Samples that count from a later first byte are figured from the later readings.
  proto::TransferReport shifted;
  proto::Sample* s = shifted.add_samples();
  s->set_t_s(1.0);
  s->set_interval_s(1.0);
  AddSampleDevices(result, t0 + 1'000'000'000, &shifted);
  EXPECT_EQ(shifted.samples(0).busiest_device(), "loop6");
}

TEST(SampleDevices, TheListKeepsTheBusiestWholeEntriesWithinItsBound) {
  std::vector<DeviceFigure> figures;
  for (int i = 0; i < 32; ++i) {
    DeviceFigure f;
    f.device = {absl::StrCat("nvme", i, "n1"), "", i < 2};
    f.busy_pct = 100 - i;
    figures.push_back(f);
  }
  proto::Sample s;
  SetSampleDevices(figures, &s);
  EXPECT_EQ(s.busiest_device(), "nvme0n1");
  EXPECT_LE(s.device_busy().size(), kMaxSampleDeviceBusyBytes);
  EXPECT_TRUE(absl::StartsWith(s.device_busy(), "nvme0n1=100;nvme1n1=99;nvme2n1=98")) << s.device_busy();
  EXPECT_TRUE(std::isdigit(static_cast<unsigned char>(s.device_busy().back()))) << "whole entries only";
}

class FakeProc : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = std::string(::testing::TempDir()) + "/proc-XXXXXX";
    ASSERT_NE(mkdtemp(root_.data()), nullptr);
    std::filesystem::create_directories(root_ + "/sys/block/loop7");
  }
  void TearDown() override { std::filesystem::remove_all(root_); }
  void Write(const std::string& name, const std::string& text) {
    FILE* f = std::fopen((root_ + "/" + name).c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs(text.c_str(), f);
    std::fclose(f);
  }
  std::string root_;
};

TEST_F(FakeProc, AWatchReadsDiskstatsTwiceAndKeepsTheDirtyPeak) {
  Write("diskstats", "7 7 loop7 0 0 0 0 0 0 0 0 0 0 0\n");
  Write("meminfo", "Dirty: 4096 kB\nWriteback: 0 kB\n");
  DeviceWatch watch(root_, /*interval_s=*/0, root_ + "/sys", root_);
  Write("diskstats", "7 7 loop7 0 0 0 0 0 0 2048 0 0 1 1\n");
  Write("meminfo", "Dirty: 1024 kB\nWriteback: 0 kB\n");
  const DeviceWatchResult result = watch.Stop();
  ASSERT_EQ(result.devices.size(), 1u);  // a disk outside the target that wrote
  EXPECT_EQ(result.devices[0].device.name, "loop7");
  EXPECT_FALSE(result.devices[0].device.under_target);
  EXPECT_GT(result.devices[0].write_mb_s, 0);
  EXPECT_EQ(result.dirty_peak_bytes, 4096u * 1024);
}

// The readings per-interval figures come from keep the watched devices' lines only, from
// the first reading to the last.
TEST_F(FakeProc, AWatchKeepsItsReadingsOfTheWatchedDevices) {
  Write("diskstats", "7 7 loop7 0 0 0 0 0 0 0 0 0 0 0\n8 0 sdzz 0 0 0 0 0 0 0 0 0 0 0\n");
  Write("meminfo", "Dirty: 0 kB\n");
  DeviceWatch watch(root_, /*interval_s=*/0, root_ + "/sys", root_);
  Write("diskstats", "7 7 loop7 0 0 0 0 0 0 2048 0 0 500 500\n8 0 sdzz 0 0 0 0 0 0 2048 0 0 9 9\n");
  const DeviceWatchResult result = watch.Stop();
  ASSERT_EQ(result.readings.size(), 2u);
  EXPECT_LT(result.readings[0].mono_ns, result.readings[1].mono_ns);
  for (const DiskReading& r : result.readings) {
    ASSERT_EQ(r.counters.size(), 1u) << "sdzz is not in the fake sysfs: not watched";
    EXPECT_EQ(r.counters[0].name, "loop7");
  }
  EXPECT_EQ(result.readings[1].counters[0].io_ticks_ms, 500u);
  ASSERT_EQ(result.watched.size(), 1u);
}

TEST_F(FakeProc, WithoutProcFilesThereAreNoFigures) {
  DeviceWatch watch(root_, /*interval_s=*/0.01, root_ + "/sys", root_ + "/missing");
  const DeviceWatchResult result = watch.Stop();
  EXPECT_TRUE(result.devices.empty());
  EXPECT_FALSE(result.dirty_peak_bytes.has_value());
}

}  // namespace
}  // namespace nasperf
