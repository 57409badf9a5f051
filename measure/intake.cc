#include "measure/intake.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/policy.h"
#include "common/stats.h"
#include "wire/columns.h"

namespace nasperf {
namespace {

// Samples that add up to the row's bytes within this share are the row's bytes as
// they arrived; further off (a cut-off samples file), the row is taken as even.
constexpr double kSampleBytesTolerance = 0.02;

// Bytes moved evenly over [start_s, end_s], seconds since the run's first byte.
struct Piece {
  double start_s = 0, end_s = 0, bytes = 0;
  size_t transfer = 0;  // its index in the transfers given
};

// Bytes of [a, b) that fall in [lo, hi), the piece taken as even; a piece of no
// length counts where it starts.
double Overlap(const Piece& p, double lo, double hi) {
  const double length = p.end_s - p.start_s;
  if (length <= 0) return p.start_s >= lo && p.start_s < hi ? p.bytes : 0;
  const double inside = std::min(p.end_s, hi) - std::max(p.start_s, lo);
  return inside > 0 ? p.bytes * inside / length : 0;
}

bool SamplesUsable(const IntakeTransfer& t) {
  if (t.samples.empty()) return false;
  double previous = 0, sum = 0;
  for (const IntakeSample& s : t.samples) {
    if (!(s.t_s >= previous) || !(s.bytes >= 0) || !std::isfinite(s.t_s)) return false;
    previous = s.t_s;
    sum += s.bytes;
  }
  if (t.bytes <= 0) return sum == 0;
  return std::fabs(sum - t.bytes) <= kSampleBytesTolerance * t.bytes;
}

// The transfer's pieces from offset_s on; its samples scaled to the row's bytes so the
// timeline adds up to what the rows say. Returns the transfer's end.
double AddPieces(const IntakeTransfer& t, size_t index, double offset_s, bool usable, std::vector<Piece>* pieces) {
  if (!usable) {
    pieces->push_back({offset_s, offset_s + t.duration_s, t.bytes, index});
    return offset_s + t.duration_s;
  }
  double sum = 0;
  for (const IntakeSample& s : t.samples) sum += s.bytes;
  const double scale = sum > 0 ? t.bytes / sum : 0;
  double previous = 0;
  for (const IntakeSample& s : t.samples) {
    pieces->push_back({offset_s + previous, offset_s + s.t_s, s.bytes * scale, index});
    previous = s.t_s;
  }
  return offset_s + std::max(t.duration_s, previous);
}

double MedianPieceLength(const std::vector<Piece>& pieces, size_t from) {
  std::vector<double> lengths;
  for (size_t i = from; i < pieces.size(); ++i) lengths.push_back(pieces[i].end_s - pieces[i].start_s);
  std::sort(lengths.begin(), lengths.end());
  return lengths.empty() ? 0 : PercentileSorted(lengths, 0.5);
}

// The grid: steps of step_s from 0, the last one ending at span_s; a last sliver
// shorter than half a step joins the step before it.
std::vector<double> GridEdges(double span_s, double step_s) {
  const size_t whole = static_cast<size_t>(std::floor(span_s / step_s));
  std::vector<double> edges{0};
  for (size_t k = 1; k <= whole && k <= kMaxTimelinePoints; ++k) edges.push_back(static_cast<double>(k) * step_s);
  const double rest = span_s - edges.back();
  if (edges.size() == 1 || rest >= step_s / 2) {
    edges.push_back(span_s);
  } else {
    edges.back() = span_s;
  }
  return edges;
}

void FillTimeline(const std::vector<Piece>& pieces, double step_s, IntakeFigures* f) {
  f->step_s = step_s;
  const std::vector<double> edges = GridEdges(f->span_s, step_s);
  const size_t bins = edges.size() - 1;
  std::vector<double> bytes(bins, 0);
  const bool stacked = f->transfers <= kMaxStackedTransfers;
  std::vector<std::vector<double>> by_transfer(stacked ? f->transfers : 0, std::vector<double>(bins, 0));
  for (const Piece& p : pieces) {
    // Uniform steps but the last: the bins a piece touches follow from its ends.
    size_t first = std::min(bins - 1, static_cast<size_t>(std::max(0.0, std::floor(p.start_s / step_s))));
    size_t last = std::min(bins - 1, static_cast<size_t>(std::max(0.0, std::floor(p.end_s / step_s))));
    if (first > 0 && p.start_s < edges[first]) --first;  // rounding at an edge
    while (last + 1 < bins && p.end_s > edges[last + 1]) ++last;
    for (size_t k = first; k <= last; ++k) {
      const double in_step = Overlap(p, edges[k], k + 1 == bins ? edges[k + 1] + 1 : edges[k + 1]);
      bytes[k] += in_step;
      if (stacked) by_transfer[p.transfer][k] += in_step;
    }
  }
  auto rate = [&](double step_bytes, size_t k) {
    const double length = edges[k + 1] - edges[k];
    return length > 0 ? step_bytes / length / 1e6 : 0;
  };
  for (size_t k = 0; k < bins; ++k) {
    f->timeline_len_s.push_back(edges[k + 1] - edges[k]);
    f->timeline_mb_per_s.push_back(rate(bytes[k], k));
  }
  for (std::vector<double>& band : by_transfer) {
    for (size_t k = 0; k < bins; ++k) band[k] = rate(band[k], k);
  }
  f->timeline_by_transfer_mb_per_s = std::move(by_transfer);
  std::vector<double> sorted = f->timeline_mb_per_s;
  std::sort(sorted.begin(), sorted.end());
  f->peak_mb_per_s = sorted.back();
  f->median_mb_per_s = PercentileSorted(sorted, 0.5);
}

}  // namespace

std::optional<IntakeFigures> ComputeIntake(const std::vector<IntakeTransfer>& transfers) {
  if (transfers.empty()) return std::nullopt;
  IntakeFigures f;
  f.first_ns = transfers.front().first_byte_ns;
  for (const IntakeTransfer& t : transfers) f.first_ns = std::min(f.first_ns, t.first_byte_ns);
  std::vector<Piece> pieces;
  double window_start = 0, window_end = 0, step_s = 0;
  for (size_t i = 0; i < transfers.size(); ++i) {
    const IntakeTransfer& t = transfers[i];
    const double offset = static_cast<double>(t.first_byte_ns - f.first_ns) / 1e9;
    const bool usable = SamplesUsable(t);
    const size_t from = pieces.size();
    const double end = AddPieces(t, i, offset, usable, &pieces);
    if (usable) step_s = std::max(step_s, MedianPieceLength(pieces, from));
    f.unsampled += usable ? 0 : 1;
    f.coarse += usable && t.samples.size() >= kMinTimelineSamples ? 0 : 1;
    f.bytes += t.bytes;
    if (t.duration_s > 0) f.sum_of_rates_mb_per_s += t.bytes / t.duration_s / 1e6;
    f.span_s = std::max(f.span_s, end);
    window_start = i == 0 ? offset : std::max(window_start, offset);
    window_end = i == 0 ? end : std::min(window_end, end);
  }
  f.transfers = transfers.size();
  if (!(f.span_s > 0)) return std::nullopt;
  f.all_mb_per_s = f.bytes / f.span_s / 1e6;
  if (window_end > window_start) {
    f.overlapped = true;
    f.window_s = window_end - window_start;
    for (const Piece& p : pieces) f.window_bytes += Overlap(p, window_start, window_end);
    f.while_all_mb_per_s = f.window_bytes / f.window_s / 1e6;
  }
  if (step_s <= 0) step_s = f.span_s;
  step_s = std::max({step_s, kMinTimelineStepS, f.span_s / static_cast<double>(kMaxTimelinePoints)});
  FillTimeline(pieces, std::min(step_s, f.span_s), &f);
  return f;
}

std::string IntakeLine(const IntakeFigures& f) {
  std::string line = absl::StrFormat("all bytes/span %.1f MB/s (%.3f s), ", f.all_mb_per_s, f.span_s);
  if (f.overlapped) {
    absl::StrAppendFormat(&line, "while all ran %.1f MB/s (%.3f s), ", f.while_all_mb_per_s, f.window_s);
  } else {
    absl::StrAppend(&line, "while all ran: never all at once, ");
  }
  const size_t steps = f.timeline_mb_per_s.size();
  if (f.TimelineIsCurve()) {
    absl::StrAppendFormat(&line, "timeline peak %.1f, median %.1f MB/s (%d steps of %.3f s)", f.peak_mb_per_s,
                          f.median_mb_per_s, steps, f.step_s);
  } else {
    absl::StrAppendFormat(&line, "no timeline (%d step%s of %.3f s: too short for a curve)", steps,
                          steps == 1 ? "" : "s", f.step_s);
  }
  return line;
}

std::optional<IntakeTransfer> IntakeFromRow(const proto::TransferReport& row) {
  if (row.status() != Name(Status::kOk)) return std::nullopt;
  // Through the columns' own writer and reader, so a live row rounds as its CSV cells do.
  proto::TransferReport kept;
  for (const char* name : {"started_at", "first_byte_s", "duration_s", "bytes"}) {
    const TransferColumn* column = FindTransferColumn(name);
    if (column == nullptr || !HasValue(*column, row)) return std::nullopt;
    if (!ReadCell(*column, FormatCell(*column, row), &kept).ok()) return std::nullopt;
  }
  // Past these a hostile or corrupt row would overflow the nanosecond sums below.
  constexpr int64_t kLatestStartNs = 4'000'000'000'000'000'000;  // the year 2096
  constexpr double kLongestFirstByteS = 1e6;                     // 11 days
  if (kept.started_at_unix_ns() > kLatestStartNs || !(kept.first_byte_s() <= kLongestFirstByteS)) return std::nullopt;
  IntakeTransfer t;
  t.first_byte_ns = kept.started_at_unix_ns() + std::llround(kept.first_byte_s() * 1e9);
  t.duration_s = kept.duration_s();
  t.bytes = static_cast<double>(kept.bytes());
  for (const proto::Sample& s : row.samples()) {
    double t_s = 0;
    // samples.csv keeps t_s to the millisecond (collector/csv_sink.cc).
    if (!absl::SimpleAtod(absl::StrFormat("%.3f", s.t_s()), &t_s)) return std::nullopt;
    t.samples.push_back({t_s, static_cast<double>(s.bytes())});
  }
  return t;
}

}  // namespace nasperf
