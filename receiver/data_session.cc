#include "receiver/data_session.h"

#include <string.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/checksum.h"
#include "common/clock.h"
#include "common/policy.h"
#include "common/units.h"
#include "datapath/stream_pusher.h"
#include "measure/netinfo.h"
#include "measure/verdict.h"

namespace nasperf {
proto::TransferReport AdmittedRow(const TransferPlan& plan, const SessionFacts& facts) {
  const proto::OpenTransferRequest& request = plan.request;
  proto::TransferReport report;
  report.set_run_id(request.run_id());
  report.set_label(request.label());
  report.set_iteration(request.iteration());
  report.set_stream(request.stream());
  report.set_role(Name(Role::kReceiver));
  report.set_host(facts.host);
  report.set_peer(facts.peer);
  report.set_transport(kWireTransport);
  report.set_started_at_unix_ns(facts.accepted_wall_ns);
  report.set_write_mode(facts.discard ? kDiscardTarget : Name(plan.mode));
  report.set_sync_policy(facts.discard ? SyncPolicyName({SyncPolicy::kNone, 0}) : SyncPolicyName(plan.sync));
  report.set_transfer_id(plan.id);
  report.set_warmup(request.warmup());
  report.set_direction(Name(plan.direction));
  if (facts.mtu) report.set_mtu(*facts.mtu);
  if (facts.link_mbps) report.set_link_mbps(*facts.link_mbps);
  if (request.path_mtu() > 0) report.set_path_mtu(request.path_mtu());
  if (facts.mss) report.set_mss(*facts.mss);
  return report;
}

}  // namespace nasperf
