// A share transport's configuration (nfs://, smb://): what its entry's parse made of
// the share's URL (`to`) and the transport's own flags, written to RunOptions::share.
// Read-only once made: shared by the threads of a run.
#ifndef NASPERF_TRANSPORT_SHARE_CONFIG_H_
#define NASPERF_TRANSPORT_SHARE_CONFIG_H_

#include <memory>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "transport/registry.h"
#include "transport/run_options.h"

namespace nasperf {

class ShareConfig : public TransportConfig {
 public:
  ShareConfig(ShareOptions share, std::string peer) : share_(std::move(share)), peer_(std::move(peer)) {}
  std::string Peer() const override { return peer_; }
  void Fill(RunOptions& options) const override { options.share = share_; }
  const ShareOptions& share() const { return share_; }

 private:
  const ShareOptions share_;
  const std::string peer_;
};

// The share entries' last step, once the URL is checked: `flags` through `add` (the
// entry's own declarations, the command line's checks) onto the defaults, `to` as
// the URL, `peer` the rows' peer (PeerCell, transport/share.h). A refused flag is named
// in *bad_field.
absl::StatusOr<std::unique_ptr<TransportConfig>> MakeShareConfig(const std::string& to, const ParsedFlags& flags,
                                                                 AddTransportFlags add, std::string peer,
                                                                 std::string* bad_field);

}  // namespace nasperf

#endif  // NASPERF_TRANSPORT_SHARE_CONFIG_H_
