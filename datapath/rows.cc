#include "datapath/rows.h"

#include <string.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/checksum.h"
#include "common/clock.h"
#include "common/policy.h"
#include "common/units.h"
#include "measure/cache_knee.h"
#include "measure/netinfo.h"
#include "measure/verdict.h"

namespace nasperf {
namespace {

// line_rate_pct, or a note when the rate cannot be true for the stated link.
void SetLineRate(double ceiling_mb_per_s, proto::TransferReport* row) {
  std::string note;
  if (auto pct = LineRatePct(row->mb_per_s(), ceiling_mb_per_s, &note)) row->set_line_rate_pct(*pct);
  AppendNote(note, *row);
}

}  // namespace

void RecordPush(const PushResult& r, proto::TransferReport& row) {
  if (r.start_wall_ns != 0) row.set_started_at_unix_ns(r.start_wall_ns);
  row.set_bytes(r.bytes_sent);
  if (r.mss) row.set_mss(*r.mss);
  if (r.has_checksum) row.set_checksum(ChecksumHex(r.checksum));
  AddSamples(FinishedSamples(r), &row);
}

void RecordTimings(const PushResult& r, std::optional<double> ceiling_mb_per_s, proto::TransferReport& row) {
  int64_t duration = r.ack_ns - r.first_byte_ns;
  row.set_duration_s(NanosToSeconds(duration));
  row.set_mb_per_s(MegabytesPerSecond(r.bytes_sent, NanosToSeconds(duration)));
  row.set_first_byte_s(NanosToSeconds(r.first_byte_ns - r.start_ns));
  row.set_write_s(NanosToSeconds(r.last_byte_ns - r.first_byte_ns));
  row.set_sync_s(NanosToSeconds(r.ack_ns - r.last_byte_ns));
  if (r.cpu_busy_pct >= 0) row.set_cpu_busy_pct(r.cpu_busy_pct);
  if (ceiling_mb_per_s) {
    std::string note;
    if (auto pct = LineRatePct(row.mb_per_s(), *ceiling_mb_per_s, &note)) row.set_line_rate_pct(*pct);
    if (!note.empty()) AppendNote(note, row);
  }
}

void AppendNote(absl::string_view note, proto::TransferReport& row) {
  if (note.empty()) return;
  row.set_notes(row.notes().empty() ? std::string(note) : absl::StrCat(row.notes(), "; ", note));
}

void AddFigures(const PipelineResult& r, int64_t accepted_ns, std::optional<uint32_t> link_mbps,
                const std::optional<DataFooter>& sender, proto::TransferReport* report) {
  report->set_bytes(r.bytes_written);
  if (r.first_byte_ns != 0) report->set_first_byte_s(NanosToSeconds(r.first_byte_ns - accepted_ns));
  if (r.end == PipelineEnd::kOk) {
    int64_t duration = r.durable_ns - r.first_byte_ns;
    report->set_duration_s(NanosToSeconds(duration));
    report->set_mb_per_s(MegabytesPerSecond(r.bytes_written, NanosToSeconds(duration)));
    report->set_write_s(NanosToSeconds(r.write_ns));
    report->set_sync_s(NanosToSeconds(r.sync_ns));
    double net = Pct(r.net_wait_ns, duration);
    double disk = Pct(r.disk_wait_ns + r.sync_ns, duration);
    report->set_net_wait_pct(net);
    report->set_disk_wait_pct(disk);
    if (link_mbps && report->has_mtu()) {
      const uint32_t mtu = report->has_path_mtu() ? std::min(report->mtu(), report->path_mtu()) : report->mtu();
      SetLineRate(TcpGoodputCeilingMBps(*link_mbps, mtu), report);
    }
    VerdictFigures figures;
    figures.net_wait_pct = net;
    figures.disk_wait_pct = disk;
    figures.source_wait_pct = sender && sender->send_ns > 0 ? Pct(sender->source_wait_ns, sender->send_ns) : -1;
    figures.line_rate_pct = report->has_line_rate_pct() ? report->line_rate_pct() : -1;
    figures.sender_cpu_pct = sender ? sender->cpu_busy_pct : -1;
    figures.receiver_cpu_pct = r.cpu_busy_pct;
    figures.sender_quota_pct = sender ? sender->cpu_quota_pct : -1;
    figures.receiver_quota_pct = r.cpu_quota_pct;
    report->set_bottleneck(Verdict(figures));
    AppendNote(QuotaReason(figures, report->bottleneck()), *report);
    if (r.has_checksum) report->set_checksum(ChecksumHex(r.checksum));
    report->set_status(Name(Status::kOk));
  } else {
    report->set_status(Name(r.end == PipelineEnd::kFailed ? Status::kFailed : Status::kAborted));
    report->set_error(std::string(r.status.message()));
  }
  AddSamples(r.samples, report);
  // The cache cliff and the stalls, from the samples of the end that wrote (this one).
  if (r.end == PipelineEnd::kOk) AddCacheFigures(*report);
  report->set_cpu_user_s(r.cpu.user_s);
  report->set_cpu_sys_s(r.cpu.sys_s);
  if (r.cpu_busy_pct >= 0) report->set_cpu_busy_pct(r.cpu_busy_pct);
}

DataTrailer TrailerFor(const PipelineResult& result) {
  DataTrailer trailer;
  trailer.status = result.end == PipelineEnd::kOk       ? TrailerStatus::kOk
                   : result.end == PipelineEnd::kFailed ? TrailerStatus::kFailed
                                                        : TrailerStatus::kAborted;
  trailer.error_code = result.error_code;
  trailer.bytes_written = result.bytes_written;
  trailer.has_checksum = result.has_checksum;
  trailer.checksum = result.checksum;
  if (result.first_byte_ns != 0) {
    trailer.receive_ns = result.last_byte_ns > 0 ? result.last_byte_ns - result.first_byte_ns : 0;
    trailer.durable_ns = result.durable_ns > 0 ? result.durable_ns - result.first_byte_ns : 0;
  }
  trailer.write_ns = result.write_ns;
  trailer.sync_ns = result.sync_ns;
  trailer.net_wait_ns = result.net_wait_ns;
  trailer.disk_wait_ns = result.disk_wait_ns;
  trailer.cpu_busy_pct = result.cpu_busy_pct;
  trailer.cpu_quota_pct = result.cpu_quota_pct;
  return trailer;
}

void AddReadAgentFigures(const PushResult& r, int64_t accepted_ns, uint64_t expected, bool verify,
                         std::optional<uint32_t> link_mbps, proto::TransferReport* row) {
  row->set_bytes(r.bytes_sent);
  if (r.first_byte_ns != 0) row->set_first_byte_s(NanosToSeconds(r.first_byte_ns - accepted_ns));
  if (r.cpu_busy_pct >= 0) row->set_cpu_busy_pct(r.cpu_busy_pct);
  AddSamples(FinishedSamples(r), row);
  if (!r.trailer) {
    row->set_status(Name(absl::IsCancelled(r.status) ? Status::kAborted : Status::kFailed));
    row->set_error(std::string(r.status.message()));
    return;
  }
  const DataTrailer& t = *r.trailer;
  if (t.status != TrailerStatus::kOk || t.bytes_written != expected) {
    row->set_status(Name(t.status == TrailerStatus::kAborted ? Status::kAborted : Status::kFailed));
    row->set_error(absl::StrCat("the client ", t.status == TrailerStatus::kOk ? "took" : "failed after", " ",
                                t.bytes_written, " of ", expected, " bytes",
                                t.error_code ? absl::StrCat(": ", strerror(t.error_code)) : ""));
    return;
  }
  const int64_t duration = r.ack_ns - r.first_byte_ns;
  row->set_duration_s(NanosToSeconds(duration));
  row->set_mb_per_s(MegabytesPerSecond(r.bytes_sent, NanosToSeconds(duration)));
  row->set_write_s(NanosToSeconds(r.last_byte_ns - r.first_byte_ns));
  row->set_sync_s(NanosToSeconds(r.ack_ns - r.last_byte_ns));
  const int64_t client_span = t.durable_ns > 0 ? static_cast<int64_t>(t.durable_ns) : duration;
  VerdictFigures wire;
  wire.source_wait_pct = Pct(r.source_ns, duration);
  wire.net_wait_pct = Pct(t.net_wait_ns, client_span);
  wire.disk_wait_pct = Pct(t.disk_wait_ns + t.sync_ns, client_span);
  wire.sender_cpu_pct = r.cpu_busy_pct;
  wire.receiver_cpu_pct = t.cpu_busy_pct;
  row->set_disk_wait_pct(wire.source_wait_pct);
  row->set_net_wait_pct(wire.net_wait_pct);
  row->set_source_wait_pct(wire.disk_wait_pct);
  if (link_mbps && row->has_mtu()) {
    const uint32_t mtu = row->has_path_mtu() ? std::min(row->mtu(), row->path_mtu()) : row->mtu();
    SetLineRate(TcpGoodputCeilingMBps(*link_mbps, mtu), row);
  }
  wire.line_rate_pct = row->has_line_rate_pct() ? row->line_rate_pct() : -1;
  row->set_bottleneck(ReadVerdict(wire));
  if (r.has_checksum) row->set_checksum(ChecksumHex(r.checksum));
  if (verify) {
    const bool verified = r.has_checksum && t.has_checksum && t.checksum == r.checksum;
    row->set_verified(verified);
    if (!verified) {
      row->set_status(Name(Status::kFailed));
      row->set_error(absl::StrCat("checksum mismatch: read ", ChecksumHex(r.checksum),
                                  " from the disk, the client got ",
                                  t.has_checksum ? ChecksumHex(t.checksum) : "none"));
      return;
    }
  }
  row->set_status(Name(Status::kOk));
}

void AddReadClientFigures(const PipelineResult& r, int64_t start_ns, bool local_disk,
                          const std::optional<DataFooter>& nas, std::optional<double> ceiling_mb_per_s,
                          proto::TransferReport* row) {
  row->set_bytes(r.bytes_written);
  if (r.first_byte_ns != 0) row->set_first_byte_s(NanosToSeconds(r.first_byte_ns - start_ns));
  if (r.cpu_busy_pct >= 0) row->set_cpu_busy_pct(r.cpu_busy_pct);
  AddSamples(r.samples, row);
  if (r.end != PipelineEnd::kOk) {
    // A source that broke off with an error of its own (a share's malformed reply, a
    // timeout) is a failed read; aborted is for a stop or a far end that closed.
    const bool aborted = r.end == PipelineEnd::kAborted && absl::IsAborted(r.status);
    row->set_status(Name(aborted ? Status::kAborted : Status::kFailed));
    row->set_error(std::string(r.status.message()));
    return;
  }
  const int64_t duration = r.durable_ns - r.first_byte_ns;
  row->set_duration_s(NanosToSeconds(duration));
  row->set_mb_per_s(MegabytesPerSecond(r.bytes_written, NanosToSeconds(duration)));
  row->set_write_s(NanosToSeconds(r.write_ns));
  row->set_sync_s(NanosToSeconds(r.sync_ns));
  VerdictFigures wire;
  wire.net_wait_pct = Pct(r.net_wait_ns, duration);
  wire.disk_wait_pct = local_disk ? Pct(r.disk_wait_ns + r.sync_ns, duration) : -1;
  wire.source_wait_pct = nas && nas->send_ns > 0 ? Pct(nas->source_wait_ns, nas->send_ns) : -1;
  wire.sender_cpu_pct = nas ? nas->cpu_busy_pct : -1;
  wire.receiver_cpu_pct = r.cpu_busy_pct;
  row->set_net_wait_pct(wire.net_wait_pct);
  if (wire.source_wait_pct >= 0) row->set_disk_wait_pct(wire.source_wait_pct);
  if (wire.disk_wait_pct >= 0) row->set_source_wait_pct(wire.disk_wait_pct);
  if (ceiling_mb_per_s) SetLineRate(*ceiling_mb_per_s, row);
  wire.line_rate_pct = row->has_line_rate_pct() ? row->line_rate_pct() : -1;
  row->set_bottleneck(ReadVerdict(wire));
  if (r.has_checksum) row->set_checksum(ChecksumHex(r.checksum));
  row->set_status(Name(Status::kOk));
}

void JudgeCpuQuotas(VerdictFigures cpu, proto::TransferReport& row) {
  if (row.status() != Name(Status::kOk) || (cpu.sender_quota_pct < 0 && cpu.receiver_quota_pct < 0)) return;
  cpu.line_rate_pct = row.has_line_rate_pct() ? row.line_rate_pct() : -1;
  const std::string word = CpuVerdict(cpu);
  if (word.empty()) return;
  row.set_bottleneck(word);
  AppendNote(QuotaReason(cpu, word), row);
}

}  // namespace nasperf
