// The SMB transport (`--transport smb --to smb://[user@]host[:port]/share[/dir]`): the
// copies Windows and macOS clients make, through Samba's libsmbclient, with no mount and
// no agent on the NAS. libsmbclient is not thread-safe, even with one context per
// thread: every call holds one process-wide lock, so parallel streams run one worker
// process each (transport/fs_worker.h). The run itself is the share shell's
// (transport/share.h), SmbDriver on it. Only the dynamic build has SMB: libsmbclient
// ships no static archive (the static build's entry refuses in one line).
#ifndef NASPERF_TRANSPORT_SMB_H_
#define NASPERF_TRANSPORT_SMB_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "transport/registry.h"
#include "transport/run_options.h"
#include "transport/share_config.h"

namespace nasperf {

// What `--to smb://[user@]host[:port]/share[/dir]` names, checked: no "." or "..", no
// control characters, bounded lengths.
struct SmbUrl {
  std::string user;  // empty: the credentials file's or $NASPERF_SMB_USER
  std::string host;
  uint16_t port = 0;  // 0: 445
  std::string share;
  std::string dir;  // "/" or "/a/b" inside the share
};
absl::StatusOr<SmbUrl> ParseSmbUrl(absl::string_view url);

struct SmbLogin {
  std::string user, password, domain;
};
// The login for `url`: --smb-credentials FILE (mount.cifs's format: username=,
// password=, domain= lines), refused unless it is a regular file only its owner may
// read or write; else $NASPERF_SMB_USER / $NASPERF_SMB_PASSWORD. A user in the URL
// wins over both. Never from a command line.
absl::StatusOr<SmbLogin> ReadSmbLogin(const SmbUrl& url, const std::string& credentials_file);
// The run's login: share.credentials_text when set (the bytes read where the file
// was checked; the name is not opened again), else ReadSmbLogin(url, smb_credentials).
absl::StatusOr<SmbLogin> SmbLoginFor(const SmbUrl& url, const ShareOptions& share);

// `nasperf smb-worker` (hidden): a stream's worker process, started by an SMB run with
// --streams above 1 (never by hand). Returns the exit code.
inline constexpr char kSmbWorkerCommand[] = "smb-worker";
int RunSmbWorker();

// The registry entry; --smb-credentials, --smb-encrypt, --smb-min-protocol are its flags.
TransportEntry SmbTransportEntry();

}  // namespace nasperf

#endif  // NASPERF_TRANSPORT_SMB_H_
