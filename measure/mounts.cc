#include "measure/mounts.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/fd.h"
#include "common/log.h"

namespace nasperf {
namespace {

constexpr size_t kMaxOptionChars = 40;
constexpr size_t kMaxPeerChars = 200;
constexpr size_t kMaxHostChars = 253;

// proc(5)'s escapes in a mount point or source: "\040" space, "\011" tab, "\012"
// newline, "\134" backslash (any three octal digits).
std::string Unescape(absl::string_view field) {
  std::string out;
  out.reserve(field.size());
  for (size_t i = 0; i < field.size(); ++i) {
    if (field[i] == '\\' && i + 3 < field.size()) {
      const absl::string_view digits = field.substr(i + 1, 3);
      if (std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '7'; })) {
        const int value = (digits[0] - '0') * 64 + (digits[1] - '0') * 8 + (digits[2] - '0');
        if (value <= 0xff) {
          out.push_back(static_cast<char>(value));
          i += 3;
          continue;
        }
      }
    }
    out.push_back(field[i]);
  }
  return out;
}

bool IsSpeedKey(absl::string_view key, bool has_value) {
  static constexpr absl::string_view kValued[] = {"vers",         "nconnect", "rsize",  "wsize",
                                                  "max_channels", "cache",    "actimeo"};
  static constexpr absl::string_view kFlags[] = {"multichannel", "sync", "async"};
  for (absl::string_view k : has_value ? absl::MakeConstSpan(kValued) : absl::MakeConstSpan(kFlags)) {
    if (key == k) return true;
  }
  return false;
}

// A value a row may carry: short, letters, digits, '.', '_' and '-'.
bool PlainValue(absl::string_view value) {
  return !value.empty() && value.size() <= kMaxOptionChars && std::all_of(value.begin(), value.end(), [](char c) {
    return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
  });
}

void KeepSpeedOptions(absl::string_view options, std::vector<std::string>& kept) {
  for (absl::string_view word : absl::StrSplit(options, ',', absl::SkipEmpty())) {
    const size_t eq = word.find('=');
    const absl::string_view key = word.substr(0, eq);
    const bool has_value = eq != absl::string_view::npos;
    if (!IsSpeedKey(key, has_value)) continue;
    if (has_value && !PlainValue(word.substr(eq + 1))) continue;
    const bool seen = std::any_of(kept.begin(), kept.end(), [&](const std::string& k) {
      return k == word || absl::StartsWith(k, absl::StrCat(key, "="));
    });
    if (!seen) kept.emplace_back(word);
  }
}

bool IsLocalType(absl::string_view type) {
  static constexpr absl::string_view kLocal[] = {
      "ext2", "ext3",  "ext4",    "ext2/3/4", "xfs",   "btrfs",    "zfs",     "tmpfs",    "f2fs",     "vfat", "exfat",
      "ntfs", "ntfs3", "overlay", "jfs",      "ramfs", "bcachefs", "fuseblk", "reiserfs", "squashfs", "erofs"};
  return std::find(std::begin(kLocal), std::end(kLocal), type) != std::end(kLocal);
}

bool PlainHost(absl::string_view host) {
  return !host.empty() && host.size() <= kMaxHostChars && std::all_of(host.begin(), host.end(), [](char c) {
    return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == ':';
  });
}

// "[::1]" -> "::1"; "nas" stays.
absl::string_view Unbracket(absl::string_view host) {
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') return host.substr(1, host.size() - 2);
  return host;
}

// The host of "[user@]host:path" (nfs, sshfs): up to the ':' that starts the path,
// past a bracketed IPv6 address.
absl::string_view HostBeforeColon(absl::string_view source) {
  if (const size_t at = source.find('@'); at != absl::string_view::npos) source = source.substr(at + 1);
  if (!source.empty() && source.front() == '[') {
    const size_t close = source.find(']');
    return close == absl::string_view::npos ? absl::string_view() : source.substr(0, close + 1);
  }
  const size_t colon = source.find(':');
  return colon == absl::string_view::npos ? absl::string_view() : source.substr(0, colon);
}

}  // namespace

bool MountFacts::network() const {
  static constexpr absl::string_view kNetwork[] = {"cifs", "smb3", "smbfs", "nfs", "nfs4", "ceph", "9p", "glusterfs"};
  if (absl::StartsWith(fstype, "fuse.")) return true;
  return std::find(std::begin(kNetwork), std::end(kNetwork), fstype) != std::end(kNetwork);
}

std::string MountFacts::Describe() const {
  std::vector<std::string> words;
  if (IsLocalType(fstype)) words.push_back("local");
  words.push_back(fstype.empty() ? "unknown" : fstype);
  for (const std::string& option : speed_options) words.push_back(option);
  return TerminalSafe(absl::StrJoin(words, " "));
}

std::string MountFacts::Host() const {
  absl::string_view host;
  if (fstype == "cifs" || fstype == "smb3" || fstype == "smbfs") {
    absl::string_view s = source;
    if (absl::ConsumePrefix(&s, "//")) host = s.substr(0, s.find('/'));
  } else if (fstype == "nfs" || fstype == "nfs4" || fstype == "fuse.sshfs") {
    host = HostBeforeColon(source);
  }
  host = Unbracket(host);
  return PlainHost(host) ? std::string(host) : "";
}

std::string MountFacts::Peer() const {
  if (!network()) return kLocalPeer;
  const std::string safe = TerminalSafe(source.empty() ? fstype : source);
  return safe.size() <= kMaxPeerChars ? safe : absl::StrCat(safe.substr(0, kMaxPeerChars), "...");
}

absl::StatusOr<MountFacts> ParseMountinfoLine(absl::string_view line) {
  if (line.size() > kMaxMountinfoLine) return absl::InvalidArgumentError("mountinfo line too long");
  const std::vector<absl::string_view> f = absl::StrSplit(line, ' ', absl::SkipEmpty());
  const auto dash = std::find(f.begin(), f.end(), "-");
  if (f.size() < 10 || dash == f.end() || dash - f.begin() < 6 || f.end() - dash < 4) {
    return absl::InvalidArgumentError(
        "mountinfo line: not ID PARENT MAJ:MIN ROOT POINT OPTIONS ... - TYPE SOURCE SUPER");
  }
  MountFacts m;
  const std::pair<absl::string_view, absl::string_view> dev = absl::StrSplit(f[2], absl::MaxSplits(':', 1));
  if (!absl::SimpleAtoi(f[0], &m.mount_id) || !absl::SimpleAtoi(dev.first, &m.major) ||
      !absl::SimpleAtoi(dev.second, &m.minor)) {
    return absl::InvalidArgumentError("mountinfo line: bad mount id or device");
  }
  m.mount_point = Unescape(f[4]);
  m.fstype = Unescape(dash[1]);
  m.source = Unescape(dash[2]);
  if (m.fstype.size() > kMaxOptionChars) return absl::InvalidArgumentError("mountinfo line: file-system type too long");
  KeepSpeedOptions(f[5], m.speed_options);
  KeepSpeedOptions(dash[3], m.speed_options);
  return m;
}

absl::StatusOr<MountFacts> FindMount(absl::string_view mountinfo, std::optional<uint64_t> mount_id, uint32_t major,
                                     uint32_t minor) {
  std::optional<MountFacts> on_device;
  size_t count = 0;
  for (absl::string_view line : absl::StrSplit(mountinfo, '\n', absl::SkipEmpty())) {
    if (++count > kMaxMountinfoLines) break;
    absl::StatusOr<MountFacts> m = ParseMountinfoLine(line);
    if (!m.ok()) continue;
    if (mount_id && m->mount_id == *mount_id) return *std::move(m);
    if (m->major == major && m->minor == minor) on_device = *std::move(m);
  }
  if (on_device) return *std::move(on_device);
  return absl::NotFoundError(absl::StrFormat("no mountinfo line for device %u:%u", major, minor));
}

std::string FsTypeOfMagic(int64_t magic) {
  switch (static_cast<uint32_t>(magic)) {
    case 0xEF53:
      return "ext2/3/4";
    case 0x58465342:
      return "xfs";
    case 0x9123683E:
      return "btrfs";
    case 0x2FC12FC1:
      return "zfs";
    case 0x01021994:
      return "tmpfs";
    case 0x858458F6:
      return "ramfs";
    case 0x794C7630:
      return "overlay";
    case 0xF2F52010:
      return "f2fs";
    case 0x65735546:
      return "fuse";
    case 0x6969:
      return "nfs";
    case 0xFF534D42:
      return "cifs";
    case 0xFE534D42:
      return "smb3";
    case 0x00C36400:
      return "ceph";
    case 0x01021997:
      return "9p";
    default:
      return "";
  }
}

namespace {

absl::StatusOr<std::string> ReadMountinfo() {
  Fd fd(::open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return ErrnoStatus(errno, "open /proc/self/mountinfo");
  std::string text;
  char buffer[65536];
  while (text.size() < kMaxMountinfoBytes) {
    const ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoStatus(errno, "read /proc/self/mountinfo");
    if (n == 0) break;
    text.append(buffer, static_cast<size_t>(std::min<size_t>(n, kMaxMountinfoBytes - text.size())));
  }
  return text;
}

}  // namespace

absl::StatusOr<MountFacts> MountOf(int dir_fd) {
  struct statx stx {};
  if (::statx(dir_fd, "", AT_EMPTY_PATH, STATX_BASIC_STATS | STATX_MNT_ID, &stx) != 0) {
    return ErrnoStatus(errno, "statx of the directory");
  }
  struct statfs fs {};
  if (::fstatfs(dir_fd, &fs) != 0) return ErrnoStatus(errno, "fstatfs of the directory");
  std::optional<uint64_t> mount_id;
  if ((stx.stx_mask & STATX_MNT_ID) != 0) mount_id = stx.stx_mnt_id;
  if (absl::StatusOr<std::string> text = ReadMountinfo(); text.ok()) {
    absl::StatusOr<MountFacts> found = FindMount(*text, mount_id, stx.stx_dev_major, stx.stx_dev_minor);
    if (found.ok()) return found;
  }
  MountFacts m;
  m.major = stx.stx_dev_major;
  m.minor = stx.stx_dev_minor;
  m.fstype = FsTypeOfMagic(fs.f_type);
  if (m.fstype.empty()) m.fstype = absl::StrFormat("type 0x%x", static_cast<uint32_t>(fs.f_type));
  return m;
}

}  // namespace nasperf
