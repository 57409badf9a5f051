// A loop's live updates to a collector (Collector.Live, docs/DESIGN.md §5, live view),
// sent from the feed's own thread: the newest update waits in one slot, so a slow or
// absent collector loses updates and never holds the loop back. Offer() from any
// thread; the destructor sends the one waiting (a loop's last: at most 1 s) and stops.
#ifndef NASPERF_COLLECTOR_LIVE_FEED_H_
#define NASPERF_COLLECTOR_LIVE_FEED_H_

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "collector/collector_client.h"
#include "wire/report_sink.h"

namespace nasperf {

class LiveFeed : public LiveSink {
 public:
  // spooled: how many reports wait in the sender's spool (sent along); may be empty.
  LiveFeed(std::unique_ptr<CollectorClient> client, std::function<size_t()> spooled = nullptr);
  ~LiveFeed() override;
  LiveFeed(const LiveFeed&) = delete;
  LiveFeed& operator=(const LiveFeed&) = delete;
  void Offer(const proto::LiveUpdate& update) override;

 private:
  void Run();

  std::unique_ptr<CollectorClient> client_;
  std::function<size_t()> spooled_;
  absl::Mutex mu_;
  std::optional<proto::LiveUpdate> next_ ABSL_GUARDED_BY(mu_);
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace nasperf

#endif  // NASPERF_COLLECTOR_LIVE_FEED_H_
