#include "wire/validate.h"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/policy.h"
#include "wire/columns.h"
#include "wire/wire.h"

namespace nasperf {

absl::Status CheckRunId(const std::string& run_id) {
  if (run_id.empty() || run_id.size() > 64 || run_id[0] == '.' || run_id[0] == '-') {
    return absl::InvalidArgumentError("run id must be 1-64 characters and not start with . or -");
  }
  for (char c : run_id) {
    if (!absl::ascii_isalnum(c) && c != '-' && c != '_' && c != '.') {
      return absl::InvalidArgumentError("run id may contain only letters, digits, '-', '_' and '.'");
    }
  }
  return absl::OkStatus();
}

namespace {

// One of `words`; empty too when `empty_ok`.
absl::Status OneOfWords(const std::string& field, const std::string& value, const std::vector<std::string>& words,
                        bool empty_ok) {
  if ((empty_ok && value.empty()) || std::find(words.begin(), words.end(), value) != words.end()) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat(field, " \"", value.substr(0, 40), "\" is not allowed"));
}

// A transport's word by its shape (common/policy.h IsTransportWord): which words a
// run can use is the transport registry's, a layer above.
absl::Status TransportWord(const std::string& field, const std::string& value) {
  if (IsTransportWord(value)) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(field, " \"", value.substr(0, 40), "\" is not a transport word (",
                                                 "lowercase letters, digits and '-', at most ", kMaxTransportWord,
                                                 ")"));
}

// One of T's names (common/policy.h).
template <typename T>
absl::Status OneOf(const std::string& field, const std::string& value) {
  return OneOfWords(field, value, Names<T>(), /*empty_ok=*/false);
}

// The first control character in value: C0 and DEL (but '\n' and '\t' when
// line_breaks_ok), or C1 (U+0080 to U+009F in UTF-8; CSI and OSC to some terminals).
bool HasControlCharacter(const std::string& value, bool line_breaks_ok) {
  for (size_t i = 0; i < value.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(value[i]);
    if (line_breaks_ok && (c == '\n' || c == '\t')) continue;
    if (c < 0x20 || c == 0x7f) return true;
    if (c == 0xc2 && i + 1 < value.size() && (static_cast<unsigned char>(value[i + 1]) & 0xe0) == 0x80) return true;
  }
  return false;
}

absl::Status Bounded(const std::string& field, const std::string& value, size_t max) {
  if (value.size() > max) {
    return absl::InvalidArgumentError(absl::StrCat(field, " is ", value.size(), " bytes, at most ", max));
  }
  for (char c : value) {
    if (c == '\0') return absl::InvalidArgumentError(absl::StrCat(field, " contains a NUL byte"));
  }
  return absl::OkStatus();
}

absl::Status Figure(const std::string& field, bool has, double value) {
  if (has && (!std::isfinite(value) || value < 0 || value > kMaxFigure)) {
    return absl::InvalidArgumentError(absl::StrCat(field, " is not a sensible figure: ", value));
  }
  return absl::OkStatus();
}

absl::Status Port(const std::string& field, uint32_t port, bool zero_allowed) {
  if ((port == 0 && !zero_allowed) || port > 65535) {
    return absl::InvalidArgumentError(absl::StrCat(field, " ", port, " is not a TCP/UDP port"));
  }
  return absl::OkStatus();
}

absl::Status FirstError(std::initializer_list<absl::Status> checks) {
  for (const absl::Status& s : checks) {
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

// A kernel block device name as /proc/diskstats prints it; never a formula or a path.
bool DeviceName(absl::string_view name) {
  if (name.empty() || name.size() > 64 || !absl::ascii_isalnum(name[0])) return false;
  for (char c : name) {
    if (!absl::ascii_isalnum(c) && c != '.' && c != '_' && c != ':' && c != '+' && c != '!' && c != '-') return false;
  }
  return true;
}

// NAME=PCT;...: at most max_items pairs of a device name and a whole percentage.
absl::Status DeviceList(const std::string& field, const std::string& value, int64_t max_items) {
  if (value.empty()) return absl::OkStatus();
  const auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat(field, " \"", value.substr(0, 40), "\" ", why));
  };
  if (value.size() > static_cast<size_t>(max_items) * 70) return bad("is too long");
  const std::vector<absl::string_view> items = absl::StrSplit(value, ';');
  if (static_cast<int64_t>(items.size()) > max_items) return bad(absl::StrCat("has more than ", max_items, " devices"));
  for (absl::string_view item : items) {
    const size_t eq = item.find('=');
    const absl::string_view digits = eq == absl::string_view::npos ? "" : item.substr(eq + 1);
    int pct = -1;
    // Digits only: SimpleAtoi would also take the blanks and line breaks around them.
    if (eq == absl::string_view::npos || !DeviceName(item.substr(0, eq)) || digits.empty() || digits.size() > 3 ||
        !std::all_of(digits.begin(), digits.end(), absl::ascii_isdigit) || !absl::SimpleAtoi(digits, &pct) ||
        pct > 100) {
      return bad("is not NAME=PCT;... with whole percentages");
    }
  }
  return absl::OkStatus();
}

// A sample's device cells, held to the bounds kMaxSampleBytes counts on.
absl::Status CheckSampleDevices(const proto::Sample& s) {
  if (!s.busiest_device().empty() &&
      (s.busiest_device().size() > kMaxSampleDeviceNameBytes || !DeviceName(s.busiest_device()))) {
    return absl::InvalidArgumentError("a sample's busiest_device is not a kernel device name");
  }
  if (s.has_busiest_busy_pct() && !(s.busiest_busy_pct() >= 0 && s.busiest_busy_pct() <= 100)) {
    return absl::InvalidArgumentError("a sample's busiest_busy_pct is not a share between 0 and 100");
  }
  if (s.device_busy().size() > kMaxSampleDeviceBusyBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("a sample's device_busy is longer than ", kMaxSampleDeviceBusyBytes, " bytes"));
  }
  return DeviceList("a sample's device_busy", s.device_busy(), kMaxSampleDeviceBusyBytes / 4);
}

// The column's bound (wire/columns.h) on its field of the report.
absl::Status CheckColumn(const TransferColumn& column, const proto::TransferReport& r) {
  const ColumnBound& bound = column.bound;
  switch (bound.kind) {
    case ColumnBound::Kind::kNone:
      return absl::OkStatus();
    case ColumnBound::Kind::kRunId:
      return CheckRunId(TextValue(column, r));
    case ColumnBound::Kind::kPlainText:
      return CheckPlainText(column.name, TextValue(column, r), bound.max_bytes);
    case ColumnBound::Kind::kText: {
      const std::string value = TextValue(column, r);
      if (absl::Status s = Bounded(column.name, value, bound.max_bytes); !s.ok()) return s;
      if (!HasControlCharacter(value, /*line_breaks_ok=*/true)) return absl::OkStatus();
      return absl::InvalidArgumentError(
          absl::StrCat(column.name, " contains a control character other than a line break or tab"));
    }
    case ColumnBound::Kind::kWord:
      return OneOfWords(column.name, TextValue(column, r), bound.words(), bound.empty_ok);
    case ColumnBound::Kind::kTransportWord:
      return TransportWord(column.name, TextValue(column, r));
    case ColumnBound::Kind::kRange: {
      const double value = NumberValue(column, r);
      if (value >= bound.min && value <= bound.max) return absl::OkStatus();
      return absl::InvalidArgumentError(
          absl::StrFormat("%s %.0f is out of range (%d to %d)", column.name, value, bound.min, bound.max));
    }
    case ColumnBound::Kind::kFigure:
      return Figure(column.name, HasValue(column, r), NumberValue(column, r));
    case ColumnBound::Kind::kShare:
      if (absl::Status s = Figure(column.name, HasValue(column, r), NumberValue(column, r)); !s.ok()) return s;
      if (NumberValue(column, r) <= 100) return absl::OkStatus();
      return absl::InvalidArgumentError(absl::StrCat(column.name, " is a share over 100 %: ", NumberValue(column, r)));
    case ColumnBound::Kind::kSince1970:
      if (NumberValue(column, r) >= 0) return absl::OkStatus();
      return absl::InvalidArgumentError(absl::StrCat(column.name, " before 1970"));
    case ColumnBound::Kind::kDevice: {
      const std::string value = TextValue(column, r);
      if (value.empty() || DeviceName(value)) return absl::OkStatus();
      return absl::InvalidArgumentError(
          absl::StrCat(column.name, " \"", value.substr(0, 40), "\" is not a device name"));
    }
    case ColumnBound::Kind::kDeviceList:
      return DeviceList(column.name, TextValue(column, r), bound.max);
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckPlainText(const std::string& field, const std::string& value, size_t max) {
  if (absl::Status s = Bounded(field, value, max); !s.ok()) return s;
  if (HasControlCharacter(value, /*line_breaks_ok=*/false)) {
    return absl::InvalidArgumentError(absl::StrCat(field, " contains a control character"));
  }
  return absl::OkStatus();
}

absl::Status CheckInterval(double interval_s) {
  if (interval_s == 0 || (interval_s >= kMinIntervalS && interval_s <= 3600)) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("interval ", interval_s, " s: use 0 (off) or 10ms to 1h"));
}

double BoundedWaitSeconds(double requested_s, double max_s) {
  if (!std::isfinite(requested_s) || requested_s <= 0) return 0;
  return std::min(requested_s, max_s);
}

absl::Status CheckTransferKey(const std::string& label, int iteration, int stream) {
  proto::TransferReport key;
  key.set_label(label);
  key.set_iteration(iteration);
  key.set_stream(stream);
  for (const char* name : {"label", "iteration", "stream"}) {
    if (absl::Status s = CheckColumn(*FindTransferColumn(name), key); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status CheckLiveUpdate(const proto::LiveUpdate& u) {
  proto::TransferReport names;
  names.set_run_id(u.run_id());
  names.set_label(u.label());
  names.set_host(u.host());
  names.set_role(u.role());
  names.set_transport(u.transport());
  names.set_direction(u.direction());
  for (const char* name : {"run_id", "label", "host", "role", "transport", "direction"}) {
    if (absl::Status s = CheckColumn(*FindTransferColumn(name), names); !s.ok()) return s;
  }
  if (u.run_id().empty() || u.host().empty()) return absl::InvalidArgumentError("a live update names no run or host");
  if (u.copies() < 1 || u.copies() > kMaxLiveCopies || u.copy() < 1 || u.copy() > u.copies()) {
    return absl::InvalidArgumentError(
        absl::StrCat("a live update's copy ", u.copy(), " of ", u.copies(), " is not within 1..", kMaxLiveCopies));
  }
  if (u.bytes() > (uint64_t{1} << 60) || u.copy_bytes() > (uint64_t{1} << 60) || u.spooled() > 1000000) {
    return absl::InvalidArgumentError("a live update's counts are past any real loop's");
  }
  if (!(u.mb_per_s() >= 0 && u.mb_per_s() <= kMaxMegabytesPerSecond) || !std::isfinite(u.left_s()) ||
      u.left_s() > kMaxFigure) {
    return absl::InvalidArgumentError("a live update's rate or time left is negative, huge or not a number");
  }
  return absl::OkStatus();
}

absl::Status CheckReport(const proto::TransferReport& r) {
  for (const TransferColumn& column : TransferColumnTable()) {
    if (absl::Status s = CheckColumn(column, r); !s.ok()) return s;
  }
  if (r.samples_size() > kMaxSamplesPerReport) {
    return absl::InvalidArgumentError(
        absl::StrCat("report has ", r.samples_size(), " samples, at most ", kMaxSamplesPerReport));
  }
  uint64_t files_in_samples = 0;
  for (const proto::Sample& s : r.samples()) {
    // Bounded as figures are (kMaxFigure): a sample's cells have a known largest width.
    if (!(s.t_s() >= 0 && s.t_s() <= kMaxFigure) || !(s.interval_s() >= 0 && s.interval_s() <= kMaxFigure)) {
      return absl::InvalidArgumentError("a sample has a negative, huge or non-finite time");
    }
    if (s.bytes() > 0 && !(static_cast<double>(s.bytes()) / 1e6 <= s.interval_s() * kMaxMegabytesPerSecond)) {
      return absl::InvalidArgumentError(
          absl::StrCat("a sample moves ", s.bytes(), " bytes in ", s.interval_s(), " s: not a real rate"));
    }
    if (absl::Status st = CheckSampleDevices(s); !st.ok()) return st;
    if (s.has_files()) {
      if (!r.has_files()) return absl::InvalidArgumentError("a sample counts files in a row that wrote no file set");
      files_in_samples += s.files();
      if (s.files() > r.files() || files_in_samples > r.files()) {
        return absl::InvalidArgumentError(
            absl::StrCat("the samples count more files than the row's ", r.files(), " whole ones"));
      }
    }
  }
  return absl::OkStatus();
}

absl::Status CheckHelloReply(const proto::HelloReply& r) {
  if (absl::Status s = FirstError(
          {CheckPlainText("receiver host", r.host(), 255), CheckPlainText("receiver version", r.version(), 64),
           Bounded("receiver target", r.target(), 4096), Port("receiver data port", r.data_port(), false),
           Port("receiver probe port", r.probe_port(), true)});
      !s.ok()) {
    return s;
  }
  if (r.has_mtu() && (r.mtu() < 68 || r.mtu() > 65536)) {
    return absl::InvalidArgumentError(absl::StrCat("receiver MTU ", r.mtu(), " is not an MTU"));
  }
  if (r.write_modes_size() > 8) return absl::InvalidArgumentError("receiver lists more than 8 write modes");
  for (const std::string& mode : r.write_modes()) {
    if (absl::Status s = OneOf<WriteMode>("receiver write mode", mode); !s.ok()) return s;
  }
  if (r.transports_size() > 16) return absl::InvalidArgumentError("agent lists more than 16 transports");
  for (const std::string& transport : r.transports()) {
    if (absl::Status s = TransportWord("agent transport", transport); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status CheckOpenTransferReply(const proto::OpenTransferReply& r) {
  if (r.ticket().size() != kTicketSize) {
    return absl::InvalidArgumentError(
        absl::StrCat("receiver sent a ", r.ticket().size(), "-byte ticket, want ", kTicketSize));
  }
  if (r.transfer_id() == 0) return absl::InvalidArgumentError("receiver sent transfer id 0");
  if (!std::isfinite(r.ticket_ttl_s()) || r.ticket_ttl_s() < 0 || r.ticket_ttl_s() > 86400) {
    return absl::InvalidArgumentError(absl::StrCat("receiver sent a ticket lifetime of ", r.ticket_ttl_s(), " s"));
  }
  return Port("receiver data port", r.data_port(), false);
}

absl::Status CheckFileName(const std::string& field, const std::string& name) {
  if (absl::Status s = CheckPlainText(field, name, 255); !s.ok()) return s;
  if (name.empty() || name == "." || name == ".." || name.find('/') != std::string::npos) {
    return absl::InvalidArgumentError(absl::StrCat(field, " \"", name, "\" is not a file name in the target (no '/')"));
  }
  return absl::OkStatus();
}

absl::Status CheckPrepareReadReply(const proto::PrepareReadReply& r, const proto::PrepareReadRequest& request) {
  if (absl::Status s = CheckFileName("receiver's read file", r.file()); !s.ok()) return s;
  if (r.length() == 0 || r.length() > kMaxReadLength ||
      (request.remote_file().empty() && r.length() != request.size())) {
    return absl::InvalidArgumentError(absl::StrCat("receiver's read file has ", r.length(), " bytes",
                                                   r.length() > kMaxReadLength ? " (more than 1 PiB)" : ""));
  }
  if (!std::isfinite(r.setup_s()) || r.setup_s() < 0 || r.setup_s() > 86400) {
    return absl::InvalidArgumentError(absl::StrCat("receiver's read setup took ", r.setup_s(), " s"));
  }
  return Bounded("receiver's read caveat", r.caveat(), 1000);
}

absl::Status CheckFetchedReport(const proto::TransferReport& r, uint64_t transfer_id,
                                const proto::OpenTransferRequest& opened) {
  if (absl::Status s = CheckReport(r); !s.ok()) return s;
  if (r.role() != Name(Role::kReceiver)) return absl::InvalidArgumentError("receiver's row has role " + r.role());
  if (r.transfer_id() != transfer_id) {
    return absl::InvalidArgumentError(
        absl::StrCat("receiver's row is for transfer ", r.transfer_id(), ", asked for ", transfer_id));
  }
  if (r.run_id() != opened.run_id() || r.label() != opened.label() || r.iteration() != opened.iteration() ||
      r.stream() != opened.stream()) {
    return absl::InvalidArgumentError(absl::StrCat("receiver's row for transfer ", transfer_id, " names run ",
                                                   r.run_id(), " iteration ", r.iteration(), " stream ", r.stream(),
                                                   ", not the transfer that was opened"));
  }
  if (r.has_files() && r.files() > opened.file_count()) {
    return absl::InvalidArgumentError(
        absl::StrCat("receiver's row has ", r.files(), " files of a transfer of ", opened.file_count()));
  }
  return absl::OkStatus();
}

absl::Status CheckFingerprint(const std::string& field, const std::string& value) {
  if (value.empty()) return absl::OkStatus();
  constexpr size_t kBase64Chars = 43;  // 32 bytes, unpadded
  absl::string_view digest(value);
  bool ok =
      absl::ConsumePrefix(&digest, "SHA256:") && digest.size() == kBase64Chars &&
      std::all_of(digest.begin(), digest.end(), [](char c) { return absl::ascii_isalnum(c) || c == '+' || c == '/'; });
  if (!ok) return absl::InvalidArgumentError(absl::StrCat(field, " is not a SHA256:... TLS key fingerprint"));
  return absl::OkStatus();
}

}  // namespace nasperf
