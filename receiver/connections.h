// The data port's connections: each accepted socket is served on its own thread,
// which this object starts, owns and joins, and whose socket it closes when the
// thread's work returns. Until its serve calls HeaderDone, a connection is
// *unadmitted* (it has not presented its header) and counts against two budgets: one
// per source group (SourceGroup) and one for all sources together, well below the
// total, so the rest of the slots stay with admitted transfers however many
// addresses a flood comes from. Thread-safe: Start runs on the accept thread,
// HeaderDone on connection threads, CloseAll on any thread.
#ifndef NASPERF_RECEIVER_CONNECTIONS_H_
#define NASPERF_RECEIVER_CONNECTIONS_H_

#include <sys/socket.h>

#include <cstddef>
#include <functional>
#include <list>
#include <string>
#include <thread>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"

namespace nasperf {

// The group a data connection is counted in per source: an IPv4 address by itself
// (also one mapped into IPv6, "::ffff:a.b.c.d"), an IPv6 address by its /64
// ("2001:db8:1:2::/64"), since one IPv6 host may use any number of addresses of
// its subnet. "?" for another family.
std::string SourceGroup(const sockaddr_storage& address);

struct ConnectionLimits {
  int total = 256;                 // connections at once, admitted or not
  int unadmitted = 64;             // of those, without a header yet (all sources)
  int unadmitted_per_source = 16;  // of those, from one source group
  // A connection with this many bytes queued has its whole header in: it waits for
  // our CPU, not for its peer, so it stops counting as unadmitted when a budget is
  // reached (a real sender's 64 streams from one address, on a busy NAS). 0: never.
  size_t header_bytes = 0;
};

class ConnectionThreads {
 public:
  enum class Refusal {
    kNone,
    kTooMany,               // `total` connections are open
    kTooManyFromSource,     // its group holds `unadmitted_per_source` unadmitted
    kUnadmittedBudgetFull,  // the unadmitted budget is full and no group holds more than its own
  };
  // serve(fd, crowded): crowded when more than half the unadmitted budget was in
  // use as the connection arrived (the caller then gives it less time for its header).
  using Serve = std::function<void(int fd, bool crowded)>;

  explicit ConnectionThreads(ConnectionLimits limits);
  ~ConnectionThreads();  // CloseAll()

  // Serves `fd` on a new thread, unadmitted in `group` until HeaderDone(fd) or until
  // its serve returns. When the unadmitted budget is full, room is made by dropping
  // the oldest unadmitted connection of the group that holds the most, if that group
  // holds more than `group` does: a flood makes room only at its own expense, and a
  // sender whose header comes at once is never the one that holds the most. Refused
  // (kNone otherwise): fd is closed, nothing starts.
  Refusal Start(int fd, const std::string& group, Serve serve);
  // The connection on `fd` (one this object serves) read its header, or gave up on
  // it: it no longer counts as unadmitted. False when it was dropped to make room
  // before that (its socket is shut down): serve nothing more on it.
  bool HeaderDone(int fd);
  // Shuts every socket down (their reads fail, so each serve returns), joins every
  // thread, and refuses all later Starts. Idempotent.
  void CloseAll();
  int active() const;
  int unadmitted() const;

 private:
  struct Connection {
    int fd;
    std::string group;
    bool unadmitted = true;
    bool dropped = false;
    bool done = false;
    std::thread thread;
  };
  Refusal Admission(const std::string& group) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void SettleArrivedHeaders() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  Connection* OldestOfLargestGroup() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  int UnadmittedIn(const std::string& group) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Settle(Connection& c) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void JoinFinished();

  const ConnectionLimits limits_;
  mutable absl::Mutex mu_;
  std::list<Connection> connections_ ABSL_GUARDED_BY(mu_);  // oldest first
  absl::flat_hash_map<std::string, int> unadmitted_by_group_ ABSL_GUARDED_BY(mu_);
  int unadmitted_ ABSL_GUARDED_BY(mu_) = 0;
  int running_ ABSL_GUARDED_BY(mu_) = 0;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace nasperf

#endif  // NASPERF_RECEIVER_CONNECTIONS_H_
