// A file's pages in the kernel's page cache, for reads with the cache state under
// control (docs/DESIGN.md §6, measurement semantics: Reads): how much of a file is resident (mincore), out
// of the cache for that file alone (written data synced, then dropped: no global
// drop_caches), read through once to warm it, read past it (O_DIRECT), and whether the
// file system caches in the page cache at all (ZFS keeps its own, the ARC). Stateless;
// thread-safe.
#ifndef NASPERF_MEASURE_PAGE_CACHE_H_
#define NASPERF_MEASURE_PAGE_CACHE_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/policy.h"

namespace nasperf {

// The share of [0, length) of fd's pages in the page cache; 100 for length 0.
absl::StatusOr<double> ResidentPct(int fd, uint64_t length, const std::string& path);

// Syncs fd's written data, then asks the kernel to drop its cached pages. Pages
// another process has mapped and locked can stay: check with ResidentPct.
absl::Status DropCachedPages(int fd, const std::string& path);

// Reads [0, length) once, so its pages are cached (untimed: a warm run's preparation).
absl::Status ReadThrough(int fd, uint64_t length, const std::string& path);

// Switches fd to O_DIRECT: its reads then bypass the page cache (--read-mode direct).
// FAILED_PRECONDITION, in words a user can act on, where the file system refuses.
absl::Status ReadPastCache(int fd, const std::string& path);

// Empty when the promised cold read is cold; else one line why it may not be, and what
// to do. Buffered: dropping pages empties no ZFS ARC. Direct: ZFS before 2.3 takes
// O_DIRECT but reads through the ARC (the loaded module's version decides).
std::string ColdCacheCaveat(int fd, ReadMode mode);
// A ZFS module version ("2.3.0-1", "2.2.7-1~bpo12+1") that honours O_DIRECT: 2.3 on.
bool ZfsHonoursDirectIo(absl::string_view module_version);

}  // namespace nasperf

#endif  // NASPERF_MEASURE_PAGE_CACHE_H_
