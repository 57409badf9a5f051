// The collector's HTTP side (collector/http_server.h) on a real loopback socket: routes,
// read-only, the bearer token, and bad input (a huge header, a slow request, a body,
// too many connections, too many requests): each refused, and the server still serves;
// clients without the token never starve those with it; the Host check; the HTML policy;
// a deferred (slow) path never holds up the others.
#include "collector/http_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace nasperf {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// A connection to the server (from `source`, a loopback address); every read gives up
// after 10 s.
int Connect(uint16_t port, const char* source = nullptr) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  timeval timeout{10, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  if (source != nullptr) {
    sockaddr_in from{};
    from.sin_family = AF_INET;
    inet_pton(AF_INET, source, &from.sin_addr);
    EXPECT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&from), sizeof from), 0);
  }
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

// One response on a kept-alive connection: its header and a Content-Length body ("" once
// the server closed it).
std::string ReadResponse(int fd) {
  std::string out;
  char c;
  while (out.find("\r\n\r\n") == std::string::npos && read(fd, &c, 1) == 1) out += c;
  const size_t at = out.find("Content-Length: ");
  size_t length = at == std::string::npos ? 0 : std::stoul(out.substr(at + 16));
  for (; length > 0 && read(fd, &c, 1) == 1; --length) out += c;
  return out;
}

std::string Ask(int fd, const std::string& path, const std::string& extra = "") {
  const std::string request = absl::StrCat("GET ", path, " HTTP/1.1\r\nHost: localhost\r\n", extra, "\r\n");
  if (send(fd, request.data(), request.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(request.size())) return "";
  return ReadResponse(fd);
}

std::string Get(uint16_t port, const std::string& path, const std::string& extra = "") {
  return Exchange(port,
                  absl::StrCat("GET ", path, " HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n", extra, "\r\n"));
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
  const std::string head = Exchange(port(), "HEAD /metrics HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
  EXPECT_THAT(head, StartsWith("HTTP/1.1 200"));
  EXPECT_THAT(head, HasSubstr("Content-Length: 14\r\n"));
  EXPECT_FALSE(absl::StrContains(head, "path /metrics")) << "HEAD has no body";
  const std::string post =
      Exchange(port(), "POST /metrics HTTP/1.1\r\nHost: localhost\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
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
  // The Host is checked only where the token is not: a page under another name gets nothing.
  EXPECT_THAT(Exchange(port(), "GET /page HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n"),
              StartsWith("HTTP/1.1 421"));
  EXPECT_THAT(Exchange(port(), "GET /metrics HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n"),
              StartsWith("HTTP/1.1 401"));
  EXPECT_THAT(Exchange(port(),
                       "GET /metrics HTTP/1.1\r\nHost: nasperf:7701\r\nAuthorization: Bearer 0123456789abcdef0123\r\n"
                       "Connection: close\r\n\r\n"),
              StartsWith("HTTP/1.1 200"));
  EXPECT_EQ(calls_, 3) << "the handler sees only requests that passed";
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
  EXPECT_THAT(Exchange(port(), "GET /metrics HTTP/1.1\r\nHost: localhost\r\nContent-Length: 5\r\n\r\nhello"),
              ::testing::Not(HasSubstr("path /metrics")));
  EXPECT_THAT(Exchange(port(), "\x16\x03\x01 not http at all\r\n\r\n"), ::testing::Not(HasSubstr("200 OK")));
  EXPECT_THAT(Get(port(), "/metrics"), StartsWith("HTTP/1.1 200")) << "still serving";
}

TEST_F(HttpServerTest, ConnectionsAndRequestsAreBounded) {
  HttpOptions options;
  options.max_connections = 2;
  options.max_requests_per_s = 1;
  Start(options);
  // Idle connections take the room (a peer's part of it is 1): a new one closes the
  // oldest and is served.
  const int a = Connect(port()), b = Connect(port());
  EXPECT_THAT(Get(port(), "/metrics"), StartsWith("HTTP/1.1 200"));
  EXPECT_EQ(ReadToClose(a), "") << "the oldest idle one was closed for it";
  close(a);
  close(b);
  // One request a second: ten at once meet a 429 with Retry-After.
  int refused = 0;
  for (int i = 0; i < 10; ++i) {
    std::string reply;
    for (int attempt = 0; attempt < 50 && reply.empty(); ++attempt) reply = Get(port(), "/metrics");
    if (absl::StartsWith(reply, "HTTP/1.1 429")) {
      ++refused;
      EXPECT_THAT(reply, HasSubstr("Retry-After: 1"));
    }
  }
  EXPECT_GE(refused, 1);
}

// Issue 42 row 4: idle kept-alive connections and a flood of requests without the token
// (from two peers) leave a token holder every request it makes.
TEST_F(HttpServerTest, ClientsWithoutTheTokenNeverStarveTheTokenHolder) {
  HttpOptions options;
  options.token = "0123456789abcdef0123";
  options.open_paths = {"/page"};
  options.max_connections = 4;      // without the token: 2, a peer 1
  options.max_requests_per_s = 10;  // without the token: 5
  Start(options);
  const int other = Connect(port(), "127.0.0.2");
  EXPECT_THAT(Ask(other, "/page"), StartsWith("HTTP/1.1 404"));
  std::vector<int> idle;
  for (int i = 0; i < 8; ++i) {
    idle.push_back(Connect(port()));
    Ask(idle.back(), "/page");  // served, or closed for a newer one: either way it stays idle
  }
  int flooded = 0;
  for (int i = 0; i < 20; ++i) flooded += absl::StartsWith(Get(port(), "/page"), "HTTP/1.1 429") ? 1 : 0;
  EXPECT_GE(flooded, 1) << "requests without the token have a budget";
  for (int i = 0; i < 10; ++i) {
    EXPECT_THAT(Get(port(), "/metrics", "Authorization: Bearer 0123456789abcdef0123\r\n"), StartsWith("HTTP/1.1 200"))
        << "scrape " << i;
  }
  EXPECT_EQ(Ask(idle.front(), "/page"), "") << "the oldest idle connection was closed for newer ones";
  EXPECT_THAT(Ask(other, "/page"), StartsWith("HTTP/1.1 ")) << "another peer's connection is not the flood's to close";
  for (int fd : idle) close(fd);
  close(other);
}

// Issue 42 row 8: on loopback a request must name loopback (or the listen address) as
// its Host: a page under another name (DNS rebinding) gets nothing.
TEST_F(HttpServerTest, OnLoopbackTheHostMustBeLoopback) {
  Start(HttpOptions{});
  for (const char* host : {"localhost", "LOCALHOST:80", "127.0.0.1", "127.0.0.1:7701", "[::1]:7701", "127.3.2.1"}) {
    EXPECT_THAT(
        Exchange(port(), absl::StrCat("GET /metrics HTTP/1.1\r\nHost: ", host, "\r\nConnection: close\r\n\r\n")),
        StartsWith("HTTP/1.1 200"))
        << host;
  }
  for (const char* host : {"evil.example", "evil.example:7701", "localhost.evil.example", "", "10.0.0.1"}) {
    EXPECT_THAT(Exchange(port(), absl::StrCat("GET /metrics HTTP/1.1\r\nHost: ", host, "\r\n\r\n")),
                StartsWith("HTTP/1.1 421"))
        << host;
  }
  EXPECT_EQ(calls_, 6);
}

TEST(HttpServer, HtmlRepliesCarryAContentSecurityPolicy) {
  auto server = HttpServer::Start(HttpOptions{}, [](const std::string& path) {
    if (path == "/own") return HttpReply{200, "text/html; charset=utf-8", "<p>own</p>", "default-src 'self'"};
    return HttpReply{200, path == "/" ? "text/html; charset=utf-8" : "text/plain", "<p>hi</p>"};
  });
  ASSERT_TRUE(server.ok()) << server.status();
  const std::string page = Get((*server)->port(), "/");
  EXPECT_THAT(page, HasSubstr(absl::StrCat("Content-Security-Policy: ", kStrictHtmlPolicy, "\r\n")));
  EXPECT_THAT(page, HasSubstr("X-Content-Type-Options: nosniff\r\n"));
  EXPECT_THAT(Get((*server)->port(), "/own"), HasSubstr("Content-Security-Policy: default-src 'self'\r\n"));
  EXPECT_THAT(Get((*server)->port(), "/text"), HasSubstr("X-Content-Type-Options: nosniff\r\n"));
}

// Issue 42 row 5: while a deferred path is being answered (the report being built),
// every other request is served; then the deferred one is answered too.
TEST(HttpServer, ADeferredPathHoldsUpNothingElse) {
  HttpOptions options;
  options.deferred_paths = {"/slow"};
  std::mutex mu;
  std::condition_variable called;
  std::vector<HttpDone> held;
  auto server = HttpServer::Start(
      options,
      [](const std::string& path) {
        return HttpReply{200, "text/plain", "fast " + path};
      },
      [&](const std::string&, HttpDone done) {
        std::lock_guard<std::mutex> lock(mu);
        held.push_back(std::move(done));
        called.notify_all();
      });
  ASSERT_TRUE(server.ok()) << server.status();
  const int slow = Connect((*server)->port());
  const std::string request = "GET /slow HTTP/1.1\r\nHost: localhost\r\n\r\n";
  ASSERT_EQ(send(slow, request.data(), request.size(), MSG_NOSIGNAL), static_cast<ssize_t>(request.size()));
  {
    std::unique_lock<std::mutex> lock(mu);
    ASSERT_TRUE(called.wait_for(lock, std::chrono::seconds(10), [&] { return !held.empty(); }));
  }
  // The slow one is in flight: another request is answered meanwhile.
  EXPECT_THAT(Get((*server)->port(), "/metrics"), HasSubstr("fast /metrics"));
  char c;
  EXPECT_EQ(recv(slow, &c, 1, MSG_DONTWAIT), -1) << "the slow one is not answered yet";
  EXPECT_EQ(errno, EAGAIN);
  std::thread builder([&] {
    std::lock_guard<std::mutex> lock(mu);
    held[0](HttpReply{200, "text/plain", "slow done"});
  });
  builder.join();
  EXPECT_THAT(ReadResponse(slow), HasSubstr("slow done"));
  EXPECT_THAT(Ask(slow, "/metrics"), HasSubstr("fast /metrics")) << "kept alive after a deferred reply";
  close(slow);
  std::lock_guard<std::mutex> lock(mu);
  held.clear();  // before the server goes
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
