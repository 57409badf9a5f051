// What one NAS took from all its transfers of one run together (docs/DESIGN.md §7, the
// NAS's intake): all bytes over the span, the rate while every transfer ran, and the
// summed per-interval timeline. The one place the lab console, `report` and `compare`
// get these figures from, so they agree. Pure functions; thread-safe.
#ifndef NASPERF_MEASURE_INTAKE_H_
#define NASPERF_MEASURE_INTAKE_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "proto/nasperf.pb.h"

namespace nasperf {

// A transfer with fewer samples than this is its own average, not a curve.
inline constexpr size_t kMinTimelineSamples = 3;
// The timeline never has more points than this (a longer run gets a coarser grid).
inline constexpr size_t kMaxTimelinePoints = 4096;
// Nor a step shorter than this: over a few milliseconds a receiver's reads drain its
// socket buffer in bursts, so a finer peak is the reads, not what the NAS can sustain
// (test_lab_intake_truth: 20 ms steps peaked 12-21 % over the links' sum, 100 ms ones
// within it).
inline constexpr double kMinTimelineStepS = 0.1;
// A run of more transfers keeps only its total timeline: a stack of more bands is
// unreadable, and transfers x steps would grow without bound on a hostile file.
inline constexpr size_t kMaxStackedTransfers = 64;

struct IntakeSample {
  double t_s = 0;  // the interval's end, seconds since the transfer's first byte
  double bytes = 0;
};

// One transfer as the NAS saw it: its samples' intervals run back to back from its
// first byte, each taken as even within itself.
struct IntakeTransfer {
  int64_t first_byte_ns = 0;  // wall clock, unix ns
  double duration_s = 0;      // first byte to the end (the receiver's: durable)
  double bytes = 0;
  std::vector<IntakeSample> samples;  // in order; empty when none were taken
};

struct IntakeFigures {
  size_t transfers = 0;
  double bytes = 0;
  int64_t first_ns = 0;  // the first transfer's first byte
  double span_s = 0;     // to the last transfer's end
  double all_mb_per_s = 0;
  // The window where every transfer ran; empty (overlapped false) when they never all did.
  bool overlapped = false;
  double window_s = 0, window_bytes = 0, while_all_mb_per_s = 0;
  // Bytes per grid step over the span, from first_ns; the last step may be longer
  // (a sliver is merged into it), so rates come with their lengths.
  double step_s = 0;
  std::vector<double> timeline_mb_per_s, timeline_len_s;
  double peak_mb_per_s = 0, median_mb_per_s = 0;
  // Each transfer's part of every step, in the order they were given: the bands of the
  // stacked chart, adding up to timeline_mb_per_s. Empty past kMaxStackedTransfers.
  std::vector<std::vector<double>> timeline_by_transfer_mb_per_s;
  size_t unsampled = 0;  // transfers without usable samples: taken as even over their time
  size_t coarse = 0;     // transfers with fewer than kMinTimelineSamples samples
  // Each transfer's own bytes over its own time, added: what the NAS took only when all
  // started and ended together. Kept under this name, never as "the aggregate".
  double sum_of_rates_mb_per_s = 0;
  // Whether the timeline is a curve: at least kMinTimelineSamples grid steps.
  bool TimelineIsCurve() const { return timeline_mb_per_s.size() >= kMinTimelineSamples; }
};

// nullopt when there are no transfers or none has a positive span.
std::optional<IntakeFigures> ComputeIntake(const std::vector<IntakeTransfer>& transfers);

// The figures in one line, as the lab console and `report` both print them: "all
// bytes/span 200.0 MB/s (10.000 s), while all ran 1100.0 MB/s (1.000 s), timeline
// peak 1100.0, median 100.0 MB/s (10 steps of 1.000 s)".
std::string IntakeLine(const IntakeFigures& f);

// An ok row's transfer, its times rounded as transfers.csv and samples.csv keep them,
// so figures from live rows (the lab) equal those from the files (`report`). nullopt
// when the row lacks a start, first byte, duration or bytes.
std::optional<IntakeTransfer> IntakeFromRow(const proto::TransferReport& row);

}  // namespace nasperf

#endif  // NASPERF_MEASURE_INTAKE_H_
