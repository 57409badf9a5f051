// The receiver's data port: accepts connections, admits one only with its whole
// header in time and a ticket the control service planned, then moves the payload on
// the connection's own thread (a write through the write pipeline into the target, a
// read out of it, read_session.h) and completes the transfer's row in the table.
// Threads: one accept thread (Start to Stop) and one per connection (connections.h
// owns and joins them). Stop may be called from any thread, once.
#ifndef NASPERF_RECEIVER_DATA_LISTENER_H_
#define NASPERF_RECEIVER_DATA_LISTENER_H_

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "common/fd.h"
#include "common/log.h"
#include "datapath/target.h"
#include "datapath/write_pipeline.h"
#include "measure/devices.h"
#include "measure/disk_stats.h"
#include "receiver/connections.h"
#include "receiver/data_session.h"
#include "receiver/receiver.h"
#include "receiver/transfer_table.h"
#include "wire/wire.h"

namespace nasperf {

class DataListener {
 public:
  // `listener` listens already. Nothing else is owned; it all outlives Stop().
  DataListener(const ReceiverOptions& options, std::string host, Target& target, TransferTable& table, Fd listener)
      : options_(options), host_(std::move(host)), target_(target), table_(table), listener_(std::move(listener)) {}
  ~DataListener() { Stop(); }

  // Finds the target's devices once (on ZFS `zpool` may take up to 2 s: never on a
  // transfer's clock), then accepts on a thread of its own.
  void Start() {
    if (!target_.discard()) target_devices_ = DevicesToWatch(target_.path());
    accept_thread_ = std::thread([this] { AcceptLoop(); });
  }
  // Stops accepting and aborts transfers in flight (their files are removed); returns
  // when every connection's thread has ended.
  void Stop();
  int fd() const { return listener_.get(); }
  ReceiverCounters counters() const {
    absl::MutexLock lock(&counters_mu_);
    return counters_;
  }

 private:
  void AcceptLoop();
  void Count(uint64_t ReceiverCounters::*field);
  // Counts the refusal; logs it unless a flood of them is under way.
  void Refuse(const std::string& peer, absl::string_view why,
              uint64_t ReceiverCounters::*counter = &ReceiverCounters::refused);
  std::optional<TransferPlan> Admit(int fd, const std::string& peer, int64_t header_deadline_ns);
  std::optional<DataFooter> ReadFooter(int fd, uint64_t id, const std::string& peer);
  void SendTrailer(int fd, const DataTrailer& trailer);
  static absl::Status ReadFileSizes(int fd, TransferPlan& plan);
  PipelineResult ReceiveInto(int fd, const TransferPlan& plan, std::vector<std::string>* files, FileSetTally* set);
  void Serve(int fd, bool crowded);
  void ServeWrite(int fd, TransferPlan& plan, const std::string& peer, int64_t accepted_ns, const SessionFacts& facts,
                  proto::TransferReport& report);
  void ServeReadOn(int fd, const TransferPlan& plan, int64_t accepted_ns, const SessionFacts& facts,
                   proto::TransferReport& report);
  void DrainBriefly(int fd);

  const ReceiverOptions& options_;
  const std::string host_;
  Target& target_;
  TransferTable& table_;
  Fd listener_;
  std::thread accept_thread_;
  // The target's devices (DevicesToWatch), found at Start and read-only after: a disk
  // added while the receiver runs is seen after a restart.
  std::vector<BlockDevice> target_devices_;
  std::atomic<bool> stopping_{false};
  // 256 connections at once; at most 64 of them without a header yet (so 192 stay
  // for admitted transfers), 16 of those from one source group (SourceGroup).
  ConnectionThreads connections_{ConnectionLimits{256, 64, 16, kHeaderSize}};
  LogThrottle refusal_log_{10, 10.0};
  mutable absl::Mutex counters_mu_;
  ReceiverCounters counters_ ABSL_GUARDED_BY(counters_mu_);
};

}  // namespace nasperf

#endif  // NASPERF_RECEIVER_DATA_LISTENER_H_
