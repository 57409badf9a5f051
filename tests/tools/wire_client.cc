// Test tool: plays a misbehaving sender against a real receiver process so the
// integration tests can check each refusal (docs/DESIGN.md §3.1, data port: connection rules; §4, security).
// Exits 0 when the receiver refused the way it should, 1 (with one line saying why) otherwise.
//   wire_client CONTROL_HOST:PORT TOKEN MODE [SIZE]
//   wire_client HOST:PORT TOKEN raw METHOD BYTES CALLS EXPECT [--plaintext]
// MODE: garbage | truncated | reuse | expired | wrong-length | control-garbage |
//       wrong-token | bad-path-facts | bad-file-set | ok | read-unserved | read-stall | read-layout-busy
// read-unserved: OpenTransfer for a read of secret.txt in the target, skipping
// PrepareRead, from a receiver that does not serve existing files: must be refused;
// so must a read of nasperf-read-planted-0.dat, directly or through PrepareRead.
// read-stall: a read of a laid-out file whose client sends the header and then never
// reads: the receiver must give up (its --idle-timeout) and keep serving.
// read-layout-busy: takes every transfer slot of the receiver with write transfers it
// opens and never starts (until one is refused as busy), then asks PrepareRead to
// lay out a new SIZE-byte file with cleanup=never: must be refused (--max-transfers),
// and the refusal is printed as the one line a client sees.
// raw: CALLS calls at once (each on its own connection) to METHOD
// ("/nasperf.proto.Receiver/Hello") of any nasperf gRPC server, each carrying BYTES
// bytes of empty unknown fields (what the typed stubs never send: 3 bytes each on the
// wire, a parsed string each in the server) and TOKEN; every call must end with the
// status EXPECT (OK, UNAUTHENTICATED, ...). Prints "calls N CODE=COUNT ...".
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/fd.h"
#include "common/file_set.h"
#include "common/payload.h"
#include "common/token.h"
#include "grpcpp/generic/generic_stub.h"
#include "wire/grpc_auth.h"
#include "wire/receiver_client.h"
#include "wire/wire.h"

using namespace nasperf;

namespace {

int Fail(const std::string& why) {
  std::fprintf(stderr, "wire_client: %s\n", why.c_str());
  return 1;
}

// Sends raw bytes to the data port, half-closes, and reports what came back.
enum class Answer { kClosed, kRefusalTrailer, kOkTrailer, kOtherTrailer };
Answer Exchange(const HostPort& data, const std::string& bytes, uint64_t payload = 0) {
  auto sock = ConnectTcp(data, 5);
  if (!sock.ok()) return Answer::kClosed;
  (void)WriteAll(sock->get(), bytes.data(), bytes.size(), "send");
  PatternSource pattern(Pattern::kRandom, 7);
  for (uint64_t sent = 0; sent < payload;) {
    size_t n = static_cast<size_t>(std::min<uint64_t>(PatternSource::kChunk, payload - sent));
    if (!WriteAll(sock->get(), pattern.Next(sent, n), n, "send").ok()) break;
    sent += n;
  }
  ::shutdown(sock->get(), SHUT_WR);
  SetReceiveTimeout(sock->get(), 15);
  uint8_t trailer[kTrailerSize];
  auto got = ReadFull(sock->get(), trailer, sizeof trailer, "read");
  if (!got.ok() || *got < kTrailerSize) return Answer::kClosed;
  auto decoded = DecodeTrailer(trailer, sizeof trailer);
  if (!decoded.ok()) return Answer::kOtherTrailer;
  if (decoded->status == TrailerStatus::kOk) return Answer::kOkTrailer;
  if (decoded->error_code == EACCES) return Answer::kRefusalTrailer;
  return Answer::kOtherTrailer;
}

std::string Header(uint64_t id, const std::string& ticket, uint64_t length) {
  DataHeader h;
  h.transfer_id = id;
  std::copy(ticket.begin(), ticket.end(), h.ticket.begin());
  h.payload_length = length;
  auto bytes = EncodeHeader(h);
  return std::string(bytes.begin(), bytes.end());
}

// Junk on the control port: the receiver must survive it (the caller checks).
int ControlGarbage(const HostPort& control) {
  auto sock = ConnectTcp(control, 5);
  if (!sock.ok()) return Fail(std::string(sock.status().message()));
  std::string junk(4096, '\0');
  RandomBytes(junk.data(), junk.size());
  (void)WriteAll(sock->get(), junk.data(), junk.size(), "send");
  ::shutdown(sock->get(), SHUT_WR);
  SetReceiveTimeout(sock->get(), 10);
  char buf[4096];
  while (::read(sock->get(), buf, sizeof buf) > 0) {
  }
  return 0;  // the receiver's liveness is checked by the caller afterwards
}

int BadPathFacts(ReceiverClient& client, uint64_t size) {
  // Path facts a sender passes along must be plausible, or line_rate_pct divides by 0.
  for (int field = 0; field < 3; ++field) {
    proto::OpenTransferRequest request;
    request.set_run_id("wire-bad-path-facts");
    request.set_size(size);
    if (field == 0) request.set_path_mtu(1);
    if (field == 1) request.set_link_mbps(4'000'000'000u);
    if (field == 2) request.set_window_bytes(1ULL << 40);
    auto open = client.OpenTransfer(request);
    if (open.ok() || !absl::IsInvalidArgument(open.status())) {
      return Fail(absl::StrCat("implausible path fact ", field, " was not refused: ", open.status().ToString()));
    }
  }
  return 0;
}

// A set of files whose sizes do not add up to the transfer, or that asks too much or
// what a set cannot take: each refused before any ticket is given.
int BadFileSet(ReceiverClient& client) {
  struct Case {
    const char* what;
    uint64_t count, size;
    const char* file_size;
    const char* write_mode;
    uint64_t files_per_dir = 0;
  };
  for (const Case& c : {Case{"sizes that do not add up", 10, 10 * 4096 + 1, "4KiB", ""},
                        Case{"too many files", 1000001, 1000001, "1", ""}, Case{"no size", 10, 40960, "lots", ""},
                        Case{"a size with no count", 0, 4096, "4KiB", ""}, Case{"O_DIRECT", 2, 8192, "4KiB", "direct"},
                        Case{"more files per directory than files", 2, 8192, "4KiB", "", 3},
                        Case{"files per directory with no count", 0, 4096, "", "", 2}}) {
    proto::OpenTransferRequest request;
    request.set_run_id("wire-bad-file-set");
    request.set_size(c.size);
    request.set_file_count(c.count);
    request.set_file_size(c.file_size);
    request.set_write_mode(c.write_mode);
    request.set_files_per_dir(c.files_per_dir);
    auto open = client.OpenTransfer(request);
    // O_DIRECT: a target that refuses it says so first (tmpfs), as for one file.
    const bool refused = absl::IsInvalidArgument(open.status()) ||
                         (std::string(c.write_mode) == "direct" && absl::IsFailedPrecondition(open.status()));
    if (open.ok() || !refused) {
      return Fail(absl::StrCat("a file set with ", c.what, " was not refused: ", open.status().ToString()));
    }
  }
  return 0;
}

// --tree: the sizes a hostile sender sends after the header (a sum other than the
// transfer's, a file of no bytes, the block cut short): each fails its transfer with the
// payload unread as files, and a good block writes the set.
int BadTreeSizes(ReceiverClient& client, const HostPort& data) {
  struct Case {
    const char* what;
    std::vector<uint64_t> sizes;
    size_t cut = 0;  // bytes left off the block's end (and then no payload)
    bool good = false;
  };
  constexpr uint64_t kTotal = 3 * 4096;
  for (const Case& c :
       {Case{"sizes of another sum", {4096, 4096, 4095}}, Case{"a file of no bytes", {8192, 0, 4096}},
        Case{"the block cut short", {4096, 4096, 4096}, 3}, Case{"good sizes", {4096, 4096, 4096}, 0, true}}) {
    proto::OpenTransferRequest request;
    request.set_run_id("wire-tree");
    request.set_size(kTotal);
    request.set_file_count(3);
    request.set_file_size(kTreeFileSize);
    request.set_cleanup("each");
    auto open = client.OpenTransfer(request);
    if (!open.ok()) return Fail(absl::StrCat("a tree of ", c.what, " was not opened: ", open.status().ToString()));
    std::vector<uint8_t> sizes = EncodeFileSizes(c.sizes);
    sizes.resize(sizes.size() - c.cut);
    const std::string bytes =
        Header(open->transfer_id(), open->ticket(), kTotal) + std::string(sizes.begin(), sizes.end());
    const Answer answer = Exchange(data, bytes, c.cut > 0 ? 0 : kTotal);
    if (answer != (c.good ? Answer::kOkTrailer : Answer::kOtherTrailer)) {
      return Fail(absl::StrCat("a tree with ", c.what, c.good ? " failed" : " was not failed"));
    }
  }
  return 0;
}

int ReadUnserved(ReceiverClient& client) {
  proto::OpenTransferRequest request;
  request.set_run_id("wire-read-unserved");
  request.set_size(6);
  request.set_direction("read");
  request.set_read_file("secret.txt");
  request.set_cache("cold");
  auto open = client.OpenTransfer(request);
  if (open.ok() || !absl::IsPermissionDenied(open.status())) {
    return Fail(absl::StrCat("a read of the user's file was not refused: ", open.status().ToString()));
  }
  // A file someone put there under a laid-out name (the caller writes 7 bytes to
  // nasperf-read-planted-0.dat): neither read directly nor taken over by PrepareRead.
  request.set_read_file("nasperf-read-planted-0.dat");
  request.set_size(7);
  open = client.OpenTransfer(request);
  if (open.ok() || !absl::IsPermissionDenied(open.status())) {
    return Fail(absl::StrCat("a read of a planted nasperf-read-* file was not refused: ", open.status().ToString()));
  }
  proto::PrepareReadRequest prepare;
  prepare.set_run_id("planted");
  prepare.set_size(7);
  prepare.set_cache("cold");
  auto prepared = client.PrepareRead(prepare);
  if (prepared.ok() || !absl::IsPermissionDenied(prepared.status())) {
    return Fail(absl::StrCat("PrepareRead took over a planted file: ", prepared.status().ToString()));
  }
  return 0;
}

int ReadStall(ReceiverClient& client, const HostPort& data, uint64_t size) {
  proto::PrepareReadRequest prepare;
  prepare.set_run_id("wire-read-stall");
  prepare.set_size(size);
  prepare.set_cache("cold");
  auto prepared = client.PrepareRead(prepare);
  if (!prepared.ok()) return Fail(std::string(prepared.status().message()));
  proto::OpenTransferRequest request;
  request.set_run_id("wire-read-stall");
  request.set_size(prepared->length());
  request.set_direction("read");
  request.set_read_file(prepared->file());
  request.set_cache("cold");
  auto open = client.OpenTransfer(request);
  if (!open.ok()) return Fail(std::string(open.status().message()));
  auto sock = ConnectTcp(data, 5);
  if (!sock.ok()) return Fail(std::string(sock.status().message()));
  // A small window, so the stall reaches the receiver quickly; then nothing is read.
  SetSocketBuffer(sock->get(), SO_RCVBUF, 64 << 10);
  std::string header = Header(open->transfer_id(), open->ticket(), prepared->length());
  if (!WriteAll(sock->get(), header.data(), header.size(), "send").ok()) return Fail("header not sent");
  // Held open and unread until the receiver gives up and closes its end (seen as
  // POLLRDHUP with its bytes still unread), for at most 60 s.
  pollfd watch{sock->get(), POLLRDHUP, 0};
  for (int waited_ms = 0; waited_ms < 60000; waited_ms += 100) {
    if (::poll(&watch, 1, 100) > 0 && (watch.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0) {
      (void)client.EndRun("wire-read-stall");  // the laid-out file goes, as after any read run
      return 0;
    }
  }
  return Fail("the receiver kept a stalled read open for 60 s");
}

int ReadLayOutBusy(ReceiverClient& client, uint64_t size) {
  proto::OpenTransferRequest write;
  write.set_run_id("wire-busy");
  write.set_size(1 << 20);
  int opened = 0;
  for (; opened < 1024; ++opened) {
    auto open = client.OpenTransfer(write);
    if (!open.ok() && absl::StrContains(open.status().message(), "--max-transfers")) break;
    if (!open.ok()) return Fail(std::string(open.status().message()));
  }
  if (opened == 1024) return Fail("the receiver took 1024 transfers at once");
  proto::PrepareReadRequest prepare;
  prepare.set_run_id("wire-busy");
  prepare.set_size(size);
  prepare.set_cache("cold");
  prepare.set_cleanup("never");
  auto prepared = client.PrepareRead(prepare);
  if (prepared.ok()) {
    return Fail(absl::StrCat("a PrepareRead past --max-transfers (", opened, " transfers open) was not refused: ",
                             prepared->laid_out() ? "it laid out " : "it found ", prepared->file()));
  }
  std::printf("%s\n", std::string(prepared.status().message()).c_str());
  return absl::IsResourceExhausted(prepared.status()) ? 0 : Fail("refused for another reason");
}

// The modes that spend a real ticket on the data port.
int TicketModes(ReceiverClient& client, const HostPort& data, const std::string& mode, uint64_t size) {
  proto::OpenTransferRequest request;
  request.set_run_id(absl::StrCat("wire-", mode));
  request.set_size(size);
  request.set_cleanup("each");
  auto open = client.OpenTransfer(request);
  if (!open.ok()) return Fail(std::string(open.status().message()));
  std::string header = Header(open->transfer_id(), open->ticket(), size);

  if (mode == "ok") {
    return Exchange(data, header, size) == Answer::kOkTrailer ? 0 : Fail("a good transfer failed");
  }
  if (mode == "reuse") {
    if (Exchange(data, header, size) != Answer::kOkTrailer) return Fail("first use of the ticket failed");
    return Exchange(data, header, size) == Answer::kRefusalTrailer ? 0 : Fail("reused ticket was not refused");
  }
  if (mode == "expired") {
    // The expiry is a property of time itself: wait past the ticket's TTL.
    std::this_thread::sleep_for(std::chrono::milliseconds(static_cast<int64_t>(open->ticket_ttl_s() * 1000) + 500));
    return Exchange(data, header, size) == Answer::kRefusalTrailer ? 0 : Fail("expired ticket was not refused");
  }
  if (mode == "wrong-length") {
    std::string bad = Header(open->transfer_id(), open->ticket(), size + 1);
    return Exchange(data, bad, size + 1) == Answer::kRefusalTrailer ? 0 : Fail("wrong length was not refused");
  }
  return Fail(absl::StrCat("unknown mode ", mode));
}

// gRPC's names for its status codes, as EXPECT spells them.
const char* CodeName(grpc::StatusCode code) {
  static const char* const kNames[] = {
      "OK",        "CANCELLED",      "UNKNOWN",           "INVALID_ARGUMENT",   "DEADLINE_EXCEEDED",
      "NOT_FOUND", "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
      "ABORTED",   "OUT_OF_RANGE",   "UNIMPLEMENTED",     "INTERNAL",           "UNAVAILABLE",
      "DATA_LOSS", "UNAUTHENTICATED"};
  int i = static_cast<int>(code);
  return i >= 0 && i <= 16 ? kNames[i] : "?";
}

// One raw unary call on a connection of its own; returns its status.
grpc::Status RawCall(const std::string& address, const PeerTrust& trust, int index, const std::string& method,
                     const std::string& body, const std::string& token) {
  grpc::ChannelArguments args;
  args.SetMaxSendMessageSize(-1);
  args.SetMaxReceiveMessageSize(kMaxMessageBytes);
  args.SetInt("nasperf.wire_client.connection", index);  // no subchannel shared with another call
  if (!trust.server_name().empty()) args.SetSslTargetNameOverride(trust.server_name());
  auto channel = grpc::CreateCustomChannel(address, trust.CredentialsFor(address), args);
  grpc::GenericStub stub(channel);
  grpc::ClientContext context;
  PrepareCall(&context, token, absl::Seconds(60));
  grpc::Slice slice(body.data(), body.size());
  grpc::ByteBuffer request(&slice, 1), reply;
  grpc::Status status;
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  stub.UnaryCall(&context, method, grpc::StubOptions(), &request, &reply, [&](grpc::Status s) {
    std::lock_guard<std::mutex> lock(mu);
    status = std::move(s);
    done = true;
    cv.notify_one();
  });
  std::unique_lock<std::mutex> lock(mu);
  cv.wait(lock, [&] { return done; });
  return status;
}

int Raw(const HostPort& address, const std::string& token, const std::vector<std::string>& args, bool plaintext) {
  uint64_t bytes = 0;
  int calls = 0;
  if (args.size() < 4 || !absl::SimpleAtoi(args[1], &bytes) || bytes > (uint64_t{64} << 20) ||
      !absl::SimpleAtoi(args[2], &calls) || calls < 1 || calls > 64) {
    return Fail("raw METHOD BYTES(<=64MiB) CALLS(1-64) EXPECT");
  }
  const std::string& method = args[0];
  const std::string& expect = args[3];
  ClientTls tls;
  tls.plaintext = plaintext;
  auto trust = PeerTrust::Create(tls);
  if (!trust.ok()) return Fail(std::string(trust.status().message()));
  // Field 1000, length-delimited (tag 0xc2 0x3e), empty: no nasperf message has it.
  std::string body;
  body.reserve(bytes);
  while (body.size() + 3 <= bytes) body.append("\xc2\x3e\x00", 3);
  std::vector<grpc::Status> results(static_cast<size_t>(calls));
  std::vector<std::thread> threads;
  for (int i = 0; i < calls; ++i) {
    threads.emplace_back([&, i] {
      results[static_cast<size_t>(i)] = RawCall(FormatHostPort(address), **trust, i, method, body, token);
    });
  }
  for (std::thread& t : threads) t.join();
  std::map<std::string, int> counts;
  std::string unexpected;
  for (const grpc::Status& s : results) {
    ++counts[CodeName(s.error_code())];
    if (CodeName(s.error_code()) != expect && unexpected.empty()) {
      unexpected = absl::StrCat(CodeName(s.error_code()), ": ", s.error_message());
    }
  }
  std::string line = absl::StrCat("calls ", calls, " bytes ", body.size());
  for (const auto& [code, n] : counts) absl::StrAppend(&line, " ", code, "=", n);
  std::printf("%s\n", line.c_str());
  return unexpected.empty() ? 0 : Fail(absl::StrCat("expected ", expect, ", got ", unexpected));
}

}  // namespace

int main(int argc, char** argv) {
  signal(SIGPIPE, SIG_IGN);  // a refusal closes the socket while we still send
  if (argc < 4) return Fail("usage: wire_client HOST:PORT TOKEN MODE [SIZE]");
  auto control = ParseHostPort(argv[1], 7600);
  if (!control.ok()) return Fail(std::string(control.status().message()));
  std::string token = argv[2];
  std::string mode = argv[3];
  if (mode == "raw") {
    std::vector<std::string> args(argv + 4, argv + argc);
    bool plaintext = !args.empty() && args.back() == "--plaintext";
    if (plaintext) args.pop_back();
    return Raw(*control, token, args, plaintext);
  }
  uint64_t size = 1 << 20;
  if (argc > 4 && !absl::SimpleAtoi(argv[4], &size)) return Fail("bad SIZE");

  if (mode == "control-garbage") return ControlGarbage(*control);

  auto trust = PeerTrust::Create({});  // TLS; the receiver runs with this HOME's own key
  if (!trust.ok()) return Fail(std::string(trust.status().message()));
  ReceiverClient client(*control, mode == "wrong-token" ? token + "x" : token, *trust);
  auto hello = client.Hello();
  if (mode == "wrong-token") {
    if (!hello.ok() && absl::IsUnauthenticated(hello.status())) return 0;
    return Fail(absl::StrCat("wrong token was not refused: ", hello.status().ToString()));
  }
  if (!hello.ok()) return Fail(std::string(hello.status().message()));
  HostPort data{control->host, static_cast<uint16_t>(hello->data_port())};

  if (mode == "garbage") {
    std::string junk(kHeaderSize, '\0');
    RandomBytes(junk.data(), junk.size());
    return Exchange(data, junk, size) == Answer::kClosed ? 0 : Fail("garbage header got an answer");
  }
  if (mode == "truncated") {
    proto::OpenTransferRequest request;
    request.set_run_id("wire-truncated");
    request.set_size(size);
    auto open = client.OpenTransfer(request);
    if (!open.ok()) return Fail(std::string(open.status().message()));
    std::string header = Header(open->transfer_id(), open->ticket(), size).substr(0, 20);
    return Exchange(data, header) == Answer::kClosed ? 0 : Fail("truncated header got an answer");
  }

  if (mode == "bad-path-facts") return BadPathFacts(client, size);
  if (mode == "bad-file-set") return BadFileSet(client);
  if (mode == "bad-tree-sizes") return BadTreeSizes(client, data);
  if (mode == "read-unserved") return ReadUnserved(client);
  if (mode == "read-stall") return ReadStall(client, data, size);
  if (mode == "read-layout-busy") return ReadLayOutBusy(client, size);
  return TicketModes(client, data, mode, size);
}
