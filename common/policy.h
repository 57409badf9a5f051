// The settings nasperf passes around as words (write mode, sync policy, cleanup,
// role, status, verdict; a transport's word only by its shape), each as a type with one table of names: its
// Parse, its Name and its list of names come from that one table, so the CLI, the
// plan reader, the agent, the receiver and the collector's row check cannot drift
// apart. Pure functions; thread-safe.
#ifndef NASPERF_COMMON_POLICY_H_
#define NASPERF_COMMON_POLICY_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace nasperf {

enum class WriteMode { kBuffered, kDirect, kDsync };  // page cache, O_DIRECT, O_DSYNC
enum class Cleanup { kEach, kEnd, kNever };           // when received files are deleted
// The transport column's words are the transport registry's (transport/registry.h),
// plus the ones of rows no run makes (watch's). Here only their shape, which the
// collector and the Hello check hold a peer's word to: lowercase letters, digits
// and '-', one to kMaxTransportWord characters.
inline constexpr size_t kMaxTransportWord = 16;
bool IsTransportWord(absl::string_view word);
// kNas: `nasperf watch`'s row of a copy it observed on the NAS.
enum class Role { kSender, kReceiver, kNas };  // the role column
enum class Status { kOk, kFailed, kAborted };  // the status column
// Which way the bytes go: to the NAS (the sender pushes) or from it (the NAS agent
// reads a file on its target and streams it to the client). Roles keep their names.
enum class Direction { kWrite, kRead };
// The NAS's page cache for a read: dropped for that file before each run, or read
// through once before it.
enum class CacheState { kCold, kWarm };
// How the NAS agent reads the file of a read: through its page cache, or with
// O_DIRECT past it (what a cold read means where dropping pages cannot: ZFS's ARC).
enum class ReadMode { kBuffered, kDirect };
// The cache_shape column: how a write's rate came down from its cache to its disks
// (measure/cache_knee.h): at once, over a ramp, then alternating (a sawtooth, as ZFS
// transaction groups draw), or with stalls and catch-up bursts.
enum class CacheShape { kCliff, kRamp, kSawtooth, kStalls };
// The bottleneck column. kOldSender ("sender") is what nasperf before the `source`
// word wrote for kSource: still read (old CSVs, old peers), never written.
// kClientDisk: for reads, the client's --local-target took the bytes slower than they came.
// kServerCpu and kClient are `watch`'s: the process serving a copy (smbd, sshd, the NFS
// server) was CPU-bound; none of the NAS's parts was busy, so the client or its path was.
enum class Bottleneck {
  kNetwork,
  kDisk,
  kSource,
  kBalanced,
  kOldSender,
  kSenderCpu,
  kReceiverCpu,
  kClientDisk,
  kServerCpu,
  kClient,
  kMetadata  // a many-files transfer's creates, closes and fsyncs, not its bytes
};

// Parse<T>("direct") -> WriteMode::kDirect; INVALID_ARGUMENT naming the choices.
template <typename T>
absl::StatusOr<T> Parse(absl::string_view text);
// A word a peer may leave out (proto3 strings are empty when unset): `absent` then.
template <typename T>
absl::StatusOr<T> ParseOr(absl::string_view text, T absent) {
  if (text.empty()) return absent;
  return Parse<T>(text);
}
template <typename T>
const char* Name(T value);
// Every name of T, in declaration order (CLI choices, plan checks, row checks).
template <typename T>
const std::vector<std::string>& Names();

// "none", "end", "every=SIZE".
struct SyncPolicy {
  enum Kind { kNone, kEnd, kEvery } kind = kEnd;
  uint64_t every_bytes = 0;
};
absl::StatusOr<SyncPolicy> ParseSyncPolicy(absl::string_view text);
std::string SyncPolicyName(const SyncPolicy& policy);

// The target word for "write nothing" (network only).
inline constexpr char kDiscardTarget[] = "discard";

// The name of a transfer's file on any target (the receiver's, any transport's): the contract
// `--cleanup` and users rely on. run_id has passed CheckRunId.
std::string TransferFileName(const std::string& run_id, int iteration, int stream);

// The stream count every entry point allows (CLI, plan, agent job).
inline constexpr int kMaxStreams = 64;
// Fixed TCP socket buffers (--window, or sized from the path): beyond the upper bound
// they only waste memory; below the lower one TCP cannot keep a LAN full.
inline constexpr uint64_t kMinWindow = 64ULL << 10;
inline constexpr uint64_t kMaxWindow = 512ULL << 20;
// Default ports: a receiver's or agent's control port (its data port is the next one)
// and a collector's.
inline constexpr uint16_t kAgentPort = 7600;
inline constexpr uint16_t kCollectorPort = 7700;

}  // namespace nasperf

#endif  // NASPERF_COMMON_POLICY_H_
