// The test suite's transport, a plug-in added the way a product transport is (one
// file, one registry line, one CMake line: docs/DESIGN.md §10a): word `fake`, `to`
// fake://N, one of kFakeFarEnds far ends held in memory. A test names it as a run, a
// plan or a job would (--transport, `transport = "fake"`) and reads what far end N saw
// here. Threading: a far end's fields are guarded by its mu (streams push at once).
#ifndef NASPERF_TESTS_UNIT_TESTING_FAKE_TRANSPORT_H_
#define NASPERF_TESTS_UNIT_TESTING_FAKE_TRANSPORT_H_

#include <cstdint>
#include <mutex>

namespace nasperf {

inline constexpr int kFakeFarEnds = 8;  // fake://0 .. fake://7

// What the transports made for fake://N did, across runs since Reset().
struct FakeFarEnd {
  std::mutex mu;
  bool started = false;   // a run's Start
  bool finished = false;  // a run's Finish
  uint64_t pushed_bytes = 0;
  int pulled_into_file = 0;  // reads whose bytes went into a local copy
  int delay_ms = -1;         // --fake-delay-ms of the last transport made; -1: none made
  int delayed_pushes = 0;    // pushes that waited --fake-delay-ms before their first byte

  void Reset();
};

// Far end N of fake://N, 0 <= n < kFakeFarEnds.
FakeFarEnd& FakeFarEndOf(int n);

}  // namespace nasperf

#endif  // NASPERF_TESTS_UNIT_TESTING_FAKE_TRANSPORT_H_
