#include "receiver/connections.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"

namespace nasperf {

std::string SourceGroup(const sockaddr_storage& address) {
  char text[INET6_ADDRSTRLEN] = "?";
  if (address.ss_family == AF_INET) {
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in&>(address).sin_addr, text, sizeof text);
    return text;
  }
  if (address.ss_family != AF_INET6) return text;
  in6_addr ip = reinterpret_cast<const sockaddr_in6&>(address).sin6_addr;
  if (IN6_IS_ADDR_V4MAPPED(&ip)) {  // an IPv4 peer on a dual-stack socket
    inet_ntop(AF_INET, &ip.s6_addr[12], text, sizeof text);
    return text;
  }
  std::memset(&ip.s6_addr[8], 0, 8);  // the interface identifier is the host's own choice
  inet_ntop(AF_INET6, &ip, text, sizeof text);
  return absl::StrCat(text, "/64");
}

ConnectionThreads::ConnectionThreads(ConnectionLimits limits) : limits_(limits) {}

ConnectionThreads::~ConnectionThreads() { CloseAll(); }

ConnectionThreads::Refusal ConnectionThreads::Start(int fd, const std::string& group, Serve serve) {
  JoinFinished();
  absl::MutexLock lock(&mu_);
  const Refusal refusal = Admission(group);
  if (refusal != Refusal::kNone) {
    ::close(fd);
    return refusal;
  }
  const bool crowded = unadmitted_ > limits_.unadmitted / 2;
  ++unadmitted_by_group_[group];
  ++unadmitted_;
  ++running_;
  Connection& c = connections_.emplace_back();
  c.fd = fd;
  c.group = group;
  c.thread = std::thread([this, &c, crowded, serve = std::move(serve)] {
    serve(c.fd, crowded);
    absl::MutexLock lock(&mu_);
    Settle(c);  // a serve that returned before its header
    ::close(c.fd);
    c.done = true;
    --running_;
  });
  return Refusal::kNone;
}

// Whether a connection from `group` may start now; may drop another to make room.
ConnectionThreads::Refusal ConnectionThreads::Admission(const std::string& group) {
  if (closed_ || running_ >= limits_.total) return Refusal::kTooMany;
  if (UnadmittedIn(group) >= limits_.unadmitted_per_source || unadmitted_ >= limits_.unadmitted) {
    SettleArrivedHeaders();
  }
  const int mine = UnadmittedIn(group);
  if (mine >= limits_.unadmitted_per_source) return Refusal::kTooManyFromSource;
  if (unadmitted_ < limits_.unadmitted) return Refusal::kNone;
  Connection* victim = OldestOfLargestGroup();
  if (victim == nullptr || UnadmittedIn(victim->group) <= mine) return Refusal::kUnadmittedBudgetFull;
  Settle(*victim);
  victim->dropped = true;
  ::shutdown(victim->fd, SHUT_RDWR);  // its header read fails; its thread closes it
  return Refusal::kNone;
}

// Only a budget's limit pays for these ioctls: at most `unadmitted` of them.
void ConnectionThreads::SettleArrivedHeaders() {
  if (limits_.header_bytes == 0) return;
  for (Connection& c : connections_) {
    int queued = 0;
    if (c.unadmitted && ::ioctl(c.fd, FIONREAD, &queued) == 0 && static_cast<size_t>(queued) >= limits_.header_bytes) {
      Settle(c);
    }
  }
}

// The oldest unadmitted connection among those of the group holding the most.
ConnectionThreads::Connection* ConnectionThreads::OldestOfLargestGroup() {
  int most = 0;
  for (const auto& [group, count] : unadmitted_by_group_) most = std::max(most, count);
  for (Connection& c : connections_) {
    if (c.unadmitted && UnadmittedIn(c.group) == most) return &c;
  }
  return nullptr;
}

int ConnectionThreads::UnadmittedIn(const std::string& group) const {
  auto it = unadmitted_by_group_.find(group);
  return it == unadmitted_by_group_.end() ? 0 : it->second;
}

// `c` no longer counts as unadmitted (no-op once settled).
void ConnectionThreads::Settle(Connection& c) {
  if (!c.unadmitted) return;
  c.unadmitted = false;
  --unadmitted_;
  auto it = unadmitted_by_group_.find(c.group);
  if (it != unadmitted_by_group_.end() && --it->second <= 0) unadmitted_by_group_.erase(it);
}

bool ConnectionThreads::HeaderDone(int fd) {
  absl::MutexLock lock(&mu_);
  for (Connection& c : connections_) {
    if (c.fd != fd || c.done) continue;
    Settle(c);
    return !c.dropped;
  }
  return false;  // not one of ours
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

int ConnectionThreads::unadmitted() const {
  absl::MutexLock lock(&mu_);
  return unadmitted_;
}

}  // namespace nasperf
