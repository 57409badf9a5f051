// The collector's HTTP side (collector/http_server.h) on a real loopback socket: routes,
// read-only, the bearer token, and bad input (a huge header, a slow request, a body,
// too many connections, too many requests): each refused, and the server still serves.
#include "collector/http_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace nasperf {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// A connection to the server; every read gives up after 10 s.
int Connect(uint16_t port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  timeval timeout{10, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  return fd;
}

// Everything the server sends until it closes (or 10 s pass: then what came).
std::string ReadToClose(int fd) {
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;) out.append(buf, static_cast<size_t>(n));
  return out;
}

std::string Exchange(uint16_t port, const std::string& request) {
  const int fd = Connect(port);
  // MSG_NOSIGNAL: a server that closed at once must not kill the test with SIGPIPE.
  EXPECT_EQ(send(fd, request.data(), request.size(), MSG_NOSIGNAL), static_cast<ssize_t>(request.size()));
  std::string reply = ReadToClose(fd);
  close(fd);
  return reply;
}

std::string Get(uint16_t port, const std::string& path, const std::string& extra = "") {
  return Exchange(port, absl::StrCat("GET ", path, " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n", extra, "\r\n"));
}

class HttpServerTest : public ::testing::Test {
 protected:
  void Start(HttpOptions options) {
    auto server = HttpServer::Start(options, [this](const std::string& path) {
      ++calls_;
      return HttpReply{path == "/metrics" ? 200 : 404, "text/plain", absl::StrCat("path ", path, "\n")};
    });
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
  }
  uint16_t port() const { return server_->port(); }
  std::unique_ptr<HttpServer> server_;
  int calls_ = 0;
};

TEST_F(HttpServerTest, RoutesAreTheHandlersAndOnlyGetOrHeadAreServed) {
  Start(HttpOptions{});
  EXPECT_THAT(Get(port(), "/metrics?x=1"), StartsWith("HTTP/1.1 200 OK"));
  EXPECT_THAT(Get(port(), "/metrics"), HasSubstr("\r\n\r\npath /metrics\n"));
  EXPECT_THAT(Get(port(), "/../etc/passwd"), StartsWith("HTTP/1.1 404"));
  const std::string head = Exchange(port(), "HEAD /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  EXPECT_THAT(head, StartsWith("HTTP/1.1 200"));
  EXPECT_THAT(head, HasSubstr("Content-Length: 14\r\n"));
  EXPECT_FALSE(absl::StrContains(head, "path /metrics")) << "HEAD has no body";
  const std::string post =
      Exchange(port(), "POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
  EXPECT_THAT(post, StartsWith("HTTP/1.1 405"));
  EXPECT_THAT(post, HasSubstr("Allow: GET, HEAD"));
}

TEST_F(HttpServerTest, ABearerTokenWhenOneIsSet) {
  HttpOptions options;
  options.token = "0123456789abcdef0123";
  options.open_paths = {"/page"};
  Start(options);
  EXPECT_THAT(Get(port(), "/page?x"), StartsWith("HTTP/1.1 404")) << "an open path reaches the handler";
  const std::string none = Get(port(), "/metrics");
  EXPECT_THAT(none, StartsWith("HTTP/1.1 401"));
  EXPECT_THAT(none, HasSubstr("WWW-Authenticate: Bearer"));
  EXPECT_THAT(Get(port(), "/metrics", "Authorization: Bearer 0123456789abcdef0124\r\n"), StartsWith("HTTP/1.1 401"));
  EXPECT_THAT(Get(port(), "/metrics", "Authorization: Bearer 0123456789abcdef012\r\n"), StartsWith("HTTP/1.1 401"));
  EXPECT_THAT(Get(port(), "/metrics", "Authorization: Bearer 0123456789abcdef0123\r\n"), StartsWith("HTTP/1.1 200"));
  EXPECT_EQ(calls_, 2) << "the handler sees only requests that passed";
}

TEST_F(HttpServerTest, BadRequestsAreRefusedAndTheServerKeepsServing) {
  HttpOptions options;
  options.read_timeout = absl::Milliseconds(300);
  Start(options);
  // A header past 8 KiB.
  const std::string huge = Get(port(), "/metrics", absl::StrCat("X-Junk: ", std::string(9000, 'a'), "\r\n"));
  EXPECT_THAT(huge, StartsWith("HTTP/1.1 431"));
  // A request that never ends: closed once the read timeout passes, nothing answered.
  const int slow = Connect(port());
  ASSERT_EQ(write(slow, "GET /metrics HTTP/1.1\r\nHost:", 28), 28);
  EXPECT_EQ(ReadToClose(slow), "") << "closed without an answer";
  close(slow);
  // A body where none belongs, and garbage.
  EXPECT_THAT(Exchange(port(), "GET /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello"),
              ::testing::Not(HasSubstr("path /metrics")));
  EXPECT_THAT(Exchange(port(), "\x16\x03\x01 not http at all\r\n\r\n"), ::testing::Not(HasSubstr("200 OK")));
  EXPECT_THAT(Get(port(), "/metrics"), StartsWith("HTTP/1.1 200")) << "still serving";
}

TEST_F(HttpServerTest, ConnectionsAndRequestsAreBounded) {
  HttpOptions options;
  options.max_connections = 2;
  options.max_requests_per_s = 1;
  Start(options);
  // Two idle connections take the room: a third is closed at once, unanswered.
  const int a = Connect(port()), b = Connect(port());
  EXPECT_THAT(Get(port(), "/metrics"), ::testing::Not(HasSubstr("HTTP/1.1")));
  close(a);
  close(b);
  // One request a second: ten at once meet a 429 with Retry-After.
  int refused = 0;
  for (int i = 0; i < 10; ++i) {
    std::string reply;
    // The two closed connections may not be gone on the server's side yet: ask again.
    for (int attempt = 0; attempt < 50 && reply.empty(); ++attempt) reply = Get(port(), "/metrics");
    if (absl::StartsWith(reply, "HTTP/1.1 429")) {
      ++refused;
      EXPECT_THAT(reply, HasSubstr("Retry-After: 1"));
    }
  }
  EXPECT_GE(refused, 1);
}

TEST(HttpServer, LoopbackAddressesAreKnown) {
  EXPECT_TRUE(IsLoopbackHost("127.0.0.1"));
  EXPECT_TRUE(IsLoopbackHost("127.1.2.3"));
  EXPECT_TRUE(IsLoopbackHost("::1"));
  EXPECT_TRUE(IsLoopbackHost("localhost"));
  EXPECT_FALSE(IsLoopbackHost("0.0.0.0"));
  EXPECT_FALSE(IsLoopbackHost("198.18.1.10"));
  EXPECT_FALSE(IsLoopbackHost("nas.example"));
}

}  // namespace
}  // namespace nasperf
