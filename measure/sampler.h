// Per-interval byte counts (docs/DESIGN.md §6, measurement semantics: Samples; the
// sustained-write cliff must be visible, not averaged away). The data path calls Add() after each block; a sample
// closes at the first Add() past each interval boundary, so samples carry their real
// length and nothing runs beside the data path. One instance per transfer and thread.
#ifndef NASPERF_MEASURE_SAMPLER_H_
#define NASPERF_MEASURE_SAMPLER_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "proto/nasperf.pb.h"
#include "wire/validate.h"

namespace nasperf {

struct IntervalSample {
  double t_s = 0;  // end of the interval, seconds since start
  uint64_t bytes = 0;
  double interval_s = 0;  // real length of the interval
};

// A transfer's samples into its row (the samples.csv lines), as either end saw them.
void AddSamples(const std::vector<IntervalSample>& samples, proto::TransferReport* row);

class IntervalSampler {
 public:
  // A transfer keeps at most this many samples (under 3 MB in a report, with the NAS's
  // device cells: wire/validate.h): past it, neighbours merge pairwise and the
  // interval doubles, so a long transfer keeps its whole timeline at a coarser grain
  // and every byte stays counted (at 1 s, 4.5 hours before the first merge).
  static constexpr size_t kMaxSamples = 16384;
  static_assert(kMaxSamples == static_cast<size_t>(kMaxSamplesPerReport), "the collector takes what a sampler keeps");
  // interval_s <= 0 disables sampling.
  IntervalSampler(double interval_s, int64_t start_ns);
  void Add(uint64_t bytes, int64_t now_ns) {
    pending_ += bytes;
    if (interval_ns_ > 0 && now_ns >= next_ns_) Close(now_ns);
  }
  // True when an Add() at now_ns would close a sample: the moment to take a reading
  // that is too costly for every block.
  bool Due(int64_t now_ns) const { return interval_ns_ > 0 && now_ns >= next_ns_; }
  // Closes the last, partial interval; one shorter than half an interval is merged
  // into the sample before it.
  void Finish(int64_t now_ns);
  const std::vector<IntervalSample>& samples() const { return samples_; }

 private:
  void Close(int64_t now_ns);
  void HalveResolution();

  int64_t interval_ns_;
  int64_t start_ns_;
  int64_t last_ns_;
  int64_t next_ns_;
  uint64_t pending_ = 0;
  std::vector<IntervalSample> samples_;
};

}  // namespace nasperf

#endif  // NASPERF_MEASURE_SAMPLER_H_
