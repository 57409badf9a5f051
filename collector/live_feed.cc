#include "collector/live_feed.h"

#include <algorithm>
#include <utility>

namespace nasperf {
namespace {

// An update older than this is not live any more: a call that takes longer is given up.
constexpr absl::Duration kLiveDeadline = absl::Seconds(1);

}  // namespace

LiveFeed::LiveFeed(std::unique_ptr<CollectorClient> client, std::function<size_t()> spooled)
    : client_(std::move(client)), spooled_(std::move(spooled)) {
  thread_ = std::thread([this] { Run(); });
}

LiveFeed::~LiveFeed() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  thread_.join();
}

void LiveFeed::Offer(const proto::LiveUpdate& update) {
  absl::MutexLock lock(&mu_);
  next_ = update;  // an update not yet sent is dropped: the newest counts
}

void LiveFeed::Run() {
  for (;;) {
    proto::LiveUpdate update;
    {
      absl::MutexLock lock(&mu_);
      auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stop_ || next_.has_value(); };
      mu_.Await(absl::Condition(&ready));
      if (!next_) return;  // stopped, nothing left: the last update (a loop's end) still goes
      update = std::move(*next_);
      next_.reset();
    }
    if (spooled_) update.set_spooled(static_cast<uint32_t>(std::min<size_t>(spooled_(), 1000000)));
    // A collector that is down or refuses: this update is lost, the next one tries again.
    (void)client_->Live(update, kLiveDeadline);
    absl::MutexLock lock(&mu_);
    if (stop_ && !next_) return;
  }
}

}  // namespace nasperf
