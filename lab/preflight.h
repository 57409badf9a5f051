// The lab's checks before anything runs, as pure functions from what the agents
// answered (Hello, CheckPath) to the problems found, one line each. The controller
// asks; these judge. Thread-safe (no state).
#ifndef NASPERF_LAB_PREFLIGHT_H_
#define NASPERF_LAB_PREFLIGHT_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "lab/plan.h"
#include "proto/nasperf.pb.h"

namespace nasperf {

// An agent that answered: same version as `controller_version`, writing where the
// plan says.
std::vector<std::string> HostProblems(const PlanHost& host, const proto::HelloReply& hello,
                                      const std::string& controller_version);

// The sending agent's build runs the transfer's transport (HelloReply::transports; why
// a build may lack one is the entry's unbuilt_why).
std::vector<std::string> SenderProblems(const std::string& name, const PlanTransfer& transfer,
                                        const proto::HelloReply& from);

// One transfer's path as its sending agent saw it: the receiver takes its write
// mode; the interface MTUs are the plan's.
std::vector<std::string> TransferProblems(const std::string& name, const PlanTransfer& transfer, const PlanHost& from,
                                          const PlanHost& to, const proto::HelloReply& rx,
                                          const proto::CheckPathReply& path);

// Every receiving host has room for one run (bytes_per_run, by host name, beyond its
// --min-free) and takes each transfer's size (--max-size).
std::vector<std::string> CapacityProblems(const Plan& plan, const std::map<std::string, proto::HelloReply>& hellos,
                                          const std::map<std::string, uint64_t>& bytes_per_run);

}  // namespace nasperf

#endif  // NASPERF_LAB_PREFLIGHT_H_
