// The `fake` transport (fake_transport.h): a Transport built from the pieces a real
// one uses (the push loop, the row assembly, the verdict, a write pipeline for reads)
// with no network, its entry, and the one line that registers it.
#include "testing/fake_transport.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "common/policy.h"
#include "datapath/push_loop.h"
#include "datapath/rows.h"
#include "datapath/write_pipeline.h"
#include "measure/verdict.h"
#include "transport/registry.h"

namespace nasperf {

void FakeFarEnd::Reset() {
  std::lock_guard<std::mutex> lock(mu);
  started = finished = false;
  pushed_bytes = 0;
  pulled_into_file = 0;
  delay_ms = -1;
  delayed_pushes = 0;
}

FakeFarEnd& FakeFarEndOf(int n) {
  static auto* far_ends = new FakeFarEnd[kFakeFarEnds];
  return far_ends[n];
}

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

// What the entry's parse made of fake://N and --fake-delay-ms.
class FakeConfig : public TransportConfig {
 public:
  FakeConfig(int far_end, int delay_ms) : far_end(far_end), delay_ms(delay_ms) {}
  std::string Peer() const override { return absl::StrCat("fake:", far_end); }
  const int far_end, delay_ms;
};

class FakeTransport : public Transport {
 public:
  FakeTransport(const FakeConfig& config, const RunContext& context)
      : far_end_(FakeFarEndOf(config.far_end)),
        peer_(config.Peer()),
        delay_(absl::Milliseconds(config.delay_ms)),
        context_(context) {}

  absl::Status Start(const std::string& run_id, uint64_t length, const ConsoleLine& say) override {
    say("fake: started");
    std::lock_guard<std::mutex> lock(far_end_.mu);
    far_end_.started = true;
    return absl::OkStatus();
  }
  void Push(const TransferSlot& slot, PayloadSource& source, const PushOptions& push, TransferResult& out) override {
    proto::TransferReport& row = out.sender;
    row.set_peer(peer_);
    CountingWriter writer;
    PushResult r;
    r.start_wall_ns = WallNanos();
    r.start_ns = MonoNanos();
    if (context_.before_first_byte) {  // the lab's barrier (TransportCaps::barrier)
      if (absl::Status s = context_.before_first_byte(); !s.ok()) {
        row.set_error(std::string(s.message()));
        return;
      }
    }
    if (delay_ > absl::ZeroDuration()) {  // --fake-delay-ms: a far end slow to take the first byte
      absl::SleepFor(delay_);
      std::lock_guard<std::mutex> lock(far_end_.mu);
      ++far_end_.delayed_pushes;
    }
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
    std::lock_guard<std::mutex> lock(far_end_.mu);
    far_end_.pushed_bytes += writer.bytes;
  }
  void Pull(const TransferSlot& slot, BlockWriter* into, const PipelineOptions& pipeline,
            TransferResult& out) override {
    ZeroSource source(slot.length);
    const int64_t start_ns = MonoNanos();
    PipelineResult result = RunPipeline(source, into, slot.length, pipeline);
    AddReadClientFigures(result, start_ns, into != nullptr, std::nullopt, std::nullopt, &out.sender);
    std::lock_guard<std::mutex> lock(far_end_.mu);
    far_end_.pulled_into_file += into != nullptr ? 1 : 0;
  }
  void Finish(const std::string& run_id) override {
    std::lock_guard<std::mutex> lock(far_end_.mu);
    far_end_.finished = true;
  }

 private:
  FakeFarEnd& far_end_;
  const std::string peer_;
  const absl::Duration delay_;
  const RunContext& context_;
};

// Its one flag, unbound: the parse reads its value from the words.
std::vector<CLI::Option*> AddFakeFlags(CLI::App& sender, FlagScratch& /*scratch*/) {
  return {sender.add_option("--fake-delay-ms", "fake: milliseconds before each transfer's first byte")
              ->check(CLI::Range(0, 1000))};
}

// fake://N and --fake-delay-ms, the same from every origin (a plan's, a peer's too).
absl::StatusOr<std::unique_ptr<TransportConfig>> ParseFakeConfig(const std::string& to, const ParsedFlags& flags,
                                                                 Origin /*origin*/, std::string* bad_field) {
  if (to.size() != 8 || !absl::StartsWith(to, "fake://") || to[7] < '0' || to[7] >= '0' + kFakeFarEnds) {
    return absl::InvalidArgumentError(absl::StrCat("fake's to is fake://N, N 0..", kFakeFarEnds - 1));
  }
  const int far_end = to[7] - '0';
  FlagScratch scratch;
  if (absl::Status s = ApplyTransportFlags([&](CLI::App& app) { AddFakeFlags(app, scratch); }, flags, bad_field);
      !s.ok())
    return s;
  int delay_ms = 0;
  if (flags.Given("--fake-delay-ms") && !absl::SimpleAtoi(flags.Text("--fake-delay-ms"), &delay_ms)) {
    *bad_field = "--fake-delay-ms";
    return absl::InvalidArgumentError("--fake-delay-ms: a whole number of milliseconds");
  }
  return std::make_unique<FakeConfig>(far_end, delay_ms);
}

absl::StatusOr<std::unique_ptr<Transport>> MakeFakeTransport(const RunOptions& options, const RunContext& context) {
  absl::StatusOr<const FakeConfig*> made = ConfigOf<FakeConfig>(options);
  if (!made.ok()) return made.status();
  const FakeConfig* config = *made;
  FakeFarEnd& far_end = FakeFarEndOf(config->far_end);
  {
    std::lock_guard<std::mutex> lock(far_end.mu);
    far_end.delay_ms = config->delay_ms;
  }
  return std::make_unique<FakeTransport>(*config, context);
}

TransportEntry FakeTransportEntry() {
  TransportCaps caps;
  caps.reads = true;
  caps.reads_laid_out = true;  // its far end hands out any length asked
  caps.barrier = true;         // Push waits in before_first_byte
  caps.url = true;             // to is fake://N
  TransportEntry entry{"fake", "the test suite's transport: memory, no network", caps, &MakeFakeTransport,
                       &AddFakeFlags};
  entry.to_form = "fake://N";
  entry.parse = &ParseFakeConfig;
  return entry;
}

// The registry line.
const TransportRegistrar kFakeTransport(FakeTransportEntry);

}  // namespace
}  // namespace nasperf
