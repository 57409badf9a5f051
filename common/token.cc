#include "common/token.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/fd.h"

namespace nasperf {

namespace {

// Kernels before 3.17 (some NAS systems) have no getrandom: read /dev/urandom there.
bool ReadUrandom(uint8_t* p, size_t size) {
  Fd fd(::open("/dev/urandom", O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return false;
  auto got = ReadFull(fd.get(), p, size, "read /dev/urandom");
  return got.ok() && *got == size;
}

}  // namespace

void RandomBytes(void* out, size_t size) {
  auto* p = static_cast<uint8_t*>(out);
  while (size > 0) {
    ssize_t n = getrandom(p, size, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == ENOSYS && ReadUrandom(p, size)) return;
    if (n <= 0) std::abort();  // no entropy source at all: nothing safe to do
    p += n;
    size -= static_cast<size_t>(n);
  }
}

std::string RandomHex(size_t bytes) {
  std::string raw(bytes, '\0');
  RandomBytes(raw.data(), bytes);
  return absl::BytesToHexString(raw);
}

std::string ConfigPath(absl::string_view name) {
  const char* xdg = std::getenv("XDG_CONFIG_HOME");
  if (xdg != nullptr && *xdg != '\0') return absl::StrCat(xdg, "/nasperf/", name);
  const char* home = std::getenv("HOME");
  return absl::StrCat(home != nullptr ? home : ".", "/.config/nasperf/", name);
}

std::string DefaultTokenPath() { return ConfigPath("token"); }

namespace {

absl::StatusOr<std::string> ReadTokenFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return ErrnoStatus(errno, absl::StrCat("token file ", path));
  std::stringstream text;
  text << in.rdbuf();
  std::string token(absl::StripAsciiWhitespace(text.str()));
  if (token.empty()) return absl::InvalidArgumentError(absl::StrCat("token file ", path, " is empty"));
  return token;
}

}  // namespace

absl::Status CreatePrivateFile(const std::string& path, absl::string_view content) {
  if (absl::Status s = MakeDirectories(path.substr(0, path.rfind('/')), 0700); !s.ok()) return s;
  // Written whole under a private name, then linked into place: two agents starting
  // at once never see a half-written file, and the loser of the link reads the
  // winner's (AlreadyExists).
  std::string draft = absl::StrCat(path, ".new-", RandomHex(4));
  Fd fd(::open(draft.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600));
  if (!fd.valid()) return ErrnoStatus(errno, absl::StrCat("create ", draft));
  absl::Status written = WriteAll(fd.get(), content.data(), content.size(), absl::StrCat("write ", draft));
  if (written.ok() && ::fsync(fd.get()) != 0) written = ErrnoStatus(errno, absl::StrCat("fsync ", draft));
  if (written.ok() && ::link(draft.c_str(), path.c_str()) != 0) {
    written = errno == EEXIST ? absl::AlreadyExistsError(path)
                              : ErrnoStatus(errno, absl::StrCat("link ", draft, " to ", path));
  }
  ::unlink(draft.c_str());
  return written;
}

absl::StatusOr<TokenSource> LoadToken(absl::string_view token_file, bool generate_if_missing) {
  const char* env = std::getenv("NASPERF_TOKEN");
  if (env != nullptr && *env != '\0') return TokenSource{env, "NASPERF_TOKEN", false};
  if (!token_file.empty()) {
    auto token = ReadTokenFile(std::string(token_file));
    if (!token.ok()) return token.status();
    return TokenSource{*token, std::string(token_file), false};
  }
  std::string path = DefaultTokenPath();
  if (::access(path.c_str(), F_OK) == 0) {
    auto token = ReadTokenFile(path);
    if (!token.ok()) return token.status();
    return TokenSource{*token, path, false};
  }
  if (!generate_if_missing) {
    return absl::NotFoundError(
        "no token: set NASPERF_TOKEN or pass --token-file (the receiver prints its token "
        "at first start)");
  }
  std::string token = RandomHex(16);
  if (absl::Status s = CreatePrivateFile(path, token + "\n"); !s.ok()) {
    if (!absl::IsAlreadyExists(s)) return s;
    auto theirs = ReadTokenFile(path);  // another agent generated it a moment ago
    if (!theirs.ok()) return theirs.status();
    return TokenSource{*theirs, path, false};
  }
  return TokenSource{token, path, true};
}

bool ConstantTimeEquals(absl::string_view a, absl::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

std::string NewRunId() {
  return absl::StrCat(absl::FormatTime("%Y%m%d-%H%M%S", absl::Now(), absl::UTCTimeZone()), "-", RandomHex(2));
}

}  // namespace nasperf
