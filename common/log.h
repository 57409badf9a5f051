// A tiny leveled logger to stderr (Abseil 20220623 has no absl/log). Lines are
// "nasperf <component>: message"; each line is written with one call, so lines from
// several threads never interleave. Thread-safe.
#ifndef NASPERF_COMMON_LOG_H_
#define NASPERF_COMMON_LOG_H_

#include <string>

#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"

namespace nasperf {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarning = 2, kError = 3 };

void SetLogLevel(LogLevel level);
bool LogEnabled(LogLevel level);
void LogLine(LogLevel level, absl::string_view component, absl::string_view message);

template <typename... Args>
void Log(LogLevel level, absl::string_view component,
         const absl::FormatSpec<Args...>& format, const Args&... args) {
  if (LogEnabled(level)) LogLine(level, component, absl::StrFormat(format, args...));
}

}  // namespace nasperf

#endif  // NASPERF_COMMON_LOG_H_
