// A share transport's configuration (nfs://, smb://, path): what its entry's parse made
// of the share's URL (`to`), the transport's own flags and its login file; the
// entry's make reads it (ConfigOf). Read-only once shared: the threads of a run read it.
#ifndef NASPERF_TRANSPORT_SHARE_CONFIG_H_
#define NASPERF_TRANSPORT_SHARE_CONFIG_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "transport/registry.h"
#include "transport/run_options.h"

namespace nasperf {

// A share reached by URL with no agent and no kernel mount on the client (nfs://, smb://).
struct ShareOptions {
  std::string url;              // --to as given; the transport parses and checks it
  int in_flight = 16;           // --nfs-in-flight: requests kept outstanding per stream, as the kernel client does
  int timeout_s = 20;           // --nfs-timeout (SMB: always 20 s): an unanswered request fails the transfer
  std::string smb_credentials;  // --smb-credentials: a mount.cifs-style file only its owner may read
  // Set: that file's bytes, read once through the descriptor an agent checked
  // (--allow-source); the transport parses these and never opens the name again.
  std::optional<std::string> credentials_text;
  std::string smb_encrypt = "default";    // --smb-encrypt default|off|desired|required
  std::string smb_signing = "default";    // --smb-signing default|off|desired|required (client signing)
  std::string smb_min_protocol = "SMB3";  // --smb-min-protocol: the oldest dialect allowed
  uint64_t smb_write_size = 8 << 20;      // --smb-write-size: bytes per SMB WRITE (libsmbclient waits for each)
  int smb_channels = 1;                   // --smb-channels: connections per stream, one WRITE in flight on each
};

class ShareConfig : public TransportConfig {
 public:
  ShareConfig(ShareOptions share, std::string peer) : share_(std::move(share)), peer_(std::move(peer)) {}
  std::string Peer() const override { return peer_; }
  // "credentials" (the entry's caps let only SMB's through): the login file.
  absl::Status TakeFile(absl::string_view role, const std::string& path, std::optional<std::string> bytes) override;
  const ShareOptions& share() const { return share_; }

 private:
  ShareOptions share_;
  const std::string peer_;
};

// A share entry's flags, bound into `into` (the command line's declarations).
using BindShareFlags = std::vector<CLI::Option*> (*)(CLI::App& app, ShareOptions& into);

// The share entries' last step, once the URL is checked: `flags` through `bind` (the
// entry's own declarations, the command line's checks; null: none) onto the
// defaults, `to` as the URL, `peer` the rows' peer (PeerCell, transport/share.h). A
// refused flag is named in *bad_field.
absl::StatusOr<std::unique_ptr<TransportConfig>> MakeShareConfig(const std::string& to, const ParsedFlags& flags,
                                                                 BindShareFlags bind, std::string peer,
                                                                 std::string* bad_field);

}  // namespace nasperf

#endif  // NASPERF_TRANSPORT_SHARE_CONFIG_H_
