// A many-files transfer's tally and row cells, for both ends that write a set of files
// (the receiver's target, a share's or a mounted directory's RemoteFsRun): files
// written whole, each one's create-to-close latency, the time in creates and closes,
// and from them files/s, latency percentiles and the files' own share of the time
// (the `metadata` verdict's figure). A tally is filled by one writer thread; the
// functions are pure.
#ifndef NASPERF_DATAPATH_FILE_SET_H_
#define NASPERF_DATAPATH_FILE_SET_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "proto/nasperf.pb.h"

namespace nasperf {

struct FileSetTally {
  uint64_t created = 0;            // the set's first `created` names exist (cleanup removes them)
  uint64_t dirs_created = 0;       // --files-per-dir: the set's first `dirs_created` directories exist
  uint64_t whole = 0;              // closed, and synced as asked, whole
  int64_t metadata_ns = 0;         // in creates and closes (a file's fsync is counted apart)
  int64_t sync_ns = 0;             // in fsyncs: the file's bytes and its metadata, together
  std::vector<double> latency_s;   // each whole file's create to close, in the set's order
  std::vector<int64_t> closed_ns;  // each whole file's close (monotonic), in the set's order
};

// The files' own work took at least this share of the timed span: the verdict is
// `metadata` where the writing end can tell its file system's time from the network's.
inline constexpr double kMetadataVerdictPct = 50;

// The name of file `index` (0-based) of a set a transfer writes as `name`
// ("nasperf-R-I-S.dat" -> "nasperf-R-I-S-000001.dat"); `name` may be a path.
std::string SetFileName(const std::string& name, uint64_t index);

// With --files-per-dir K (K > 0), file `index` goes into directory index / K of the set,
// beside where `name` would be: SetDirName(name, 0) is "nasperf-R-I-S-d000001" (a path
// when `name` is), and SetFilePath "nasperf-R-I-S-d000001/nasperf-R-I-S-000001.dat". K 0:
// SetFilePath is SetFileName.
std::string SetDirName(const std::string& name, uint64_t dir_index);
std::string SetFilePath(const std::string& name, uint64_t index, uint64_t files_per_dir);

// The seconds each file cost whatever its size: the intercept of the least-squares line
// through (size, create-to-close) of the whole files, within 0..their mean. An fsync's
// time is its file's bytes and its metadata together; the line tells them apart where
// the sizes differ. nullopt when they hardly do (under 2x apart) or there are under 3.
std::optional<double> FixedCostPerFile(const std::vector<uint64_t>& sizes, const std::vector<double>& latency_s);

// The row's cells of a set of `sizes` timed from first_byte_ns to end_ns (monotonic):
// files, files_per_s, file_p50_s..file_max_s, metadata_pct (the fixed cost per file
// times the files, or with one size the creates and closes alone), and each of the
// row's samples (already in it, timed from first_byte_ns) the files closed in it: files
// over time. Closes after the last sample get samples of no bytes, an interval each, to
// the last close, so the samples sum to files.
void RecordFileSet(const FileSetTally& tally, const std::vector<uint64_t>& sizes, int64_t first_byte_ns, int64_t end_ns,
                   proto::TransferReport& row);

}  // namespace nasperf

#endif  // NASPERF_DATAPATH_FILE_SET_H_
