// File descriptors and sockets with absl::Status errors: an owning Fd, EINTR-safe
// full reads and writes, TCP listen/connect by "host:port". Every failure names the
// call, the errno text and the path or peer. An Fd is owned by one thread at a time.
#ifndef NASPERF_COMMON_FD_H_
#define NASPERF_COMMON_FD_H_

#include <sys/socket.h>
#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace nasperf {

class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  Fd& operator=(Fd&& other) noexcept;
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { Reset(); }

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int release() { return std::exchange(fd_, -1); }
  void Reset(int fd = -1);

 private:
  int fd_ = -1;
};

// "<what>: <strerror(err)>" with a status code matching errno; the errno rides
// along as a payload so ErrnoOf() can recover it (for the wire trailer).
absl::Status ErrnoStatus(int err, absl::string_view what);
// The errno an ErrnoStatus carries, EIO for other errors, 0 for OK.
int ErrnoOf(const absl::Status& status);

// Writes all of [data, data+size); retries EINTR and short writes.
absl::Status WriteAll(int fd, const void* data, size_t size, absl::string_view what);

// Reads exactly size bytes unless EOF comes first; returns the count read.
absl::StatusOr<size_t> ReadFull(int fd, void* data, size_t size, absl::string_view what);
// The same with one deadline (CLOCK_MONOTONIC ns) for all of it, however the bytes
// trickle in; DEADLINE_EXCEEDED when it passes first.
absl::StatusOr<size_t> ReadFullBy(int fd, void* data, size_t size, int64_t deadline_ns, absl::string_view what);

// At most max_bytes of a file (a /proc or sysfs file, a small config): a longer one is
// cut, never read whole.
absl::StatusOr<std::string> ReadFileBounded(const std::string& path, size_t max_bytes);
// A secret's file (a password, a token): a regular file, not a symlink, owned by this
// user and readable by no one else, at most max_bytes (a longer one is refused). `what`
// names it in errors ("--token-file F").
absl::StatusOr<std::string> ReadPrivateFile(const std::string& path, const std::string& what, size_t max_bytes);
// The same checks and read through a descriptor already open (one that passed a check
// such as OpenBeneath), from its first byte, never by a name.
absl::StatusOr<std::string> ReadPrivateFd(int fd, const std::string& what, size_t max_bytes);
// The same read with no owner check (a file others may read, such as known_hosts):
// a regular file of at most max_bytes, from its first byte.
absl::StatusOr<std::string> ReadFdBounded(int fd, const std::string& what, size_t max_bytes);
// For a process about to hold a password or a private key (a share's login, an SSH key): no core dump of it is ever
// written, and no one but root may ptrace it or read its memory through /proc
// (PR_SET_DUMPABLE 0, RLIMIT_CORE 0). Lasts until the process execs; never undone.
absl::Status KeepOutOfCoreDumps();

// mkdir -p: every missing directory of path, each with `mode`; errno text names the
// directory that failed.
absl::Status MakeDirectories(const std::string& path, mode_t mode);

// Replaces path with content: written to a new temporary file beside it (created
// with O_EXCL under a random name, so never through a symlink someone planted),
// given `mode`, then renamed over path. durable: fsync the file and the directory.
absl::Status ReplaceFile(const std::string& path, absl::string_view content, mode_t mode, bool durable);

// Appends `lines` to path with one write and fdatasync, creating it (mode 0644)
// with `header` first when it is new or empty; never through a symlink. For small
// CSV files beside the collector's (lab-runs.csv).
absl::Status AppendLines(const std::string& path, absl::string_view header, absl::string_view lines);

// Opens the regular file `relative` for reading beneath the directory `dir`,
// following no symlink and no "..": a name checked once cannot be swapped for a
// link to elsewhere before it is used, because the caller keeps the descriptor.
// openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS) where the kernel has it (5.6 on),
// else (kWalk, or ENOSYS: NAS kernels such as DSM's 4.4) one O_NOFOLLOW openat per
// component from `dir`. Fails alike for a missing file, a link and a non-regular
// file; the status carries errno text for logs, not for peers.
enum class BeneathWalk { kAuto, kComponents };
absl::StatusOr<Fd> OpenBeneath(int dir, absl::string_view relative, BeneathWalk walk = BeneathWalk::kAuto);
// The same walk to a directory: an O_PATH descriptor of it (for openat, fstatat and
// /proc/self/fd/N), never one of a link's target; FAILED_PRECONDITION for a non-directory.
absl::StatusOr<Fd> OpenDirectoryBeneath(int dir, absl::string_view relative, BeneathWalk walk = BeneathWalk::kAuto);

struct HostPort {
  std::string host;
  uint16_t port = 0;
};
// "host:port", "[v6]:port", or "host" with default_port. Port 0 allowed only if
// allow_zero (for listening on an ephemeral port).
absl::StatusOr<HostPort> ParseHostPort(absl::string_view text, uint16_t default_port, bool allow_zero = false);
std::string FormatHostPort(const HostPort& hp);

// Raises this process's open-file limit to its hard limit and returns it: a server
// holds a descriptor per connection, and the usual soft limit of 1,024 is what idle
// connections from the LAN can use up before any token is checked.
absl::StatusOr<uint64_t> RaiseFileLimit();

// A listening TCP socket (SO_REUSEADDR). host may be empty for all addresses.
absl::StatusOr<Fd> ListenTcp(const HostPort& where, int backlog = 64);
// The local port a bound socket got.
absl::StatusOr<uint16_t> LocalPort(int fd);
// Connects with a timeout; the socket returned is blocking, with TCP keepalive on.
// max_segment > 0 caps the MSS (TCP_MAXSEG before connect): segments that fit a
// path whose MTU is below what the interfaces announce.
absl::StatusOr<Fd> ConnectTcp(const HostPort& where, double timeout_s, uint32_t max_segment = 0);
// "addr:port" of the peer, or "?" when unknown.
std::string PeerName(int fd);
// The IP address of a socket address as text ("10.0.0.2", "fe80::1"), "?" if neither.
std::string AddressText(const sockaddr_storage& address);
// TCP keepalive so a peer that vanished without a FIN is noticed in about 25 s.
void EnableKeepalive(int fd);
// This machine's host name, "unknown" when it has none.
std::string LocalHostName();
// Fixes a socket buffer (option SO_SNDBUF or SO_RCVBUF) at bytes, beyond
// net.core.[rw]mem_max when privileged; this turns off the kernel's autotuning.
void SetSocketBuffer(int fd, int option, uint64_t bytes);
// Receive timeout for blocking reads; 0 = none.
void SetReceiveTimeout(int fd, double seconds);
// Send timeout for blocking writes (and splices into the socket); 0 = none.
void SetSendTimeout(int fd, double seconds);

// A pipe for splice(): bytes move between a file and a socket through it by page
// reference, never through our memory. Asks for `capacity` bytes (the default
// 64 KiB stays when refused); `capacity` is what one splice can move.
struct SplicePipe {
  Fd read_end, write_end;
  size_t capacity = 0;
};
absl::StatusOr<SplicePipe> OpenSplicePipe(size_t capacity);

}  // namespace nasperf

#endif  // NASPERF_COMMON_FD_H_
