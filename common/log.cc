#include "common/log.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/clock.h"

namespace nasperf {
namespace {
std::atomic<int> g_level{static_cast<int>(LogLevel::kInfo)};

bool Continuation(absl::string_view text, size_t at, unsigned char low = 0x80, unsigned char high = 0xbf) {
  if (at >= text.size()) return false;
  const unsigned char c = static_cast<unsigned char>(text[at]);
  return c >= low && c <= high;
}

// The length (2 to 4) of the well-formed UTF-8 sequence at text[i], with its code
// point; 0 when the bytes there are not one (a stray byte, an overlong form, a
// surrogate, past U+10FFFF). The second byte's range is RFC 3629's table.
size_t Utf8Length(absl::string_view text, size_t i, uint32_t* code_point) {
  const unsigned char c = static_cast<unsigned char>(text[i]);
  size_t n = 0;
  unsigned char low = 0x80, high = 0xbf;
  if (c >= 0xc2 && c <= 0xdf) {
    n = 2;
  } else if (c >= 0xe0 && c <= 0xef) {
    n = 3;
    if (c == 0xe0) low = 0xa0;
    if (c == 0xed) high = 0x9f;
  } else if (c >= 0xf0 && c <= 0xf4) {
    n = 4;
    if (c == 0xf0) low = 0x90;
    if (c == 0xf4) high = 0x8f;
  } else {
    return 0;
  }
  if (!Continuation(text, i + 1, low, high)) return 0;
  uint32_t cp = c & (0xff >> (n + 1));
  for (size_t k = 1; k < n; ++k) {
    if (k > 1 && !Continuation(text, i + k)) return 0;
    cp = cp << 6 | (static_cast<unsigned char>(text[i + k]) & 0x3f);
  }
  *code_point = cp;
  return n;
}

// Code points that drive a terminal (C1: CSI, OSC, ...) or hide what the text says
// (bidi overrides and isolates, line and paragraph separators).
bool Invisible(uint32_t cp) {
  return (cp >= 0x80 && cp <= 0x9f) || cp == 0x200e || cp == 0x200f || (cp >= 0x2028 && cp <= 0x202e) ||
         (cp >= 0x2066 && cp <= 0x2069);
}
}  // namespace

void SetLogLevel(LogLevel level) { g_level.store(static_cast<int>(level)); }

bool LogEnabled(LogLevel level) { return static_cast<int>(level) >= g_level.load(); }

void LogLine(LogLevel level, absl::string_view component, absl::string_view message) {
  absl::string_view tag = level == LogLevel::kWarning ? "warning: " : level == LogLevel::kError ? "error: " : "";
  std::string line = absl::StrCat("nasperf ", component, ": ", tag, TerminalSafe(message), "\n");
  // One write per line: stderr is unbuffered and shared by threads.
  size_t done = 0;
  while (done < line.size()) {
    ssize_t n = ::write(STDERR_FILENO, line.data() + done, line.size() - done);
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
}

std::string TerminalSafe(absl::string_view text, bool keep_newlines) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if ((c >= 0x20 && c < 0x7f) || (c == '\n' && keep_newlines)) {
      out += static_cast<char>(c);
      ++i;
      continue;
    }
    uint32_t code_point = 0;
    const size_t n = c >= 0x80 ? Utf8Length(text, i, &code_point) : 0;
    if (n > 0 && !Invisible(code_point)) {
      out.append(text.data() + i, n);
    } else {
      for (size_t k = 0; k < std::max<size_t>(n, 1); ++k) {
        absl::StrAppendFormat(&out, "\\x%02x", static_cast<unsigned char>(text[i + k]));
      }
    }
    i += std::max<size_t>(n, 1);
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
