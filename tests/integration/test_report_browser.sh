#!/usr/bin/env bash
# `nasperf demo` writes an HTML report and prints its path; opened in headless
# Chromium, every chart has non-empty geometry: each SVG is laid out at its size and
# its data marks (points, lines, boxes) cover a non-empty area inside the chart.
# The report itself has no script; this test injects a measuring one into a copy.
source "$(dirname "$0")/lib.sh"

chromium=$(command -v chromium || command -v chromium-browser || true)
[ -n "$chromium" ] || skip "chromium is not installed (scripts/test.sh installs it: NASPERF_WITH_BROWSER=1)"

rc=0
timeout -k 5 180 "$NASPERF" demo --runs 3 --size 64MiB --dir "$T/demo" >"$T/demo.log" 2>&1 || rc=$?
[ "$rc" -eq 0 ] || fail "demo exited $rc: $(tail -5 "$T/demo.log")"
html=$(sed -n 's/^report:  \([^ ]*\) .*/\1/p' "$T/demo.log")
[ "$html" = "$T/demo/results/report.html" ] || fail "demo did not print the report's path: $(tail -3 "$T/demo.log")"
[ -s "$html" ] || fail "no $html"
grep -q "<script" "$html" && fail "the report must be readable without JavaScript, and has a script"
grep -q "^results: " "$T/demo.log" || fail "demo no longer prints the results paths"

browser() {
  local profile; profile=$(mktemp -d "$T/profile.XXXXXX")
  timeout -k 5 90 "$chromium" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$profile" "$@" 2>>"$T/chromium.log"
}

cat >"$T/measure.js" <<'JS'
<script>
var out = [];
document.querySelectorAll("svg.chart").forEach(function (svg) {
  var r = svg.getBoundingClientRect();
  var marks = svg.querySelector("g.marks");
  var b = marks ? marks.getBBox() : {x: 0, y: 0, width: 0, height: 0};
  var n = marks ? marks.querySelectorAll("circle, polyline, rect, line").length : 0;
  out.push([svg.dataset.chart, Math.round(r.width), Math.round(r.height), b.x.toFixed(1), b.y.toFixed(1),
            b.width.toFixed(1), b.height.toFixed(1), n].join(" "));
});
var pre = document.createElement("pre");
pre.id = "geometry";
pre.textContent = "BEGIN\n" + out.join("\n") + "\nEND";
document.body.appendChild(pre);
</script>
JS
measured=$T/measured.html
{ sed 's#</body></html>##' "$html"; cat "$T/measure.js"; echo "</body></html>"; } >"$measured"
browser --dump-dom "file://$measured" >"$T/dom.html" || fail "chromium --dump-dom failed: $(tail -3 "$T/chromium.log")"
awk '/^END<\/pre>/ { on = 0 } on { print } /id="geometry">BEGIN$/ { on = 1 }' "$T/dom.html" >"$T/geometry.txt"
cat "$T/geometry.txt"
[ -s "$T/geometry.txt" ] || fail "no chart measured (did the page load?)"
for chart in iterations-receiver boxes-receiver timeline-receiver iterations-sender boxes-sender; do
  grep -q "^$chart " "$T/geometry.txt" || fail "chart $chart missing from the demo's report"
done
# name width height bbox-x bbox-y bbox-w bbox-h marks
awk '{
  if ($2 < 900 || $3 < 300) { print "FAIL: chart " $1 " laid out at " $2 "x" $3; bad = 1 }
  if ($6 <= 0 || $7 <= 0) { print "FAIL: chart " $1 " has empty marks geometry " $6 "x" $7; bad = 1 }
  if ($4 < 0 || $5 < 0 || $4 + $6 > 960 || $5 + $7 > 330) { print "FAIL: chart " $1 " draws outside its box"; bad = 1 }
  if ($8 < 1) { print "FAIL: chart " $1 " has no marks"; bad = 1 }
} END { exit bad }' "$T/geometry.txt" || fail "a chart has no visible geometry"

browser --screenshot="$T/report.png" --window-size=1100,1800 --hide-scrollbars "file://$html" >/dev/null \
  || fail "chromium --screenshot failed: $(tail -3 "$T/chromium.log")"
size=$(stat -c %s "$T/report.png" 2>/dev/null || echo 0)
[ "$size" -gt 20000 ] || fail "screenshot is $size bytes: a blank page?"
[ -z "${NASPERF_SCREENSHOT_OUT:-}" ] || cp "$T/report.png" "$NASPERF_SCREENSHOT_OUT"
echo "ok: demo report at $html; $(wc -l <"$T/geometry.txt") charts with non-empty geometry; screenshot $size bytes"
