#include "common/log.h"

#include <unistd.h>

#include <atomic>

#include "absl/strings/str_cat.h"
#include "common/clock.h"

namespace nasperf {
namespace {
std::atomic<int> g_level{static_cast<int>(LogLevel::kInfo)};
}  // namespace

void SetLogLevel(LogLevel level) { g_level.store(static_cast<int>(level)); }

bool LogEnabled(LogLevel level) { return static_cast<int>(level) >= g_level.load(); }

void LogLine(LogLevel level, absl::string_view component, absl::string_view message) {
  absl::string_view tag = level == LogLevel::kWarning ? "warning: " : level == LogLevel::kError ? "error: " : "";
  std::string line = absl::StrCat("nasperf ", component, ": ", tag, Printable(message), "\n");
  // One write per line: stderr is unbuffered and shared by threads.
  size_t done = 0;
  while (done < line.size()) {
    ssize_t n = ::write(STDERR_FILENO, line.data() + done, line.size() - done);
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
}

std::string Printable(absl::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 || c == 0x7f) {
      out += '?';
    } else if (c == 0xc2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) >= 0x80 &&
               static_cast<unsigned char>(text[i + 1]) <= 0x9f) {
      out += '?';  // U+0080..U+009F: CSI and friends for terminals that read C1
      ++i;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

LogThrottle::LogThrottle(int lines, double window_s)
    : lines_(lines), window_ns_(static_cast<int64_t>(window_s * 1e9)) {}

bool LogThrottle::Allow(uint64_t* held) {
  absl::MutexLock lock(&mu_);
  const int64_t now = MonoNanos();
  if (window_start_ns_ == 0 || now - window_start_ns_ >= window_ns_) {
    window_start_ns_ = now;
    used_ = 0;
  }
  if (used_ >= lines_) {
    ++held_;
    return false;
  }
  ++used_;
  *held = held_;
  held_ = 0;
  return true;
}

std::string LogThrottle::Held(uint64_t held) {
  return held == 0 ? "" : absl::StrCat(" (", held, " similar line", held == 1 ? "" : "s", " not logged)");
}

}  // namespace nasperf
