// Test and bench tool: talks to a real collector process.
//   collector_client HOST:PORT TOKEN MODE [ARGS] [--tls-ca FILE | --plaintext]
// Without either, TLS as a nasperf client: the collector's key pinned (wire/tls.h).
// MODE:
//   twice                 the same report twice: first stored, second a duplicate
//   flood THREADS N       THREADS reporters x N distinct reports each; prints reports/s
//   malformed             oversized and malformed fields: every one INVALID_ARGUMENT
//   wrong-token           UNAUTHENTICATED
//   unreachable           the call must fail (e.g. plaintext against a TLS collector)
//   big THREADS SAMPLES   THREADS reporters at once, each one report of SAMPLES samples
//                         with the longest label and host allowed, sent as is (no
//                         client-side size check); each must be stored or refused
//                         (INVALID_ARGUMENT, RESOURCE_EXHAUSTED); "busy" is retried.
//                         Prints stored=N refused=M.
// Exits 0 when the collector behaved as it should, 1 with one line why otherwise.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "collector/collector_client.h"
#include "common/clock.h"
#include "proto/nasperf.grpc.pb.h"
#include "wire/grpc_auth.h"

using namespace nasperf;

namespace {

int Fail(const std::string& why) {
  std::fprintf(stderr, "collector_client: %s\n", why.c_str());
  return 1;
}

proto::TransferReport MakeReport(const std::string& run, int iteration, int stream) {
  proto::TransferReport r;
  r.set_run_id(run);
  r.set_label("flood");
  r.set_iteration(iteration);
  r.set_stream(stream);
  r.set_role("sender");
  r.set_host("client");
  r.set_peer("127.0.0.1:7601");
  r.set_transport("native");
  r.set_bytes(1 << 20);
  r.set_started_at_unix_ns(WallNanos());
  r.set_duration_s(0.01);
  r.set_mb_per_s(104.8576);
  r.set_status("ok");
  r.set_transfer_id(static_cast<uint64_t>(iteration) + 1);
  for (int i = 0; i < 3; ++i) {
    proto::Sample* s = r.add_samples();
    s->set_t_s(i + 1);
    s->set_bytes(1000);
    s->set_interval_s(1);
  }
  return r;
}

// THREADS reporters x N distinct reports each, one channel per reporter.
int Flood(const HostPort& address, const std::string& token, const std::shared_ptr<const PeerTrust>& trust,
          const std::string& run, int threads, int per_thread) {
  std::vector<std::thread> workers;
  std::vector<int> failures(threads, 0);
  std::vector<std::string> first_error(threads);
  int64_t start = MonoNanos();
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      CollectorClient client(address, token, trust);  // one channel per reporter
      for (int i = 0; i < per_thread; ++i) {
        auto stored = client.Report(MakeReport(run, i, t));
        if (!stored.ok() || *stored) {
          if (failures[t]++ == 0) {
            first_error[t] = stored.ok() ? "taken for a duplicate" : std::string(stored.status().message());
          }
        }
      }
    });
  }
  for (auto& w : workers) w.join();
  double seconds = NanosToSeconds(MonoNanos() - start);
  int failed = 0;
  std::string why;
  for (int t = 0; t < threads; ++t) {
    failed += failures[t];
    if (failures[t] > 0 && why.empty()) why = absl::StrCat(" (reporter ", t, ", first: ", first_error[t], ")");
  }
  std::printf("run_id=%s reports=%d seconds=%.3f reports_per_s=%.0f failed=%d\n", run.c_str(), threads * per_thread,
              seconds, threads * per_thread / seconds, failed);
  return failed == 0 ? 0 : Fail(absl::StrCat(failed, " reports failed or were duplicates", why));
}

// Oversized and malformed fields: every one must be refused as INVALID_ARGUMENT.
int Malformed(const HostPort& address, const std::string& token, const std::shared_ptr<const PeerTrust>& trust,
              const std::string& run) {
  CollectorClient client(address, token, trust);
  std::vector<std::pair<std::string, proto::TransferReport>> cases;
  auto add = [&](const std::string& name, auto mutate) {
    proto::TransferReport r = MakeReport(run, 1, 0);
    mutate(r);
    cases.emplace_back(name, r);
  };
  add("huge label", [](proto::TransferReport& r) { r.set_label(std::string(100000, 'x')); });
  add("huge error", [](proto::TransferReport& r) { r.set_error(std::string(100000, 'e')); });
  add("bad role", [](proto::TransferReport& r) { r.set_role("admin"); });
  add("bad status", [](proto::TransferReport& r) { r.set_status("great"); });
  add("path run id", [](proto::TransferReport& r) { r.set_run_id("../../etc"); });
  add("empty run id", [](proto::TransferReport& r) { r.set_run_id(""); });
  add("NaN rate", [](proto::TransferReport& r) { r.set_mb_per_s(std::nan("")); });
  add("negative duration", [](proto::TransferReport& r) { r.set_duration_s(-1); });
  add("NUL in host", [](proto::TransferReport& r) { r.set_host(std::string("a\0b", 3)); });
  add("stream out of range", [](proto::TransferReport& r) { r.set_stream(5000); });
  add("bad sample", [](proto::TransferReport& r) { r.mutable_samples(0)->set_t_s(-5); });
  for (const auto& [name, report] : cases) {
    auto result = client.Report(report);
    if (result.ok() || !absl::IsInvalidArgument(result.status())) {
      return Fail(
          absl::StrCat(name, ": expected INVALID_ARGUMENT, got ", result.ok() ? "OK" : result.status().ToString()));
    }
  }
  return 0;
}

// One report of `samples` samples whose rows are as wide as CheckReport lets them be.
proto::TransferReport BigReport(const std::string& run, int stream, int samples) {
  proto::TransferReport r = MakeReport(run, 1, stream);
  r.set_label(std::string(200, 'L'));
  r.set_host(std::string(255, 'h'));
  r.clear_samples();
  for (int i = 0; i < samples; ++i) r.add_samples()->set_t_s(i + 1);  // 11 bytes each on the wire
  return r;
}

// THREADS reporters at once, one big report each, over the bare stub.
int Big(const HostPort& address, const std::string& token, const std::shared_ptr<const PeerTrust>& trust,
        const std::string& run, int threads, int samples) {
  std::vector<std::thread> workers;
  std::vector<std::string> outcome(threads);
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      auto stub = proto::Collector::NewStub(NewChannel(FormatHostPort(address), trust.get()));
      const proto::TransferReport report = BigReport(run, t, samples);
      grpc::Status status;
      for (int attempt = 0; attempt < 5; ++attempt) {
        grpc::ClientContext context;
        PrepareCall(&context, token, absl::Seconds(60));
        proto::ReportAck ack;
        status = stub->Report(&context, report, &ack);
        if (status.error_code() != grpc::StatusCode::UNAVAILABLE ||
            !absl::StrContains(status.error_message(), "busy")) {
          break;
        }
      }
      const grpc::StatusCode code = status.error_code();
      outcome[t] = code == grpc::StatusCode::OK ? "stored"
                   : code == grpc::StatusCode::INVALID_ARGUMENT || code == grpc::StatusCode::RESOURCE_EXHAUSTED
                       ? "refused"
                       : absl::StrCat("failed: ", static_cast<int>(status.error_code()), " ", status.error_message());
    });
  }
  for (auto& w : workers) w.join();
  int stored = 0, refused = 0;
  std::string why;
  for (const std::string& o : outcome) {
    stored += o == "stored";
    refused += o == "refused";
    if (o != "stored" && o != "refused" && why.empty()) why = o;
  }
  std::printf("stored=%d refused=%d\n", stored, refused);
  return why.empty() ? 0 : Fail(absl::StrCat("a big report ", why));
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  ClientTls tls;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--tls-ca" && i + 1 < args.size()) {
      tls.ca = args[i + 1];
      args.erase(args.begin() + static_cast<long>(i), args.begin() + static_cast<long>(i) + 2);
      break;
    }
    if (args[i] == "--plaintext") {
      tls.plaintext = true;
      args.erase(args.begin() + static_cast<long>(i));
      break;
    }
  }
  if (args.size() < 3) return Fail("usage: collector_client HOST:PORT TOKEN MODE [ARGS] [--tls-ca FILE | --plaintext]");
  auto address = ParseHostPort(args[0], 7700);
  if (!address.ok()) return Fail(std::string(address.status().message()));
  auto trust = PeerTrust::Create(tls);
  if (!trust.ok()) return Fail(std::string(trust.status().message()));
  const std::string& token = args[1];
  const std::string& mode = args[2];
  std::string run = absl::StrCat("cc-", WallNanos());

  if (mode == "twice") {
    CollectorClient client(*address, token, *trust);
    auto first = client.Report(MakeReport(run, 1, 0));
    auto second = client.Report(MakeReport(run, 1, 0));
    if (!first.ok() || !second.ok()) return Fail("a report failed");
    if (*first || !*second) return Fail("the second copy was not recognised as a duplicate");
    return 0;
  }
  if (mode == "flood") {
    int threads = 8, per_thread = 200;
    if (args.size() > 4 && (!absl::SimpleAtoi(args[3], &threads) || !absl::SimpleAtoi(args[4], &per_thread))) {
      return Fail("flood THREADS N");
    }
    return Flood(*address, token, *trust, run, threads, per_thread);
  }
  if (mode == "big") {
    int threads = 0, samples = 0;
    if (args.size() < 5 || !absl::SimpleAtoi(args[3], &threads) || !absl::SimpleAtoi(args[4], &samples) ||
        threads < 1 || threads > 64 || samples < 0) {
      return Fail("big THREADS SAMPLES");
    }
    return Big(*address, token, *trust, run, threads, samples);
  }
  if (mode == "malformed") return Malformed(*address, token, *trust, run);
  if (mode == "wrong-token") {
    CollectorClient client(*address, token + "x", *trust);
    auto result = client.Report(MakeReport(run, 1, 0));
    if (!result.ok() && absl::IsUnauthenticated(result.status())) return 0;
    return Fail(absl::StrCat("wrong token: ", result.ok() ? "accepted" : result.status().ToString()));
  }
  if (mode == "unreachable") {
    CollectorClient client(*address, token, *trust);
    auto result = client.Report(MakeReport(run, 1, 0), absl::Seconds(3));
    if (!result.ok() && absl::IsUnavailable(result.status())) return 0;
    if (!result.ok() && absl::IsDeadlineExceeded(result.status())) return 0;
    return Fail(absl::StrCat("expected the call to fail, got ", result.ok() ? "OK" : result.status().ToString()));
  }
  return Fail(absl::StrCat("unknown mode ", mode));
}
