#include "common/units.h"

#include <cmath>
#include <cstdlib>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace nasperf {

absl::StatusOr<uint64_t> ParseSize(absl::string_view text) {
  std::string s = absl::AsciiStrToLower(absl::StripAsciiWhitespace(text));
  size_t digits = 0;
  while (digits < s.size() && (absl::ascii_isdigit(s[digits]) || s[digits] == '.')) ++digits;
  double number = 0;
  if (digits == 0 || !absl::SimpleAtod(s.substr(0, digits), &number) || number < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid size \"", text, "\" (expected e.g. 45GiB, 4G, 512MiB, 1TB)"));
  }
  std::string suffix = s.substr(digits);
  double multiplier = 0;
  if (suffix.empty() || suffix == "b")
    multiplier = 1;
  else if (suffix == "k" || suffix == "kib")
    multiplier = 1024.0;
  else if (suffix == "m" || suffix == "mib")
    multiplier = 1024.0 * 1024;
  else if (suffix == "g" || suffix == "gib")
    multiplier = 1024.0 * 1024 * 1024;
  else if (suffix == "t" || suffix == "tib")
    multiplier = 1024.0 * 1024 * 1024 * 1024;
  else if (suffix == "kb")
    multiplier = 1e3;
  else if (suffix == "mb")
    multiplier = 1e6;
  else if (suffix == "gb")
    multiplier = 1e9;
  else if (suffix == "tb")
    multiplier = 1e12;
  if (multiplier == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid size \"", text, "\": unknown unit \"", suffix,
                     "\" (use B, K/KiB, M/MiB, G/GiB, T/TiB for 1024s or KB, MB, GB, TB for 1000s)"));
  }
  double bytes = std::round(number * multiplier);
  if (bytes >= 18446744073709551615.0) {
    return absl::InvalidArgumentError(absl::StrCat("size \"", text, "\" is too large"));
  }
  return static_cast<uint64_t>(bytes);
}

absl::StatusOr<absl::Duration> ParseDuration(absl::string_view text) {
  std::string s(absl::StripAsciiWhitespace(text));
  double seconds = 0;
  absl::Duration d;
  if (absl::SimpleAtod(s, &seconds) && std::isfinite(seconds)) {
    d = absl::Seconds(seconds);
  } else if (!absl::ParseDuration(s, &d) || d == absl::InfiniteDuration()) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid duration \"", text, "\" (expected e.g. 30s, 1m30s, 250ms)"));
  }
  if (d < absl::ZeroDuration()) {
    return absl::InvalidArgumentError(absl::StrCat("duration \"", text, "\" is negative"));
  }
  return d;
}

absl::StatusOr<uint32_t> ParseLinkSpeed(absl::string_view text) {
  std::string s = absl::AsciiStrToLower(absl::StripAsciiWhitespace(text));
  if (absl::EndsWith(s, "/s")) s.resize(s.size() - 2);
  if (absl::EndsWith(s, "bit")) s.resize(s.size() - 3);
  if (absl::EndsWith(s, "bps")) s.resize(s.size() - 3);
  double multiplier = 1;  // Mbit/s
  if (!s.empty() && (s.back() == 'g' || s.back() == 'm' || s.back() == 'k')) {
    multiplier = s.back() == 'g' ? 1000 : s.back() == 'm' ? 1 : 0.001;
    s.pop_back();
  }
  double value = 0;
  if (!absl::SimpleAtod(s, &value) || !(value > 0) || value * multiplier < 1 || value * multiplier > 1e7) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid link speed \"", text, "\" (expected e.g. 10gbit, 2.5gbit, 1000mbit)"));
  }
  return static_cast<uint32_t>(std::round(value * multiplier));
}

std::string FormatSize(uint64_t bytes) {
  static const char* const kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024 && unit < 5) {
    value /= 1024;
    ++unit;
  }
  if (unit == 0) return absl::StrCat(bytes, " B");
  return absl::StrFormat("%.*f %s", value >= 100 ? 0 : (value >= 10 ? 1 : 2), value, kUnits[unit]);
}

double MegabytesPerSecond(uint64_t bytes, double seconds) {
  return seconds > 0 ? static_cast<double>(bytes) / seconds / 1e6 : 0;
}

double Pct(int64_t part, int64_t whole) {
  return whole > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0;
}

}  // namespace nasperf
