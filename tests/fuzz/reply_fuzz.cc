// libFuzzer target that plays a hostile receiver to the sender's real ReceiverClient
// over a real gRPC channel on loopback: the input becomes the Hello, OpenTransfer and
// FetchReport replies. Whatever arrives, the client returns a checked reply or an
// error; an accepted reply is then used as the sender uses it (the ticket into its
// fixed-size array, the report's figures into a row), so an unchecked field crashes.
// Input: three length-prefixed (2 bytes each) serialized messages.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/synchronization/mutex.h"
#include "common/fd.h"
#include "grpcpp/grpcpp.h"
#include "proto/nasperf.grpc.pb.h"
#include "wire/receiver_client.h"
#include "wire/wire.h"

namespace nasperf {
namespace {

class ScriptedReceiver : public proto::Receiver::Service {
 public:
  void Set(const proto::HelloReply& hello, const proto::OpenTransferReply& open, const proto::TransferReport& report) {
    absl::MutexLock lock(&mu_);
    hello_ = hello;
    open_ = open;
    report_ = report;
  }
  grpc::Status Hello(grpc::ServerContext*, const proto::HelloRequest*, proto::HelloReply* reply) override {
    absl::MutexLock lock(&mu_);
    *reply = hello_;
    return grpc::Status::OK;
  }
  grpc::Status OpenTransfer(grpc::ServerContext*, const proto::OpenTransferRequest*,
                            proto::OpenTransferReply* reply) override {
    absl::MutexLock lock(&mu_);
    *reply = open_;
    return grpc::Status::OK;
  }
  grpc::Status FetchReport(grpc::ServerContext*, const proto::FetchReportRequest*,
                           proto::TransferReport* reply) override {
    absl::MutexLock lock(&mu_);
    *reply = report_;
    return grpc::Status::OK;
  }

 private:
  absl::Mutex mu_;
  proto::HelloReply hello_;
  proto::OpenTransferReply open_;
  proto::TransferReport report_;
};

struct Harness {
  ScriptedReceiver service;
  std::unique_ptr<grpc::Server> server;
  std::unique_ptr<ReceiverClient> client;
};

Harness& TheHarness() {
  static Harness* h = [] {
    auto* harness = new Harness;
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    builder.RegisterService(&harness->service);
    harness->server = builder.BuildAndStart();
    if (harness->server == nullptr || port == 0) __builtin_trap();
    harness->client = std::make_unique<ReceiverClient>(HostPort{"127.0.0.1", static_cast<uint16_t>(port)}, "token");
    return harness;
  }();
  return *h;
}

// The next length-prefixed piece of the input.
std::string Take(const uint8_t*& data, size_t& size) {
  if (size < 2) return "";
  size_t length = std::min<size_t>(size - 2, static_cast<size_t>(data[0]) | static_cast<size_t>(data[1]) << 8);
  std::string piece(reinterpret_cast<const char*>(data + 2), length);
  data += 2 + length;
  size -= 2 + length;
  return piece;
}

}  // namespace
}  // namespace nasperf

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace nasperf;
  proto::HelloReply hello;
  proto::OpenTransferReply open;
  proto::TransferReport report;
  if (!hello.ParseFromString(Take(data, size)) || !open.ParseFromString(Take(data, size)) ||
      !report.ParseFromString(Take(data, size))) {
    return -1;  // not three messages: nothing a gRPC peer could send
  }
  Harness& h = TheHarness();
  h.service.Set(hello, open, report);
  if (auto got = h.client->Hello(); got.ok()) {
    if (got->data_port() == 0 || got->data_port() > 65535) __builtin_trap();
  }
  if (auto got = h.client->OpenTransfer(proto::OpenTransferRequest()); got.ok()) {
    DataHeader header;  // as the sender fills it
    if (got->ticket().size() != header.ticket.size()) __builtin_trap();
    std::copy(got->ticket().begin(), got->ticket().end(), header.ticket.begin());
  }
  proto::OpenTransferRequest opened;  // the transfer the fuzzed row claims to be
  opened.set_run_id(report.run_id());
  opened.set_label(report.label());
  opened.set_iteration(report.iteration());
  opened.set_stream(report.stream());
  if (auto got = h.client->FetchReport(opened, report.transfer_id(), absl::Seconds(1)); got.ok()) {
    if (!std::isfinite(got->mb_per_s()) || got->mb_per_s() < 0) __builtin_trap();
  }
  return 0;
}
