// The validation boundary (wire/validate.h) with hostile values, one message type
// at a time: too long, empty, NaN, infinities, negative, huge. Every one is refused
// with a message naming the field; sane values pass.
#include "wire/validate.h"

#include <limits>
#include <string>

#include "gtest/gtest.h"

namespace nasperf {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

proto::TransferReport GoodReport() {
  proto::TransferReport r;
  r.set_run_id("run-1");
  r.set_label("cache");
  r.set_iteration(1);
  r.set_role("receiver");
  r.set_transport("native");
  r.set_status("ok");
  r.set_mb_per_s(250);
  proto::Sample* s = r.add_samples();
  s->set_t_s(1);
  s->set_bytes(250'000'000);
  s->set_interval_s(1);
  return r;
}

// Applies `spoil` to a good report and expects a refusal that mentions `field`.
void ExpectRefused(void (*spoil)(proto::TransferReport&), const std::string& field) {
  proto::TransferReport r = GoodReport();
  spoil(r);
  absl::Status s = CheckReport(r);
  EXPECT_FALSE(s.ok()) << field;
  EXPECT_NE(s.message().find(field), std::string::npos) << s;
}

TEST(CheckReport, AcceptsASaneRow) { EXPECT_TRUE(CheckReport(GoodReport()).ok()); }

TEST(CheckReport, RefusesHostileFigures) {
  ExpectRefused([](proto::TransferReport& r) { r.set_mb_per_s(kNaN); }, "mb_per_s");
  ExpectRefused([](proto::TransferReport& r) { r.set_mb_per_s(kInf); }, "mb_per_s");
  ExpectRefused([](proto::TransferReport& r) { r.set_mb_per_s(-1); }, "mb_per_s");
  ExpectRefused([](proto::TransferReport& r) { r.set_mb_per_s(1e300); }, "mb_per_s");
  ExpectRefused([](proto::TransferReport& r) { r.set_duration_s(kNaN); }, "duration_s");
  ExpectRefused([](proto::TransferReport& r) { r.set_line_rate_pct(-kInf); }, "line_rate_pct");
  ExpectRefused([](proto::TransferReport& r) { r.set_source_wait_pct(kNaN); }, "source_wait_pct");
  ExpectRefused([](proto::TransferReport& r) { r.set_started_at_unix_ns(-5); }, "started_at");
}

TEST(CheckReport, RefusesHostileText) {
  ExpectRefused([](proto::TransferReport& r) { r.set_run_id(""); }, "run id");
  ExpectRefused([](proto::TransferReport& r) { r.set_run_id("../etc"); }, "run id");
  ExpectRefused([](proto::TransferReport& r) { r.set_label(std::string(201, 'x')); }, "label");
  ExpectRefused([](proto::TransferReport& r) { r.set_host(std::string("a\0b", 3)); }, "host");
  ExpectRefused([](proto::TransferReport& r) { r.set_error(std::string(2001, 'e')); }, "error");
  ExpectRefused([](proto::TransferReport& r) { r.set_role("admin"); }, "role");
  // A transport's word by its shape only (the registry's words are a layer above): a
  // word this build has no entry for is a newer peer's, and passes.
  ExpectRefused([](proto::TransferReport& r) { r.set_transport("FTP"); }, "transport");
  ExpectRefused([](proto::TransferReport& r) { r.set_transport(std::string(17, 'x')); }, "transport");
  ExpectRefused([](proto::TransferReport& r) { r.set_transport("nfs\x1b[2J"); }, "transport");
  ExpectRefused([](proto::TransferReport& r) { r.set_transport(""); }, "transport");
  ExpectRefused([](proto::TransferReport& r) { r.set_stream(1 << 20); }, "stream");
  ExpectRefused([](proto::TransferReport& r) { r.set_read_mode("mmap"); }, "read_mode");
  // Control characters: a label or host that would move a terminal's cursor or
  // break samples.csv into lines.
  ExpectRefused([](proto::TransferReport& r) { r.set_label("cache\nrun2,evil"); }, "label");
  ExpectRefused([](proto::TransferReport& r) { r.set_host("nas\x1b[2J"); }, "host");
  ExpectRefused([](proto::TransferReport& r) { r.set_peer("10.0.0.1\r"); }, "peer");
  ExpectRefused(
      [](proto::TransferReport& r) {
        r.set_label(
            "cache\xc2\x9b"
            "2J");
      },
      "label");  // C1 CSI
}

// Issue 27: the device columns of a hostile peer's row: names that are no device
// (a formula, a path, a control character), lists past 32 devices or with shares over 100.
TEST(CheckReport, DeviceColumnsHoldDeviceNamesAndWholeShares) {
  proto::TransferReport good = GoodReport();
  good.set_busiest_device("nvme0n1");
  good.set_busiest_busy_pct(98.5);
  good.set_device_busy("loop7=99;loop6=7;dm-0=0;cciss!c0d0=100");
  good.set_disk_detail("loop7, member 2 of the btrfs raid1 under the target, 98 % busy; loop6 7 %");
  good.set_dirty_peak_bytes(1 << 30);
  EXPECT_TRUE(CheckReport(good).ok()) << CheckReport(good);
  ExpectRefused([](proto::TransferReport& r) { r.set_busiest_device("=HYPERLINK(1)"); }, "busiest_device");
  ExpectRefused([](proto::TransferReport& r) { r.set_busiest_device("../sda"); }, "busiest_device");
  ExpectRefused([](proto::TransferReport& r) { r.set_busiest_device(std::string(65, 'a')); }, "busiest_device");
  ExpectRefused([](proto::TransferReport& r) { r.set_busiest_busy_pct(101); }, "busiest_busy_pct");
  ExpectRefused([](proto::TransferReport& r) { r.set_busiest_busy_pct(kNaN); }, "busiest_busy_pct");
  ExpectRefused([](proto::TransferReport& r) { r.set_device_busy("sda=101"); }, "device_busy");
  ExpectRefused([](proto::TransferReport& r) { r.set_device_busy("sda=-1"); }, "device_busy");
  ExpectRefused([](proto::TransferReport& r) { r.set_device_busy("sda=50;"); }, "device_busy");
  ExpectRefused([](proto::TransferReport& r) { r.set_device_busy("sda"); }, "device_busy");
  ExpectRefused([](proto::TransferReport& r) { r.set_device_busy("sd\na=5"); }, "device_busy");
  ExpectRefused([](proto::TransferReport& r) { r.set_device_busy("sda=9.5"); }, "device_busy");
  ExpectRefused(
      [](proto::TransferReport& r) {
        std::string many;
        for (int i = 0; i < 33; ++i) many += "sd" + std::to_string(i) + "=1" + (i < 32 ? ";" : "");
        r.set_device_busy(many);
      },
      "device_busy");
  ExpectRefused([](proto::TransferReport& r) { r.set_disk_detail("sda\x1b[2J"); }, "disk_detail");
  ExpectRefused([](proto::TransferReport& r) { r.set_disk_detail(std::string(1001, 'x')); }, "disk_detail");
}

// Issue 29 row 10: error and notes may span lines, but an escape sequence in them
// would reach the terminal of whoever reads the CSV back (`nasperf report`).
TEST(CheckReport, ErrorAndNotesHoldNoEscapeSequence) {
  ExpectRefused([](proto::TransferReport& r) { r.set_error("disk full\x1b]0;pwned\x07"); }, "error");
  ExpectRefused([](proto::TransferReport& r) { r.set_error("\x1b[2J"); }, "error");
  ExpectRefused([](proto::TransferReport& r) { r.set_notes("slow\x1b[2J"); }, "notes");
  ExpectRefused([](proto::TransferReport& r) { r.set_notes("a\rb"); }, "notes");
  ExpectRefused(
      [](proto::TransferReport& r) {
        r.set_error(
            "\xc2\x9d"
            "0;pwned");
      },
      "error");  // C1 OSC
  proto::TransferReport r = GoodReport();
  r.set_error("receiver: write failed\n\tENOSPC on /pool");
  r.set_notes("caf\xc3\xa9; line one\nline two");
  EXPECT_TRUE(CheckReport(r).ok()) << CheckReport(r);
}

TEST(CheckReport, RefusesSamplesThatAreNoRate) {
  // A tiny interval turns a few bytes into an infinite rate in samples.csv.
  ExpectRefused([](proto::TransferReport& r) { r.mutable_samples(0)->set_interval_s(1e-300); }, "not a real rate");
  ExpectRefused([](proto::TransferReport& r) { r.mutable_samples(0)->set_interval_s(0); }, "not a real rate");
  ExpectRefused([](proto::TransferReport& r) { r.mutable_samples(0)->set_t_s(kNaN); }, "non-finite time");
  ExpectRefused([](proto::TransferReport& r) { r.mutable_samples(0)->set_interval_s(-kInf); }, "non-finite time");
  proto::TransferReport empty_interval = GoodReport();
  empty_interval.mutable_samples(0)->set_bytes(0);
  empty_interval.mutable_samples(0)->set_interval_s(0);
  EXPECT_TRUE(CheckReport(empty_interval).ok()) << "no bytes in no time is no rate at all, and harmless";
}

// A sample's files count the row's whole files over time: never files in a row that
// wrote none, nor more in the samples than in the row.
TEST(CheckReport, SamplesCountNoMoreFilesThanTheRow) {
  ExpectRefused([](proto::TransferReport& r) { r.mutable_samples(0)->set_files(3); }, "wrote no file set");
  ExpectRefused(
      [](proto::TransferReport& r) {
        r.set_files(4);
        r.mutable_samples(0)->set_files(3);
        r.add_samples()->set_files(2);
      },
      "more files than the row's 4");
  proto::TransferReport set = GoodReport();
  set.set_files(4);
  set.mutable_samples(0)->set_files(4);
  EXPECT_TRUE(CheckReport(set).ok());
}

// Every sample becomes a samples.csv row: a report carries no more than a sampler
// keeps (the old limit, a million, let one report become ~600 MB of rows), and each
// sample's cells have a largest width.
TEST(CheckReport, AtMostASamplersSamplesEachOfBoundedWidth) {
  proto::TransferReport full = GoodReport();
  for (int i = 1; i < kMaxSamplesPerReport; ++i) *full.add_samples() = full.samples(0);
  EXPECT_TRUE(CheckReport(full).ok());
  *full.add_samples() = full.samples(0);
  absl::Status s = CheckReport(full);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("16385 samples, at most 16384"), std::string::npos) << s;
  ExpectRefused([](proto::TransferReport& r) { r.mutable_samples(0)->set_t_s(1e300); }, "huge");
  ExpectRefused([](proto::TransferReport& r) { r.mutable_samples(0)->set_interval_s(2e12); }, "huge");
}

// A sample's device cells come from the NAS: kernel names, shares of 0..100, and a list
// short enough that a full report of them still fits the collector's message limit.
TEST(CheckReport, SampleDeviceCellsAreBoundedAndAFullReportOfThemFits) {
  proto::TransferReport full = GoodReport();
  proto::Sample* s = full.mutable_samples(0);
  s->set_bytes(std::numeric_limits<uint64_t>::max() / 2);
  s->set_interval_s(1e12);
  s->set_t_s(1e12);
  s->set_busiest_device(std::string(kMaxSampleDeviceNameBytes, 'd'));
  s->set_busiest_busy_pct(100);
  std::string list;
  while (list.size() + 6 <= kMaxSampleDeviceBusyBytes) list += list.empty() ? "sd=100" : ";s=100";
  s->set_device_busy(list);
  ASSERT_TRUE(CheckReport(full).ok()) << CheckReport(full);
  EXPECT_LE(s->ByteSizeLong() + 3, static_cast<size_t>(kMaxSampleBytes));
  for (int i = 1; i < kMaxSamplesPerReport; ++i) *full.add_samples() = full.samples(0);
  EXPECT_TRUE(CheckReport(full).ok());
  EXPECT_LT(full.ByteSizeLong(), static_cast<size_t>(kMaxReportBytes));

  ExpectRefused([](proto::TransferReport& r) { r.mutable_samples(0)->set_busiest_device("../sda"); },
                "not a kernel device name");
  ExpectRefused([](proto::TransferReport& r) { r.mutable_samples(0)->set_busiest_device(std::string(33, 'd')); },
                "not a kernel device name");
  ExpectRefused([](proto::TransferReport& r) { r.mutable_samples(0)->set_busiest_busy_pct(100.5); },
                "between 0 and 100");
  ExpectRefused([](proto::TransferReport& r) { r.mutable_samples(0)->set_busiest_busy_pct(kNaN); },
                "between 0 and 100");
  ExpectRefused([](proto::TransferReport& r) { r.mutable_samples(0)->set_device_busy("sdb=99;=cmd|calc"); },
                "NAME=PCT");
  ExpectRefused([](proto::TransferReport& r) { r.mutable_samples(0)->set_device_busy(std::string(97, 'a') + "=1"); },
                "longer than 96 bytes");
}

TEST(CheckInterval, ZeroOrTenMillisecondsToAnHour) {
  EXPECT_TRUE(CheckInterval(0).ok());
  EXPECT_TRUE(CheckInterval(0.01).ok());
  EXPECT_TRUE(CheckInterval(3600).ok());
  for (double bad : {1e-300, 0.009, -1.0, 3601.0, kNaN, kInf, -kInf}) {
    EXPECT_FALSE(CheckInterval(bad).ok()) << bad;
  }
}

TEST(BoundedWaitSeconds, NonFiniteWaitsAreNoWait) {
  EXPECT_EQ(BoundedWaitSeconds(5, 60), 5);
  EXPECT_EQ(BoundedWaitSeconds(600, 60), 60);
  EXPECT_EQ(BoundedWaitSeconds(-3, 60), 0);
  EXPECT_EQ(BoundedWaitSeconds(kNaN, 60), 0);
  EXPECT_EQ(BoundedWaitSeconds(kInf, 60), 0);
  EXPECT_EQ(BoundedWaitSeconds(-kInf, 60), 0);
}

TEST(CheckOpenTransferReply, TicketLengthPortAndLifetime) {
  proto::OpenTransferReply r;
  r.set_transfer_id(3);
  r.set_ticket(std::string(16, 't'));
  r.set_data_port(7601);
  r.set_ticket_ttl_s(30);
  EXPECT_TRUE(CheckOpenTransferReply(r).ok());
  r.set_ticket(std::string(1000, 'A'));
  EXPECT_FALSE(CheckOpenTransferReply(r).ok());
  r.set_ticket("");
  EXPECT_FALSE(CheckOpenTransferReply(r).ok());
  r.set_ticket(std::string(16, 't'));
  r.set_ticket_ttl_s(kInf);
  EXPECT_FALSE(CheckOpenTransferReply(r).ok());
}

TEST(CheckHelloReply, PortsMtuAndModes) {
  proto::HelloReply r;
  r.set_host("nas");
  r.set_data_port(7601);
  r.add_write_modes("direct");
  EXPECT_TRUE(CheckHelloReply(r).ok());
  r.set_host("nas\x1b]0;pwned\x07");  // probe prints it
  EXPECT_FALSE(CheckHelloReply(r).ok());
  r.set_host("nas");
  r.set_version("0.1\x1b[2J");  // the wire-version error quotes it
  EXPECT_FALSE(CheckHelloReply(r).ok());
  r.set_version("0.1.0");
  r.set_probe_port(70000);
  EXPECT_FALSE(CheckHelloReply(r).ok());
  r.set_probe_port(0);
  r.set_mtu(70000);
  EXPECT_FALSE(CheckHelloReply(r).ok());
  r.set_mtu(9000);
  for (int i = 0; i < 9; ++i) r.add_write_modes("buffered");
  EXPECT_FALSE(CheckHelloReply(r).ok()) << "more than 8 write modes";
  r.clear_write_modes();
  r.add_transports("native");
  r.add_transports("a-newer-one");  // a newer agent's: listed, not refused
  EXPECT_TRUE(CheckHelloReply(r).ok());
  r.add_transports("smb\x1b]0;pwned\x07");  // preflight prints the list
  EXPECT_FALSE(CheckHelloReply(r).ok());
}

TEST(CheckPrepareReadReply, APlainFileOfTheAskedSize) {
  proto::PrepareReadRequest asked;
  asked.set_size(1000);
  proto::PrepareReadReply r;
  r.set_file("nasperf-read-r-0.dat");
  r.set_length(1000);
  EXPECT_TRUE(CheckPrepareReadReply(r, asked).ok());
  for (const char* bad : {"", "..", "../../etc/passwd", "a/b", "x\n"}) {
    proto::PrepareReadReply named = r;
    named.set_file(bad);
    EXPECT_FALSE(CheckPrepareReadReply(named, asked).ok()) << bad;
  }
  r.set_length(999);
  EXPECT_FALSE(CheckPrepareReadReply(r, asked).ok()) << "not the size laid out";
  asked.set_remote_file("movie.mov");
  EXPECT_TRUE(CheckPrepareReadReply(r, asked).ok()) << "an existing file has its own length";
  r.set_length(0);
  EXPECT_FALSE(CheckPrepareReadReply(r, asked).ok());
  r.set_length(kMaxReadLength + 1);
  EXPECT_FALSE(CheckPrepareReadReply(r, asked).ok()) << "a length no NAS file has (issue 29, row 13)";
  r.set_length(kMaxReadLength);
  EXPECT_TRUE(CheckPrepareReadReply(r, asked).ok());
  r.set_length(5);
  r.set_setup_s(kInf);
  EXPECT_FALSE(CheckPrepareReadReply(r, asked).ok());
}

TEST(CheckFetchedReport, OnlyTheReceiversRowForThatTransfer) {
  proto::TransferReport r = GoodReport();
  r.set_transfer_id(9);
  proto::OpenTransferRequest opened;
  opened.set_run_id(r.run_id());
  opened.set_label(r.label());
  opened.set_iteration(r.iteration());
  opened.set_stream(r.stream());
  EXPECT_TRUE(CheckFetchedReport(r, 9, opened).ok());
  EXPECT_FALSE(CheckFetchedReport(r, 10, opened).ok());
  proto::OpenTransferRequest other_run = opened;
  other_run.set_run_id(r.run_id() + "x");
  EXPECT_FALSE(CheckFetchedReport(r, 9, other_run).ok()) << "a row planted for another run";
  r.set_role("sender");
  EXPECT_FALSE(CheckFetchedReport(r, 9, opened).ok());
}

}  // namespace
}  // namespace nasperf
