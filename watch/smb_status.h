// What smbd negotiated with the client one smbd process serves (dialect, signing,
// encryption), from `smbstatus --json` (Samba 4.16+): neither libsmbclient nor the
// kernel's cifs client reports it. NegotiatedSmb runs smbstatus on the caller's thread,
// bounded in time and bytes; the parsers are pure and thread-safe.
#ifndef NASPERF_WATCH_SMB_STATUS_H_
#define NASPERF_WATCH_SMB_STATUS_H_

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace nasperf {

// The smb.conf a running smbd was started with (-s FILE, -sFILE, --configfile FILE or
// --configfile=FILE) from its NUL-separated /proc/PID/cmdline; "" = Samba's default.
std::string SmbdConfigFile(absl::string_view cmdline);

// "smb SMB3_11 signing=AES-128-GMAC(full) encryption=none (smbstatus)" for the first
// session smbd `pid` serves in a `smbstatus --json` text; nullopt when it serves none
// or the text is not smbstatus's. Each word is kept to 32 safe characters.
std::optional<std::string> SmbSessionOf(absl::string_view json, int pid);

// Runs smbstatus (its usual paths; with smbd's own -s file) for smbd `pid`, at most
// 3 s and 1 MiB, and describes that process's session as SmbSessionOf does. Only for
// an smbd running as root with a configuration file only root may change.
absl::StatusOr<std::string> NegotiatedSmb(int pid, const std::string& proc = "/proc");

}  // namespace nasperf

#endif  // NASPERF_WATCH_SMB_STATUS_H_
