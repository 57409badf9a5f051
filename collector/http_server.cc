#include "collector/http_server.h"

#include <openssl/crypto.h>
#include <openssl/sha.h>

#include <algorithm>
#include <array>
#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <chrono>
#include <list>
#include <optional>
#include <thread>
#include <type_traits>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/clock.h"

namespace nasperf {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

constexpr size_t kMaxHeaderBytes = 8192;
constexpr int kMaxRequestsPerConnection = 100;

using Digest = std::array<unsigned char, SHA256_DIGEST_LENGTH>;

Digest Sha256(beast::string_view text) {
  Digest d;
  SHA256(reinterpret_cast<const unsigned char*>(text.data()), text.size(), d.data());
  return d;
}

// Digests of equal size compared in constant time: neither the token nor its length leaks.
bool TokenMatches(beast::string_view header, const Digest& want) {
  const Digest got = Sha256(header);
  return CRYPTO_memcmp(got.data(), want.data(), want.size()) == 0;
}

// The name in a Host header, without its port and brackets, lower case.
std::string HostName(beast::string_view header) {
  std::string host = absl::AsciiStrToLower(absl::string_view(header.data(), header.size()));
  if (absl::StartsWith(host, "[")) return host.substr(1, host.find(']') - 1);
  const size_t colon = host.find(':');
  if (colon != std::string::npos && host.find(':', colon + 1) == std::string::npos) host.resize(colon);
  return host;
}

// A token bucket of `rate` requests a second, `rate` at most at once.
struct Budget {
  double rate = 0, tokens = 0;
  int64_t refilled_ns = 0;
  bool Take() {
    const int64_t now = MonoNanos();
    tokens = std::min(rate, tokens + NanosToSeconds(now - refilled_ns) * rate);
    refilled_ns = now;
    if (tokens < 1) return false;
    tokens -= 1;
    return true;
  }
};

}  // namespace

bool IsLoopbackHost(const std::string& host) {
  if (host == "localhost") return true;
  boost::system::error_code ec;
  const net::ip::address address = net::ip::make_address(host, ec);
  return !ec && address.is_loopback();
}

// The server's view of one connection. kPending: no request read yet; a connection is
// classed by its first request: with the token or without.
struct HttpConnection {
  enum class Class { kPending, kTokenless, kToken };
  virtual ~HttpConnection() = default;
  virtual void Evict() = 0;  // closes it; on the server's thread
  std::string peer;          // the peer's address
  Class cls = Class::kPending;
  bool waiting = true;     // for a request (not answering one): may be evicted
  bool probation = false;  // let in past a full share: closed unless its first request has the token
  bool listed = false;
};

struct HttpServer::Impl {
  HttpOptions options;
  HttpHandler handler;
  Digest token_digest{};    // of "Bearer <token>"
  bool check_host = false;  // listening on loopback: a request without the token must name it as Host
  // On the server's thread only: every connection, oldest first, and the budgets.
  std::list<HttpConnection*> connections;
  Budget token_budget, tokenless_budget;
  std::string host;
  uint16_t port = 0;
  net::io_context ioc{1};
  std::optional<net::ssl::context> tls;  // set: HTTPS
  tcp::acceptor acceptor{ioc};
  std::thread thread;
  // After ioc: destroyed before it, so whatever it still calls back can post to ioc.
  HttpDeferredHandler deferred;

  // The share of connections without the token, and a peer's part of it.
  int Share() const {
    return options.token.empty() ? options.max_connections : std::max(1, options.max_connections / 2);
  }
  int PeerShare() const { return std::max(1, Share() / 2); }
  static bool InShare(const HttpConnection* c) { return c->cls != HttpConnection::Class::kToken; }
  int Count(bool share, const std::string* peer, HttpConnection::Class cls = HttpConnection::Class::kToken) const {
    int n = 0;
    for (const HttpConnection* c : connections) {
      if ((share ? InShare(c) : c->cls == cls) && (peer == nullptr || c->peer == *peer)) ++n;
    }
    return n;
  }
  void Add(HttpConnection* c) {
    connections.push_back(c);
    c->listed = true;
  }
  void Remove(HttpConnection* c) {
    if (c->listed) connections.remove(c);
    c->listed = false;
  }
  // Room in the share for one more connection from `peer`: the oldest waiting one (the
  // peer's own when the peer is at its part) is closed. False: none may go.
  bool MakeRoom(const std::string& peer) {
    const bool peer_full = Count(true, &peer) >= PeerShare();
    if (!peer_full && Count(true, nullptr) < Share()) return true;
    for (HttpConnection* c : connections) {
      if (InShare(c) && c->waiting && (!peer_full || c->peer == peer)) {
        Remove(c);
        c->Evict();
        return true;
      }
    }
    return false;
  }
  void Accept();
};

namespace {

// One connection, plain (beast::tcp_stream) or TLS (ssl_stream over it).
template <class Stream>
class Session : public HttpConnection, public std::enable_shared_from_this<Session<Stream>> {
  static constexpr bool kTls = !std::is_same_v<Stream, beast::tcp_stream>;

 public:
  template <class... Args>
  explicit Session(HttpServer::Impl* server, std::string peer_address, bool on_probation, Args&&... stream)
      : stream_(std::forward<Args>(stream)...), server_(server) {
    peer = std::move(peer_address);
    probation = on_probation;
    server_->Add(this);
  }
  ~Session() override { server_->Remove(this); }

  void Evict() override { Close(); }

  // The TLS handshake (within the read timeout), then the first request.
  void Start() {
    if constexpr (kTls) {
      beast::get_lowest_layer(stream_).expires_after(absl::ToChronoNanoseconds(server_->options.read_timeout));
      stream_.async_handshake(net::ssl::stream_base::server, [self = this->shared_from_this()](beast::error_code ec) {
        if (ec) return self->Close();
        self->Read();
      });
    } else {
      Read();
    }
  }

  // The first request within the read timeout; a kept-alive connection's next one within
  // the (shorter) idle timeout.
  void Read() {
    waiting = true;
    parser_.emplace();
    parser_->header_limit(kMaxHeaderBytes);
    const absl::Duration timeout = requests_ == 0 ? server_->options.read_timeout : server_->options.idle_timeout;
    beast::get_lowest_layer(stream_).expires_after(absl::ToChronoNanoseconds(timeout));
    http::async_read(stream_, buffer_, *parser_,
                     [self = this->shared_from_this()](beast::error_code ec, size_t) { self->OnRead(ec); });
  }

 private:
  using Response = http::response<http::string_body>;

  void OnRead(beast::error_code ec) {
    waiting = false;
    if (ec == http::error::header_limit)
      return Reply(Plain(http::status::request_header_fields_too_large, "request header too large"), false);
    // A closed, slow, malformed or body-carrying request: nothing more is read from it.
    if (ec) return Close();
    const auto& request = parser_->get();
    const bool keep_alive = request.keep_alive() && ++requests_ < kMaxRequestsPerConnection;
    const bool head = request.method() == http::verb::head;
    std::optional<Response> response = Answer(request);
    if (!response) return;  // deferred: answered by Defer's callback
    // A wrong Host or no room: the connection goes too.
    const bool refused = response->result() == http::status::misdirected_request ||
                         response->result() == http::status::service_unavailable;
    Reply(std::move(*response), keep_alive && !refused, head);
  }

  // The refusals, in order; nullopt when the deferred handler took the request.
  std::optional<Response> Answer(const http::request<http::empty_body>& request) {
    if (request.method() != http::verb::get && request.method() != http::verb::head) {
      auto r = Plain(http::status::method_not_allowed, "read-only: GET or HEAD");
      r.set(http::field::allow, "GET, HEAD");
      return r;
    }
    const std::string& token = server_->options.token;
    const bool has_token = !token.empty() && TokenMatches(request[http::field::authorization], server_->token_digest);
    if (cls == Class::kPending) {
      cls = has_token ? Class::kToken : Class::kTokenless;
      if ((has_token && server_->Count(false, nullptr, Class::kToken) > server_->options.max_connections) ||
          (!has_token && probation))
        return Busy(http::status::service_unavailable, "too many connections");
    }
    if (!(has_token ? server_->token_budget : server_->tokenless_budget).Take())
      return Busy(http::status::too_many_requests, "too many requests");
    std::string path(request.target());
    path = path.substr(0, path.find('?'));
    const auto& open = server_->options.open_paths;
    if (!token.empty() && !has_token && std::find(open.begin(), open.end(), path) == open.end()) {
      auto r = Plain(http::status::unauthorized, "a bearer token is needed");
      r.set(http::field::www_authenticate, "Bearer");
      return r;
    }
    // Served without the token, on loopback: only under a loopback name (DNS rebinding: a
    // page under another name reads nothing).
    if (!has_token && server_->check_host && !HostAllowed(request[http::field::host]))
      return Plain(http::status::misdirected_request, "this collector answers only to its own address as Host");
    const auto& deferred = server_->options.deferred_paths;
    if (server_->deferred && std::find(deferred.begin(), deferred.end(), path) != deferred.end()) {
      Defer(path, request.keep_alive() && requests_ < kMaxRequestsPerConnection, request.method() == http::verb::head);
      return std::nullopt;
    }
    return FromReply(server_->handler(path));
  }

  bool HostAllowed(beast::string_view header) const {
    const std::string name = HostName(header);
    return !name.empty() && (IsLoopbackHost(name) || name == absl::AsciiStrToLower(server_->host));
  }

  // The deferred handler answers from any thread; the reply is sent from the server's.
  void Defer(const std::string& path, bool keep_alive, bool head) {
    auto self = this->shared_from_this();
    server_->deferred(path, [self, keep_alive, head](HttpReply reply) {
      net::post(self->stream_.get_executor(), [self, keep_alive, head, reply = std::move(reply)]() mutable {
        self->Reply(FromReply(std::move(reply)), keep_alive, head);
      });
    });
  }

  static Response FromReply(HttpReply reply) {
    Response r{static_cast<http::status>(reply.status), 11};
    r.set(http::field::content_type, reply.content_type);
    if (absl::StartsWith(reply.content_type, "text/html"))
      r.set("Content-Security-Policy", reply.csp.empty() ? std::string(kStrictHtmlPolicy) : reply.csp);
    r.body() = std::move(reply.body);
    return r;
  }

  static Response Plain(http::status status, const std::string& text) {
    Response r{status, 11};
    r.set(http::field::content_type, "text/plain; charset=utf-8");
    r.body() = text + "\n";
    return r;
  }

  static Response Busy(http::status status, const std::string& text) {
    Response r = Plain(status, text);
    r.set(http::field::retry_after, "1");
    return r;
  }

  // head: the headers a GET would have, without its body.
  void Reply(Response response, bool keep_alive, bool head = false) {
    response.set(http::field::server, "nasperf");
    response.set(http::field::cache_control, "no-store");
    response.set("X-Content-Type-Options", "nosniff");
    response.keep_alive(keep_alive);
    response.prepare_payload();
    if (head) {
      const size_t length = response.body().size();
      response.body().clear();
      response.content_length(length);
    }
    response_ = std::move(response);
    beast::get_lowest_layer(stream_).expires_after(absl::ToChronoNanoseconds(server_->options.read_timeout));
    http::async_write(stream_, *response_, [self = this->shared_from_this(), keep_alive](beast::error_code ec, size_t) {
      if (ec || !keep_alive) return self->Close();
      self->Read();
    });
  }

  void Close() {
    beast::error_code ignored;
    auto& lowest = beast::get_lowest_layer(stream_);
    lowest.socket().shutdown(tcp::socket::shutdown_both, ignored);
    lowest.close();
  }

  Stream stream_;
  HttpServer::Impl* server_;
  beast::flat_buffer buffer_{kMaxHeaderBytes};
  std::optional<http::request_parser<http::empty_body>> parser_;
  std::optional<Response> response_;
  int requests_ = 0;
};

}  // namespace

void HttpServer::Impl::Accept() {
  acceptor.async_accept(net::make_strand(ioc), [this](beast::error_code ec, tcp::socket socket) {
    if (ec == net::error::operation_aborted) return;  // stopping
    if (!ec) {
      beast::error_code peer_ec;
      const std::string peer = socket.remote_endpoint(peer_ec).address().to_string();
      // The share full of connections being answered: still room for a token holder.
      const bool room = !peer_ec && MakeRoom(peer);
      const bool probation =
          !peer_ec && !room && static_cast<int>(connections.size()) < options.max_connections + Share();
      if (!room && !probation) {
        beast::error_code ignored;
        socket.close(ignored);  // no room: refused at once, nothing read
      } else if (tls) {
        std::make_shared<Session<beast::ssl_stream<beast::tcp_stream>>>(this, peer, probation, std::move(socket), *tls)
            ->Start();
      } else {
        std::make_shared<Session<beast::tcp_stream>>(this, peer, probation, std::move(socket))->Start();
      }
    }
    Accept();
  });
}

HttpServer::HttpServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

absl::StatusOr<std::unique_ptr<HttpServer>> HttpServer::Start(const HttpOptions& options, HttpHandler handler,
                                                              HttpDeferredHandler deferred) {
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  impl->handler = std::move(handler);
  impl->deferred = std::move(deferred);
  impl->token_digest = Sha256("Bearer " + options.token);
  const double tokenless_rate = options.max_requests_per_s / (options.token.empty() ? 1 : 2);
  impl->token_budget = {options.max_requests_per_s, options.max_requests_per_s, MonoNanos()};
  impl->tokenless_budget = {tokenless_rate, tokenless_rate, MonoNanos()};
  if (!options.tls_cert_pem.empty() || !options.tls_key_pem.empty()) {
    boost::system::error_code tls_ec;
    impl->tls.emplace(net::ssl::context::tls_server);
    impl->tls->set_options(net::ssl::context::default_workarounds | net::ssl::context::no_sslv2 |
                           net::ssl::context::no_sslv3 | net::ssl::context::no_tlsv1 | net::ssl::context::no_tlsv1_1);
    impl->tls->use_certificate_chain(net::buffer(options.tls_cert_pem), tls_ec);
    if (!tls_ec) impl->tls->use_private_key(net::buffer(options.tls_key_pem), net::ssl::context::pem, tls_ec);
    if (tls_ec)
      return absl::InvalidArgumentError(absl::StrCat("--http-tls: the key or certificate: ", tls_ec.message()));
  }
  boost::system::error_code ec;
  const std::string host = options.listen.host.empty() ? "127.0.0.1" : options.listen.host;
  const std::string where = FormatHostPort({host, options.listen.port});
  impl->host = host;
  impl->check_host = IsLoopbackHost(host);
  tcp::resolver resolver(impl->ioc);
  auto endpoints = resolver.resolve(host, std::to_string(options.listen.port), ec);
  if (ec || endpoints.empty()) return absl::InvalidArgumentError(absl::StrCat("--http ", where, ": ", ec.message()));
  const tcp::endpoint endpoint = *endpoints.begin();
  impl->acceptor.open(endpoint.protocol(), ec);
  if (!ec) impl->acceptor.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) impl->acceptor.bind(endpoint, ec);
  if (!ec) impl->acceptor.listen(net::socket_base::max_listen_connections, ec);
  if (!ec) impl->port = impl->acceptor.local_endpoint(ec).port();
  if (ec) return absl::UnavailableError(absl::StrCat("cannot listen on ", where, " for HTTP: ", ec.message()));
  impl->Accept();
  Impl* raw = impl.get();
  impl->thread = std::thread([raw] { raw->ioc.run(); });
  return std::unique_ptr<HttpServer>(new HttpServer(std::move(impl)));
}

uint16_t HttpServer::port() const { return impl_->port; }

std::string HttpServer::address() const { return FormatHostPort({impl_->host, impl_->port}); }

void HttpServer::Stop() {
  if (!impl_->thread.joinable()) return;
  net::post(impl_->ioc, [impl = impl_.get()] {
    beast::error_code ignored;
    impl->acceptor.close(ignored);
    impl->ioc.stop();
  });
  impl_->thread.join();
}

HttpServer::~HttpServer() { Stop(); }

}  // namespace nasperf
