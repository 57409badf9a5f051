// The spool in front of a real collector on loopback: a report the collector can
// never take (larger than any gRPC message nasperf accepts) is set aside with one
// line, and the reports after it still land; nothing waits behind it forever.
#include "collector/spool.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "collector/collector.h"
#include "collector/collector_client.h"
#include "gtest/gtest.h"

namespace nasperf {
namespace {

proto::TransferReport Row(int iteration, int samples) {
  proto::TransferReport r;
  r.set_run_id("spool-run");
  r.set_label("big");
  r.set_iteration(iteration);
  r.set_role("sender");
  r.set_transport("native");
  r.set_status("ok");
  r.set_transfer_id(static_cast<uint64_t>(iteration));
  r.set_mb_per_s(100);
  for (int i = 0; i < samples; ++i) {
    proto::Sample* s = r.add_samples();
    s->set_t_s(0.01 * (i + 1));
    s->set_bytes(1'000'000 + i);
    s->set_interval_s(0.01);
  }
  return r;
}

TEST(Spool, AnUndeliverableReportIsSetAsideAndTheNextOneLands) {
  std::string root = std::filesystem::temp_directory_path() / "nasperf-spool-XXXXXX";
  ASSERT_NE(mkdtemp(root.data()), nullptr);
  CollectorOptions options;
  options.out_dir = root + "/collector";
  options.listen = {"127.0.0.1", 0};
  options.token = "token";
  options.tls.plaintext = true;  // the client below has no PeerTrust
  auto collector = Collector::Start(options);
  ASSERT_TRUE(collector.ok()) << collector.status();
  auto spool = SpoolingSink::Start(
      std::make_unique<CollectorClient>(HostPort{"127.0.0.1", (*collector)->port()}, "token"), root + "/spool");
  ASSERT_TRUE(spool.ok()) << spool.status();

  const proto::TransferReport huge = Row(1, 800'000);  // about 19 MB serialized
  ASSERT_GT(huge.ByteSizeLong(), static_cast<size_t>(kMaxMessageBytes));
  ASSERT_TRUE((*spool)->Submit(huge).ok());
  ASSERT_TRUE((*spool)->Submit(Row(2, 10)).ok());
  EXPECT_EQ((*spool)->Drain(absl::Seconds(60)), 0u) << "a report is still waiting behind the huge one";

  std::ifstream csv((*collector)->transfers_path());
  std::stringstream text;
  text << csv.rdbuf();
  EXPECT_NE(text.str().find("spool-run,big,2,"), std::string::npos) << text.str();
  EXPECT_EQ(text.str().find("spool-run,big,1,"), std::string::npos) << "the huge report was written";
  int set_aside = 0;
  for (const auto& entry : std::filesystem::directory_iterator((*spool)->dir())) {
    set_aside += entry.path().extension() == ".rejected";
  }
  EXPECT_EQ(set_aside, 1) << "the huge report should wait in the spool as .rejected for a human";
  spool->reset();
  (*collector)->Shutdown();
  std::filesystem::remove_all(root);
}

// A collector past its thread or memory quota answers RESOURCE_EXHAUSTED without
// reading the report: the client calls that busy (the spool retries it), never too
// large (set aside as .rejected, a row lost).
class BusyCollector final : public proto::Collector::Service {
 public:
  grpc::Status Report(grpc::ServerContext*, const proto::TransferReport*, proto::ReportAck*) override {
    return grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED, "Server Threadpool Exhausted");
  }
};

TEST(CollectorClient, ABusyCollectorIsRetriedNeverSetAside) {
  BusyCollector busy;
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
  builder.RegisterService(&busy);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  ASSERT_NE(server, nullptr);
  CollectorClient client(HostPort{"127.0.0.1", static_cast<uint16_t>(port)}, "token");
  absl::StatusOr<bool> delivered = client.Report(Row(1, 1), absl::Seconds(10));
  ASSERT_FALSE(delivered.ok());
  EXPECT_TRUE(absl::IsUnavailable(delivered.status())) << delivered.status();
  server->Shutdown();
}

// Two agents on one host may share a spool root; one removes the collector's
// directory when it is empty and none of its own jobs reports there. The other
// still spools: Submit makes the directory again.
TEST(Spool, ASubmitAfterTheDirectoryWentMakesItAgain) {
  std::string root = std::filesystem::temp_directory_path() / "nasperf-spool-XXXXXX";
  ASSERT_NE(mkdtemp(root.data()), nullptr);
  // Nothing listens on port 1: the report stays spooled.
  auto spool =
      SpoolingSink::Start(std::make_unique<CollectorClient>(HostPort{"127.0.0.1", 1}, "token"), root + "/spool");
  ASSERT_TRUE(spool.ok()) << spool.status();
  ASSERT_EQ(::rmdir((*spool)->dir().c_str()), 0);
  ASSERT_TRUE((*spool)->Submit(Row(1, 1)).ok());
  EXPECT_EQ((*spool)->Pending(), 1u);
  spool->reset();
  std::filesystem::remove_all(root);
}

}  // namespace
}  // namespace nasperf
