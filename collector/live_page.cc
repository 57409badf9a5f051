#include "collector/live_page.h"

#include <openssl/sha.h>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace nasperf {

namespace {

// Every value from /live.json reaches the page through textContent or canvas drawing,
// never as markup: a label or host cannot inject anything.
constexpr char kLivePage[] = R"HTML(<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>nasperf live</title>
<meta name="viewport" content="width=device-width,initial-scale=1">
<style>
body{font:14px system-ui,sans-serif;margin:1.5em;color:#222}
h1{font-size:1.3em} .loop{border:1px solid #ccc;border-radius:6px;padding:.6em;margin:.6em 0}
.loop.idle{opacity:.6} .figs{margin:.3em 0} canvas{width:100%;height:140px;background:#fafafa}
table{border-collapse:collapse} td,th{padding:2px 8px;border-bottom:1px solid #eee;text-align:left}
#status{color:#666}
</style></head><body>
<h1>nasperf collector: live</h1>
<p id="status">waiting for the collector...</p>
<p><a id="report" href="/report">The report of what has arrived so far</a></p>
<div id="loops" data-points="0"></div>
<h2>Finished transfers</h2>
<table><thead><tr><th>host</th><th>role</th><th>label</th><th>run</th><th>stream</th><th>MB/s</th>
<th>status</th><th>verdict</th></tr></thead><tbody id="rows"></tbody></table>
<script>
"use strict";
// A token in the address's fragment (http://nas:7701/#token=...) is taken and wiped from
// the address bar: a fragment never reaches a server or its logs.
if (location.hash.startsWith("#token=")) {
  sessionStorage.setItem("nasperf-token", decodeURIComponent(location.hash.slice(7)));
  history.replaceState(null, "", location.pathname);
}
let token = sessionStorage.getItem("nasperf-token") || "";
function headers() { return token ? {Authorization: "Bearer " + token} : {}; }
function el(tag, text, cls) { const e = document.createElement(tag); if (text !== undefined) e.textContent = text; if (cls) e.className = cls; return e; }
function duration(s) {
  if (s === null || s < 0) return "estimating";
  s = Math.round(s); const h = Math.floor(s / 3600), m = Math.floor(s % 3600 / 60), r = s % 60;
  return (h ? h + " h " : "") + (h || m ? m + " min " : "") + r + " s";
}
function draw(canvas, points) {
  const w = canvas.width = canvas.clientWidth || 600, h = canvas.height = 140, c = canvas.getContext("2d");
  if (!points.length) return;
  const t0 = Math.max(0, points[points.length - 1][0] - 300), shown = points.filter(p => p[0] >= t0);
  const top = Math.max(1, ...shown.map(p => p[1] || 0)) * 1.1, span = Math.max(1, shown[shown.length - 1][0] - t0);
  c.strokeStyle = "#2a6fdb"; c.lineWidth = 2; c.beginPath();
  shown.forEach((p, i) => { const x = (p[0] - t0) / span * (w - 10) + 5, y = h - 5 - (p[1] || 0) / top * (h - 20);
    i ? c.lineTo(x, y) : c.moveTo(x, y); });
  c.stroke(); c.fillStyle = "#444"; c.fillText(top.toFixed(0) + " MB/s", 5, 12);
}
function render(data) {
  const loops = document.getElementById("loops"); loops.replaceChildren(); let points = 0;
  for (const l of data.loops) {
    const d = el("div", undefined, "loop" + (l.running ? "" : " idle"));
    d.append(el("b", l.host + " \u2192 " + l.transport + " " + l.direction + (l.label ? " \u00b7 " + l.label : "")));
    d.append(el("div", (l.warmup ? "warm-up, " : "") + "copy " + l.copy + " of " + l.copies + ", " +
      (l.mb_per_s || 0).toFixed(1) + " MB/s now, " + (l.running ? "done in " + duration(l.left_s) : "not running"), "figs"));
    const canvas = el("canvas"); canvas.dataset.points = l.points.length; d.append(canvas); loops.append(d);
    draw(canvas, l.points); points += l.points.length;
  }
  loops.dataset.points = points;
  const rows = document.getElementById("rows"); rows.replaceChildren();
  for (const r of data.rows.slice().reverse()) {
    const tr = el("tr");
    for (const v of [r.host, r.role, r.label, r.iteration, r.stream, r.mb_per_s === null ? "" : r.mb_per_s.toFixed(1),
                     r.status, r.verdict]) tr.append(el("td", String(v)));
    rows.append(tr);
  }
  document.getElementById("status").textContent = "reports stored " + data.reports.stored + ", refused " +
    data.reports.refused + "; updated " + new Date().toLocaleTimeString();
}
async function poll() {
  try {
    const r = await fetch("/live.json", {headers: headers(), cache: "no-store"});
    if (r.status === 401) {
      token = prompt("This collector asks for its HTTP token") || "";
      sessionStorage.setItem("nasperf-token", token);
    } else if (r.ok) {
      render(await r.json());
    } else {
      document.getElementById("status").textContent = "collector said " + r.status;
    }
  } catch (e) {
    document.getElementById("status").textContent = "collector unreachable: " + e;
  }
  setTimeout(poll, 1000);
}
document.getElementById("report").addEventListener("click", async ev => {
  if (!token) return;
  ev.preventDefault();
  const r = await fetch("/report", {headers: headers()});
  window.open(URL.createObjectURL(new Blob([await r.text()], {type: "text/html"})));
});
poll();
</script></body></html>
)HTML";

}  // namespace

const char* LivePageHtml() { return kLivePage; }

const std::string& LivePagePolicy() {
  static const std::string* policy = [] {
    const absl::string_view page(kLivePage);
    const size_t open = page.find("<script>") + 8;
    const absl::string_view script = page.substr(open, page.find("</script>") - open);
    unsigned char digest[SHA256_DIGEST_LENGTH];
    SHA256(reinterpret_cast<const unsigned char*>(script.data()), script.size(), digest);
    const std::string hash = absl::Base64Escape(absl::string_view(reinterpret_cast<char*>(digest), sizeof digest));
    return new std::string(absl::StrCat("default-src 'none'; script-src 'sha256-", hash,
                                        "'; style-src 'unsafe-inline'; connect-src 'self'; base-uri 'none'; "
                                        "form-action 'none'; frame-ancestors 'none'"));
  }();
  return *policy;
}

}  // namespace nasperf
