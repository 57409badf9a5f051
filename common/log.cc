#include "common/log.h"

#include <unistd.h>

#include <atomic>

#include "absl/strings/str_cat.h"

namespace nasperf {
namespace {
std::atomic<int> g_level{static_cast<int>(LogLevel::kInfo)};
}  // namespace

void SetLogLevel(LogLevel level) { g_level.store(static_cast<int>(level)); }

bool LogEnabled(LogLevel level) { return static_cast<int>(level) >= g_level.load(); }

void LogLine(LogLevel level, absl::string_view component, absl::string_view message) {
  absl::string_view tag = level == LogLevel::kWarning ? "warning: "
                          : level == LogLevel::kError ? "error: "
                                                      : "";
  std::string line = absl::StrCat("nasperf ", component, ": ", tag, message, "\n");
  // One write per line: stderr is unbuffered and shared by threads.
  size_t done = 0;
  while (done < line.size()) {
    ssize_t n = ::write(STDERR_FILENO, line.data() + done, line.size() - done);
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
}

}  // namespace nasperf
