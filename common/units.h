// Human units on the command line and in console output: sizes ("45GiB", "4G",
// "512MiB", "1.5TB"), durations ("30s", "1m30s", "250ms", bare seconds) and decimal
// MB/s (10^6 bytes/s, as dd and NAS vendors print it). Pure functions, thread-safe.
#ifndef NASPERF_COMMON_UNITS_H_
#define NASPERF_COMMON_UNITS_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace nasperf {

// K, M, G, T (and KiB..TiB) are powers of 1024 like dd, fio and iperf3; KB, MB, GB,
// TB are powers of 1000. A bare number is bytes. Fractions are allowed ("1.5G").
absl::StatusOr<uint64_t> ParseSize(absl::string_view text);

// "30s", "1m30s", "250ms", "2h"; a bare number is seconds. Must not be negative.
absl::StatusOr<absl::Duration> ParseDuration(absl::string_view text);

// A link speed in Mbit/s: "10gbit", "2.5Gbit/s", "1000mbit", "100M"; a bare number
// is Mbit/s. Decimal units, as links are sold.
absl::StatusOr<uint32_t> ParseLinkSpeed(absl::string_view text);

// 1536 -> "1.5 KiB"; binary units, three significant digits.
std::string FormatSize(uint64_t bytes);

// Decimal megabytes per second; 0 when the duration is not positive.
double MegabytesPerSecond(uint64_t bytes, double seconds);
// part as a percentage of whole; 0 when whole is not positive.
double Pct(int64_t part, int64_t whole);

}  // namespace nasperf

#endif  // NASPERF_COMMON_UNITS_H_
