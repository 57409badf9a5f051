// Checks on fields that arrive from the network before anything uses them: run ids
// (they become part of file names), whole TransferReports (they become CSV rows)
// and the receiver's replies (a client must not trust its peer either). Each message
// is checked once, where it enters. Pure functions.
#ifndef NASPERF_WIRE_VALIDATE_H_
#define NASPERF_WIRE_VALIDATE_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "proto/nasperf.pb.h"

namespace nasperf {

// 1-64 of [A-Za-z0-9._-], not starting with '.' or '-'.
absl::Status CheckRunId(const std::string& run_id);
// At most max bytes, no NUL and no control characters (newlines, ESC, the UTF-8 C1
// controls): for text that reaches consoles and CSV cells read back line by line.
absl::Status CheckPlainText(const std::string& field, const std::string& value, size_t max);
// The label, iteration and stream every transfer carries: the same bounds when a
// transfer is opened and when its report arrives.
absl::Status CheckTransferKey(const std::string& label, int iteration, int stream);
// Column by column, each held to its bound in wire/columns.h (known words, bounded
// text, finite non-negative figures); then at most kMaxSamplesPerReport samples, each
// with times in [0, kMaxFigure] and a rate (bytes over its interval) below
// kMaxMegabytesPerSecond.
absl::Status CheckReport(const proto::TransferReport& report);
// No report carries more samples than a sampler keeps (IntervalSampler::kMaxSamples,
// measure/sampler.h): every sample is a samples.csv row, so this bounds what one
// report can add to the store.
inline constexpr int kMaxSamplesPerReport = 16384;
// The largest encoded report a collector reads: that many samples at their largest
// (kMaxSampleBytes each) plus every text column at its bound fits with room to spare. A
// message is parsed before anything can check it, and a parsed sample costs tens of
// bytes however few it took on the wire: this limit bounds that too.
inline constexpr int kMaxReportBytes = 3 << 20;
// A sample's device cells: its busiest device (a kernel name: at most 32 characters) and
// device_busy in whole entries within this many bytes (the busiest first).
inline constexpr size_t kMaxSampleDeviceNameBytes = 32;
inline constexpr size_t kMaxSampleDeviceBusyBytes = 96;
// A sample at its largest on the wire: 31 bytes of figures, the busy % (9), the two
// strings with their tags and lengths, and the sample's own tag and length (3).
inline constexpr int kMaxSampleBytes = 31 + 9 + (2 + kMaxSampleDeviceNameBytes) + (2 + kMaxSampleDeviceBusyBytes) + 3;
static_assert(kMaxSamplesPerReport * kMaxSampleBytes + (64 << 10) < kMaxReportBytes, "a full report must fit");

// A live update (the live page and /metrics): its names held to the bounds of the
// transfers.csv columns of the same names, its figures finite and in range (a copy
// within its loop, a rate below kMaxMegabytesPerSecond).
absl::Status CheckLiveUpdate(const proto::LiveUpdate& update);
inline constexpr int kMaxLiveCopies = 1000000;

// The sampling interval a user, a plan or a sender asks for: 0 (off) or 10 ms..1 h.
// Shorter intervals turn a sample's few bytes into meaningless (even infinite) rates.
absl::Status CheckInterval(double interval_s);
// Empty, or a TLS key fingerprint as CertificateFingerprint (wire/tls.h) writes it.
absl::Status CheckFingerprint(const std::string& field, const std::string& value);
inline constexpr double kMinIntervalS = 0.01;
// No figure on any row is above this (1 PB/s): anything larger is corrupt input.
inline constexpr double kMaxMegabytesPerSecond = 1e9;

// A wait a peer asks a server to hold a call for: clamped to [0, max_s]; NaN and
// infinities (which slip through min/max) count as 0.
double BoundedWaitSeconds(double requested_s, double max_s);

// Replies from a receiver, checked by the client before any field is used: an
// impostor on the control port must not be able to steer the sender.
absl::Status CheckHelloReply(const proto::HelloReply& reply);
absl::Status CheckOpenTransferReply(const proto::OpenTransferReply& reply);
// The longest file a far end may announce for a read (1 PiB): past it a length is
// corrupt or hostile, whatever the local disk (the reading client checks its room too).
inline constexpr uint64_t kMaxReadLength = uint64_t{1} << 50;
// The file a read will use: a plain name, a length (1 B..kMaxReadLength; the asked
// size when laid out), a finite setup time, a short caveat.
absl::Status CheckPrepareReadReply(const proto::PrepareReadReply& reply, const proto::PrepareReadRequest& request);
// A plain file name in a target: no '/', not "." or "..", no control characters.
absl::Status CheckFileName(const std::string& field, const std::string& name);
// A receiver's own row as FetchReport returns it: a valid report, role receiver, for
// the transfer that was asked about and with the run id, label, iteration and stream
// it was opened with (a row for another run would plant a baseline for `compare`).
absl::Status CheckFetchedReport(const proto::TransferReport& report, uint64_t transfer_id,
                                const proto::OpenTransferRequest& opened);

}  // namespace nasperf

#endif  // NASPERF_WIRE_VALIDATE_H_
