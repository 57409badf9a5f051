// A ReportSink that never makes a transfer wait on the collector (docs/DESIGN.md §5,
// the CSV contract: no result is lost because the collector was down). Submit() stores the report
// in a spool directory - one file per report, fsynced, renamed into place - and
// wakes a delivery thread that sends spooled files to the collector with backoff and
// deletes each once acknowledged. Files left by an earlier run, or by another agent
// on this host using the same spool, are delivered too; the collector drops
// duplicates. Submit and Pending are thread-safe; one delivery thread per instance.
#ifndef NASPERF_COLLECTOR_SPOOL_H_
#define NASPERF_COLLECTOR_SPOOL_H_

#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "collector/collector_client.h"
#include "collector/csv_sink.h"

namespace nasperf {

// $XDG_STATE_HOME/nasperf/spool, else ~/.local/state/nasperf/spool.
std::string DefaultSpoolRoot();

class SpoolingSink : public ReportSink {
 public:
  // Reports for this collector go to <spool_root>/<host_port>/.
  static absl::StatusOr<std::unique_ptr<SpoolingSink>> Start(std::unique_ptr<CollectorClient> client,
                                                             const std::string& spool_root);
  ~SpoolingSink() override;

  absl::Status Submit(const proto::TransferReport& report) override;
  // Waits until nothing is left to deliver or `wait` passed; returns what is left.
  size_t Drain(absl::Duration wait);
  size_t Pending() const;
  const std::string& dir() const { return dir_; }
  std::string collector() const { return FormatHostPort(client_->address()); }

 private:
  SpoolingSink(std::unique_ptr<CollectorClient> client, std::string dir);
  void DeliveryLoop();
  // Sends every spooled file once, oldest first. False when the collector is
  // unreachable (try again later).
  bool DeliverAll();

  std::unique_ptr<CollectorClient> client_;
  const std::string dir_;
  absl::Mutex mu_;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  int wakeups_ ABSL_GUARDED_BY(mu_) = 0;
  bool idle_ ABSL_GUARDED_BY(mu_) = false;  // the last pass found nothing to send
  bool outage_logged_ = false;              // delivery thread only
  std::thread thread_;
};

}  // namespace nasperf

#endif  // NASPERF_COLLECTOR_SPOOL_H_
