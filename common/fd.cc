#include "common/fd.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "absl/strings/cord.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/clock.h"

namespace nasperf {

Fd& Fd::operator=(Fd&& other) noexcept {
  if (this != &other) Reset(other.release());
  return *this;
}

void Fd::Reset(int fd) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = fd;
}

namespace {
constexpr char kErrnoPayload[] = "nasperf/errno";

absl::Status ErrnoStatusCode(int err, const std::string& message) {
  switch (err) {
    case ENOENT:
      return absl::NotFoundError(message);
    case EEXIST:
      return absl::AlreadyExistsError(message);
    case EACCES:
    case EPERM:
      return absl::PermissionDeniedError(message);
    case ENOSPC:
    case EDQUOT:
      return absl::ResourceExhaustedError(message);
    case EINVAL:
      return absl::InvalidArgumentError(message);
    case ETIMEDOUT:
    case EAGAIN:
      return absl::DeadlineExceededError(message);
    case ECONNREFUSED:
    case ECONNRESET:
    case EPIPE:
    case EHOSTUNREACH:
    case ENETUNREACH:
      return absl::UnavailableError(message);
    default:
      return absl::InternalError(message);
  }
}
}  // namespace

absl::Status ErrnoStatus(int err, absl::string_view what) {
  absl::Status status = ErrnoStatusCode(err, absl::StrCat(what, ": ", strerror(err)));
  status.SetPayload(kErrnoPayload, absl::Cord(absl::StrCat(err)));
  return status;
}

int ErrnoOf(const absl::Status& status) {
  if (status.ok()) return 0;
  auto payload = status.GetPayload(kErrnoPayload);
  int err = 0;
  if (payload.has_value() && absl::SimpleAtoi(std::string(*payload), &err)) return err;
  return EIO;
}

absl::Status WriteAll(int fd, const void* data, size_t size, absl::string_view what) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t n = ::write(fd, p, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus(errno, what);
    }
    p += n;
    size -= static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

absl::StatusOr<size_t> ReadFull(int fd, void* data, size_t size, absl::string_view what) {
  char* p = static_cast<char*>(data);
  size_t done = 0;
  while (done < size) {
    ssize_t n = ::read(fd, p + done, size - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus(errno, what);
    }
    if (n == 0) break;
    done += static_cast<size_t>(n);
  }
  return done;
}

absl::StatusOr<size_t> ReadFullBy(int fd, void* data, size_t size, int64_t deadline_ns, absl::string_view what) {
  char* p = static_cast<char*>(data);
  size_t done = 0;
  while (done < size) {
    const int64_t left_ms = (deadline_ns - MonoNanos() + 999999) / 1000000;
    if (left_ms <= 0) {
      return absl::DeadlineExceededError(absl::StrCat(what, ": ", done, " of ", size, " bytes before the deadline"));
    }
    pollfd ready{fd, POLLIN, 0};
    int polled = ::poll(&ready, 1, static_cast<int>(std::min<int64_t>(left_ms, 1 << 30)));
    if (polled < 0 && errno != EINTR) return ErrnoStatus(errno, what);
    if (polled <= 0) continue;
    ssize_t n = ::recv(fd, p + done, size - done, MSG_DONTWAIT);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) continue;
      return ErrnoStatus(errno, what);
    }
    if (n == 0) break;
    done += static_cast<size_t>(n);
  }
  return done;
}

absl::StatusOr<std::string> ReadFileBounded(const std::string& path, size_t max_bytes) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return ErrnoStatus(errno, absl::StrCat("open ", path));
  // Grown as read: /proc/meminfo, read every 100 ms, is 1.5 KB.
  std::string text;
  char buffer[16384];
  while (text.size() < max_bytes) {
    const ssize_t n = ::read(fd.get(), buffer, std::min(sizeof buffer, max_bytes - text.size()));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoStatus(errno, absl::StrCat("read ", path));
    if (n == 0) break;
    text.append(buffer, static_cast<size_t>(n));
  }
  return text;
}

absl::Status KeepOutOfCoreDumps() {
  const struct rlimit none {};
  if (::setrlimit(RLIMIT_CORE, &none) != 0) return ErrnoStatus(errno, "setrlimit(RLIMIT_CORE, 0)");
  if (::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) return ErrnoStatus(errno, "prctl(PR_SET_DUMPABLE, 0)");
  return absl::OkStatus();
}

absl::StatusOr<std::string> ReadPrivateFile(const std::string& path, const std::string& what, size_t max_bytes) {
  // O_NONBLOCK: a FIFO named here must not hold the open until something writes to it.
  Fd fd(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (!fd.valid()) return ErrnoStatus(errno, what);
  return ReadPrivateFd(fd.get(), what, max_bytes);
}

absl::StatusOr<std::string> ReadPrivateFd(int fd, const std::string& what, size_t max_bytes) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return ErrnoStatus(errno, what);
  if (S_ISREG(st.st_mode) && ((st.st_mode & 077) != 0 || st.st_uid != ::geteuid())) {
    return absl::PermissionDeniedError(
        absl::StrCat(what, " may be read by others than its owner (or is not yours): chmod 600 it"));
  }
  return ReadFdBounded(fd, what, max_bytes);
}

absl::StatusOr<std::string> ReadFdBounded(int fd, const std::string& what, size_t max_bytes) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return ErrnoStatus(errno, what);
  if (!S_ISREG(st.st_mode)) return absl::InvalidArgumentError(absl::StrCat(what, " is not a file"));
  if (st.st_size > static_cast<off_t>(max_bytes)) {
    return absl::InvalidArgumentError(absl::StrCat(what, " is over ", max_bytes, " bytes"));
  }
  // pread from the start: the descriptor's offset may be anywhere, and shared.
  std::string text(static_cast<size_t>(st.st_size), '\0');
  size_t got = 0;
  while (got < text.size()) {
    const ssize_t n = ::pread(fd, text.data() + got, text.size() - got, static_cast<off_t>(got));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoStatus(errno, absl::StrCat("read ", what));
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  text.resize(got);
  return text;
}

absl::Status MakeDirectories(const std::string& path, mode_t mode) {
  for (size_t i = 1; i <= path.size(); ++i) {
    if (i == path.size() || path[i] == '/') {
      std::string partial = path.substr(0, i);
      if (::mkdir(partial.c_str(), mode) != 0 && errno != EEXIST) {
        return ErrnoStatus(errno, absl::StrCat("mkdir ", partial));
      }
    }
  }
  return absl::OkStatus();
}

absl::Status ReplaceFile(const std::string& path, absl::string_view content, mode_t mode, bool durable) {
  std::string tmp = path + ".tmp-XXXXXX";
  Fd fd(::mkostemp(tmp.data(), O_CLOEXEC));  // O_CREAT | O_EXCL, mode 0600
  if (!fd.valid()) return ErrnoStatus(errno, absl::StrCat("create a temporary file for ", path));
  absl::Status status = WriteAll(fd.get(), content.data(), content.size(), absl::StrCat("write ", tmp));
  if (status.ok() && ::fchmod(fd.get(), mode) != 0) status = ErrnoStatus(errno, absl::StrCat("chmod ", tmp));
  if (status.ok() && durable && ::fsync(fd.get()) != 0) status = ErrnoStatus(errno, absl::StrCat("fsync ", tmp));
  if (status.ok() && ::rename(tmp.c_str(), path.c_str()) != 0) {
    status = ErrnoStatus(errno, absl::StrCat("rename ", tmp, " to ", path));
  }
  if (!status.ok()) {
    ::unlink(tmp.c_str());
    return status;
  }
  if (durable) {
    size_t slash = path.rfind('/');
    std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
    Fd dir_fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (dir_fd.valid()) ::fsync(dir_fd.get());
  }
  return absl::OkStatus();
}

absl::Status AppendLines(const std::string& path, absl::string_view header, absl::string_view lines) {
  Fd fd(::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644));
  if (!fd.valid()) return ErrnoStatus(errno, absl::StrCat("open ", path));
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return ErrnoStatus(errno, absl::StrCat("stat ", path));
  std::string text = st.st_size == 0 ? absl::StrCat(header, lines) : std::string(lines);
  absl::Status status = WriteAll(fd.get(), text.data(), text.size(), absl::StrCat("write ", path));
  if (status.ok() && ::fdatasync(fd.get()) != 0) status = ErrnoStatus(errno, absl::StrCat("fdatasync ", path));
  return status;
}

namespace {

// The last component opened by either walk: not a FIFO's blocking open, not a link.
constexpr int kOpenLeaf = O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK;
// A directory on the way, or the one OpenDirectoryBeneath wants: never read, only walked from.
constexpr int kOpenDirectory = O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;

absl::StatusOr<Fd> OpenBeneathByComponents(int dir, const std::vector<absl::string_view>& parts,
                                           absl::string_view relative, int leaf_flags) {
  Fd held;
  int at = dir;
  for (size_t i = 0; i < parts.size(); ++i) {
    const std::string name(parts[i]);
    const bool leaf = i + 1 == parts.size();
    Fd next(::openat(at, name.c_str(), leaf ? leaf_flags : kOpenDirectory));
    if (!next.valid()) return ErrnoStatus(errno, absl::StrCat("open ", relative));
    held = std::move(next);
    at = held.get();
  }
  return held;
}

// Either walk, its last component opened with leaf_flags; no check of what it is.
absl::StatusOr<Fd> OpenBeneathAs(int dir, absl::string_view relative, BeneathWalk walk, int leaf_flags) {
  std::vector<absl::string_view> parts = absl::StrSplit(relative, '/', absl::SkipEmpty());
  parts.erase(std::remove(parts.begin(), parts.end(), "."), parts.end());
  if (parts.empty() || relative.front() == '/' || std::count(parts.begin(), parts.end(), "..") > 0) {
    return absl::InvalidArgumentError(absl::StrCat(relative, " is not a path beneath the directory"));
  }
  Fd fd;
  if (walk == BeneathWalk::kAuto) {
    open_how how{};
    how.flags = static_cast<uint64_t>(leaf_flags);
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
    const std::string path(relative);
    fd.Reset(static_cast<int>(::syscall(SYS_openat2, dir, path.c_str(), &how, sizeof(how))));
    if (!fd.valid() && errno != ENOSYS) return ErrnoStatus(errno, absl::StrCat("open ", relative));
  }
  if (!fd.valid()) return OpenBeneathByComponents(dir, parts, relative, leaf_flags);
  return fd;
}

}  // namespace

absl::StatusOr<Fd> OpenBeneath(int dir, absl::string_view relative, BeneathWalk walk) {
  absl::StatusOr<Fd> fd = OpenBeneathAs(dir, relative, walk, kOpenLeaf);
  if (!fd.ok()) return fd.status();
  struct stat st {};
  if (::fstat(fd->get(), &st) != 0) return ErrnoStatus(errno, absl::StrCat("stat ", relative));
  if (!S_ISREG(st.st_mode)) return absl::FailedPreconditionError(absl::StrCat(relative, " is not a regular file"));
  ::fcntl(fd->get(), F_SETFL, ::fcntl(fd->get(), F_GETFL) & ~O_NONBLOCK);
  return fd;
}

absl::StatusOr<Fd> OpenDirectoryBeneath(int dir, absl::string_view relative, BeneathWalk walk) {
  absl::StatusOr<Fd> fd = OpenBeneathAs(dir, relative, walk, kOpenDirectory);
  if (!fd.ok()) return fd.status();
  struct stat st {};
  if (::fstat(fd->get(), &st) != 0) return ErrnoStatus(errno, absl::StrCat("stat ", relative));
  if (!S_ISDIR(st.st_mode)) return absl::FailedPreconditionError(absl::StrCat(relative, " is not a directory"));
  return fd;
}

absl::StatusOr<HostPort> ParseHostPort(absl::string_view text, uint16_t default_port, bool allow_zero) {
  HostPort out;
  absl::string_view port_text;
  if (!text.empty() && text.front() == '[') {
    size_t close = text.find(']');
    if (close == absl::string_view::npos) {
      return absl::InvalidArgumentError(absl::StrCat("invalid address \"", text, "\": missing ]"));
    }
    out.host = std::string(text.substr(1, close - 1));
    absl::string_view rest = text.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') {
        return absl::InvalidArgumentError(absl::StrCat("invalid address \"", text, "\""));
      }
      port_text = rest.substr(1);
    }
  } else {
    size_t colon = text.rfind(':');
    if (colon != absl::string_view::npos && text.find(':') == colon) {
      out.host = std::string(text.substr(0, colon));
      port_text = text.substr(colon + 1);
    } else {
      out.host = std::string(text);  // bare host or bare IPv6 literal
    }
  }
  if (port_text.empty()) {
    out.port = default_port;
  } else {
    uint32_t port = 0;
    if (!absl::SimpleAtoi(port_text, &port) || port > 65535 || (port == 0 && !allow_zero)) {
      return absl::InvalidArgumentError(
          absl::StrCat("invalid port \"", port_text, "\" in \"", text, "\" (expected 1-65535)"));
    }
    out.port = static_cast<uint16_t>(port);
  }
  return out;
}

std::string FormatHostPort(const HostPort& hp) {
  if (hp.host.find(':') != std::string::npos) return absl::StrCat("[", hp.host, "]:", hp.port);
  return absl::StrCat(hp.host, ":", hp.port);
}

namespace {

absl::StatusOr<addrinfo*> Resolve(const HostPort& where, bool passive) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = passive ? AI_PASSIVE : 0;
  addrinfo* result = nullptr;
  std::string port = absl::StrCat(where.port);
  int rc = getaddrinfo(where.host.empty() ? nullptr : where.host.c_str(), port.c_str(), &hints, &result);
  if (rc != 0) {
    return absl::UnavailableError(absl::StrCat("cannot resolve \"", where.host, "\": ", gai_strerror(rc)));
  }
  return result;
}

}  // namespace

absl::StatusOr<uint64_t> RaiseFileLimit() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) return ErrnoStatus(errno, "getrlimit RLIMIT_NOFILE");
  if (limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    if (::setrlimit(RLIMIT_NOFILE, &limit) != 0) return ErrnoStatus(errno, "setrlimit RLIMIT_NOFILE");
  }
  return static_cast<uint64_t>(limit.rlim_cur);
}

absl::StatusOr<Fd> ListenTcp(const HostPort& where, int backlog) {
  auto resolved = Resolve(where, /*passive=*/true);
  if (!resolved.ok()) return resolved.status();
  absl::Status last = absl::UnavailableError("no address");
  for (addrinfo* ai = *resolved; ai != nullptr; ai = ai->ai_next) {
    Fd fd(::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, 0));
    if (!fd.valid()) {
      last = ErrnoStatus(errno, "socket");
      continue;
    }
    int one = 1;
    setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(fd.get(), ai->ai_addr, ai->ai_addrlen) != 0) {
      last = ErrnoStatus(errno, absl::StrCat("bind ", FormatHostPort(where)));
      continue;
    }
    if (::listen(fd.get(), backlog) != 0) {
      last = ErrnoStatus(errno, absl::StrCat("listen ", FormatHostPort(where)));
      continue;
    }
    freeaddrinfo(*resolved);
    return fd;
  }
  freeaddrinfo(*resolved);
  return last;
}

absl::StatusOr<uint16_t> LocalPort(int fd) {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    return ErrnoStatus(errno, "getsockname");
  }
  if (addr.ss_family == AF_INET6) {
    return ntohs(reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port);
  }
  return ntohs(reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
}

void EnableKeepalive(int fd) {
  int one = 1, idle = 10, interval = 5, count = 3;
  setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof interval);
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &count, sizeof count);
}

void SetSocketBuffer(int fd, int option, uint64_t bytes) {
  // The kernel doubles the value to cover its bookkeeping, so about this much is
  // left for data in flight.
  int value = static_cast<int>(std::min<uint64_t>(bytes, INT32_MAX / 2));
  int forced = option == SO_SNDBUF ? SO_SNDBUFFORCE : SO_RCVBUFFORCE;
  if (setsockopt(fd, SOL_SOCKET, forced, &value, sizeof value) != 0) {
    setsockopt(fd, SOL_SOCKET, option, &value, sizeof value);  // capped at [rw]mem_max
  }
}

namespace {
void SetTimeout(int fd, int option, double seconds) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(seconds);
  tv.tv_usec = static_cast<suseconds_t>((seconds - static_cast<double>(tv.tv_sec)) * 1e6);
  setsockopt(fd, SOL_SOCKET, option, &tv, sizeof tv);
}
}  // namespace

void SetReceiveTimeout(int fd, double seconds) { SetTimeout(fd, SO_RCVTIMEO, seconds); }
void SetSendTimeout(int fd, double seconds) { SetTimeout(fd, SO_SNDTIMEO, seconds); }

absl::StatusOr<Fd> ConnectTcp(const HostPort& where, double timeout_s, uint32_t max_segment) {
  auto resolved = Resolve(where, /*passive=*/false);
  if (!resolved.ok()) return resolved.status();
  std::string name = FormatHostPort(where);
  absl::Status last = absl::UnavailableError(absl::StrCat("connect ", name, ": no address"));
  for (addrinfo* ai = *resolved; ai != nullptr; ai = ai->ai_next) {
    Fd fd(::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    if (!fd.valid()) {
      last = ErrnoStatus(errno, "socket");
      continue;
    }
    if (max_segment > 0) {
      int mss = static_cast<int>(max_segment);
      setsockopt(fd.get(), IPPROTO_TCP, TCP_MAXSEG, &mss, sizeof mss);
    }
    int rc = ::connect(fd.get(), ai->ai_addr, ai->ai_addrlen);
    if (rc != 0 && errno == EINPROGRESS) {
      pollfd p{fd.get(), POLLOUT, 0};
      rc = ::poll(&p, 1, static_cast<int>(timeout_s * 1000));
      if (rc == 0) {
        last = absl::DeadlineExceededError(absl::StrCat("connect ", name, ": timed out"));
        continue;
      }
      int err = 0;
      socklen_t len = sizeof err;
      getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &err, &len);
      if (err != 0) {
        last = ErrnoStatus(err, absl::StrCat("connect ", name));
        continue;
      }
      rc = 0;
    }
    if (rc != 0) {
      last = ErrnoStatus(errno, absl::StrCat("connect ", name));
      continue;
    }
    int flags = fcntl(fd.get(), F_GETFL);
    fcntl(fd.get(), F_SETFL, flags & ~O_NONBLOCK);
    EnableKeepalive(fd.get());
    freeaddrinfo(*resolved);
    return fd;
  }
  freeaddrinfo(*resolved);
  return last;
}

std::string AddressText(const sockaddr_storage& address) {
  char text[INET6_ADDRSTRLEN] = "?";
  if (address.ss_family == AF_INET6) {
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6&>(address).sin6_addr, text, sizeof text);
  } else if (address.ss_family == AF_INET) {
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in&>(address).sin_addr, text, sizeof text);
  }
  return text;
}

std::string PeerName(int fd) {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  if (getpeername(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) return "?";
  const uint16_t port = ntohs(addr.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port
                                                         : reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
  return FormatHostPort({AddressText(addr), port});
}

}  // namespace nasperf

namespace nasperf {
std::string LocalHostName() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "unknown";
  return name;
}
absl::StatusOr<SplicePipe> OpenSplicePipe(size_t capacity) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return ErrnoStatus(errno, "pipe for splice");
  SplicePipe pipe;
  pipe.read_end = Fd(fds[0]);
  pipe.write_end = Fd(fds[1]);
  (void)::fcntl(pipe.write_end.get(), F_SETPIPE_SZ, static_cast<int>(capacity));
  const int granted = ::fcntl(pipe.write_end.get(), F_GETPIPE_SZ);
  pipe.capacity = granted > 0 ? static_cast<size_t>(granted) : 65536;
  return pipe;
}

}  // namespace nasperf
