#include "collector/live_board.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/clock.h"
#include "common/json.h"

namespace nasperf {
namespace {

std::string Number(double v) { return absl::StrFormat("%.10g", v); }

// A metric's HELP and TYPE lines, then its samples.
class Exposition {
 public:
  void Family(const std::string& name, const char* type, const char* help) {
    absl::StrAppend(&out_, "# HELP ", name, " ", help, "\n# TYPE ", name, " ", type, "\n");
  }
  void Sample(const std::string& name, const std::vector<std::pair<std::string, std::string>>& labels,
              const std::string& value) {
    std::vector<std::string> parts;
    for (const auto& [k, v] : labels) parts.push_back(absl::StrCat(k, "=\"", PrometheusLabelValue(v), "\""));
    absl::StrAppend(&out_, name, parts.empty() ? "" : absl::StrCat("{", absl::StrJoin(parts, ","), "}"), " ", value,
                    "\n");
  }
  void Append(const std::string& text) { out_ += text; }
  std::string Take() { return std::move(out_); }

 private:
  std::string out_;
};

std::vector<std::pair<std::string, std::string>> LabelsOf(
    const std::tuple<std::string, std::string, std::string, std::string, std::string>& key) {
  const auto& [host, role, label, transport, direction] = key;
  return {{"host", host}, {"role", role}, {"label", label}, {"transport", transport}, {"direction", direction}};
}

}  // namespace

std::string PrometheusLabelValue(const std::string& value) {
  std::string out;
  for (char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

LiveBoard::LiveBoard(std::function<int64_t()> mono_ns)
    : mono_ns_(mono_ns ? std::move(mono_ns) : std::function<int64_t()>(MonoNanos)) {}

void LiveBoard::AddRow(const proto::TransferReport& row) {
  const Key key{row.host(), row.role(), row.label(), row.transport(), row.direction()};
  absl::MutexLock lock(&mu_);
  auto it = series_.find(key);
  if (it == series_.end()) {
    if (series_.size() >= kMaxSeries) {
      ++dropped_;
    } else {
      it = series_.emplace(key, Series{}).first;
    }
  }
  if (it != series_.end()) {
    Series& s = it->second;
    s.bytes += row.bytes();
    ++s.transfers[row.status()];
    if (!row.bottleneck().empty()) ++s.verdicts[row.bottleneck()];
    if (row.status() == "ok" && row.has_mb_per_s()) s.last_bytes_per_second = row.mb_per_s() * 1e6;
    if (row.status() == "ok" && row.has_sustained_mb_per_s()) {
      s.last_sustained_bytes_per_second = row.sustained_mb_per_s() * 1e6;
      s.last_burst_bytes = row.burst_bytes();
      s.last_cache_shape = row.cache_shape();
    }
    if (row.status() == "ok" && row.has_longest_stall_s()) {
      s.last_longest_stall_s = row.longest_stall_s();
      s.stalls += row.stall_count();
    }
  }
  proto::TransferReport kept = row;
  kept.clear_samples();
  recent_.push_back(std::move(kept));
  if (recent_.size() > kMaxRecentRows) recent_.pop_front();
}

void LiveBoard::CountReport(Outcome outcome) {
  absl::MutexLock lock(&mu_);
  ++(outcome == Outcome::kStored ? stored_ : outcome == Outcome::kDuplicate ? duplicates_ : refused_);
}

void LiveBoard::Update(const proto::LiveUpdate& u) {
  const int64_t now = mono_ns_();
  const Key key{u.host(), u.role(), u.label(), u.transport(), u.direction()};
  absl::MutexLock lock(&mu_);
  ++updates_;
  auto it = loops_.find({u.run_id(), key});
  if (it == loops_.end()) {
    // Room first from loops that stopped updating, then none.
    for (auto old = loops_.begin(); loops_.size() >= kMaxLoops && old != loops_.end();) {
      old = Fresh(old->second, now) ? std::next(old) : loops_.erase(old);
    }
    if (loops_.size() >= kMaxLoops) {
      ++dropped_;
      return;
    }
    it = loops_.emplace(std::make_pair(u.run_id(), key), Loop{}).first;
    it->second.first_ns = now;
  }
  Loop& loop = it->second;
  loop.last = u;
  loop.last_ns = now;
  loop.points.emplace_back(NanosToSeconds(now - loop.first_ns), u.mb_per_s());
  if (loop.points.size() > kMaxPointsPerLoop) loop.points.pop_front();
}

// What the rows say of the NAS's cache and its stalls (measure/cache_knee.h).
std::string LiveBoard::CacheMetrics() const {
  Exposition e;
  e.Family("nasperf_last_sustained_bytes_per_second", "gauge",
           "The rate the disks sustained after the cache, in the last ok transfer that had a knee.");
  for (const auto& [key, s] : series_) {
    if (s.last_sustained_bytes_per_second) {
      e.Sample("nasperf_last_sustained_bytes_per_second", LabelsOf(key), Number(*s.last_sustained_bytes_per_second));
    }
  }
  e.Family("nasperf_last_burst_bytes", "gauge",
           "What the cache absorbed before its cliff, in the last ok transfer that had one; shape: how the rate "
           "came down (cliff, ramp, sawtooth, stalls).");
  for (const auto& [key, s] : series_) {
    if (s.last_burst_bytes) {
      auto labels = LabelsOf(key);
      labels.emplace_back("shape", s.last_cache_shape);
      e.Sample("nasperf_last_burst_bytes", labels, absl::StrCat(*s.last_burst_bytes));
    }
  }
  e.Family("nasperf_last_longest_stall_seconds", "gauge",
           "The longest spell of 1 s or more without progress (under a tenth of the sustained rate) in the last ok "
           "transfer; 0 with none.");
  for (const auto& [key, s] : series_) {
    if (s.last_longest_stall_s) {
      e.Sample("nasperf_last_longest_stall_seconds", LabelsOf(key), Number(*s.last_longest_stall_s));
    }
  }
  e.Family("nasperf_stalls_total", "counter", "Spells of 1 s or more without progress in the ok transfers stored.");
  for (const auto& [key, s] : series_) {
    if (s.last_longest_stall_s) e.Sample("nasperf_stalls_total", LabelsOf(key), absl::StrCat(s.stalls));
  }
  return e.Take();
}

std::string LiveBoard::Metrics() const {
  const int64_t now = mono_ns_();
  absl::MutexLock lock(&mu_);
  Exposition e;
  e.Family("nasperf_transfer_bytes_total", "counter", "Bytes of the transfers stored, as their rows count them.");
  for (const auto& [key, s] : series_) e.Sample("nasperf_transfer_bytes_total", LabelsOf(key), absl::StrCat(s.bytes));
  e.Family("nasperf_transfers_total", "counter", "Transfers stored, by status.");
  for (const auto& [key, s] : series_) {
    for (const auto& [status, n] : s.transfers) {
      auto labels = LabelsOf(key);
      labels.emplace_back("status", status);
      e.Sample("nasperf_transfers_total", labels, absl::StrCat(n));
    }
  }
  e.Family("nasperf_last_transfer_bytes_per_second", "gauge", "The rate of the last ok transfer stored.");
  for (const auto& [key, s] : series_) {
    if (s.last_bytes_per_second) {
      e.Sample("nasperf_last_transfer_bytes_per_second", LabelsOf(key), Number(*s.last_bytes_per_second));
    }
  }
  e.Append(CacheMetrics());
  e.Family("nasperf_verdicts_total", "counter", "Transfers stored, by the part that held them back.");
  for (const auto& [key, s] : series_) {
    for (const auto& [verdict, n] : s.verdicts) {
      auto labels = LabelsOf(key);
      labels.emplace_back("verdict", verdict);
      e.Sample("nasperf_verdicts_total", labels, absl::StrCat(n));
    }
  }
  struct Gauge {
    const char* name;
    const char* help;
    double (*value)(const proto::LiveUpdate&);
  };
  const Gauge gauges[] = {
      {"nasperf_current_bytes_per_second", "While a loop runs: its rate over the last half second, every stream.",
       [](const proto::LiveUpdate& u) { return u.mb_per_s() * 1e6; }},
      {"nasperf_loop_copy", "While a loop runs: the copy it is at (warm-ups first).",
       [](const proto::LiveUpdate& u) { return static_cast<double>(u.copy()); }},
      {"nasperf_loop_copies", "While a loop runs: its copies in all.",
       [](const proto::LiveUpdate& u) { return static_cast<double>(u.copies()); }},
      {"nasperf_loop_seconds_left", "While a loop runs: its time left, estimated (-1 until known).",
       [](const proto::LiveUpdate& u) { return u.left_s() < 0 ? -1.0 : u.left_s(); }},
      {"nasperf_sender_spooled_reports", "While a loop runs: reports its sender keeps until a collector takes them.",
       [](const proto::LiveUpdate& u) { return static_cast<double>(u.spooled()); }},
  };
  for (const Gauge& g : gauges) {
    e.Family(g.name, "gauge", g.help);
    for (const auto& [id, loop] : loops_) {
      if (!Fresh(loop, now)) continue;
      auto labels = LabelsOf(id.second);
      labels.emplace_back("run_id", id.first);
      e.Sample(g.name, labels, Number(g.value(loop.last)));
    }
  }
  e.Family("nasperf_collector_reports_total", "counter", "Reports that reached the collector, by outcome.");
  e.Sample("nasperf_collector_reports_total", {{"outcome", "stored"}}, absl::StrCat(stored_));
  e.Sample("nasperf_collector_reports_total", {{"outcome", "duplicate"}}, absl::StrCat(duplicates_));
  e.Sample("nasperf_collector_reports_total", {{"outcome", "refused"}}, absl::StrCat(refused_));
  e.Family("nasperf_collector_live_updates_total", "counter", "Live updates received from loops.");
  e.Sample("nasperf_collector_live_updates_total", {}, absl::StrCat(updates_));
  e.Family("nasperf_collector_series_dropped_total", "counter",
           "Series and loops not shown: past the collector's bounds.");
  e.Sample("nasperf_collector_series_dropped_total", {}, absl::StrCat(dropped_));
  return e.Take();
}

std::string LiveBoard::Json() const {
  const int64_t now = mono_ns_();
  absl::MutexLock lock(&mu_);
  std::vector<std::string> loops;
  for (const auto& [id, loop] : loops_) {
    const proto::LiveUpdate& u = loop.last;
    std::vector<std::string> points;
    for (const auto& [t, mb] : loop.points)
      points.push_back(absl::StrCat("[", JsonNumber(t), ",", JsonNumber(mb), "]"));
    loops.push_back(absl::StrCat(
        "{\"run_id\":", JsonString(u.run_id()), ",\"label\":", JsonString(u.label()),
        ",\"host\":", JsonString(u.host()), ",\"role\":", JsonString(u.role()),
        ",\"transport\":", JsonString(u.transport()), ",\"direction\":", JsonString(u.direction()),
        ",\"copy\":", u.copy(), ",\"copies\":", u.copies(), ",\"warmup\":", u.warmup() ? "true" : "false",
        ",\"bytes\":", u.bytes(), ",\"copy_bytes\":", u.copy_bytes(), ",\"mb_per_s\":", JsonNumber(u.mb_per_s()),
        ",\"left_s\":", JsonNumber(u.left_s()), ",\"running\":", Fresh(loop, now) ? "true" : "false", ",\"idle_s\":",
        JsonNumber(NanosToSeconds(now - loop.last_ns)), ",\"points\":[", absl::StrJoin(points, ","), "]}"));
  }
  std::vector<std::string> rows;
  for (const proto::TransferReport& r : recent_) {
    rows.push_back(absl::StrCat("{\"run_id\":", JsonString(r.run_id()), ",\"label\":", JsonString(r.label()),
                                ",\"host\":", JsonString(r.host()), ",\"role\":", JsonString(r.role()),
                                ",\"iteration\":", r.iteration(), ",\"stream\":", r.stream(),
                                ",\"status\":", JsonString(r.status()),
                                ",\"mb_per_s\":", r.has_mb_per_s() ? JsonNumber(r.mb_per_s()) : "null",
                                ",\"verdict\":", JsonString(r.bottleneck()), "}"));
  }
  return absl::StrCat("{\"loops\":[", absl::StrJoin(loops, ","), "],\"rows\":[", absl::StrJoin(rows, ","),
                      "],\"reports\":{\"stored\":", stored_, ",\"duplicate\":", duplicates_, ",\"refused\":", refused_,
                      "}}");
}

}  // namespace nasperf
