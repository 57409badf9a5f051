// Which block devices hold a directory (docs/DESIGN.md §6, measurement semantics: Devices): through the file
// system (btrfs's device list, ZFS's `zpool status -P` vdevs), a partition's whole disk and
// the members (sysfs slaves/) of md and dm devices, with the role only where the system
// states it. Also every whole disk, for context. Reads /proc and sysfs, bounded. Stateless; thread-safe.
#ifndef NASPERF_MEASURE_DEVICES_H_
#define NASPERF_MEASURE_DEVICES_H_

#include <cstddef>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace nasperf {

// Past these a resolution stops: a hostile or broken tree never makes it run long.
inline constexpr size_t kMaxDevices = 32;
inline constexpr int kMaxStackDepth = 8;

struct BlockDevice {
  std::string name;  // kernel name, as /proc/diskstats has it (sdb, loop7, nvme0n1)
  // What the system says it is, e.g. "member 2 of the btrfs raid1", "member 1 of the md
  // raid5", "spare of the md raid5", "log of ZFS pool tank"; empty: a plain disk.
  std::string role;
  bool under_target = false;
};

// What the file system says about its own devices, beyond st_dev.
struct FsFacts {
  unsigned major = 0, minor = 0;            // st_dev of the directory
  std::string btrfs_fsid;                   // the UUID, on btrfs
  std::string btrfs_profile;                // raid1, raid10, single, ... (the data profile)
  std::map<std::string, int> btrfs_devids;  // kernel name -> btrfs devid, where the ioctl told it
  // ZFS: kernel names of the pool's vdevs with their roles (ZpoolDevices).
  std::vector<BlockDevice> zfs;
};

// st_dev, and on btrfs its fsid, data profile and devids (BTRFS_IOC_FS_INFO and _DEV_INFO).
absl::StatusOr<FsFacts> ProbeFileSystem(const std::string& dir, const std::string& sys = "/sys");

// The leaf devices under a file system: partitions become their whole disk, md and dm
// devices their slaves (recursively, at most kMaxStackDepth), at most kMaxDevices.
// `sys` is /sys or a fake tree (tests).
std::vector<BlockDevice> DevicesUnder(const FsFacts& facts, const std::string& sys = "/sys");

// The whole disk of a kernel name: a partition's parent, else the name itself.
std::string WholeDisk(const std::string& name, const std::string& sys = "/sys");

// Every whole disk in sys/block (at most 256 names read), under_target false.
std::vector<BlockDevice> AllDisks(const std::string& sys = "/sys");

// A vdev of `zpool status -P`: its path as printed and what it is in the pool.
struct ZpoolVdev {
  std::string path;  // /dev/disk/by-id/ata-...-part1, /dev/sdb1
  std::string role;  // "member of mirror-0 of ZFS pool tank", "cache of ZFS pool tank", ...
};
// Parses `zpool status -P` output (bounded: at most 4096 lines of 512 bytes are read, at
// most kMaxDevices vdevs kept). Lines that are not vdevs are skipped.
std::vector<ZpoolVdev> ParseZpoolStatus(absl::string_view text);

// The vdevs' kernel names (through KernelNameOfPath; a path that names no block device
// is left out), roles kept, at most kMaxDevices.
std::vector<BlockDevice> ZpoolDevices(const std::vector<ZpoolVdev>& vdevs, const std::string& sys = "/sys");

// Unraid states its disks' assignments in this file (emhttp's disks.ini): a section per
// slot, ["parity"], ["disk1"], ["cache"], with name="...", device="sdb" and type="Parity",
// "Data", "Cache" or "Flash".
inline constexpr char kUnraidDisksIni[] = "/var/local/emhttp/disks.ini";
// Gives each device without a role the one disks.ini states: "Unraid parity", "Unraid
// parity2", "Unraid data disk disk1", "Unraid cache pool cache"; the boot flash and empty
// slots are skipped. Bounded as ParseZpoolStatus.
void ApplyUnraidRoles(absl::string_view disks_ini, std::vector<BlockDevice>* devices);

// What /proc/self/mountinfo says of the mount with st_dev major:minor: its type and
// source (a device path, or a ZFS dataset). nullopt when no line has it. Bounded as
// ParseZpoolStatus.
struct MountSource {
  std::string fstype, source;
};
std::optional<MountSource> MountOfDevice(absl::string_view mountinfo, unsigned major, unsigned minor);
// The pool of a ZFS dataset ("tank/media" -> "tank"); empty when it cannot be a pool name.
std::string ZfsPool(absl::string_view dataset);

// Runs argv[0] (an absolute path; no PATH search, an empty environment, stdin and stderr
// /dev/null) and returns its standard output, whatever its exit status: at most max_bytes,
// within timeout_ms, after which it is killed (DEADLINE_EXCEEDED when its output did not
// end by then). For `zpool status -P`, the only place ZFS names its vdevs.
absl::StatusOr<std::string> RunForOutput(const std::vector<std::string>& argv, int timeout_ms, size_t max_bytes);
// The first of `paths` this process may execute (a tool's usual places), or nullptr.
const char* FirstExecutable(std::initializer_list<const char*> paths);

// The kernel name behind a device path (following /dev/disk/by-id links), as a whole disk;
// empty when it names no block device.
std::string KernelNameOfPath(const std::string& path, const std::string& sys = "/sys");

}  // namespace nasperf

#endif  // NASPERF_MEASURE_DEVICES_H_
