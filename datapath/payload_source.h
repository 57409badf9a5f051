// The bytes of one transfer, wherever they come from: generated (common/payload.h)
// or a file. Every transport reads them the same way (datapath/push_loop.h). One
// source per transfer; used from that transfer's thread only.
#ifndef NASPERF_DATAPATH_PAYLOAD_SOURCE_H_
#define NASPERF_DATAPATH_PAYLOAD_SOURCE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "common/fd.h"
#include "common/file_set.h"
#include "common/payload.h"

namespace nasperf {

class PayloadSource {
 public:
  // The most Chunk() hands out at once; offsets are multiples of it.
  static constexpr size_t kChunk = PatternSource::kChunk;
  virtual ~PayloadSource() = default;
  // The bytes at [offset, offset + size), size <= kChunk; valid until the next call.
  virtual absl::StatusOr<const uint8_t*> Chunk(uint64_t offset, size_t size) = 0;
  // A descriptor a zero-copy writer can read from at the same offsets, or -1.
  virtual int file_fd() const { return -1; }
};

std::unique_ptr<PayloadSource> GeneratedSource(Pattern pattern, uint64_t seed);
// The file for one transfer, on its own descriptor (streams run in parallel): a dup
// of `opened` when the file was opened once where it was checked (an agent's
// --allow-source, RunOptions::file_fd), else a fresh open of path.
absl::StatusOr<std::unique_ptr<PayloadSource>> FileSource(const std::string& path, const Fd* opened = nullptr);
// A file already opened (by the NAS agent, inside its target); `path` names it in errors.
// `direct`: fd has O_DIRECT (ReadPastCache), so reads go in whole blocks and never splice.
std::unique_ptr<PayloadSource> FileSource(Fd fd, const std::string& path, bool direct);

// A --tree's files one after another, each file's bytes (its walked size) in the walk's
// order, for one transfer: asked for in order from offset 0 (the push loop's contract).
// Each file is opened beneath `dir` following no link (OpenBeneath) and must still be
// the one the walk sized: same device, inode and size, else the transfer fails naming
// it. One file is open at a time.
absl::StatusOr<std::unique_ptr<PayloadSource>> TreeSource(const std::string& dir,
                                                          std::shared_ptr<const std::vector<TreeFile>> files);

// What a quick look at a --file source found, before any timed run: how much of its
// first part is in the page cache and, when little is, how fast its disk gave that
// part (read with O_DIRECT where the file system allows, so the look does not warm
// the cache; at most kProbeBytes and about kProbeTime).
struct SourceProbe {
  double resident_pct = 0;              // of the first part's pages
  std::optional<double> disk_mb_per_s;  // measured only when under half was cached
};
inline constexpr uint64_t kProbeBytes = 32ULL << 20;
absl::StatusOr<SourceProbe> ProbeSource(const std::string& path, const Fd* opened = nullptr);

// One line when the probe says the source may set the pace: not cached, and its
// disk slower than the path's TCP ceiling. Empty otherwise.
std::string SlowSourceWarning(const std::string& path, const SourceProbe& probe, double ceiling_mb_per_s);

}  // namespace nasperf

#endif  // NASPERF_DATAPATH_PAYLOAD_SOURCE_H_
