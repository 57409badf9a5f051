// Benchmark helper (not a test): the least a TCP sender and receiver on loopback can
// do, so scripts/bench.sh can show how far nasperf's ends are from the floor of their
// own work, beside iperf3 and dd. No control channel, no samples, no rows.
//   tcp_floor send PORT BYTES payload|constant
//       BYTES (whole MiB) in 1 MiB sends to 127.0.0.1:PORT: nasperf's payload (PatternSource, its one XOR
//       pass per chunk) or one unchanging buffer, as iperf3 sends
//   tcp_floor receive PORT_FILE FILE
//       listens on 127.0.0.1 (its port written to PORT_FILE), takes one connection and
//       splices it through a 1 MiB pipe into FILE (/dev/null to discard), as nasperf's
//       receiver does; a FILE other than /dev/null is removed at the end, as dd's is
// One thread each; exits 0 when every byte has moved, else 1 with a one-line reason.
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "common/payload.h"

namespace {

using nasperf::PatternSource;

int Fail(const char* what) {
  std::fprintf(stderr, "tcp_floor: %s: %s\n", what, std::strerror(errno));
  return 1;
}

sockaddr_in Loopback(int port) {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return address;
}

int Send(int port, uint64_t bytes, bool payload) {
  const int sock = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address = Loopback(port);
  if (sock < 0 || ::connect(sock, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) return Fail("connect");
  PatternSource source(nasperf::Pattern::kRandom, 42);
  const uint8_t* constant = source.Next(0, PatternSource::kChunk);
  for (uint64_t offset = 0; offset < bytes; offset += PatternSource::kChunk) {
    const uint8_t* chunk = payload ? source.Next(offset, PatternSource::kChunk) : constant;
    for (size_t sent = 0; sent < PatternSource::kChunk;) {
      ssize_t n = ::send(sock, chunk + sent, PatternSource::kChunk - sent, 0);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return Fail("send");
      sent += static_cast<size_t>(n);
    }
  }
  // The receiver's close, once it has every byte, ends the run.
  if (::shutdown(sock, SHUT_WR) != 0) return Fail("shutdown");
  char byte;
  while (::read(sock, &byte, 1) > 0) {
  }
  ::close(sock);
  return 0;
}

int Receive(const char* port_file, const char* path) {
  const int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address = Loopback(0);
  socklen_t length = sizeof address;
  if (listener < 0 || ::bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      ::listen(listener, 1) != 0 || ::getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length) != 0)
    return Fail("listen on 127.0.0.1");
  FILE* ports = std::fopen(port_file, "w");
  if (ports == nullptr || std::fprintf(ports, "%d\n", ntohs(address.sin_port)) < 0 || std::fclose(ports) != 0)
    return Fail(port_file);
  const int sock = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
  int pipe_ends[2];
  if (sock < 0) return Fail("accept");
  if (::pipe2(pipe_ends, O_CLOEXEC) != 0) return Fail("pipe");
  (void)::fcntl(pipe_ends[1], F_SETPIPE_SZ, static_cast<int>(PatternSource::kChunk));
  const int file = ::open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (file < 0) return Fail(path);
  for (;;) {
    ssize_t n = ::splice(sock, nullptr, pipe_ends[1], nullptr, PatternSource::kChunk, SPLICE_F_MOVE);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Fail("splice from the socket");
    if (n == 0) break;
    while (n > 0) {
      ssize_t m = ::splice(pipe_ends[0], nullptr, file, nullptr, static_cast<size_t>(n), SPLICE_F_MOVE);
      if (m < 0 && errno == EINTR) continue;
      if (m <= 0) return Fail(path);
      n -= m;
    }
  }
  ::close(file);
  ::close(sock);
  if (std::string(path) != "/dev/null" && ::unlink(path) != 0) return Fail(path);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 5 && std::string(argv[1]) == "send") {
    const std::string kind = argv[4];
    if (kind != "payload" && kind != "constant") {
      std::fprintf(stderr, "tcp_floor: send takes payload or constant, not %s\n", argv[4]);
      return 1;
    }
    return Send(std::atoi(argv[2]), std::strtoull(argv[3], nullptr, 10), kind == "payload");
  }
  if (argc == 4 && std::string(argv[1]) == "receive") return Receive(argv[2], argv[3]);
  std::fprintf(stderr, "usage: tcp_floor send PORT BYTES payload|constant | tcp_floor receive PORT_FILE FILE\n");
  return 1;
}
