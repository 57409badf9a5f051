// A tiny leveled logger to stderr (Abseil 20220623 has no absl/log). Lines are
// "nasperf <component>: message"; each line is written with one call, so lines from
// several threads never interleave, and control characters in it (a peer's host
// name or error, say) are shown as escapes (TerminalSafe) so no peer can drive the
// terminal.
// A LogThrottle keeps a flood of one kind of line down. Thread-safe.
#ifndef NASPERF_COMMON_LOG_H_
#define NASPERF_COMMON_LOG_H_

#include <cstdint>
#include <functional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"

namespace nasperf {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarning = 2, kError = 3 };

// Where a unit says a line to the user (the console of the command that runs it).
using ConsoleLine = std::function<void(const std::string&)>;

void SetLogLevel(LogLevel level);
bool LogEnabled(LogLevel level);
void LogLine(LogLevel level, absl::string_view component, absl::string_view message);

template <typename... Args>
void Log(LogLevel level, absl::string_view component, const absl::FormatSpec<Args...>& format, const Args&... args) {
  if (LogEnabled(level)) LogLine(level, component, absl::StrFormat(format, args...));
}

// The one sanitizer for text a peer or a file supplied on its way to a terminal: C0
// controls (ESC, so every escape sequence; newlines, CR, DEL), C1 controls (U+0080 to
// U+009F), the invisible bidi and line-separator marks, and bytes that are not valid
// UTF-8 become visible escapes ("\x1b", one per byte); printable ASCII and other valid
// UTF-8 stay as they are. keep_newlines: '\n' stays, for multi-line output (a report).
std::string TerminalSafe(absl::string_view text, bool keep_newlines = false);

// At most `lines` let through per `window_s` seconds; the rest are counted and the
// count is told with the next line let through (see Held()).
class LogThrottle {
 public:
  LogThrottle(int lines, double window_s);
  // True when this line may be logged; then *held is the number held back since
  // the last line let through.
  bool Allow(uint64_t* held);
  // " (N similar lines not logged)", or "" for 0.
  static std::string Held(uint64_t held);

 private:
  const int lines_;
  const int64_t window_ns_;
  absl::Mutex mu_;
  int64_t window_start_ns_ ABSL_GUARDED_BY(mu_) = 0;
  int used_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t held_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace nasperf

#endif  // NASPERF_COMMON_LOG_H_
