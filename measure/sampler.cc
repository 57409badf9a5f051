#include "measure/sampler.h"

namespace nasperf {

IntervalSampler::IntervalSampler(double interval_s, int64_t start_ns)
    : interval_ns_(static_cast<int64_t>(interval_s * 1e9)),
      start_ns_(start_ns),
      last_ns_(start_ns),
      next_ns_(start_ns + interval_ns_) {}

void IntervalSampler::Close(int64_t now_ns) {
  samples_.push_back(
      {static_cast<double>(now_ns - start_ns_) / 1e9, pending_, static_cast<double>(now_ns - last_ns_) / 1e9});
  pending_ = 0;
  last_ns_ = now_ns;
  if (samples_.size() >= kMaxSamples) HalveResolution();
  // Skip boundaries that a long stall jumped over: one sample covers the stall.
  while (next_ns_ <= now_ns) next_ns_ += interval_ns_;
}

void IntervalSampler::HalveResolution() {
  std::vector<IntervalSample> merged;
  merged.reserve(samples_.size() / 2 + 1);
  for (size_t i = 0; i < samples_.size(); i += 2) {
    IntervalSample s = samples_[i];
    if (i + 1 < samples_.size()) {
      s.t_s = samples_[i + 1].t_s;
      s.bytes += samples_[i + 1].bytes;
      s.interval_s += samples_[i + 1].interval_s;
    }
    merged.push_back(s);
  }
  samples_ = std::move(merged);
  interval_ns_ *= 2;
}

void IntervalSampler::Finish(int64_t now_ns) {
  if (interval_ns_ <= 0 || (pending_ == 0 && now_ns <= last_ns_)) return;
  // A last sliver of an interval would plot as a rate over a few milliseconds (bytes
  // drained from buffers look like a spike): it joins the sample before it.
  if (!samples_.empty() && now_ns - last_ns_ < interval_ns_ / 2) {
    IntervalSample& last = samples_.back();
    last.t_s = static_cast<double>(now_ns - start_ns_) / 1e9;
    last.bytes += pending_;
    last.interval_s += static_cast<double>(now_ns - last_ns_) / 1e9;
    pending_ = 0;
    last_ns_ = now_ns;
    return;
  }
  Close(now_ns);
}

void AddSamples(const std::vector<IntervalSample>& samples, proto::TransferReport* row) {
  for (const IntervalSample& s : samples) {
    proto::Sample* out = row->add_samples();
    out->set_t_s(s.t_s);
    out->set_bytes(s.bytes);
    out->set_interval_s(s.interval_s);
  }
}

}  // namespace nasperf
