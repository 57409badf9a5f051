// The NFS transport (`--transport nfs --to nfs://host[:port]/export[/dir]`): NFSv3
// through libnfs, in user space, with no kernel mount and no agent on the NAS: what a
// Linux, Proxmox or VMware client's copy costs the share. Several WRITEs stay in
// flight per stream, as the kernel client keeps them. Each stream has its own NFS
// context (its own TCP connection), used only by that stream's thread; the rest of
// the run is the share shell's (transport/share.h), with its threading contract.
#ifndef NASPERF_TRANSPORT_NFS_H_
#define NASPERF_TRANSPORT_NFS_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "transport/registry.h"

namespace nasperf {

// What `--to nfs://host[:port]/path[?uid=N&gid=N]` names, checked: the host (a name
// or an IPv4 address), the NFS port (0: ask the server's portmapper), the absolute
// path (the export, then any directory inside it; "." and ".." refused), and the
// credentials the requests carry (none: this process's).
struct NfsUrl {
  std::string host;
  uint16_t port = 0;
  std::string path;
  std::optional<uint32_t> uid, gid;
};

// One line on what is wrong; NFSv4 (`version=4`) is refused until a packaged libnfs
// writes it correctly (Debian's 4.0 encodes writes over ~3.9 KB wrongly).
absl::StatusOr<NfsUrl> ParseNfsUrl(absl::string_view url);

// For a URL a lab agent's job (or a lab plan) gives: NFSv3's AUTH_SYS carries whatever
// uid and gid the client says, and the server takes them, so a token holder's
// ?uid=&gid= would pick whose files the agent's writes are (any user's, past an
// export's root_squash). Refused, in one line; uid= and gid= stay for `nasperf
// sender`, its user's own choice.
absl::Status RefuseNfsIdentity(absl::string_view url);

// The registry entry; --nfs-in-flight and --nfs-timeout are its flags.
TransportEntry NfsTransportEntry();

}  // namespace nasperf

#endif  // NASPERF_TRANSPORT_NFS_H_
