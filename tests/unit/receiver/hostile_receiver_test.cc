// A hostile receiver on the control port: whatever it replies, the sender checks it
// before use and fails with one clear line; nothing it sends reaches memory it
// should not (the ticket once went into a 16-byte array unchecked), and the sender's
// loop records a failed row instead of crashing. A real gRPC server on loopback.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/fd.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "measure/netinfo.h"
#include "proto/nasperf.grpc.pb.h"
#include "sender/sender.h"
#include "testing/config_of.h"
#include "wire/receiver_client.h"
#include "wire/validate.h"
#include "wire/wire.h"

namespace nasperf {
namespace {

// Answers every call with the replies a test set, whatever was asked.
class ScriptedReceiver : public proto::Receiver::Service {
 public:
  proto::HelloReply hello;
  proto::OpenTransferReply open;
  proto::TransferReport report;

  grpc::Status Hello(grpc::ServerContext*, const proto::HelloRequest*, proto::HelloReply* reply) override {
    *reply = hello;
    return grpc::Status::OK;
  }
  std::vector<uint64_t> read_lengths{1};  // PrepareRead: one per call, the last one repeated

  grpc::Status OpenTransfer(grpc::ServerContext*, const proto::OpenTransferRequest*,
                            proto::OpenTransferReply* reply) override {
    absl::MutexLock lock(&mu);
    ++opened;
    *reply = open;
    return grpc::Status::OK;
  }
  grpc::Status PrepareRead(grpc::ServerContext*, const proto::PrepareReadRequest* request,
                           proto::PrepareReadReply* reply) override {
    absl::MutexLock lock(&mu);
    reply->set_file(request->remote_file());
    reply->set_length(read_lengths[std::min(prepared++, read_lengths.size() - 1)]);
    return grpc::Status::OK;
  }
  absl::Mutex mu;
  size_t prepared ABSL_GUARDED_BY(mu) = 0;
  int opened ABSL_GUARDED_BY(mu) = 0;
  grpc::Status FetchReport(grpc::ServerContext*, const proto::FetchReportRequest*,
                           proto::TransferReport* reply) override {
    *reply = report;
    return grpc::Status::OK;
  }
  grpc::Status EndRun(grpc::ServerContext*, const proto::EndRunRequest*, proto::EndRunReply*) override {
    return grpc::Status::OK;
  }
};

class MemorySink : public ReportSink {
 public:
  absl::Status Submit(const proto::TransferReport& report) override {
    absl::MutexLock lock(&mu);
    rows.push_back(report);
    return absl::OkStatus();
  }
  absl::Mutex mu;
  std::vector<proto::TransferReport> rows;
};

class HostileReceiver : public testing::Test {
 protected:
  void SetUp() override {
    // A data port that accepts (the sender's pre-run MSS check connects to it) and
    // never reads: no payload is ever meant to reach it.
    auto listener = ListenTcp({"127.0.0.1", 0});
    ASSERT_TRUE(listener.ok()) << listener.status();
    data_listener_ = std::move(*listener);
    auto data_port = LocalPort(data_listener_.get());
    ASSERT_TRUE(data_port.ok());
    service_.hello.set_host("nas");
    service_.hello.set_version("0");
    service_.hello.set_target("discard");
    service_.hello.add_write_modes("buffered");
    service_.hello.set_data_port(*data_port);
    service_.hello.set_wire_version(kWireVersion);
    service_.open.set_transfer_id(1);
    service_.open.set_ticket(std::string(16, 'T'));
    service_.open.set_data_port(*data_port);
    service_.open.set_ticket_ttl_s(30);
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port_);
    builder.RegisterService(&service_);
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    ASSERT_GT(port_, 0);
  }
  void TearDown() override {
    if (server_) server_->Shutdown();
  }
  ReceiverClient Client() { return ReceiverClient({"127.0.0.1", static_cast<uint16_t>(port_)}, "token"); }

  Fd data_listener_;
  ScriptedReceiver service_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
};

TEST_F(HostileReceiver, TicketsOfAnyOtherLengthAreRefused) {
  for (size_t length : {0ul, 15ul, 17ul, 1000ul, 100000ul}) {
    service_.open.set_ticket(std::string(length, 'A'));
    auto open = Client().OpenTransfer(proto::OpenTransferRequest());
    ASSERT_FALSE(open.ok()) << length << "-byte ticket accepted";
    EXPECT_NE(open.status().message().find("sent a bad reply"), std::string::npos) << open.status();
    EXPECT_NE(open.status().message().find(std::to_string(length) + "-byte ticket"), std::string::npos)
        << open.status();
  }
  service_.open.set_ticket(std::string(16, 'A'));
  EXPECT_TRUE(Client().OpenTransfer(proto::OpenTransferRequest()).ok());
}

TEST_F(HostileReceiver, OtherOpenTransferFieldsAreChecked) {
  auto refused = [&](const char* what) {
    auto open = Client().OpenTransfer(proto::OpenTransferRequest());
    EXPECT_FALSE(open.ok()) << what;
    service_.open.set_transfer_id(1);
    service_.open.set_data_port(9);
    service_.open.set_ticket_ttl_s(30);
  };
  service_.open.set_transfer_id(0);
  refused("transfer id 0");
  service_.open.set_data_port(0);
  refused("data port 0");
  service_.open.set_data_port(70000);
  refused("data port 70000");
  service_.open.set_ticket_ttl_s(std::numeric_limits<double>::quiet_NaN());
  refused("NaN ticket lifetime");
  service_.open.set_ticket_ttl_s(-1);
  refused("negative ticket lifetime");
}

TEST_F(HostileReceiver, HelloRepliesAreChecked) {
  ASSERT_TRUE(Client().Hello().ok());
  service_.hello.set_mtu(5);
  EXPECT_FALSE(Client().Hello().ok()) << "MTU 5";
  service_.hello.clear_mtu();
  service_.hello.add_write_modes("../../etc");
  EXPECT_FALSE(Client().Hello().ok()) << "unknown write mode";
  service_.hello.clear_write_modes();
  service_.hello.set_host(std::string(100000, 'h'));
  EXPECT_FALSE(Client().Hello().ok()) << "100 KB host name";
  service_.hello.set_host("nas");
  service_.hello.set_data_port(0);
  EXPECT_FALSE(Client().Hello().ok()) << "data port 0";
}

// An older (or newer) nasperf's data port would refuse every header with a reset;
// the sender must say why before it sends a byte.
TEST_F(HostileReceiver, AnotherDataPortVersionIsRefusedInWords) {
  for (uint32_t other : {uint32_t{0}, uint32_t{kWireVersion + 1u}}) {
    service_.hello.set_wire_version(other);
    auto hello = Client().Hello();
    ASSERT_FALSE(hello.ok());
    EXPECT_NE(hello.status().message().find("run the same nasperf on both ends"), std::string::npos) << hello.status();
    EXPECT_NE(hello.status().message().find(absl::StrCat("speaks version ", other == 0 ? 1 : other)), std::string::npos)
        << hello.status();
  }
}

TEST_F(HostileReceiver, FetchedRowsMustBeTheReceiversOwnAndSane) {
  proto::TransferReport& r = service_.report;
  r.set_run_id("run1");
  r.set_role("receiver");
  r.set_transport("native");
  r.set_status("ok");
  r.set_transfer_id(7);
  r.set_label("base");
  r.set_iteration(2);
  r.set_stream(1);
  proto::OpenTransferRequest opened;
  opened.set_run_id("run1");
  opened.set_label("base");
  opened.set_iteration(2);
  opened.set_stream(1);
  EXPECT_TRUE(Client().FetchReport(opened, 7, absl::Seconds(1)).ok());
  EXPECT_FALSE(Client().FetchReport(opened, 8, absl::Seconds(1)).ok()) << "another transfer's row";
  // Issue 29, row 8: a row planted for another run, label, iteration or stream.
  for (int field = 0; field < 4; ++field) {
    proto::OpenTransferRequest other = opened;
    if (field == 0) other.set_run_id("run2");
    if (field == 1) other.set_label("cache-on");
    if (field == 2) other.set_iteration(3);
    if (field == 3) other.set_stream(0);
    EXPECT_FALSE(Client().FetchReport(other, 7, absl::Seconds(1)).ok())
        << "a row for another transfer, field " << field;
  }
  r.set_mb_per_s(std::numeric_limits<double>::infinity());
  EXPECT_FALSE(Client().FetchReport(opened, 7, absl::Seconds(1)).ok()) << "infinite MB/s";
  r.clear_mb_per_s();
  r.set_role("sender");
  EXPECT_FALSE(Client().FetchReport(opened, 7, absl::Seconds(1)).ok()) << "a sender row from the receiver";
}

// The whole sender loop against a receiver that hands out a 100,000-byte ticket:
// the run ends with a failed row that names the bad reply, and the process lives.
TEST_F(HostileReceiver, SenderLoopRecordsAFailedRowForAnOversizedTicket) {
  service_.open.set_ticket(std::string(100000, 'A'));
  SenderOptions options;
  options.config = AgentAt({"127.0.0.1", static_cast<uint16_t>(port_)});
  options.token = "token";
  options.size = 1 << 20;
  options.run_id = "hostile";
  MemorySink sink;
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> console(std::tmpfile(), &std::fclose);
  auto outcome = RunSender(options, RunContext(), sink, console.get());
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  EXPECT_EQ(outcome->failed, 1);
  ASSERT_EQ(sink.rows.size(), 1u);
  EXPECT_EQ(sink.rows[0].status(), "failed");
  EXPECT_NE(sink.rows[0].error().find("100000-byte ticket"), std::string::npos) << sink.rows[0].error();
}

// Issue 29, row 13: a NAS that announces one length as the run starts (the local
// copy's room is checked for it) and a far larger one before a run gets a failed row;
// no transfer is opened and not a byte lands in --local-target.
TEST_F(HostileReceiver, AReadFileThatGrowsAfterTheStartIsRefused) {
  service_.read_lengths = {1 << 20, uint64_t{1} << 40};
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("nasperf-hostile-read-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  SenderOptions options;
  options.config = AgentAt({"127.0.0.1", static_cast<uint16_t>(port_)});
  options.token = "token";
  options.direction = Direction::kRead;
  options.remote_file = "big.bin";
  options.local_target = dir.string();
  options.run_id = "hostile-read";
  MemorySink sink;
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> console(std::tmpfile(), &std::fclose);
  auto outcome = RunSender(options, RunContext(), sink, console.get());
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  EXPECT_EQ(outcome->failed, 1);
  ASSERT_EQ(sink.rows.size(), 1u);
  EXPECT_NE(sink.rows[0].error().find("when the run started"), std::string::npos) << sink.rows[0].error();
  {
    absl::MutexLock lock(&service_.mu);
    EXPECT_EQ(service_.opened, 0);
  }
  EXPECT_TRUE(std::filesystem::is_empty(dir));
  std::filesystem::remove_all(dir);
}

// ... and a length no file has is refused where it enters, before the run starts.
TEST_F(HostileReceiver, AReadLengthPastOnePebibyteIsRefusedAtTheStart) {
  service_.read_lengths = {(uint64_t{1} << 50) + 1};
  SenderOptions options;
  options.config = AgentAt({"127.0.0.1", static_cast<uint16_t>(port_)});
  options.token = "token";
  options.direction = Direction::kRead;
  options.remote_file = "big.bin";
  MemorySink sink;
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> console(std::tmpfile(), &std::fclose);
  auto outcome = RunSender(options, RunContext(), sink, console.get());
  ASSERT_FALSE(outcome.ok());
  EXPECT_NE(outcome.status().message().find("more than 1 PiB"), std::string::npos) << outcome.status();
  EXPECT_TRUE(sink.rows.empty());
}

}  // namespace
}  // namespace nasperf
