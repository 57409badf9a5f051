// The data port's connections: each accepted socket is served on its own thread,
// which this object starts, owns and joins, and whose socket it closes when the
// thread's work returns. Limits: at most `max_total` at once, and per source address
// at most `max_unadmitted` that have not yet presented a header. Thread-safe: Start
// runs on the accept thread, Admitted on connection threads, CloseAll on any thread.
#ifndef NASPERF_RECEIVER_CONNECTIONS_H_
#define NASPERF_RECEIVER_CONNECTIONS_H_

#include <functional>
#include <list>
#include <string>
#include <thread>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"

namespace nasperf {

class ConnectionThreads {
 public:
  enum class Refusal { kNone, kTooMany, kTooManyUnadmitted };

  ConnectionThreads(int max_total, int max_unadmitted);
  ~ConnectionThreads();  // CloseAll()

  // Serves `fd` with serve(fd) on a new thread, counted as unadmitted for `source`
  // until Admitted(source). Refused (kNone otherwise): fd is closed, nothing starts.
  Refusal Start(int fd, const std::string& source, std::function<void(int fd)> serve);
  // The connection from `source` presented its header (or gave up before it).
  void Admitted(const std::string& source);
  // Shuts every socket down (their reads fail, so each serve returns), joins every
  // thread, and refuses all later Starts. Idempotent.
  void CloseAll();
  int active() const;

 private:
  struct Connection {
    int fd;
    bool done = false;
    std::thread thread;
  };
  void JoinFinished();

  const int max_total_, max_unadmitted_;
  mutable absl::Mutex mu_;
  std::list<Connection> connections_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, int> unadmitted_ ABSL_GUARDED_BY(mu_);
  int running_ ABSL_GUARDED_BY(mu_) = 0;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace nasperf

#endif  // NASPERF_RECEIVER_CONNECTIONS_H_
