// The sender loop over a transport that is not one of nasperf's (no network): the
// suite's `fake` (tests/unit/testing/fake_transport.cc), a plug-in registered as a
// product transport is, reached by its word through the registry as --transport, a
// lab plan and an agent's job reach theirs. It shows that the loop needs nothing but
// the Transport interface (rows, samples, verdicts, warm-ups, the summary, and a read
// into a local copy come out as for native or sftp) and that a transport added as one
// file, one registry line and one CMake line is in every list the product builds.
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lab/plan.h"
#include "sender/sender.h"
#include "testing/fake_transport.h"
#include "transport/registry.h"
#include "wire/report_sink.h"

namespace nasperf {
namespace {

using ::testing::HasSubstr;

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

// A run of `transport = "fake"` to fake://far_end, its `to` and flags parsed by the
// entry as the CLI's are (Origin::kUser unless given); far end `far_end` starts clean.
SenderOptions FakeRun(int far_end, const ParsedFlags& flags = {}, Origin origin = Origin::kUser) {
  FakeFarEndOf(far_end).Reset();
  SenderOptions o;
  o.transport = "fake";
  o.size = 3 << 20;
  o.runs = 3;
  o.warmup = 1;
  o.streams = 2;
  o.interval_s = 0.001;
  const TransportEntry* entry = FindTransport("fake");
  EXPECT_NE(entry, nullptr) << "the fake transport is not registered";
  if (entry == nullptr) return o;
  std::string bad_field;
  auto config = entry->parse(absl::StrCat("fake://", far_end), flags, origin, &bad_field);
  EXPECT_TRUE(config.ok()) << bad_field << ": " << config.status();
  if (!config.ok()) return o;
  o.config = std::move(*config);
  return o;
}

TEST(FakeTransport, TheLoopWritesRowsSamplesAndVerdictsThroughAnyTransport) {
  const SenderOptions o = FakeRun(0);
  Rows sink;
  std::FILE* console = std::tmpfile();
  auto outcome = RunSender(o, RunContext(), sink, console);
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  FakeFarEnd& fake = FakeFarEndOf(0);
  EXPECT_TRUE(fake.started);
  EXPECT_TRUE(fake.finished);
  EXPECT_EQ(outcome->transfers, 8);  // (1 warm-up + 3 runs) x 2 streams
  EXPECT_EQ(outcome->failed, 0);
  EXPECT_EQ(fake.pushed_bytes, 8ull * (3 << 20));
  ASSERT_EQ(sink.rows.size(), 8u);
  int warmups = 0;
  for (const proto::TransferReport& row : sink.rows) {
    EXPECT_EQ(row.role(), "sender");
    EXPECT_EQ(row.transport(), "fake");
    EXPECT_EQ(row.peer(), "fake:0");
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
  SenderOptions o = FakeRun(1);
  o.direction = Direction::kRead;
  o.warmup = 0;
  o.local_target = dir.string();
  Rows sink;
  std::FILE* console = std::tmpfile();
  auto outcome = RunSender(o, RunContext(), sink, console);
  std::fclose(console);
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  FakeFarEnd& fake = FakeFarEndOf(1);
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
  SenderOptions o = FakeRun(2);
  o.direction = Direction::kRead;
  o.size = uint64_t{1} << 50;  // 1 PiB: no test machine's temporary directory has it free
  o.local_target = dir.string();
  Rows sink;
  std::FILE* console = std::tmpfile();
  auto outcome = RunSender(o, RunContext(), sink, console);
  std::fclose(console);
  ASSERT_FALSE(outcome.ok());
  EXPECT_TRUE(absl::IsResourceExhausted(outcome.status())) << outcome.status();
  EXPECT_NE(outcome.status().message().find("--local-target"), std::string::npos) << outcome.status();
  EXPECT_EQ(outcome.status().message().find('\n'), std::string::npos) << outcome.status();
  FakeFarEnd& fake = FakeFarEndOf(2);
  EXPECT_EQ(fake.pulled_into_file, 0);
  EXPECT_TRUE(fake.finished) << "the far end is told the run ended (its laid-out files go)";
  EXPECT_TRUE(sink.rows.empty());
  EXPECT_TRUE(std::filesystem::is_empty(dir));
  std::filesystem::remove_all(dir);
}

// Issue 44 step 19: registered by one line of its own file, the fake is in every list
// the product builds from the registry, after the product's (whose first stays the
// default); tests/unit/transport/registry_test.cc, which does not link it, has no `fake`.
TEST(FakeTransportPlugIn, TheRegistrysListsHaveIt) {
  const TransportEntry* fake = FindTransport("fake");
  ASSERT_NE(fake, nullptr);
  EXPECT_EQ(&TransportFor("fake"), fake);
  EXPECT_EQ(&Transports().back(), fake);
  EXPECT_EQ(DefaultTransport(), "native");
  EXPECT_EQ(RunTransportWords().back(), "fake");
  EXPECT_EQ(*ParseRunTransport("fake"), "fake");
  EXPECT_THAT(BuiltTransportWords(), ::testing::Contains("fake"));
  EXPECT_THAT(TransportsHelp(), HasSubstr("; fake: the test suite's transport: memory, no network"));
  EXPECT_THAT(TransportToFormsHelp(), HasSubstr("; fake: fake://N"));
  EXPECT_EQ(TransportsWith(fake->add_flags), "fake");
  EXPECT_THAT(TransportsWith(&TransportCaps::barrier), HasSubstr("|fake"));
  EXPECT_TRUE(RefusalsFor("fake", TransportAsks{}).empty());
  TransportAsks verify;
  verify.verify = true;
  ASSERT_EQ(RefusalsFor("fake", verify).size(), 1u) << "it cannot verify, and says so as a product transport would";
}

// Its own flag comes through its own declaration, as a plan's or a peer's transport_flags
// do (ParseTransportFlagWords); another transport's flag, or a value out of its range, is refused.
TEST(FakeTransportPlugIn, ItsFlagIsParsedByItsOwnDeclaration) {
  auto flags = ParseTransportFlagWords("fake", {"--fake-delay-ms", "5"});
  ASSERT_TRUE(flags.ok()) << flags.status();
  EXPECT_EQ(flags->Text("--fake-delay-ms"), "5");
  for (const std::vector<std::string>& bad :
       {std::vector<std::string>{"--smb-signing", "required"}, std::vector<std::string>{"--fake-delay-ms", "5000"}}) {
    auto refused = ParseTransportFlagWords("fake", bad);
    ASSERT_FALSE(refused.ok()) << bad[0];
    EXPECT_THAT(std::string(refused.status().message()), HasSubstr("transport_flags: ")) << refused.status();
  }
  // The flag reaches the transport made for a peer's job: each transfer waits for it.
  SenderOptions o = FakeRun(3, *flags, Origin::kPeer);
  o.runs = 1;
  o.warmup = 0;
  o.streams = 1;
  o.size = 1 << 20;
  Rows sink;
  std::FILE* console = std::tmpfile();
  auto outcome = RunSender(o, RunContext(), sink, console);
  std::fclose(console);
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  EXPECT_EQ(FakeFarEndOf(3).delay_ms, 5);
  ASSERT_EQ(sink.rows.size(), 1u);
  EXPECT_EQ(FakeFarEndOf(3).delayed_pushes, 1) << "the one push waited before its first byte";
}

// Its parse takes fake://N and refuses anything else in one line about --to.
TEST(FakeTransportPlugIn, ItsParseTakesOnlyFakeUrls) {
  const TransportEntry* fake = FindTransport("fake");
  ASSERT_NE(fake, nullptr);
  for (const char* to : {"fake://8", "fake://", "fake://1/x", "fake://-1", "nfs://nas/x", "fake:1", ""}) {
    std::string bad_field = "--to";
    auto config = fake->parse(to, ParsedFlags{}, Origin::kPlan, &bad_field);
    ASSERT_FALSE(config.ok()) << to;
    EXPECT_EQ(bad_field, "--to") << to;
    EXPECT_EQ(config.status().message(), "fake's to is fake://N, N 0..7") << to;
  }
  RunOptions unparsed;  // made without its parse: refused, not run
  unparsed.transport = "fake";
  EXPECT_FALSE(fake->make(unparsed, RunContext{}).ok());
}

// A lab plan names it as it names a product transport: its `to` and transport_flags are
// read by its entry's parse when the plan is (lab/plan.cc, Origin::kPlan).
TEST(FakeTransportPlugIn, ALabPlanNamesIt) {
  auto plan_with = [](const std::string& lines) {
    return ParsePlan(
        "[[host]]\nname = \"client1\"\nagent = \"198.18.0.11\"\n"                       // lines 1-3
        "[[transfer]]\nfrom = \"client1\"\nsize = \"32MiB\"\ntransport = \"fake\"\n" +  // lines 4-7
            lines +
            "\n",
        "plan.toml");
  };
  auto plan = plan_with("to = \"fake://4\"\ntransport_flags = [\"--fake-delay-ms\", \"5\"]");
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->transfers.size(), 1u);
  auto bad_to = plan_with("to = \"fake://9\"");
  ASSERT_FALSE(bad_to.ok());
  EXPECT_THAT(std::string(bad_to.status().message()),
              HasSubstr("plan.toml:8: [[transfer]] 1: to: transport = \"fake\": fake's to is fake://N, N 0..7"));
  auto foreign = plan_with("to = \"fake://4\"\ntransport_flags = [\"--nfs-timeout\", \"5\"]");
  ASSERT_FALSE(foreign.ok());
  EXPECT_THAT(std::string(foreign.status().message()), HasSubstr("transport_flags: ")) << foreign.status();
}

}  // namespace
}  // namespace nasperf
