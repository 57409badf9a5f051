#include "datapath/file_set.h"

#include <algorithm>
#include <cstddef>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/stats.h"
#include "wire/validate.h"

namespace nasperf {

namespace {

std::string Stem(const std::string& name) {
  return absl::EndsWith(name, ".dat") ? name.substr(0, name.size() - 4) : name;
}

}  // namespace

std::string SetFileName(const std::string& name, uint64_t index) {
  return absl::StrFormat("%s-%06d.dat", Stem(name), index + 1);
}

std::string SetDirName(const std::string& name, uint64_t dir_index) {
  return absl::StrFormat("%s-d%06d", Stem(name), dir_index + 1);
}

std::string SetFilePath(const std::string& name, uint64_t index, uint64_t files_per_dir) {
  std::string file = SetFileName(name, index);
  if (files_per_dir == 0) return file;
  const size_t slash = file.rfind('/');
  return absl::StrCat(SetDirName(name, index / files_per_dir), "/",
                      slash == std::string::npos ? file : file.substr(slash + 1));
}

std::optional<double> FixedCostPerFile(const std::vector<uint64_t>& sizes, const std::vector<double>& latency_s) {
  const size_t n = std::min(sizes.size(), latency_s.size());
  if (n < 3) return std::nullopt;
  const auto [low, high] = std::minmax_element(sizes.begin(), sizes.begin() + static_cast<ptrdiff_t>(n));
  if (*high < 2 * *low) return std::nullopt;
  double mean_size = 0, mean_latency = 0;
  for (size_t i = 0; i < n; ++i) {
    mean_size += static_cast<double>(sizes[i]) / static_cast<double>(n);
    mean_latency += latency_s[i] / static_cast<double>(n);
  }
  double covariance = 0, variance = 0;
  for (size_t i = 0; i < n; ++i) {
    const double ds = static_cast<double>(sizes[i]) - mean_size;
    covariance += ds * (latency_s[i] - mean_latency);
    variance += ds * ds;
  }
  const double per_byte = std::max(0.0, covariance / variance);
  return std::clamp(mean_latency - per_byte * mean_size, 0.0, mean_latency);
}

namespace {

// Closes after the last sample (a receiver's samples are its arrivals, which end while
// the files' fsyncs still run): samples of no bytes, an interval each, carry them on to
// the last close, so files over time shows the tail as it was.
void ExtendSamplesToLastClose(const std::vector<int64_t>& closed_ns, int64_t first_byte_ns,
                              proto::TransferReport& row) {
  const double last_close_s = static_cast<double>(closed_ns.back() - first_byte_ns) / 1e9;
  const double interval_s = row.samples(row.samples_size() - 1).interval_s();
  if (!(interval_s > 0)) return;
  double end_s = row.samples(row.samples_size() - 1).t_s();
  while (end_s < last_close_s && row.samples_size() < kMaxSamplesPerReport) {
    const double next_s = std::min(end_s + interval_s, last_close_s);
    proto::Sample* tail = row.add_samples();
    tail->set_t_s(next_s);
    tail->set_interval_s(next_s - end_s);
    end_s = next_s;
  }
}

void CountFilesInSamples(const std::vector<int64_t>& closed_ns, int64_t first_byte_ns, proto::TransferReport& row) {
  if (row.samples_size() == 0 || closed_ns.empty()) return;
  ExtendSamplesToLastClose(closed_ns, first_byte_ns, row);
  for (proto::Sample& sample : *row.mutable_samples()) sample.set_files(0);
  for (int64_t closed : closed_ns) {
    const double t_s = static_cast<double>(closed - first_byte_ns) / 1e9;
    // The samples run back to back in order: the first that ends at or after the close
    // (the last, when a bound on their number stopped them short of it).
    auto it = std::lower_bound(row.samples().begin(), row.samples().end(), t_s,
                               [](const proto::Sample& s, double t) { return s.t_s() < t; });
    const int index = it == row.samples().end() ? row.samples_size() - 1 : static_cast<int>(it - row.samples().begin());
    proto::Sample& sample = row.mutable_samples()->at(index);
    sample.set_files(sample.files() + 1);
  }
}

}  // namespace

void RecordFileSet(const FileSetTally& tally, const std::vector<uint64_t>& sizes, int64_t first_byte_ns, int64_t end_ns,
                   proto::TransferReport& row) {
  row.set_files(tally.whole);
  const int64_t timed_ns = end_ns - first_byte_ns;
  if (first_byte_ns > 0 && timed_ns > 0) {
    row.set_files_per_s(static_cast<double>(tally.whole) * 1e9 / static_cast<double>(timed_ns));
    const std::optional<double> fixed_s = FixedCostPerFile(sizes, tally.latency_s);
    const double metadata_ns =
        fixed_s ? *fixed_s * 1e9 * static_cast<double>(tally.whole) : static_cast<double>(tally.metadata_ns);
    row.set_metadata_pct(std::min(100.0, 100.0 * metadata_ns / static_cast<double>(timed_ns)));
  }
  CountFilesInSamples(tally.closed_ns, first_byte_ns, row);
  if (tally.latency_s.empty()) return;
  std::vector<double> sorted = tally.latency_s;
  std::sort(sorted.begin(), sorted.end());
  row.set_file_p50_s(PercentileSorted(sorted, 0.50));
  row.set_file_p90_s(PercentileSorted(sorted, 0.90));
  row.set_file_p99_s(PercentileSorted(sorted, 0.99));
  row.set_file_max_s(sorted.back());
}

}  // namespace nasperf
