// Per-device figures of the NAS during a transfer (docs/DESIGN.md §6, measurement semantics: Devices): busy %,
// MB/s written and read and queue depth of each block device under the target (measure/devices.h)
// and of every other disk that did I/O meanwhile, from /proc/diskstats read at the start and
// the end, and every interval for per-sample figures; and the peak of Dirty + Writeback in
// /proc/meminfo, read every interval by the watch's own thread. Parsers are pure; a DeviceWatch belongs to the thread
// that started it.
#ifndef NASPERF_MEASURE_DISK_STATS_H_
#define NASPERF_MEASURE_DISK_STATS_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "measure/devices.h"
#include "proto/nasperf.pb.h"

namespace nasperf {

// One line of /proc/diskstats: the counters the figures come from.
struct DiskCounters {
  std::string name;
  uint64_t sectors_read = 0, sectors_written = 0;  // 512-byte sectors, whatever the device's own size
  uint64_t io_ticks_ms = 0;                        // time with at least one request in flight
  uint64_t weighted_ms = 0;                        // request time summed over requests
};

// At most 4096 lines of at most 512 bytes are read; a malformed line is skipped.
std::vector<DiskCounters> ParseDiskstats(absl::string_view text);
absl::StatusOr<std::vector<DiskCounters>> ReadDiskstats(const std::string& path = "/proc/diskstats");

// Dirty + Writeback in bytes; nullopt when the text has neither.
std::optional<uint64_t> ParseDirtyBytes(absl::string_view meminfo);

struct DeviceFigure {
  BlockDevice device;
  double busy_pct = 0;    // io_ticks over the elapsed time, at most 100
  double write_mb_s = 0;  // 10^6 bytes per second
  double read_mb_s = 0;
  double queue_depth = 0;  // weighted time over the elapsed time: requests in flight on average
};

// The devices under the target (each, even when idle) and the other disks that moved
// data, from two readings elapsed_s apart. Sorted: under the target first, then by busy %
// (descending); at most kMaxDevices.
std::vector<DeviceFigure> FigureDevices(const std::vector<BlockDevice>& devices,
                                        const std::vector<DiskCounters>& before, const std::vector<DiskCounters>& after,
                                        double elapsed_s);
// The busiest device under the target; nullptr when none was found.
const DeviceFigure* BusiestUnderTarget(const std::vector<DeviceFigure>& figures);
// "loop7=99;loop6=7": every figure's busy %, whole numbers (the device_busy column); whole
// entries only, at most max_bytes.
std::string DeviceBusyCell(const std::vector<DeviceFigure>& figures, size_t max_bytes = SIZE_MAX);
// The figures in words: "loop7, member 2 of the btrfs raid1 under the target, 98 % busy,
// 61.0 MB/s written, queue 1.0; loop6 7 %", and busy disks outside the target named as such.
// At most kMaxDetailBytes (the disk_detail column's bound).
inline constexpr size_t kMaxDetailBytes = 1000;
std::string DeviceSentence(const std::vector<DeviceFigure>& figures);

// One reading of /proc/diskstats (the watched devices' lines) at a monotonic time.
struct DiskReading {
  int64_t mono_ns = 0;
  std::vector<DiskCounters> counters;
};

struct DeviceWatchResult {
  std::vector<DeviceFigure> devices;
  std::optional<uint64_t> dirty_peak_bytes;
  // What per-interval figures come from (AddSampleDevices): the devices watched and a
  // reading every interval, first to last (coarser past kMaxDiskReadings).
  std::vector<BlockDevice> watched;
  std::vector<DiskReading> readings;
};
// A watch keeps at most this many readings: past it every other one goes and the
// interval doubles (as IntervalSampler does), so memory stays bounded on a long transfer.
inline constexpr size_t kMaxDiskReadings = 2048;

// The result's columns into a row: busiest_device, busiest_busy_pct, device_busy,
// disk_detail and dirty_peak_bytes, each only when known.
void AddDeviceColumns(const DeviceWatchResult& result, proto::TransferReport* row);
// One interval's figures into a sample: its busiest device under the target with its
// busy %, and device_busy within kMaxSampleDeviceBusyBytes.
void SetSampleDevices(const std::vector<DeviceFigure>& figures, proto::Sample* sample);
// Every sample of the row gets the figures between the readings nearest its start and its
// end (none when both are the same reading). samples_start_ns: the monotonic time of the
// samples' t_s 0 (the transfer's first byte).
void AddSampleDevices(const DeviceWatchResult& result, int64_t samples_start_ns, proto::TransferReport* row);

// The block devices under `dir`, resolved through its file system (on ZFS by running
// `zpool status -P`: up to 2 s), then every other disk: what a DeviceWatch reads. Slow
// enough to do once per target, never per transfer. `sys`: /sys, or a fake (tests).
std::vector<BlockDevice> DevicesToWatch(const std::string& dir, const std::string& sys = "/sys");

class DeviceWatch {
 public:
  // Takes the first reading of `devices` and starts the thread that reads meminfo and
  // diskstats every interval_s. `proc` is /proc, or a fake (tests).
  explicit DeviceWatch(std::vector<BlockDevice> devices, double interval_s = 0.1, const std::string& proc = "/proc");
  // The same for the devices DevicesToWatch(dir, sys) finds.
  explicit DeviceWatch(const std::string& dir, double interval_s = 0.1, const std::string& sys = "/sys",
                       const std::string& proc = "/proc");
  ~DeviceWatch();
  DeviceWatch(const DeviceWatch&) = delete;
  DeviceWatch& operator=(const DeviceWatch&) = delete;

  // The second reading and the figures; call once.
  DeviceWatchResult Stop();

 private:
  void Run();
  void ReadDirty();
  // A diskstats reading of the watched devices, kept for the per-interval figures.
  void ReadDisks();

  std::string proc_;
  std::vector<BlockDevice> devices_;
  std::vector<DiskCounters> before_;
  bool have_before_ = false;
  int64_t start_ns_ = 0;
  int64_t interval_ns_ = 0;
  absl::Mutex mu_;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::optional<uint64_t> dirty_peak_ ABSL_GUARDED_BY(mu_);
  std::vector<DiskReading> readings_ ABSL_GUARDED_BY(mu_);
  std::thread thread_;
};

}  // namespace nasperf

#endif  // NASPERF_MEASURE_DISK_STATS_H_
