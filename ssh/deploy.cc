#include "ssh/deploy.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/checksum.h"
#include "common/clock.h"
#include "common/fd.h"
#include "common/log.h"
#include "common/token.h"
#include "ssh/ssh_options.h"
#include "ssh/ssh_session.h"

namespace nasperf {
namespace {

constexpr uint16_t kElfMachineX86_64 = 62;
constexpr uint16_t kElfMachineAarch64 = 183;
constexpr uint32_t kProgramInterpreter = 3;  // PT_INTERP
constexpr size_t kElfHeadBytes = 64 << 10;   // the ELF header and program headers of any build
constexpr size_t kSftpReadChunk = 64 << 10;

uint16_t Le16(absl::string_view image, size_t at) {
  return static_cast<uint16_t>(static_cast<uint8_t>(image[at]) | static_cast<uint8_t>(image[at + 1]) << 8);
}
uint32_t Le32(absl::string_view image, size_t at) {
  return static_cast<uint32_t>(Le16(image, at)) | static_cast<uint32_t>(Le16(image, at + 2)) << 16;
}
uint64_t Le64(absl::string_view image, size_t at) {
  return static_cast<uint64_t>(Le32(image, at)) | static_cast<uint64_t>(Le32(image, at + 4)) << 32;
}

// The regular file at `path`, whole (refused when over kMaxDeployBytes), or only its
// first `head` bytes when `head` is not 0.
absl::StatusOr<std::string> ReadBinary(const std::string& path, size_t head = 0) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return ErrnoStatus(errno, absl::StrCat("open ", path));
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return ErrnoStatus(errno, absl::StrCat("stat ", path));
  if (!S_ISREG(st.st_mode) || (head == 0 && static_cast<uint64_t>(st.st_size) > kMaxDeployBytes)) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, " is not a regular file of at most ", kMaxDeployBytes >> 20, " MiB"));
  }
  const uint64_t size = head == 0 ? static_cast<uint64_t>(st.st_size) : std::min<uint64_t>(st.st_size, head);
  std::string image(static_cast<size_t>(size), '\0');
  auto read = ReadFull(fd.get(), image.data(), image.size(), absl::StrCat("read ", path));
  if (!read.ok()) return read.status();
  image.resize(*read);
  return image;
}

uint64_t Digest(absl::string_view bytes) {
  StreamChecksum sum;
  sum.Update(bytes.data(), bytes.size());
  return sum.Digest();
}

// What the file at `path` on the host hashes to, read back over SFTP; at most
// `expected_size` + 1 bytes are read (a longer file cannot match anyway).
absl::StatusOr<uint64_t> RemoteDigest(SshConnection& c, sftp_session sftp, const std::string& path,
                                      uint64_t expected_size) {
  sftp_file file = sftp_open(sftp, path.c_str(), O_RDONLY, 0);
  if (file == nullptr) return c.Failure(absl::StrCat("open ", path, " to read it back"));
  StreamChecksum sum;
  std::vector<char> buffer(kSftpReadChunk);
  uint64_t total = 0;
  while (total <= expected_size) {
    ssize_t n = sftp_read(file, buffer.data(), buffer.size());
    if (n < 0) {
      absl::Status failed = c.Failure(absl::StrCat("read back ", path));
      sftp_close(file);
      return failed;
    }
    if (n == 0) break;
    sum.Update(buffer.data(), static_cast<size_t>(n));
    total += static_cast<uint64_t>(n);
  }
  sftp_close(file);
  return total == expected_size ? sum.Digest() : ~sum.Digest();
}

// mkdir that accepts an existing directory; the caller checks what is there.
absl::Status MakeRemoteDirectory(SshConnection& c, sftp_session sftp, const std::string& path) {
  if (sftp_mkdir(sftp, path.c_str(), 0700) == SSH_OK) return absl::OkStatus();
  int code = sftp_get_error(sftp);
  if (code == SSH_FX_FILE_ALREADY_EXISTS || code == SSH_FX_FAILURE) return absl::OkStatus();  // OpenSSH says FAILURE
  return c.Failure(absl::StrCat("create ", path));
}

// What CheckPrivateDirectory found: the directory with every symlink resolved, and
// why it is no place for a program this user runs ("" when it is one).
struct CheckedDirectory {
  std::string path;
  std::string unsafe;
};

// Why `dir` at this component, owned by `owner` with `mode`, lets someone other than
// the user (uid) and root change what lies below it; "" when it does not. A root-owned
// sticky directory (/tmp) may be above the last one: there nobody renames or removes
// what is not theirs.
std::string WhyNotPrivate(const std::string& dir, uint8_t type, uint32_t owner, uint32_t mode, uint32_t uid,
                          bool last) {
  if (type != SSH_FILEXFER_TYPE_DIRECTORY) return absl::StrCat(dir, " is not a directory");
  if (owner != uid && owner != 0) return absl::StrCat(dir, " belongs to another user (uid ", owner, ")");
  const bool shared_sticky = !last && owner == 0 && (mode & S_ISVTX) != 0;
  if ((mode & 022) != 0 && !shared_sticky) {
    return absl::StrFormat("%s is writable by others (mode %03o)", dir, mode & 0777);
  }
  return "";
}

// `dir` resolved by the host (realpath), then it and every directory above it looked
// at (lstat): each must belong to the user or root and be writable by nobody else.
// Then only the user and root can change that path, so a binary checked there stays
// the one that runs: nobody else can swap it, or a directory above it, in between.
absl::StatusOr<CheckedDirectory> CheckPrivateDirectory(SshConnection& c, sftp_session sftp, const std::string& dir,
                                                       uint32_t uid) {
  char* real = sftp_canonicalize_path(sftp, dir.c_str());
  if (real == nullptr) return c.Failure(absl::StrCat("resolve ", dir));
  CheckedDirectory checked{real, ""};
  ssh_string_free_char(real);
  if (checked.path.empty() || checked.path.front() != '/' || checked.path.size() > 4096 ||
      TerminalSafe(checked.path) != checked.path) {
    return absl::FailedPreconditionError(
        absl::StrCat("ssh ", c.where(), ": ", dir, " resolves to ", TerminalSafe(checked.path), ", not a plain path"));
  }
  for (size_t end = 0; checked.unsafe.empty(); end = checked.path.find('/', end + 1)) {  // "/" first
    const std::string component = end == 0 ? "/" : checked.path.substr(0, end);
    const bool last = end == std::string::npos || checked.path == "/";
    sftp_attributes a = sftp_lstat(sftp, component.c_str());
    if (a == nullptr) return c.Failure(absl::StrCat("look at ", component));
    checked.unsafe = WhyNotPrivate(component, a->type, a->uid, a->permissions, uid, last);
    sftp_attributes_free(a);
    if (last) break;
  }
  return checked;
}

// A directory of the user's own for this run only (mktemp -d: mode 0700), checked like
// the cache; for when the cache is not private.
absl::StatusOr<std::string> PrivateTemporaryDirectory(SshConnection& c, sftp_session sftp, uint32_t uid) {
  auto made = c.Run("mktemp -d \"${TMPDIR:-/tmp}/nasperf-bin-XXXXXX\"", "", absl::Seconds(20));
  if (!made.ok()) return made.status();
  const std::string dir(absl::StripAsciiWhitespace(*made));
  if (dir.empty() || dir.front() != '/' || dir.size() > 1024 || TerminalSafe(dir) != dir) {
    return absl::FailedPreconditionError(
        absl::StrCat("ssh ", c.where(), ": mktemp -d made no directory: ", TerminalSafe(made->substr(0, 200))));
  }
  auto checked = CheckPrivateDirectory(c, sftp, dir, uid);
  if (checked.ok() && checked->unsafe.empty()) return checked->path;
  (void)c.Run(absl::StrCat("rm -rf -- ", ShellQuote(dir)), "", absl::Seconds(20));
  if (!checked.ok()) return checked.status();
  return absl::FailedPreconditionError(absl::StrCat("ssh ", c.where(), ": no private directory for the binary: ",
                                                    checked->unsafe, "; set TMPDIR there to one of your own"));
}

absl::Status Upload(SshConnection& c, sftp_session sftp, const std::string& path, absl::string_view image) {
  sftp_file file = sftp_open(sftp, path.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0700);
  if (file == nullptr) return c.Failure(absl::StrCat("create ", path));
  for (size_t at = 0; at < image.size();) {
    const size_t chunk = std::min(kMaxSftpWrite, image.size() - at);
    ssize_t n = sftp_write(file, image.data() + at, chunk);
    if (n <= 0) {
      absl::Status failed = c.Failure(absl::StrCat("write ", path));
      sftp_close(file);
      return failed;
    }
    at += static_cast<size_t>(n);
  }
  if (sftp_close(file) != SSH_OK) return c.Failure(absl::StrCat("close ", path));
  if (sftp_chmod(sftp, path.c_str(), 0700) != SSH_OK) return c.Failure(absl::StrCat("chmod ", path));
  return absl::OkStatus();
}

// What the host says about itself: its processor, the user and its cache directory.
struct HostFacts {
  Machine machine = Machine::kOther;
  uint32_t uid = 0;   // the user this session runs as (id -u)
  std::string cache;  // ${XDG_CACHE_HOME:-$HOME/.cache}, absolute
};

absl::StatusOr<HostFacts> AskHost(SshConnection& c) {
  auto probe = c.Run("uname -m; id -u; printf '%s\\n' \"${XDG_CACHE_HOME:-$HOME/.cache}\"", "", absl::Seconds(20));
  if (!probe.ok()) return probe.status();
  std::vector<std::string> lines = absl::StrSplit(*probe, '\n', absl::SkipEmpty());
  HostFacts facts;
  if (lines.size() != 3 || !absl::SimpleAtoi(lines[1], &facts.uid) || lines[2].size() > 1024 ||
      lines[2].front() != '/' || TerminalSafe(lines[2]) != lines[2]) {
    return absl::FailedPreconditionError(absl::StrCat("ssh ", c.where(),
                                                      ": cannot tell the processor, user and cache "
                                                      "directory (uname -m, id -u and $HOME said: ",
                                                      TerminalSafe(*probe), ")"));
  }
  facts.machine = MachineFromUname(lines[0]);
  facts.cache = lines[2];
  if (facts.machine == Machine::kOther) {
    return absl::FailedPreconditionError(absl::StrCat("ssh ", c.where(), ": the host's processor is ",
                                                      TerminalSafe(lines[0]),
                                                      "; nasperf is built for x86_64 and aarch64"));
  }
  return facts;
}

// Puts `image` at `path` unless the same bytes are there already (read back either way).
// A cached copy counts only when it is the user's own and writable by nobody else.
absl::Status PlaceImage(SshConnection& c, sftp_session sftp, const std::string& path, absl::string_view image,
                        const std::string& named, uint32_t uid, bool* uploaded) {
  const uint64_t digest = Digest(image);
  *uploaded = false;
  if (sftp_attributes cached = sftp_lstat(sftp, path.c_str()); cached != nullptr) {
    const bool same_size = cached->type == SSH_FILEXFER_TYPE_REGULAR && cached->size == image.size() &&
                           cached->uid == uid && (cached->permissions & 022) == 0;
    sftp_attributes_free(cached);
    if (same_size) {
      auto seen = RemoteDigest(c, sftp, path, image.size());
      if (!seen.ok()) return seen.status();
      if (*seen == digest) return absl::OkStatus();
    }
    sftp_unlink(sftp, path.c_str());  // damaged or not the user's: replaced below
  }
  const std::string part = absl::StrCat(path, ".part-", RandomHex(4));
  absl::Status placed = Upload(c, sftp, part, image);
  if (placed.ok()) {
    auto seen = RemoteDigest(c, sftp, part, image.size());
    if (!seen.ok()) {
      placed = seen.status();
    } else if (*seen != digest) {
      placed = absl::DataLossError(absl::StrCat("ssh ", c.where(), ": ", part, " reads back different from ", named));
    } else if (sftp_rename(sftp, part.c_str(), path.c_str()) != SSH_OK) {
      placed = c.Failure(absl::StrCat("rename ", part));
    }
  }
  if (!placed.ok()) {
    sftp_unlink(sftp, part.c_str());
    return placed;
  }
  *uploaded = true;
  return absl::OkStatus();
}

// The cache (resolved) when it is private; else a private temporary directory, with
// deployed->note saying why and deployed->temporary naming it.
absl::StatusOr<std::string> CacheOrTemporaryDirectory(SshConnection& c, sftp_session sftp, const HostFacts& host,
                                                      DeployedBinary* deployed) {
  const std::string cache = absl::StrCat(host.cache, "/nasperf");
  for (const std::string& d : {host.cache, cache}) {
    if (absl::Status s = MakeRemoteDirectory(c, sftp, d); !s.ok()) return s;
  }
  auto checked = CheckPrivateDirectory(c, sftp, cache, host.uid);
  if (!checked.ok()) return checked.status();
  if (checked->unsafe.empty()) return checked->path;
  auto temporary = PrivateTemporaryDirectory(c, sftp, host.uid);
  if (!temporary.ok()) return temporary.status();
  deployed->temporary = *temporary;
  deployed->note = absl::StrCat("ssh ", c.where(), ": not using the cache ", cache, ": ", checked->unsafe,
                                ", so another user could swap the program; using ", *temporary, " for this run");
  return *temporary;
}

}  // namespace

const char* MachineName(Machine machine) {
  switch (machine) {
    case Machine::kX86_64:
      return "x86_64";
    case Machine::kAarch64:
      return "aarch64";
    case Machine::kOther:
      break;
  }
  return "another processor";
}

Machine MachineFromUname(absl::string_view uname_m) {
  uname_m = absl::StripAsciiWhitespace(uname_m);
  if (uname_m == "x86_64" || uname_m == "amd64") return Machine::kX86_64;
  if (uname_m == "aarch64" || uname_m == "arm64") return Machine::kAarch64;
  return Machine::kOther;
}

absl::StatusOr<ElfFacts> ReadElfFacts(absl::string_view image) {
  constexpr size_t kHeaderSize = 64;
  if (image.size() < kHeaderSize || image.substr(0, 4) !=
                                        "\x7f"
                                        "ELF") {
    return absl::InvalidArgumentError("not an ELF executable");
  }
  if (image[4] != 2 || image[5] != 1) return absl::InvalidArgumentError("not a 64-bit little-endian ELF file");
  ElfFacts facts;
  const uint16_t machine = Le16(image, 18);
  facts.machine = machine == kElfMachineX86_64    ? Machine::kX86_64
                  : machine == kElfMachineAarch64 ? Machine::kAarch64
                                                  : Machine::kOther;
  const uint64_t table = Le64(image, 32);       // e_phoff
  const uint16_t entry_size = Le16(image, 54);  // e_phentsize
  const uint16_t entries = Le16(image, 56);     // e_phnum
  if (entry_size < 4 || table > image.size() || uint64_t{entry_size} * entries > image.size() - table) {
    return absl::InvalidArgumentError("ELF program headers lie outside the file");
  }
  facts.is_static = true;
  for (uint16_t i = 0; i < entries; ++i) {
    if (Le32(image, static_cast<size_t>(table) + size_t{i} * entry_size) == kProgramInterpreter)
      facts.is_static = false;
  }
  return facts;
}

absl::StatusOr<DeployedBinary> DeployBinary(SshConnection& c, const std::string& local) {
  const bool own = local.empty();
  const std::string named = own ? "this nasperf" : local;
  const std::string file = own ? "/proc/self/exe" : local;
  // The ELF headers first: a dynamic build is refused as such whatever its size (a
  // sanitizer build is over the upload limit).
  auto elf_head = ReadBinary(file, kElfHeadBytes);
  if (!elf_head.ok()) return elf_head.status();
  auto facts = ReadElfFacts(*elf_head);
  if (!facts.ok()) return absl::InvalidArgumentError(absl::StrCat(named, ": ", facts.status().message()));
  const std::string build_hint =
      "scripts/package.sh builds it, NASPERF_AARCH64=1 scripts/package.sh the aarch64 one too";
  if (!facts->is_static) {
    return absl::FailedPreconditionError(
        absl::StrCat(named,
                     " is linked against shared libraries the NAS does not have: pass --deploy-binary with the static "
                     "build (",
                     build_hint, ")"));
  }
  auto host = AskHost(c);
  if (!host.ok()) return host.status();
  if (host->machine != facts->machine) {
    return absl::FailedPreconditionError(absl::StrCat("ssh ", c.where(), ": the host is ", MachineName(host->machine),
                                                      " but ", named, " is built for ", MachineName(facts->machine),
                                                      ": pass --deploy-binary dist/nasperf-VERSION-linux-",
                                                      MachineName(host->machine), " (", build_hint, ")"));
  }

  auto image = ReadBinary(file);
  if (!image.ok()) return image.status();
  if (auto whole = ReadElfFacts(*image);
      !whole.ok() || whole->is_static != facts->is_static || whole->machine != facts->machine) {
    return absl::InvalidArgumentError(absl::StrCat(named, " changed while it was read"));
  }
  auto sftp = c.Sftp();
  if (!sftp.ok()) return sftp.status();
  DeployedBinary deployed;
  auto dir = CacheOrTemporaryDirectory(c, *sftp, *host, &deployed);
  if (!dir.ok()) return dir.status();
  deployed.machine = host->machine;
  deployed.path = absl::StrCat(*dir, "/nasperf-", MachineName(host->machine), "-", ChecksumHex(Digest(*image)));
  deployed.bytes = image->size();
  const int64_t start = MonoNanos();
  if (absl::Status s = PlaceImage(c, *sftp, deployed.path, *image, named, host->uid, &deployed.uploaded); !s.ok()) {
    if (!deployed.temporary.empty()) {
      (void)c.Run(absl::StrCat("rm -rf -- ", ShellQuote(deployed.temporary)), "", absl::Seconds(20));
    }
    return s;
  }
  deployed.seconds = NanosToSeconds(MonoNanos() - start);
  return deployed;
}

}  // namespace nasperf
