// The cache cliff inside one transfer (docs/DESIGN.md §6, measurement semantics):
// a fast part that a cache absorbed (RAM dirty pages, ZFS dirty data, an SSD's SLC
// cache, a cache pool) followed by a sustained, much slower part the disks set.
// Found on the writing end's interval samples as a change point of the cumulative
// bytes; noise, a short stall or a slow start never make one. Pure functions:
// thread-safe.
#ifndef NASPERF_MEASURE_CACHE_KNEE_H_
#define NASPERF_MEASURE_CACHE_KNEE_H_

#include <cstdint>
#include <optional>
#include <string>

#include "google/protobuf/repeated_field.h"
#include "proto/nasperf.pb.h"

namespace nasperf {

struct CacheKnee {
  double burst_mb_per_s = 0;      // from the first sample to the knee
  uint64_t burst_bytes = 0;       // what arrived before the knee: about the cache's size
  double sustained_mb_per_s = 0;  // from the knee to the last sample
  double knee_s = 0;              // the knee, seconds since the transfer's first byte
};

struct KneeRules {
  int min_samples = 3;               // on each side of the knee, and on its side of the midpoint
  double max_sustained_share = 0.6;  // sustained at most this share of the burst rate
  // Of each side's time at least this share lies on its side of the midpoint
  // between both rates: a drop that holds, not two slow samples in a fast run. Half,
  // since the kernel's dirty throttling hands over from the page cache to the disk
  // over half a second, so samples near the knee fall on either side.
  double min_consistent_share = 0.5;
  // The two-part fit must leave at most this share of a single line's squared error.
  double max_fit_error_share = 0.25;
  // Splits whose squared error is within this factor of the best drop's fit equally
  // well; of those, the knee is the split whose sides keep to their rates best.
  double near_fit_factor = 1.25;
};

// The knee in `samples` (a transfer's, in order), when there is one by `rules`.
// Samples with a non-positive or non-finite interval are not used; more than
// 100,000 samples (a report holds at most 65,536) give none.
std::optional<CacheKnee> FindCacheKnee(const google::protobuf::RepeatedPtrField<proto::Sample>& samples,
                                       const KneeRules& rules = {});

// The knee a row's burst_* and sustained_mb_per_s cells state, when they are set.
std::optional<CacheKnee> KneeOfRow(const proto::TransferReport& row);

// "the NAS took 1.9 GiB at 1,210 MB/s, then its disks sustained 61 MB/s".
std::string DescribeKnee(const CacheKnee& knee);

}  // namespace nasperf

#endif  // NASPERF_MEASURE_CACHE_KNEE_H_
