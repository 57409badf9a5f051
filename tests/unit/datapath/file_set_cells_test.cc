// A many-files transfer's row cells (datapath/file_set.h): files over time land in the
// sample whose interval saw their close, and the samples sum to the row's files.
#include "datapath/file_set.h"

#include <vector>

#include "gtest/gtest.h"

namespace nasperf {
namespace {

constexpr int64_t kFirstByteNs = 1'000'000'000;

int64_t At(double seconds) { return kFirstByteNs + static_cast<int64_t>(seconds * 1e9); }

TEST(RecordFileSet, EachSampleCountsTheFilesClosedInIt) {
  proto::TransferReport row;
  for (double t : {1.0, 2.0, 3.0}) {
    proto::Sample* s = row.add_samples();
    s->set_t_s(t);
    s->set_interval_s(1);
  }
  FileSetTally tally;
  // 1.0 closes the first interval; 4.5 came after the last sample, the close after its bytes.
  for (double closed : {0.5, 1.0, 1.5, 2.9, 4.5}) {
    tally.closed_ns.push_back(At(closed));
    tally.latency_s.push_back(0.1);
  }
  tally.created = tally.whole = 5;
  RecordFileSet(tally, std::vector<uint64_t>(5, 4096), kFirstByteNs, At(4.5), row);
  ASSERT_EQ(row.samples_size(), 5) << "samples of no bytes carry the closes after the last bytes";
  EXPECT_EQ(row.samples(0).files(), 2u);
  EXPECT_EQ(row.samples(1).files(), 1u);
  EXPECT_EQ(row.samples(2).files(), 1u);
  EXPECT_EQ(row.samples(3).files(), 0u);
  EXPECT_EQ(row.samples(4).files(), 1u);
  EXPECT_DOUBLE_EQ(row.samples(3).t_s(), 4.0);
  EXPECT_EQ(row.samples(3).bytes(), 0u);
  EXPECT_NEAR(row.samples(4).t_s(), 4.5, 1e-9);
  EXPECT_NEAR(row.samples(4).interval_s(), 0.5, 1e-9);
  EXPECT_EQ(row.files(), 5u);
  EXPECT_NEAR(row.files_per_s(), 5 / 4.5, 1e-9);
}

TEST(RecordFileSet, ARowWithoutSamplesGetsNone) {
  proto::TransferReport row;
  FileSetTally tally;
  tally.closed_ns = {At(0.2)};
  tally.latency_s = {0.2};
  tally.created = tally.whole = 1;
  RecordFileSet(tally, {4096}, kFirstByteNs, At(0.2), row);
  EXPECT_EQ(row.samples_size(), 0);
  EXPECT_EQ(row.files(), 1u);
}

}  // namespace
}  // namespace nasperf
