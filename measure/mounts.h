// What file system a directory is on, in a row's words: its type (statfs, and the
// matching /proc/self/mountinfo line), the mount's source and the few options that
// decide its speed ("cifs vers=3.1.1 max_channels=4 multichannel", "local ext4").
// Mountinfo text is untrusted (a mount point or source anyone may name): lines and
// their count are bounded, and the words kept are checked. Plain functions, no state.
#ifndef NASPERF_MEASURE_MOUNTS_H_
#define NASPERF_MEASURE_MOUNTS_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace nasperf {

// The bounds on mountinfo text: a longer line is skipped, text past the bytes or
// lines is not read.
inline constexpr size_t kMaxMountinfoLine = 16384;
inline constexpr size_t kMaxMountinfoLines = 100000;
inline constexpr size_t kMaxMountinfoBytes = size_t{32} << 20;

// The rows' peer of a file system with no server (MountFacts::Peer).
inline constexpr char kLocalPeer[] = "local";

struct MountFacts {
  uint64_t mount_id = 0;
  uint32_t major = 0, minor = 0;
  std::string mount_point;  // unescaped ("\040" is a space)
  std::string fstype;       // "ext4", "fuse.sshfs", "cifs", "nfs4"
  std::string source;       // unescaped: "/dev/loop3", "root@127.0.0.1:/dir", "//nas/share"
  // The options that decide speed, in the order the mount lists them: vers=,
  // nconnect=, rsize=, wsize=, max_channels=, multichannel, cache=, sync, async,
  // actimeo= (from the per-mount and the file system's options).
  std::vector<std::string> speed_options;

  // A file system whose bytes cross a network (cifs, smb3, nfs, nfs4, ceph, 9p,
  // fuse.*): its source names a server.
  bool network() const;
  // The row's share_protocol: "local ext4", "fuse.sshfs", "nfs4 nconnect=8 rsize=...".
  // Terminal-safe.
  std::string Describe() const;
  // The server's host named by the source of a network mount ("//nas/share",
  // "nas:/export", "user@nas:/dir"), when it is a plain host name or address; else "".
  std::string Host() const;
  // The rows' peer: the source of a network mount (terminal-safe, at most 200
  // characters), else "local".
  std::string Peer() const;
};

// One mountinfo line (proc(5)); an error says what is malformed.
absl::StatusOr<MountFacts> ParseMountinfoLine(absl::string_view line);

// The line of `mountinfo` for mount `mount_id`, else the last one on device
// major:minor (bind mounts share a device; the later mount is on top). NOT_FOUND when
// none matches. Lines over the bounds are skipped.
absl::StatusOr<MountFacts> FindMount(absl::string_view mountinfo, std::optional<uint64_t> mount_id, uint32_t major,
                                     uint32_t minor);

// The mount a directory's `dir_fd` is on: statx's mount id and device, fstatfs's type,
// this process's /proc/self/mountinfo. Without a matching line (no /proc), only the
// type fstatfs names ("local ext2/3/4", "fuse", ...).
absl::StatusOr<MountFacts> MountOf(int dir_fd);

// fstatfs's f_type in words ("ext2/3/4", "xfs", "fuse", "nfs", "cifs"), "" unknown.
std::string FsTypeOfMagic(int64_t magic);

}  // namespace nasperf

#endif  // NASPERF_MEASURE_MOUNTS_H_
