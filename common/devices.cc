#include "common/devices.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/btrfs.h>
#include <linux/magic.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/fd.h"

namespace nasperf {
namespace {

// sysfs attributes are one short line; anything longer is not what we asked for.
std::string ReadAttribute(const std::string& path) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return "";
  char buf[256];
  const ssize_t n = ::read(fd.get(), buf, sizeof buf);
  if (n <= 0) return "";
  std::string value(absl::StripAsciiWhitespace(absl::string_view(buf, static_cast<size_t>(n))));
  // It ends up in a CSV cell and a console line: no control characters, whatever a dm name holds.
  for (char& c : value) {
    if (absl::ascii_iscntrl(c)) c = '?';
  }
  return value;
}

bool Exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

// A directory's entries (not . and ..), sorted, at most `max`.
std::vector<std::string> ListDir(const std::string& path, size_t max) {
  std::vector<std::string> names;
  DIR* dir = ::opendir(path.c_str());
  if (dir == nullptr) return names;
  while (names.size() < max) {
    const dirent* entry = ::readdir(dir);
    if (entry == nullptr) break;
    const absl::string_view name = entry->d_name;
    if (name != "." && name != "..") names.emplace_back(name);
  }
  ::closedir(dir);
  std::sort(names.begin(), names.end());
  return names;
}

std::string BaseName(absl::string_view path) {
  const size_t slash = path.rfind('/');
  return std::string(slash == absl::string_view::npos ? path : path.substr(slash + 1));
}

// A kernel name is what /proc/diskstats prints: nothing that could climb out of sysfs.
bool PlainName(absl::string_view name) {
  if (name.empty() || name.size() > 64 || name == "." || name == "..") return false;
  return std::none_of(name.begin(), name.end(), [](char c) { return c == '/' || absl::ascii_iscntrl(c); });
}

std::string NameOfDev(const std::string& sys, unsigned major, unsigned minor) {
  char target[PATH_MAX];
  const std::string link = absl::StrCat(sys, "/dev/block/", major, ":", minor);
  const ssize_t n = ::readlink(link.c_str(), target, sizeof target - 1);
  if (n <= 0) return "";
  return BaseName(absl::string_view(target, static_cast<size_t>(n)));
}

void AddDevice(BlockDevice device, std::vector<BlockDevice>* out) {
  if (out->size() >= kMaxDevices || !PlainName(device.name)) return;
  for (const BlockDevice& d : *out) {
    if (d.name == device.name) return;
  }
  out->push_back(std::move(device));
}

// Joins a member's own role with the role of what it is a member of.
std::string Within(const std::string& role, const std::string& outer) {
  if (outer.empty()) return role;
  if (role.empty()) return outer;
  return absl::StrCat(role, ", ", outer);
}

// What a slave of a stacked device is, as md or dm state it.
std::string SlaveRole(const std::string& block, const std::string& holder, const std::string& slave) {
  const std::string level = ReadAttribute(absl::StrCat(block, "/md/level"));
  if (!level.empty()) {
    const std::string member = absl::StrCat(block, "/md/dev-", slave);
    const std::string slot = ReadAttribute(member + "/slot");
    const std::string state = ReadAttribute(member + "/state");
    if (slot.empty() || slot == "none" || absl::StrContains(state, "spare")) {
      return absl::StrCat("spare of the md ", level, " ", holder);
    }
    return absl::StrCat("slot ", slot, " of the md ", level, " ", holder);
  }
  const std::string dm = ReadAttribute(absl::StrCat(block, "/dm/name"));
  return absl::StrCat("part of ", dm.empty() ? holder : absl::StrCat("dm ", dm));
}

// name's leaves into *out: its slaves' (md, dm), else its whole disk's, else itself.
void Expand(const std::string& sys, const std::string& name, const std::string& role, int depth,
            std::vector<BlockDevice>* out) {
  if (!PlainName(name) || out->size() >= kMaxDevices) return;
  const std::string block = absl::StrCat(sys, "/class/block/", name);
  const std::vector<std::string> slaves = ListDir(block + "/slaves", kMaxDevices);
  if (!slaves.empty() && depth < kMaxStackDepth) {
    for (const std::string& slave : slaves)
      Expand(sys, slave, Within(SlaveRole(block, name, slave), role), depth + 1, out);
    return;
  }
  const std::string disk = WholeDisk(name, sys);
  if (disk != name && depth < kMaxStackDepth) return Expand(sys, disk, role, depth + 1, out);
  AddDevice({name, role, true}, out);
}

std::string FormatFsid(const unsigned char* id) {
  std::string hex;
  for (int i = 0; i < BTRFS_FSID_SIZE; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) hex += '-';
    absl::StrAppendFormat(&hex, "%02x", id[i]);
  }
  return hex;
}

// The data profile as sysfs lists it; a file system being converted shows two, and
// the one that is not "single" is the one it is becoming.
std::string BtrfsProfile(const std::string& sys, const std::string& fsid) {
  static const char* const kProfiles[] = {"raid1c4", "raid1c3", "raid10", "raid1", "raid0",
                                          "raid5",   "raid6",   "dup",    "single"};
  const std::vector<std::string> present = ListDir(absl::StrCat(sys, "/fs/btrfs/", fsid, "/allocation/data"), 64);
  for (const char* profile : kProfiles) {
    if (std::find(present.begin(), present.end(), profile) != present.end()) return profile;
  }
  return "";
}

// The kernel name a /dev path leads to (through by-id links); empty for other paths.
std::string DevName(const std::string& path) {
  char resolved[PATH_MAX];
  const std::string real = ::realpath(path.c_str(), resolved) != nullptr ? std::string(resolved) : path;
  if (!absl::StartsWith(real, "/dev/")) return "";
  const std::string name = BaseName(real);
  return PlainName(name) ? name : "";
}

void ProbeBtrfs(int dir, const std::string& sys, FsFacts* facts) {
  btrfs_ioctl_fs_info_args info{};
  if (::ioctl(dir, BTRFS_IOC_FS_INFO, &info) != 0) return;
  facts->btrfs_fsid = FormatFsid(info.fsid);
  facts->btrfs_profile = BtrfsProfile(sys, facts->btrfs_fsid);
  const uint64_t max_id = std::min<uint64_t>(info.max_id, 4 * kMaxDevices);
  for (uint64_t devid = 1; devid <= max_id; ++devid) {
    btrfs_ioctl_dev_info_args dev{};
    dev.devid = devid;
    if (::ioctl(dir, BTRFS_IOC_DEV_INFO, &dev) != 0) continue;
    const std::string path(reinterpret_cast<const char*>(dev.path),
                           strnlen(reinterpret_cast<const char*>(dev.path), sizeof dev.path));
    // By the name sysfs lists under devices/: the partition, when btrfs sits on one.
    const std::string name = DevName(path);
    if (!name.empty()) facts->btrfs_devids[name] = static_cast<int>(devid);
  }
}

// "tank" from "  pool: tank".
bool PoolLine(absl::string_view line, std::string* pool) {
  absl::string_view rest = absl::StripLeadingAsciiWhitespace(line);
  if (!absl::ConsumePrefix(&rest, "pool:")) return false;
  *pool = std::string(absl::StripAsciiWhitespace(rest));
  return true;
}

bool IsSection(absl::string_view token) {
  return token == "logs" || token == "cache" || token == "spares" || token == "special" || token == "dedup";
}

std::string SectionRole(const std::string& section, const std::string& pool) {
  if (section.empty()) return absl::StrCat("ZFS pool ", pool);
  if (section == "logs") return absl::StrCat("log of ZFS pool ", pool);
  if (section == "spares") return absl::StrCat("spare of ZFS pool ", pool);
  return absl::StrCat(section, " of ZFS pool ", pool);
}

struct ZpoolState {
  std::string pool, section, group;
  size_t group_indent = 0;
  bool in_config = false;
};

void ZpoolConfigLine(absl::string_view line, ZpoolState* s, std::vector<ZpoolVdev>* out) {
  const size_t indent = line.find_first_not_of(" \t");
  if (indent == absl::string_view::npos) return;
  std::vector<absl::string_view> tokens =
      absl::StrSplit(line.substr(indent), absl::ByAnyChar(" \t"), absl::SkipEmpty());
  const std::string token(tokens[0]);
  if (token == "NAME" || token == s->pool) return;
  if (!s->group.empty() && indent <= s->group_indent) s->group.clear();
  if (IsSection(token)) {
    s->section = token;
    return;
  }
  if (token[0] != '/') {
    s->group = token;  // mirror-0, raidz2-1, draid1:..., replacing-0, spare-0
    s->group_indent = indent;
    return;
  }
  const std::string where = SectionRole(s->section, s->pool);
  out->push_back({token, s->group.empty() ? (s->section.empty() ? "a disk of " + where : where)
                                          : absl::StrCat("member of ", s->group, ", ", where)});
}

}  // namespace

std::string WholeDisk(const std::string& name, const std::string& sys) {
  if (!PlainName(name)) return name;
  const std::string block = absl::StrCat(sys, "/class/block/", name);
  if (!Exists(block + "/partition")) return name;
  char resolved[PATH_MAX];
  if (::realpath(block.c_str(), resolved) == nullptr) return name;
  const std::string path = resolved;
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos || slash == 0) return name;
  const std::string parent = BaseName(absl::string_view(path).substr(0, slash));
  return PlainName(parent) ? parent : name;
}

absl::StatusOr<FsFacts> ProbeFileSystem(const std::string& dir, const std::string& sys) {
  Fd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd.valid()) return ErrnoStatus(errno, absl::StrCat("open ", dir));
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) return ErrnoStatus(errno, absl::StrCat("stat ", dir));
  FsFacts facts;
  facts.major = major(st.st_dev);
  facts.minor = minor(st.st_dev);
  struct statfs fs;
  if (::fstatfs(fd.get(), &fs) != 0) return ErrnoStatus(errno, absl::StrCat("statfs ", dir));
  if (static_cast<unsigned long>(fs.f_type) == BTRFS_SUPER_MAGIC) ProbeBtrfs(fd.get(), sys, &facts);
  return facts;
}

std::vector<BlockDevice> DevicesUnder(const FsFacts& facts, const std::string& sys) {
  std::vector<BlockDevice> out;
  for (const BlockDevice& vdev : facts.zfs) Expand(sys, vdev.name, vdev.role, 0, &out);
  if (!facts.zfs.empty()) return out;
  if (!facts.btrfs_fsid.empty() && PlainName(facts.btrfs_fsid)) {
    const std::string kind = facts.btrfs_profile.empty() ? "btrfs file system" : "btrfs " + facts.btrfs_profile;
    for (const std::string& name :
         ListDir(absl::StrCat(sys, "/fs/btrfs/", facts.btrfs_fsid, "/devices"), kMaxDevices)) {
      auto devid = facts.btrfs_devids.find(name);
      const std::string role = devid == facts.btrfs_devids.end()
                                   ? absl::StrCat("member of the ", kind)
                                   : absl::StrCat("member ", devid->second, " of the ", kind);
      Expand(sys, name, role, 0, &out);
    }
    return out;
  }
  const std::string name = NameOfDev(sys, facts.major, facts.minor);
  if (!name.empty()) Expand(sys, name, "", 0, &out);
  return out;
}

std::vector<BlockDevice> AllDisks(const std::string& sys) {
  std::vector<BlockDevice> out;
  for (std::string& name : ListDir(sys + "/block", 256)) {
    if (PlainName(name)) out.push_back({std::move(name), "", false});
  }
  return out;
}

std::vector<ZpoolVdev> ParseZpoolStatus(absl::string_view text) {
  std::vector<ZpoolVdev> out;
  ZpoolState s;
  size_t lines = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (++lines > 4096 || out.size() >= kMaxDevices) break;
    if (line.size() > 512) continue;
    std::string pool;
    if (PoolLine(line, &pool)) {
      s = ZpoolState{pool};
      continue;
    }
    const absl::string_view trimmed = absl::StripAsciiWhitespace(line);
    if (absl::StartsWith(trimmed, "config:")) {
      s.in_config = true;
    } else if (absl::StartsWith(trimmed, "errors:")) {
      s.in_config = false;
    } else if (s.in_config && !s.pool.empty()) {
      ZpoolConfigLine(line, &s, &out);
    }
  }
  return out;
}

std::string KernelNameOfPath(const std::string& path, const std::string& sys) {
  const std::string name = DevName(path);
  return name.empty() ? "" : WholeDisk(name, sys);
}

}  // namespace nasperf
