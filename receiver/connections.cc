#include "receiver/connections.h"

#include <sys/socket.h>
#include <unistd.h>

#include <vector>

namespace nasperf {

ConnectionThreads::ConnectionThreads(int max_total, int max_unadmitted)
    : max_total_(max_total), max_unadmitted_(max_unadmitted) {}

ConnectionThreads::~ConnectionThreads() { CloseAll(); }

ConnectionThreads::Refusal ConnectionThreads::Start(int fd, const std::string& source,
                                                    std::function<void(int fd)> serve) {
  JoinFinished();
  absl::MutexLock lock(&mu_);
  Refusal refusal = Refusal::kNone;
  if (closed_ || running_ >= max_total_) {
    refusal = Refusal::kTooMany;
  } else if (unadmitted_[source] >= max_unadmitted_) {
    refusal = Refusal::kTooManyUnadmitted;
  }
  if (refusal != Refusal::kNone) {
    if (unadmitted_[source] == 0) unadmitted_.erase(source);
    ::close(fd);
    return refusal;
  }
  ++unadmitted_[source];
  ++running_;
  Connection& c = connections_.emplace_back();
  c.fd = fd;
  c.thread = std::thread([this, &c, serve = std::move(serve)] {
    serve(c.fd);
    absl::MutexLock lock(&mu_);
    ::close(c.fd);
    c.done = true;
    --running_;
  });
  return Refusal::kNone;
}

void ConnectionThreads::Admitted(const std::string& source) {
  absl::MutexLock lock(&mu_);
  auto it = unadmitted_.find(source);
  if (it != unadmitted_.end() && --it->second <= 0) unadmitted_.erase(it);
}

// A done thread has nothing left to do but return, so joining it does not block.
void ConnectionThreads::JoinFinished() {
  std::vector<std::thread> finished;
  {
    absl::MutexLock lock(&mu_);
    for (auto it = connections_.begin(); it != connections_.end();) {
      if (!it->done) {
        ++it;
        continue;
      }
      finished.push_back(std::move(it->thread));
      it = connections_.erase(it);
    }
  }
  for (std::thread& t : finished) t.join();
}

void ConnectionThreads::CloseAll() {
  {
    absl::MutexLock lock(&mu_);
    closed_ = true;
    for (const Connection& c : connections_) {
      if (!c.done) ::shutdown(c.fd, SHUT_RDWR);
    }
    mu_.Await(absl::Condition(
        +[](int* running) { return *running == 0; }, &running_));
  }
  JoinFinished();
}

int ConnectionThreads::active() const {
  absl::MutexLock lock(&mu_);
  return running_;
}

}  // namespace nasperf
