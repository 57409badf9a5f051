// The cache cliff inside one transfer (docs/DESIGN.md §6, measurement semantics): a
// fast part that a cache absorbed (RAM dirty pages, ZFS dirty data, an SSD's SLC cache,
// a cache pool), then what the disks sustained, as real pools draw it: a clean cliff, a
// ramp down (Linux's dirty throttling), a sawtooth (transaction groups) or stalls with
// catch-up bursts; and the stalls themselves. Found on the writing end's interval
// samples; noise, a short stall or a slow start never make a knee. Pure functions:
// thread-safe.
#ifndef NASPERF_MEASURE_CACHE_KNEE_H_
#define NASPERF_MEASURE_CACHE_KNEE_H_

#include <cstdint>
#include <optional>
#include <string>

#include "common/policy.h"
#include "google/protobuf/repeated_field.h"
#include "proto/nasperf.pb.h"

namespace nasperf {

struct CacheKnee {
  double burst_mb_per_s = 0;  // from the first byte to the knee, the ramp included
  // What the cache held at the knee: the bytes taken by then less what the disks wrote at
  // their sustained rate since the cache was half full. About the cache's size.
  uint64_t burst_bytes = 0;
  double sustained_mb_per_s = 0;  // from the knee to the last byte: stalls and catch-ups averaged in
  double knee_s = 0;              // seconds since the first byte
  CacheShape shape = CacheShape::kCliff;
};

struct KneeRules {
  // Before the knee, the ramp included: one, since a 128 MiB cache fills within one 100 ms
  // sample at 10 Gb/s (min_burst_seconds keeps a short first gulp out).
  int min_burst_samples = 1;
  int min_sustained_samples = 3;     // after it, slow ones
  double max_sustained_share = 0.6;  // sustained at most this share of the cache's gulp
  // The cache took at least this many seconds of the sustained rate beyond it: a
  // socket buffer's or a blk-throttle's first gulp is not a cache.
  double min_burst_seconds = 0.5;
  // The knee is where the bytes taken beyond the sustained rate first come within this
  // share of the most they reach from there on (what follows, stalls and catch-ups, a
  // sawtooth, a blk-throttle's first gulp, stays under it; loose, since the next rule
  // finds the end of the ramp) ...
  double plateau_share = 0.35;
  // ... and then on as long as the next half second ran this much faster than the
  // sustained rate, or added this share to what the cache took: the rest of the gulp,
  // and the ramp.
  double ramp_rate_share = 1.5;
  double ramp_gain_share = 0.1;
  // After the knee, the first half of the time no more than this share faster than the
  // second: else the drop had not held yet, and the knee moves to where the time after
  // it levelled off (within tail_plateau_share).
  double tail_drop_share = 0.15;
  double tail_plateau_share = 0.1;
  // ... as long as this share of the time after the gulp stays after the knee.
  double min_tail_share = 1.0 / 3;
  // The drop held: at least this share of the time after the knee, and
  // min_sustained_samples samples, went at under the midpoint of the cache's gulp and the
  // sustained rate (not a slow spell in a fast write).
  double min_slow_share = 2.0 / 3;
  // Stalls: spells of at least min_stall_s below stall_share of the sustained rate.
  double min_stall_s = 1.0;
  double stall_share = 0.1;
};

// The knee in `samples` (a transfer's, in order), when there is one by `rules`.
// Samples with a non-positive or non-finite interval are not used; more than
// 100,000 samples (a report holds at most 65,536) give none.
std::optional<CacheKnee> FindCacheKnee(const google::protobuf::RepeatedPtrField<proto::Sample>& samples,
                                       const KneeRules& rules = {});

struct Stalls {
  uint32_t count = 0;
  double longest_s = 0;
};
// The spells without progress in `samples`: at least rules.min_stall_s in which the rate
// stayed under rules.stall_share of `reference_mb_per_s` (what the disks sustained, or
// the transfer's mean), the slow parts of the samples around each spell included.
Stalls FindStalls(const google::protobuf::RepeatedPtrField<proto::Sample>& samples, double reference_mb_per_s,
                  const KneeRules& rules = {});

// Sets the row's burst_*, sustained_mb_per_s and cache_shape (when its samples have a
// knee) and its stall_count and longest_stall_s (when it has samples).
void AddCacheFigures(proto::TransferReport& row);
// Takes the knee's cells out of a row whose target has no disks behind a cache (tmpfs,
// ramfs): a slowdown there is memory's (page allocation, reclaim), never a cliff.
void ClearCacheKnee(proto::TransferReport& row);

// The knee a row's burst_*, sustained_mb_per_s, cache_shape and knee_s cells state, when set.
std::optional<CacheKnee> KneeOfRow(const proto::TransferReport& row);

// "the NAS took 1.9 GiB at 1,210 MB/s, then its disks sustained 61 MB/s (a ramp)".
std::string DescribeKnee(const CacheKnee& knee);
// "" without stalls, else "its longest stall 6.5 s (2 stalls of 1 s or more)".
std::string DescribeStalls(const proto::TransferReport& row);

}  // namespace nasperf

#endif  // NASPERF_MEASURE_CACHE_KNEE_H_
