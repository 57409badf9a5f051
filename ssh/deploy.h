// Puts a static nasperf on a host that has nothing but sshd (`sender --to
// user@host:/dir`, `lab --ssh`): checks the host's processor against the binary,
// uploads it over SFTP into a per-user cache there unless the same bytes are already
// cached, and verifies what lies there by reading it back. The binary runs as the
// user, so it only ever lies where no other user of the host can swap it. Pure ELF
// checks are apart so a unit test drives them. Called from the connection's one thread.
#ifndef NASPERF_SSH_DEPLOY_H_
#define NASPERF_SSH_DEPLOY_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace nasperf {

class SshConnection;  // ssh/ssh_session.h: this header stays free of libssh

// The processors nasperf is built for (scripts/package.sh).
enum class Machine { kOther, kX86_64, kAarch64 };
const char* MachineName(Machine machine);  // as `uname -m` says it
Machine MachineFromUname(absl::string_view uname_m);

struct ElfFacts {
  Machine machine = Machine::kOther;
  bool is_static = false;  // no program interpreter: runs without any shared library
};
// Reads a 64-bit little-endian ELF executable's header and program headers.
absl::StatusOr<ElfFacts> ReadElfFacts(absl::string_view image);

// Largest binary uploaded (the static build is about 15 MiB).
constexpr uint64_t kMaxDeployBytes = 128ULL << 20;

struct DeployedBinary {
  std::string path;  // on the host, absolute
  Machine machine = Machine::kOther;
  bool uploaded = false;  // false: the cached copy was the same
  uint64_t bytes = 0;
  double seconds = 0;  // upload and read-back
  // A private directory made for this run because the cache was not private: the
  // caller removes it once the binary has run. "" when the binary is in the cache.
  std::string temporary;
  std::string note;  // why the cache was not used, for the user; "" when it was
};

// `local`: the binary to put there; empty = this process's own (/proc/self/exe). It
// must be static and built for the host's processor (`uname -m`), else an error
// that says which file to pass instead. The cache is
// ${XDG_CACHE_HOME:-$HOME/.cache}/nasperf on the host, mode 0700, used only when it
// and every directory above it (symlinks resolved) belong to the user or root and no
// one else can write them (a root-owned sticky /tmp may be above); else the binary
// goes into a fresh `mktemp -d` directory checked the same way. `path` is then a path
// only the user and root can change, so the copy whose bytes were read back and
// compared is the one that runs. A cached copy that is not the user's own is replaced.
absl::StatusOr<DeployedBinary> DeployBinary(SshConnection& connection, const std::string& local);

}  // namespace nasperf

#endif  // NASPERF_SSH_DEPLOY_H_
