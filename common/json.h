// JSON text for what nasperf prints as JSON (report --json, the collector's live page):
// strings escaped so that no control character reaches a terminal or a parser. Pure
// functions; thread-safe.
#ifndef NASPERF_COMMON_JSON_H_
#define NASPERF_COMMON_JSON_H_

#include <string>

#include "absl/strings/string_view.h"

namespace nasperf {

// A JSON string literal, quotes included: ", \ and every C0/C1 control escaped.
std::string JsonString(absl::string_view s);
// A number, or null when it is not finite (JSON has no NaN or infinity).
std::string JsonNumber(double v);

}  // namespace nasperf

#endif  // NASPERF_COMMON_JSON_H_
