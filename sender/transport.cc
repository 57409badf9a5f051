#include "sender/transport.h"

#include "absl/strings/str_cat.h"
#include "common/checksum.h"
#include "common/clock.h"
#include "common/units.h"
#include "common/verdict.h"

namespace nasperf {

void RecordPush(const PushResult& r, proto::TransferReport& row) {
  if (r.start_wall_ns != 0) row.set_started_at_unix_ns(r.start_wall_ns);
  row.set_bytes(r.bytes_sent);
  if (r.mss) row.set_mss(*r.mss);
  if (r.has_checksum) row.set_checksum(ChecksumHex(r.checksum));
  AddSamples(FinishedSamples(r), &row);
}

void RecordTimings(const PushResult& r, std::optional<double> ceiling_mb_per_s,
                   proto::TransferReport& row) {
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

}  // namespace nasperf
