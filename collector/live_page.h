// The collector's live page (`/` of `nasperf collector --http`): one self-contained HTML
// file (no CDN, works offline) that reads /live.json every second and draws each loop's
// MB/s as a moving chart, its copy i of N and time left, and the rows as they arrive.
// It holds no data itself, so it is served without the token; it asks for one when
// /live.json says 401. Static text; thread-safe.
#ifndef NASPERF_COLLECTOR_LIVE_PAGE_H_
#define NASPERF_COLLECTOR_LIVE_PAGE_H_

namespace nasperf {

const char* LivePageHtml();

}  // namespace nasperf

#endif  // NASPERF_COLLECTOR_LIVE_PAGE_H_
