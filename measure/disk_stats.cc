#include "measure/disk_stats.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <iterator>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "common/fd.h"
#include "wire/validate.h"

namespace nasperf {
namespace {

constexpr size_t kMaxLines = 4096;
constexpr size_t kMaxLineBytes = 512;
// Enough for kMaxLines of /proc/diskstats; a longer file is cut, never read whole.
constexpr size_t kMaxFileBytes = 1 << 20;

absl::StatusOr<std::string> ReadBounded(const std::string& path) { return ReadFileBounded(path, kMaxFileBytes); }

// major minor name, then at least the 11 counters every kernel since 2.6 prints.
bool ParseDiskLine(absl::string_view line, DiskCounters* out) {
  std::vector<absl::string_view> f = absl::StrSplit(line, ' ', absl::SkipEmpty());
  if (f.size() < 14 || f[2].empty() || f[2].size() > 64) return false;
  uint64_t v[11];
  for (int i = 0; i < 11; ++i) {
    if (!absl::SimpleAtoi(f[3 + i], &v[i])) return false;
  }
  out->name = std::string(f[2]);
  out->sectors_read = v[2];
  out->sectors_written = v[6];
  out->io_ticks_ms = v[9];
  out->weighted_ms = v[10];
  return true;
}

const DiskCounters* Find(const std::vector<DiskCounters>& counters, const std::string& name) {
  for (const DiskCounters& c : counters) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

// Counters wrap or reset (a device re-created between readings): no figure then.
uint64_t Delta(uint64_t before, uint64_t after) { return after >= before ? after - before : 0; }

DeviceFigure Figure(const BlockDevice& device, const DiskCounters& a, const DiskCounters& b, double elapsed_s) {
  DeviceFigure f;
  f.device = device;
  const double elapsed_ms = elapsed_s * 1000;
  f.busy_pct = std::min(100.0, 100.0 * static_cast<double>(Delta(a.io_ticks_ms, b.io_ticks_ms)) / elapsed_ms);
  f.write_mb_s = static_cast<double>(Delta(a.sectors_written, b.sectors_written)) * 512 / elapsed_s / 1e6;
  f.read_mb_s = static_cast<double>(Delta(a.sectors_read, b.sectors_read)) * 512 / elapsed_s / 1e6;
  f.queue_depth = static_cast<double>(Delta(a.weighted_ms, b.weighted_ms)) / elapsed_ms;
  return f;
}

bool MovedData(const DeviceFigure& f) { return f.busy_pct > 0 || f.write_mb_s > 0 || f.read_mb_s > 0; }

std::string Busy(double pct) { return absl::StrFormat("%.0f %%", pct); }

std::string Leading(const DeviceFigure& f) {
  std::string text = absl::StrCat(f.device.name, ", ", f.device.role.empty() ? "the disk" : f.device.role,
                                  " under the target, ", Busy(f.busy_pct), " busy");
  if (f.write_mb_s > 0) absl::StrAppendFormat(&text, ", %.1f MB/s written", f.write_mb_s);
  if (f.read_mb_s > 0) absl::StrAppendFormat(&text, ", %.1f MB/s read", f.read_mb_s);
  absl::StrAppendFormat(&text, ", queue %.1f", f.queue_depth);
  return text;
}

// Only a disk busy for this share of the transfer is worth naming outside the target.
constexpr double kOutsideWorthNaming = 10;
constexpr int kBusyUnderTarget = 20;  // below it no device under the target set the pace

// The lines of the watched devices: all a reading keeps.
std::vector<DiskCounters> WatchedOnly(const std::vector<BlockDevice>& devices, const std::vector<DiskCounters>& all) {
  std::vector<DiskCounters> kept;
  for (const DiskCounters& c : all) {
    if (std::any_of(devices.begin(), devices.end(), [&](const BlockDevice& d) { return d.name == c.name; })) {
      kept.push_back(c);
    }
  }
  return kept;
}

}  // namespace

std::vector<DiskCounters> ParseDiskstats(absl::string_view text) {
  std::vector<DiskCounters> out;
  size_t lines = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (++lines > kMaxLines) break;
    DiskCounters c;
    if (line.size() <= kMaxLineBytes && ParseDiskLine(line, &c)) out.push_back(std::move(c));
  }
  return out;
}

absl::StatusOr<std::vector<DiskCounters>> ReadDiskstats(const std::string& path) {
  absl::StatusOr<std::string> text = ReadBounded(path);
  if (!text.ok()) return text.status();
  return ParseDiskstats(*text);
}

std::optional<uint64_t> ParseDirtyBytes(absl::string_view meminfo) {
  std::optional<uint64_t> total;
  size_t lines = 0;
  for (absl::string_view line : absl::StrSplit(meminfo, '\n')) {
    if (++lines > kMaxLines) break;
    std::vector<absl::string_view> f = absl::StrSplit(line, ' ', absl::SkipEmpty());
    uint64_t kb = 0;
    if (f.size() != 3 || f[2] != "kB" || (f[0] != "Dirty:" && f[0] != "Writeback:")) continue;
    if (!absl::SimpleAtoi(f[1], &kb) || kb > (uint64_t{1} << 40)) continue;
    total = total.value_or(0) + kb * 1024;
  }
  return total;
}

std::vector<DeviceFigure> FigureDevices(const std::vector<BlockDevice>& devices,
                                        const std::vector<DiskCounters>& before, const std::vector<DiskCounters>& after,
                                        double elapsed_s) {
  std::vector<DeviceFigure> out;
  if (!(elapsed_s > 0)) return out;
  for (const BlockDevice& device : devices) {
    const DiskCounters* a = Find(before, device.name);
    const DiskCounters* b = Find(after, device.name);
    if (a == nullptr || b == nullptr) continue;
    DeviceFigure f = Figure(device, *a, *b, elapsed_s);
    if (device.under_target || MovedData(f)) out.push_back(std::move(f));
  }
  std::stable_sort(out.begin(), out.end(), [](const DeviceFigure& x, const DeviceFigure& y) {
    if (x.device.under_target != y.device.under_target) return x.device.under_target;
    return x.busy_pct > y.busy_pct;
  });
  if (out.size() > kMaxDevices) out.resize(kMaxDevices);
  return out;
}

const DeviceFigure* BusiestUnderTarget(const std::vector<DeviceFigure>& figures) {
  // Sorted: the first is the busiest under the target, when there is one.
  return !figures.empty() && figures[0].device.under_target ? &figures[0] : nullptr;
}

std::string DeviceBusyCell(const std::vector<DeviceFigure>& figures, size_t max_bytes) {
  std::string cell;
  size_t entries = 0;
  for (const DeviceFigure& f : figures) {
    if (entries == kMaxDevices) break;
    std::string entry = absl::StrFormat("%s%s=%.0f", entries > 0 ? ";" : "", f.device.name, f.busy_pct);
    if (cell.size() + entry.size() > max_bytes) break;  // the busiest come first
    cell += entry;
    ++entries;
  }
  return cell;
}

std::string DeviceSentence(const std::vector<DeviceFigure>& figures) {
  const DeviceFigure* busiest = BusiestUnderTarget(figures);
  std::string text = busiest != nullptr ? Leading(*busiest) : "no device under the target was found";
  if (busiest != nullptr && busiest->busy_pct < kBusyUnderTarget) {
    // A disk verdict then blames no device: say so rather than name an idle one.
    absl::StrAppend(&text, " (no device under the target was ", kBusyUnderTarget,
                    " % busy: what held the data back sits above them, e.g. a throttle or the file system)");
  }
  if (text.size() > kMaxDetailBytes) {
    size_t cut = kMaxDetailBytes;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xc0) == 0x80) --cut;  // not inside a character
    text.resize(cut);
  }
  for (const DeviceFigure& f : figures) {
    std::string part;
    if (&f == busiest) continue;
    if (f.device.under_target) {
      part = absl::StrCat("; ", f.device.name, " ", Busy(f.busy_pct));
    } else if (f.busy_pct >= kOutsideWorthNaming) {
      part = absl::StrCat("; ", f.device.name, " ", Busy(f.busy_pct), " (",
                          f.device.role.empty() ? "" : f.device.role + ", ", "not under the target)");
    }
    if (text.size() + part.size() > kMaxDetailBytes) break;  // the busiest come first: the rest matter less
    text += part;
  }
  return text;
}

void AddDeviceColumns(const DeviceWatchResult& result, proto::TransferReport* row) {
  if (result.dirty_peak_bytes) row->set_dirty_peak_bytes(*result.dirty_peak_bytes);
  if (result.devices.empty()) return;
  if (const DeviceFigure* busiest = BusiestUnderTarget(result.devices)) {
    row->set_busiest_device(busiest->device.name);
    row->set_busiest_busy_pct(busiest->busy_pct);
  }
  row->set_device_busy(DeviceBusyCell(result.devices));
  row->set_disk_detail(DeviceSentence(result.devices));
}

void SetSampleDevices(const std::vector<DeviceFigure>& figures, proto::Sample* sample) {
  if (figures.empty()) return;
  if (const DeviceFigure* busiest = BusiestUnderTarget(figures);
      busiest != nullptr && busiest->device.name.size() <= kMaxSampleDeviceNameBytes) {
    sample->set_busiest_device(busiest->device.name);
    sample->set_busiest_busy_pct(busiest->busy_pct);
  }
  sample->set_device_busy(DeviceBusyCell(figures, kMaxSampleDeviceBusyBytes));
}

namespace {

// The reading nearest to `ns` (readings sorted by time, at least one).
size_t NearestReading(const std::vector<DiskReading>& readings, int64_t ns) {
  auto after = std::lower_bound(readings.begin(), readings.end(), ns,
                                [](const DiskReading& r, int64_t t) { return r.mono_ns < t; });
  if (after == readings.end()) return readings.size() - 1;
  if (after == readings.begin()) return 0;
  auto before = std::prev(after);
  return static_cast<size_t>((ns - before->mono_ns <= after->mono_ns - ns ? before : after) - readings.begin());
}

}  // namespace

void AddSampleDevices(const DeviceWatchResult& result, int64_t samples_start_ns, proto::TransferReport* row) {
  if (result.readings.size() < 2) return;
  for (proto::Sample& s : *row->mutable_samples()) {
    const int64_t end_ns = samples_start_ns + static_cast<int64_t>(s.t_s() * 1e9);
    const size_t a = NearestReading(result.readings, end_ns - static_cast<int64_t>(s.interval_s() * 1e9));
    const size_t b = NearestReading(result.readings, end_ns);
    if (b <= a) continue;
    const DiskReading& from = result.readings[a];
    const DiskReading& to = result.readings[b];
    SetSampleDevices(
        FigureDevices(result.watched, from.counters, to.counters, NanosToSeconds(to.mono_ns - from.mono_ns)), &s);
  }
}

std::vector<BlockDevice> DevicesToWatch(const std::string& dir, const std::string& sys) {
  std::vector<BlockDevice> devices;
  if (absl::StatusOr<FsFacts> facts = ProbeFileSystem(dir, sys); facts.ok()) devices = DevicesUnder(*facts, sys);
  for (BlockDevice& disk : AllDisks(sys)) {
    if (std::none_of(devices.begin(), devices.end(), [&](const BlockDevice& d) { return d.name == disk.name; })) {
      devices.push_back(std::move(disk));
    }
  }
  // Only on a real system: a fake sysfs (tests) has no Unraid beside it.
  if (sys == "/sys") {
    if (absl::StatusOr<std::string> ini = ReadBounded(kUnraidDisksIni); ini.ok()) ApplyUnraidRoles(*ini, &devices);
  }
  return devices;
}

DeviceWatch::DeviceWatch(const std::string& dir, double interval_s, const std::string& sys, const std::string& proc)
    : DeviceWatch(DevicesToWatch(dir, sys), interval_s, proc) {}

DeviceWatch::DeviceWatch(std::vector<BlockDevice> devices, double interval_s, const std::string& proc)
    : proc_(proc), devices_(std::move(devices)), interval_ns_(static_cast<int64_t>(interval_s * 1e9)) {
  absl::StatusOr<std::vector<DiskCounters>> before = ReadDiskstats(proc_ + "/diskstats");
  have_before_ = before.ok();
  if (have_before_) before_ = *std::move(before);
  start_ns_ = MonoNanos();
  if (have_before_) {
    absl::MutexLock lock(&mu_);
    readings_.push_back(DiskReading{start_ns_, WatchedOnly(devices_, before_)});
  }
  ReadDirty();
  if (interval_ns_ > 0) thread_ = std::thread([this] { Run(); });
}

DeviceWatch::~DeviceWatch() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

void DeviceWatch::ReadDirty() {
  absl::StatusOr<std::string> meminfo = ReadBounded(proc_ + "/meminfo");
  if (!meminfo.ok()) return;
  const std::optional<uint64_t> dirty = ParseDirtyBytes(*meminfo);
  if (!dirty) return;
  absl::MutexLock lock(&mu_);
  if (!dirty_peak_ || *dirty > *dirty_peak_) dirty_peak_ = dirty;
}

void DeviceWatch::Run() {
  for (;;) {
    {
      absl::MutexLock lock(&mu_);
      // A timed wait: the interval is the sampling period, and Stop() ends it at once.
      mu_.AwaitWithTimeout(absl::Condition(&stop_), absl::Nanoseconds(interval_ns_));
      if (stop_) return;
    }
    ReadDirty();
    ReadDisks();
  }
}

void DeviceWatch::ReadDisks() {
  absl::StatusOr<std::vector<DiskCounters>> now = ReadDiskstats(proc_ + "/diskstats");
  if (!now.ok()) return;
  DiskReading reading{MonoNanos(), WatchedOnly(devices_, *now)};
  absl::MutexLock lock(&mu_);
  if (readings_.size() >= kMaxDiskReadings) {
    size_t kept = 0;
    for (size_t i = 0; i < readings_.size(); i += 2) readings_[kept++] = std::move(readings_[i]);
    readings_.resize(kept);
  }
  readings_.push_back(std::move(reading));
}

DeviceWatchResult DeviceWatch::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  if (thread_.joinable()) thread_.join();
  ReadDirty();
  DeviceWatchResult result;
  absl::StatusOr<std::vector<DiskCounters>> after = ReadDiskstats(proc_ + "/diskstats");
  const double elapsed_s = NanosToSeconds(MonoNanos() - start_ns_);
  if (have_before_ && after.ok()) result.devices = FigureDevices(devices_, before_, *after, elapsed_s);
  absl::MutexLock lock(&mu_);
  result.dirty_peak_bytes = dirty_peak_;
  if (after.ok()) readings_.push_back(DiskReading{MonoNanos(), WatchedOnly(devices_, *after)});
  result.watched = devices_;
  result.readings = std::move(readings_);
  return result;
}

}  // namespace nasperf
