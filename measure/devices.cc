#include "measure/devices.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/btrfs.h>
#include <linux/magic.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <thread>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
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

// A small text file (mountinfo), at most max bytes: a longer one is cut, never read whole.
std::string ReadText(const std::string& path, size_t max) { return ReadFileBounded(path, max).value_or(""); }

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

// Without the ioctl (an older kernel, a sandbox): the fsid whose devices/ lists the
// device the mount names; no devids then.
void BtrfsFromMount(const std::string& sys, const FsFacts& dev, FsFacts* facts) {
  const std::optional<MountSource> mount =
      MountOfDevice(ReadText("/proc/self/mountinfo", 1 << 20), dev.major, dev.minor);
  if (!mount) return;
  const std::string name = DevName(mount->source);
  if (name.empty()) return;
  for (const std::string& fsid : ListDir(sys + "/fs/btrfs", 64)) {
    if (PlainName(fsid) && Exists(absl::StrCat(sys, "/fs/btrfs/", fsid, "/devices/", name))) {
      facts->btrfs_fsid = fsid;
      facts->btrfs_profile = BtrfsProfile(sys, fsid);
      return;
    }
  }
}

void ProbeBtrfs(int dir, const std::string& sys, FsFacts* facts) {
  btrfs_ioctl_fs_info_args info{};
  if (::ioctl(dir, BTRFS_IOC_FS_INFO, &info) != 0) return BtrfsFromMount(sys, *facts, facts);
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

constexpr int kZpoolTimeoutMs = 2000;
constexpr unsigned long kZfsSuperMagic = 0x2fc12fc1;

void ProbeZfs(const std::string& sys, FsFacts* facts) {
  const std::optional<MountSource> mount =
      MountOfDevice(ReadText("/proc/self/mountinfo", 1 << 20), facts->major, facts->minor);
  if (!mount || mount->fstype != "zfs") return;
  const std::string pool = ZfsPool(mount->source);
  if (pool.empty()) return;
  // ZFS names its vdevs only in `zpool status`; where the tool lives on NAS systems.
  if (const char* zpool = FirstExecutable({"/usr/sbin/zpool", "/sbin/zpool", "/usr/local/sbin/zpool"})) {
    absl::StatusOr<std::string> status = RunForOutput({zpool, "status", "-P", pool}, kZpoolTimeoutMs, 1 << 20);
    if (status.ok()) facts->zfs = ZpoolDevices(ParseZpoolStatus(*status), sys);
  }
}

// Reads fd until EOF, max bytes or the deadline; *whole: EOF came first.
std::string ReadUntil(int fd, int timeout_ms, size_t max, bool* whole) {
  std::string out;
  const auto deadline = absl::Now() + absl::Milliseconds(timeout_ms);
  char buf[16384];
  *whole = false;
  while (out.size() < max) {
    const int64_t left = absl::ToInt64Milliseconds(deadline - absl::Now());
    pollfd p{fd, POLLIN, 0};
    if (left <= 0) break;
    const int ready = ::poll(&p, 1, static_cast<int>(left));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) break;  // the deadline, or poll failed: a blocking read would not keep the bound
    const ssize_t n = ::read(fd, buf, std::min(sizeof buf, max - out.size()));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      *whole = n == 0;
      break;
    }
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
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
  if (static_cast<unsigned long>(fs.f_type) == kZfsSuperMagic) ProbeZfs(sys, &facts);
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
      s = ZpoolState();
      s.pool = pool;
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

namespace nasperf {

std::vector<BlockDevice> ZpoolDevices(const std::vector<ZpoolVdev>& vdevs, const std::string& sys) {
  std::vector<BlockDevice> out;
  for (const ZpoolVdev& vdev : vdevs) {
    const std::string name = KernelNameOfPath(vdev.path, sys);
    if (!name.empty()) AddDevice({name, vdev.role, true}, &out);
  }
  return out;
}

namespace {

struct UnraidSlot {
  std::string name, device, type;
};

// A slot's role in words, from its type where disks.ini gives one, else its name.
std::string UnraidRole(const UnraidSlot& slot) {
  if (slot.type == "Parity") return absl::StrCat("Unraid ", slot.name);
  if (slot.type == "Data") return absl::StrCat("Unraid data disk ", slot.name);
  if (slot.type == "Cache") return absl::StrCat("Unraid cache pool ", slot.name);
  if (slot.type.empty()) return absl::StrCat("Unraid ", slot.name);
  return absl::StrCat("Unraid ", absl::AsciiStrToLower(slot.type), " ", slot.name);
}

void ApplySlot(const UnraidSlot& slot, std::vector<BlockDevice>* devices) {
  if (slot.device.empty() || slot.name.empty() || slot.type == "Flash") return;
  for (BlockDevice& d : *devices) {
    if (d.name == slot.device && d.role.empty()) d.role = UnraidRole(slot);
  }
}

// key="value" -> value; false for any other line.
bool IniValue(absl::string_view line, absl::string_view key, std::string* value) {
  if (!absl::ConsumePrefix(&line, key) || !absl::ConsumePrefix(&line, "=\"") || !absl::ConsumeSuffix(&line, "\"")) {
    return false;
  }
  if (line.size() > 64 || !std::all_of(line.begin(), line.end(), [](char c) { return absl::ascii_isgraph(c); })) {
    return false;
  }
  *value = std::string(line);
  return true;
}

}  // namespace

void ApplyUnraidRoles(absl::string_view disks_ini, std::vector<BlockDevice>* devices) {
  UnraidSlot slot;
  size_t lines = 0;
  for (absl::string_view line : absl::StrSplit(disks_ini, '\n')) {
    if (++lines > 65536) break;
    line = absl::StripAsciiWhitespace(line);
    if (absl::StartsWith(line, "[")) {
      ApplySlot(slot, devices);
      slot = UnraidSlot();
      continue;
    }
    if (IniValue(line, "name", &slot.name) || IniValue(line, "device", &slot.device)) continue;
    IniValue(line, "type", &slot.type);
  }
  ApplySlot(slot, devices);
}

std::optional<MountSource> MountOfDevice(absl::string_view mountinfo, unsigned major, unsigned minor) {
  const std::string dev = absl::StrCat(major, ":", minor);
  size_t lines = 0;
  for (absl::string_view line : absl::StrSplit(mountinfo, '\n')) {
    if (++lines > 4096) break;
    if (line.size() > 4096) continue;
    const std::vector<absl::string_view> f = absl::StrSplit(line, ' ', absl::SkipEmpty());
    if (f.size() < 10 || f[2] != dev) continue;
    // Optional fields end at a lone "-"; the type and source follow it.
    for (size_t i = 6; i + 2 < f.size(); ++i) {
      if (f[i] == "-") return MountSource{std::string(f[i + 1]), std::string(f[i + 2])};
    }
  }
  return std::nullopt;
}

std::string ZfsPool(absl::string_view dataset) {
  const absl::string_view pool = dataset.substr(0, dataset.find_first_of("/@"));
  if (pool.empty() || pool.size() > 64 || !absl::ascii_isalpha(pool[0])) return "";
  for (char c : pool) {
    if (!absl::ascii_isalnum(c) && c != '_' && c != '-' && c != '.' && c != ':') return "";
  }
  return std::string(pool);
}

const char* FirstExecutable(std::initializer_list<const char*> paths) {
  for (const char* path : paths) {
    if (::access(path, X_OK) == 0) return path;
  }
  return nullptr;
}

absl::StatusOr<std::string> RunForOutput(const std::vector<std::string>& argv, int timeout_ms, size_t max_bytes) {
  if (argv.empty() || argv[0].empty() || argv[0][0] != '/') {
    return absl::InvalidArgumentError("RunForOutput needs an absolute path");
  }
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return ErrnoStatus(errno, "pipe");
  Fd read_end(fds[0]), write_end(fds[1]);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, write_end.get(), 1);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  std::vector<char*> args;
  for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  char* no_environment[] = {nullptr};
  pid_t pid = 0;
  const int rc = ::posix_spawn(&pid, argv[0].c_str(), &actions, nullptr, args.data(), no_environment);
  posix_spawn_file_actions_destroy(&actions);
  write_end.Reset();
  if (rc != 0) return ErrnoStatus(rc, absl::StrCat("run ", argv[0]));
  bool whole = false;
  std::string out = ReadUntil(read_end.get(), timeout_ms, max_bytes, &whole);
  // A child still there when we stop reading is killed, so the caller's bound holds. One
  // that closed its output may be between that and its exit: its status then says
  // killed, which is why the output, not the status, is the answer (a failing zpool
  // prints its reason on stderr and nothing the parser takes).
  int status = 0;
  if (::waitpid(pid, &status, WNOHANG) != pid) {
    ::kill(pid, SIGKILL);
    // A child in uninterruptible sleep (zpool on a suspended pool) outlives SIGKILL: it
    // is reaped by a thread of its own, never waited for here.
    std::thread([pid] {
      int reaped = 0;
      while (::waitpid(pid, &reaped, 0) < 0 && errno == EINTR) {
      }
    }).detach();
  }
  if (!whole) {
    return absl::DeadlineExceededError(
        absl::StrCat(argv[0], " gave no whole answer within ", timeout_ms, " ms and ", max_bytes, " bytes"));
  }
  return out;
}

}  // namespace nasperf
