// The receiver's row for a transfer as far as it is known at admission (the
// figures come later from datapath/rows.h). The receiver's Serve does the I/O
// around it. Thread-safe (no state).
#ifndef NASPERF_RECEIVER_DATA_SESSION_H_
#define NASPERF_RECEIVER_DATA_SESSION_H_

#include <cstdint>
#include <optional>
#include <string>

#include "proto/nasperf.pb.h"
#include "receiver/transfer_table.h"

namespace nasperf {

// Where the row's cells come from besides the transfer's plan.
struct SessionFacts {
  std::string host, peer;  // this receiver's name; the sender's address
  int64_t accepted_wall_ns = 0;
  bool discard = false;               // the discard target: no write mode, no sync
  std::optional<uint32_t> mtu;        // of the interface the data came in on
  std::optional<uint32_t> link_mbps;  // the sender's --link-speed, else the NIC's
  std::optional<uint32_t> mss;
};

// The receiver row as far as it is known when the header was admitted.
proto::TransferReport AdmittedRow(const TransferPlan& plan, const SessionFacts& facts);

}  // namespace nasperf

#endif  // NASPERF_RECEIVER_DATA_SESSION_H_
