// The collector's live page (`/` of `nasperf collector --http`): one self-contained HTML
// file (no CDN, works offline) that reads /live.json every second and draws each loop's
// MB/s as a moving chart, its copy i of N and time left, and the rows as they arrive.
// It holds no data itself, so it is served without the token; it asks for one when
// /live.json says 401. Static text; thread-safe. Its Content-Security-Policy allows only
// its own script (by hash), fetches to its own origin, and inline style.
#ifndef NASPERF_COLLECTOR_LIVE_PAGE_H_
#define NASPERF_COLLECTOR_LIVE_PAGE_H_

#include <string>

namespace nasperf {

const char* LivePageHtml();
// The page's Content-Security-Policy. Its style is also what the report opened from it
// (a blob: page, which inherits this policy) needs.
const std::string& LivePagePolicy();

}  // namespace nasperf

#endif  // NASPERF_COLLECTOR_LIVE_PAGE_H_
