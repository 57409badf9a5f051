#include "collector/http_server.h"

#include <openssl/crypto.h>

#include <algorithm>
#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <chrono>
#include <optional>
#include <thread>
#include <type_traits>
#include <utility>

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

bool TokenMatches(beast::string_view header, const std::string& token) {
  const std::string want = "Bearer " + token;
  return header.size() == want.size() && CRYPTO_memcmp(header.data(), want.data(), want.size()) == 0;
}

}  // namespace

bool IsLoopbackHost(const std::string& host) {
  if (host == "localhost") return true;
  boost::system::error_code ec;
  const net::ip::address address = net::ip::make_address(host, ec);
  return !ec && address.is_loopback();
}

struct HttpServer::Impl {
  HttpOptions options;
  HttpHandler handler;
  int connections = 0;  // on the server's thread only
  double tokens = 0;    // the request budget, refilled at max_requests_per_s
  int64_t refilled_ns = 0;
  std::string host;
  uint16_t port = 0;
  net::io_context ioc{1};
  std::optional<net::ssl::context> tls;  // set: HTTPS
  tcp::acceptor acceptor{ioc};
  std::thread thread;

  bool TakeRequestToken() {
    const int64_t now = MonoNanos();
    tokens =
        std::min(options.max_requests_per_s, tokens + NanosToSeconds(now - refilled_ns) * options.max_requests_per_s);
    refilled_ns = now;
    if (tokens < 1) return false;
    tokens -= 1;
    return true;
  }
  void Accept();
};

namespace {

// One connection, plain (beast::tcp_stream) or TLS (ssl_stream over it).
template <class Stream>
class Session : public std::enable_shared_from_this<Session<Stream>> {
  static constexpr bool kTls = !std::is_same_v<Stream, beast::tcp_stream>;

 public:
  template <class... Args>
  explicit Session(HttpServer::Impl* server, Args&&... stream)
      : stream_(std::forward<Args>(stream)...), server_(server) {
    ++server_->connections;
  }
  ~Session() { --server_->connections; }

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

  void Read() {
    parser_.emplace();
    parser_->header_limit(kMaxHeaderBytes);
    beast::get_lowest_layer(stream_).expires_after(absl::ToChronoNanoseconds(server_->options.read_timeout));
    http::async_read(stream_, buffer_, *parser_,
                     [self = this->shared_from_this()](beast::error_code ec, size_t) { self->OnRead(ec); });
  }

 private:
  void OnRead(beast::error_code ec) {
    if (ec == http::error::header_limit)
      return Reply(Plain(http::status::request_header_fields_too_large, "request header too large"), false);
    // A closed, slow, malformed or body-carrying request: nothing more is read from it.
    if (ec) return Close();
    const auto& request = parser_->get();
    http::response<http::string_body> response = Answer(request);
    response.set(http::field::server, "nasperf");
    response.set(http::field::cache_control, "no-store");
    response.set("X-Content-Type-Options", "nosniff");
    Reply(std::move(response), request.keep_alive() && ++requests_ < kMaxRequestsPerConnection,
          request.method() == http::verb::head);
  }

  http::response<http::string_body> Answer(const http::request<http::empty_body>& request) {
    if (request.method() != http::verb::get && request.method() != http::verb::head) {
      auto r = Plain(http::status::method_not_allowed, "read-only: GET or HEAD");
      r.set(http::field::allow, "GET, HEAD");
      return r;
    }
    std::string path(request.target());
    path = path.substr(0, path.find('?'));
    const auto& open = server_->options.open_paths;
    if (!server_->options.token.empty() && std::find(open.begin(), open.end(), path) == open.end() &&
        !TokenMatches(request[http::field::authorization], server_->options.token)) {
      auto r = Plain(http::status::unauthorized, "a bearer token is needed");
      r.set(http::field::www_authenticate, "Bearer");
      return r;
    }
    if (!server_->TakeRequestToken()) {
      auto r = Plain(http::status::too_many_requests, "too many requests");
      r.set(http::field::retry_after, "1");
      return r;
    }
    HttpReply reply = server_->handler(path);
    http::response<http::string_body> r{static_cast<http::status>(reply.status), 11};
    r.set(http::field::content_type, reply.content_type);
    r.body() = std::move(reply.body);
    return r;
  }

  static http::response<http::string_body> Plain(http::status status, const std::string& text) {
    http::response<http::string_body> r{status, 11};
    r.set(http::field::content_type, "text/plain; charset=utf-8");
    r.body() = text + "\n";
    return r;
  }

  // head: the headers a GET would have, without its body.
  void Reply(http::response<http::string_body> response, bool keep_alive, bool head = false) {
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
  std::optional<http::response<http::string_body>> response_;
  int requests_ = 0;
};

}  // namespace

void HttpServer::Impl::Accept() {
  acceptor.async_accept(net::make_strand(ioc), [this](beast::error_code ec, tcp::socket socket) {
    if (ec == net::error::operation_aborted) return;  // stopping
    if (!ec) {
      if (connections >= options.max_connections) {
        beast::error_code ignored;
        socket.close(ignored);  // past the bound: refused at once, nothing read
      } else {
        if (tls) {
          std::make_shared<Session<beast::ssl_stream<beast::tcp_stream>>>(this, std::move(socket), *tls)->Start();
        } else {
          std::make_shared<Session<beast::tcp_stream>>(this, std::move(socket))->Start();
        }
      }
    }
    Accept();
  });
}

HttpServer::HttpServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

absl::StatusOr<std::unique_ptr<HttpServer>> HttpServer::Start(const HttpOptions& options, HttpHandler handler) {
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  impl->handler = std::move(handler);
  impl->tokens = options.max_requests_per_s;
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
  impl->refilled_ns = MonoNanos();
  boost::system::error_code ec;
  const std::string host = options.listen.host.empty() ? "127.0.0.1" : options.listen.host;
  const std::string where = FormatHostPort({host, options.listen.port});
  impl->host = host;
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
