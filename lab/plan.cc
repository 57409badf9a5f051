#include "lab/plan.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <set>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "collector/live_http.h"
#include "common/file_set.h"
#include "common/policy.h"
#include "common/units.h"
#include "lab/agent_limits.h"
#include "toml++/toml.h"
#include "transport/registry.h"
#include "transport/run_spec.h"
#include "wire/validate.h"

namespace nasperf {
namespace {

// Reads one table's keys with "FILE:LINE: message" errors. toml++ throws on syntax
// errors only inside ParsePlan; everything here works on the parsed tree.
class TableReader {
 public:
  TableReader(const std::string& path, const toml::table& table, std::string where)
      : path_(path), table_(table), where_(std::move(where)) {}

  absl::Status Error(const toml::node& node, absl::string_view message) const {
    return absl::InvalidArgumentError(
        absl::StrCat(path_, ":", static_cast<uint64_t>(node.source().begin.line), ": ", where_, message));
  }
  absl::Status Error(absl::string_view message) const { return Error(table_, message); }
  // At the key's line when it is given, else at the table's.
  absl::Status ErrorAt(const std::string& key, absl::string_view message) const {
    const toml::node* node = Find(key);
    return node != nullptr ? Error(*node, message) : Error(message);
  }

  // Every key must be one of `allowed`: a typo must not silently fall back to a default.
  absl::Status OnlyKeys(const std::set<std::string>& allowed) const {
    for (auto&& [key, node] : table_) {
      if (allowed.count(std::string(key.str())) == 0) {
        return Error(node, absl::StrCat("unknown key \"", std::string(key.str()),
                                        "\" (expected one of: ", absl::StrJoin(allowed, ", "), ")"));
      }
    }
    return absl::OkStatus();
  }

  const toml::node* Find(const std::string& key) const { return table_.get(key); }

  // key = ["a", "b"]; `example` shows the form in the error.
  absl::Status Strings(const std::string& key, std::vector<std::string>* out, absl::string_view example) const {
    const toml::node* node = Find(key);
    if (node == nullptr) return absl::OkStatus();
    const toml::array* array = node->as_array();
    if (array == nullptr) return Error(*node, absl::StrCat(key, " must be an array of strings, e.g. ", example));
    for (const toml::node& element : *array) {
      if (!element.is_string()) return Error(element, absl::StrCat(key, " must be an array of strings"));
      out->push_back(*element.value<std::string>());
    }
    return absl::OkStatus();
  }

  absl::Status String(const std::string& key, std::string* out, bool required = false) const {
    const toml::node* node = Find(key);
    if (node == nullptr) return required ? Error(absl::StrCat("missing key \"", key, "\"")) : absl::OkStatus();
    auto value = node->value<std::string>();
    if (!node->is_string() || !value) return Error(*node, absl::StrCat(key, " must be a string"));
    if (required && value->empty()) return Error(*node, absl::StrCat(key, " must not be empty"));
    *out = *value;
    return absl::OkStatus();
  }

  absl::Status Int(const std::string& key, int* out, int min, int max) const {
    const toml::node* node = Find(key);
    if (node == nullptr) return absl::OkStatus();
    if (!node->is_integer()) return Error(*node, absl::StrCat(key, " must be an integer"));
    int64_t value = *node->value<int64_t>();
    if (value < min || value > max) {
      return Error(*node, absl::StrCat(key, " = ", value, " is not between ", min, " and ", max));
    }
    *out = static_cast<int>(value);
    return absl::OkStatus();
  }

  absl::Status Bool(const std::string& key, bool* out) const {
    const toml::node* node = Find(key);
    if (node == nullptr) return absl::OkStatus();
    if (!node->is_boolean()) return Error(*node, absl::StrCat(key, " must be true or false"));
    *out = *node->value<bool>();
    return absl::OkStatus();
  }

  absl::Status Duration(const std::string& key, absl::Duration* out) const {
    std::string text;
    if (absl::Status s = String(key, &text); !s.ok() || Find(key) == nullptr) return s;
    auto d = ParseDuration(text);
    if (!d.ok()) return Error(*Find(key), absl::StrCat(key, ": ", d.status().message()));
    *out = *d;
    return absl::OkStatus();
  }

  // A size as a string with units ("4GiB") or a plain integer of bytes.
  absl::Status Size(const std::string& key, uint64_t* out) const {
    const toml::node* node = Find(key);
    if (node == nullptr) return absl::OkStatus();
    if (node->is_integer() && *node->value<int64_t>() > 0) {
      *out = static_cast<uint64_t>(*node->value<int64_t>());
      return absl::OkStatus();
    }
    if (!node->is_string()) return Error(*node, absl::StrCat(key, " must be a size like \"4GiB\""));
    auto size = ParseSize(*node->value<std::string>());
    if (!size.ok()) return Error(*node, absl::StrCat(key, ": ", size.status().message()));
    if (*size == 0) return Error(*node, absl::StrCat(key, " must be more than 0"));
    *out = *size;
    return absl::OkStatus();
  }

  absl::Status Address(const std::string& key, uint16_t default_port, bool allow_zero, HostPort* out,
                       bool required) const {
    std::string text;
    if (absl::Status s = String(key, &text, required); !s.ok() || text.empty()) return s;
    auto hp = ParseHostPort(text, default_port, allow_zero);
    if (!hp.ok()) return Error(*Find(key), absl::StrCat(key, ": ", hp.status().message()));
    *out = *hp;
    return absl::OkStatus();
  }

  absl::Status OneOf(const std::string& key, std::string* out, const std::vector<std::string>& allowed) const {
    if (absl::Status s = String(key, out); !s.ok()) return s;
    if (Find(key) != nullptr && std::find(allowed.begin(), allowed.end(), *out) == allowed.end()) {
      return Error(*Find(key), absl::StrCat(key, " = \"", *out, "\" is not one of: ", absl::StrJoin(allowed, ", ")));
    }
    return absl::OkStatus();
  }

 private:
  const std::string& path_;
  const toml::table& table_;
  std::string where_;
};

#define NASPERF_RETURN_IF_ERROR(expr) \
  do {                                \
    absl::Status _s = (expr);         \
    if (!_s.ok()) return _s;          \
  } while (0)

absl::Status ReadHost(const std::string& path, const toml::table& table, int index, Plan* plan) {
  PlanHost host;
  host.line = static_cast<int>(table.source().begin.line);
  TableReader r(path, table, absl::StrCat("[[host]] ", index, ": "));
  NASPERF_RETURN_IF_ERROR(r.OnlyKeys({"name", "agent", "target", "mtu", "ssh", "ssh_identity", "ssh_known_hosts",
                                      "nasperf", "agent_flags", "observe", "observe_dir"}));
  NASPERF_RETURN_IF_ERROR(r.Strings("agent_flags", &host.agent_flags, "[\"--min-free\", \"off\"]"));
  NASPERF_RETURN_IF_ERROR(r.String("ssh", &host.ssh));
  NASPERF_RETURN_IF_ERROR(r.String("ssh_identity", &host.ssh_identity));
  NASPERF_RETURN_IF_ERROR(r.String("ssh_known_hosts", &host.ssh_known_hosts));
  NASPERF_RETURN_IF_ERROR(r.String("nasperf", &host.nasperf));
  NASPERF_RETURN_IF_ERROR(r.String("name", &host.name, true));
  NASPERF_RETURN_IF_ERROR(r.Address("agent", kAgentPort, false, &host.agent, true));
  NASPERF_RETURN_IF_ERROR(r.String("target", &host.target));
  int mtu = 0;
  NASPERF_RETURN_IF_ERROR(r.Int("mtu", &mtu, 576, 65535));
  if (mtu > 0) host.mtu = static_cast<uint32_t>(mtu);
  NASPERF_RETURN_IF_ERROR(r.Bool("observe", &host.observe));
  NASPERF_RETURN_IF_ERROR(r.String("observe_dir", &host.observe_dir));
  if (!host.observe_dir.empty() && !host.observe) {
    return r.Error(*r.Find("observe_dir"), "observe_dir needs observe = true");
  }
  for (const PlanHost& other : plan->hosts) {
    if (other.name == host.name) {
      return r.Error(*r.Find("name"), absl::StrCat("host \"", host.name, "\" is already defined at line ", other.line));
    }
    if (FormatHostPort(other.agent) == FormatHostPort(host.agent)) {
      return r.Error(*r.Find("agent"), absl::StrCat("agent ", FormatHostPort(host.agent), " is already host \"",
                                                    other.name, "\" (line ", other.line, ")"));
    }
  }
  plan->hosts.push_back(std::move(host));
  return absl::OkStatus();
}

// `[user@]host[:port]:/dir`: the sender's --to [user@]host:/dir, with the port that
// a plan has no --ssh-port for; the transport's entry parses it as a plan's (the
// sending agent parses it again as a peer's, and logs in with what it made).
absl::Status CheckLoginTo(const std::string& text, const std::string& transport) {
  std::string bad_field;
  return TransportFor(transport).parse(text, ParsedFlags(), Origin::kPlan, &bad_field).status();
}

// `transport_flags`, checked by the transport's own declarations (ParseTransportFlagWords).
absl::StatusOr<ParsedFlags> ReadTransportFlags(const TableReader& r, PlanTransfer* t) {
  NASPERF_RETURN_IF_ERROR(r.Strings("transport_flags", &t->transport_flags, "[\"--FLAG\", \"VALUE\"]"));
  absl::StatusOr<ParsedFlags> flags = ParseTransportFlagWords(t->transport, t->transport_flags);
  if (!flags.ok()) return r.ErrorAt("transport_flags", flags.status().message());
  return flags;
}

// A share's `to` and `transport_flags`, by its entry's parse as a plan's (Origin::kPlan):
// what the sending agent would refuse (transport/run_spec.h MakeRunOptions: a user's ids, say) is
// said here, before any run, in the agent's words.
absl::Status ReadShareTo(const TableReader& r, const std::string& word, PlanTransfer* t) {
  absl::StatusOr<ParsedFlags> flags = ReadTransportFlags(r, t);
  if (!flags.ok()) return flags.status();
  const TransportEntry& entry = TransportFor(t->transport);
  std::string field = "--to";
  auto config = entry.parse(t->to, *flags, Origin::kPlan, &field);
  if (config.ok()) return absl::OkStatus();
  const absl::Status& s = config.status();
  if (field != "--to") return r.ErrorAt("transport_flags", absl::StrCat("transport_flags: ", field, ": ", s.message()));
  if (absl::IsPermissionDenied(s)) return r.ErrorAt("to", absl::StrCat("to: ", s.message()));  // not a plan's to ask
  return r.ErrorAt("to", absl::StrCat("to: transport = \"", word, "\": ", s.message()));
}

// `transport` and what `to` means with it: a [[host]] with an agent, an SSH login, a
// share's URL, or a directory on the sending host (TransportCaps::local_dir).
absl::Status ReadTransportAndTo(const TableReader& r, const Plan& plan, PlanTransfer* t) {
  std::string word = t->transport;
  NASPERF_RETURN_IF_ERROR(r.OneOf("transport", &word, RunTransportWords()));
  t->transport = *ParseRunTransport(word);
  const TransportCaps& caps = TransportFor(t->transport).caps;
  NASPERF_RETURN_IF_ERROR(r.String("to", &t->to, true));
  if (plan.FindHost(t->from) == nullptr) {
    return r.Error(*r.Find("from"), absl::StrCat("from = \"", t->from, "\" names no [[host]]"));
  }
  if (!caps.barrier) {
    return r.ErrorAt("transport",
                     absl::StrCat("transport = \"", word, "\" cannot wait at a lab's start barrier; use transport = \"",
                                  TransportsWith(&TransportCaps::barrier), "\""));
  }
  if (caps.agent) {
    if (plan.FindHost(t->to) == nullptr) {
      return r.Error(*r.Find("to"), absl::StrCat("to = \"", t->to, "\" names no [[host]]"));
    }
    if (t->from == t->to) return r.Error(*r.Find("to"), "from and to are the same host");
  } else if (caps.ssh_login) {
    if (absl::Status s = CheckLoginTo(t->to, t->transport); !s.ok()) {
      return r.Error(*r.Find("to"), absl::StrCat("to: transport = \"", word, "\" logs in over SSH: ", s.message()));
    }
  } else if (caps.url || caps.local_dir) {  // a directory of `from`'s host: its agent's --allow-path decides
    NASPERF_RETURN_IF_ERROR(ReadShareTo(r, word, t));
  } else {
    return r.ErrorAt("transport", absl::StrCat("transport = \"", word, "\" has no way to reach `to` in a lab"));
  }
  NASPERF_RETURN_IF_ERROR(r.String("credentials", &t->credentials));
  if (!caps.url && !caps.local_dir) NASPERF_RETURN_IF_ERROR(ReadTransportFlags(r, t).status());
  NASPERF_RETURN_IF_ERROR(r.String("ssh_identity", &t->ssh_identity));
  NASPERF_RETURN_IF_ERROR(r.String("ssh_known_hosts", &t->ssh_known_hosts));
  return absl::OkStatus();
}

// What the transfer asks that its transport cannot do (RefusalsFor, as the sender's
// flags are refused), in one line at the key that asks it.
absl::Status RefusalAt(const TableReader& r, const PlanTransfer& t, const Refusal& refused) {
  const char* key = "transport";
  std::string why;
  switch (refused.ask) {
    case Ask::kVerify:
      key = "verify";
      why = "; compare files with cmp or sha256sum";
      break;
    case Ask::kWriteMode:
      key = "write_mode";
      break;
    case Ask::kSshLogin:
      key = r.Find("ssh_identity") != nullptr ? "ssh_identity" : "ssh_known_hosts";
      why = " (they are for a login over SSH)";
      break;
    case Ask::kRead:
    case Ask::kReadLaidOut:
      key = "direction";
      if (refused.ask == Ask::kReadLaidOut) why = " (a plan's read streams a file `to` lays out)";
      break;
    case Ask::kReadCache:
      key = r.Find("cache") != nullptr ? "cache" : "read_mode";
      break;
    case Ask::kFileSet:
      key = "files";
      break;
  }
  return r.ErrorAt(key, absl::StrCat(key, ": transport = \"", t.transport, "\" cannot; transport = \"", refused.able,
                                     "\" can", why));
}

// The plan key a refused RunSpec field came from: most are spelled alike; a file the
// transport takes no role for is the first such of the transfer's file keys.
std::string PlanKeyOf(const TableReader& r, const PlanTransfer& t, const std::string& field) {
  if (field == "interval_s") return "interval";
  if (field == "file_count") return "files";
  if (field != "files") return field;
  const TransportCaps& caps = TransportFor(t.transport).caps;
  for (const auto& [key, taken] :
       {std::pair{"credentials", caps.credentials_file}, std::pair{"ssh_identity", caps.ssh_login},
        std::pair{"ssh_known_hosts", caps.ssh_login}}) {
    if (r.Find(key) != nullptr && !taken) return key;
  }
  return field;
}

// The run the controller sends the transfer's agent (SpecOf, with the [[host]]'s
// address in `to` as JobFor puts it), checked by the checks that agent makes
// (CheckRunSpec, Origin::kPlan: its files are on its host, so none is opened here).
absl::Status CheckTransferRun(const TableReader& r, const Plan& plan, const PlanTransfer& t) {
  proto::RunSpec spec = SpecOf(plan, t);
  if (t.ToIsHost()) spec.set_to(FormatHostPort(plan.FindHost(t.to)->agent));
  spec.set_interval_s(plan.interval_s);
  std::string field;
  const absl::Status s = CheckRunSpec(spec, Origin::kPlan, &field);
  if (s.ok()) return s;
  if (std::optional<Refusal> refused = TransportRefusalOf(s)) return RefusalAt(r, t, *refused);
  const std::string key = PlanKeyOf(r, t, field);
  return r.ErrorAt(key, absl::StrCat(key, ": ", s.message()));
}

absl::Status ReadTransfer(const std::string& path, const toml::table& table, int index, Plan* plan) {
  PlanTransfer t;
  t.line = static_cast<int>(table.source().begin.line);
  TableReader r(path, table, absl::StrCat("[[transfer]] ", index, ": "));
  NASPERF_RETURN_IF_ERROR(
      r.OnlyKeys({"from", "to",      "transport", "ssh_identity", "ssh_known_hosts", "credentials", "transport_flags",
                  "size", "file",    "files",     "file_size",    "files_per_dir",   "streams",     "write_mode",
                  "sync", "pattern", "verify",    "direction",    "cache",           "read_mode"}));
  NASPERF_RETURN_IF_ERROR(r.String("from", &t.from, true));
  NASPERF_RETURN_IF_ERROR(ReadTransportAndTo(r, *plan, &t));
  NASPERF_RETURN_IF_ERROR(r.Size("size", &t.size));
  NASPERF_RETURN_IF_ERROR(r.String("file", &t.file));
  NASPERF_RETURN_IF_ERROR(r.Int("files", &t.files, 1, static_cast<int>(kMaxSetFiles)));
  NASPERF_RETURN_IF_ERROR(r.String("file_size", &t.file_size));
  if (t.files == 0 && !t.file_size.empty()) return r.Error(*r.Find("file_size"), "file_size is for files = N");
  NASPERF_RETURN_IF_ERROR(r.Int("files_per_dir", &t.files_per_dir, 1, static_cast<int>(kMaxSetFiles)));
  if (t.files == 0 && t.files_per_dir > 0) return r.Error(*r.Find("files_per_dir"), "files_per_dir is for files = N");
  if (t.files_per_dir > t.files) {
    return r.Error(*r.Find("files_per_dir"), absl::StrCat("files_per_dir is more than the ", t.files, " files"));
  }
  if ((t.size > 0) + !t.file.empty() + (t.files > 0) != 1)
    return r.Error("give one of size = \"4GiB\", file = \"/path\" or files = N (with file_size)");
  NASPERF_RETURN_IF_ERROR(r.Int("streams", &t.streams, 1, kMaxStreams));
  NASPERF_RETURN_IF_ERROR(r.OneOf("write_mode", &t.write_mode, Names<WriteMode>()));
  NASPERF_RETURN_IF_ERROR(r.String("sync", &t.sync_policy));
  if (auto sync = ParseSyncPolicy(t.sync_policy); !sync.ok()) {
    return r.Error(*r.Find("sync"), std::string(sync.status().message()));
  } else {
    t.sync_policy = SyncPolicyName(*sync);  // rows carry one spelling ("every=64MiB", not "every=64M")
  }
  NASPERF_RETURN_IF_ERROR(r.OneOf("pattern", &t.pattern, {"random", "zero"}));
  NASPERF_RETURN_IF_ERROR(r.Bool("verify", &t.verify));
  NASPERF_RETURN_IF_ERROR(r.OneOf("direction", &t.direction, Names<Direction>()));
  NASPERF_RETURN_IF_ERROR(r.OneOf("cache", &t.cache, Names<CacheState>()));
  NASPERF_RETURN_IF_ERROR(r.OneOf("read_mode", &t.read_mode, Names<ReadMode>()));
  for (const char* key : {"cache", "read_mode"}) {
    if (t.direction != Name(Direction::kRead) && r.Find(key) != nullptr) {
      return r.Error(*r.Find(key), absl::StrCat(key, " is for direction = \"read\""));
    }
  }
  NASPERF_RETURN_IF_ERROR(CheckTransferRun(r, *plan, t));
  // A run starts every transfer at once, each as one job on its `from` agent, which
  // refuses past its limits (lab/agent_limits.h): say so here, before anything runs.
  int jobs = 1, streams = t.streams;
  for (const PlanTransfer& other : plan->transfers) {
    if (other.from != t.from) continue;
    ++jobs;
    streams += other.streams;
  }
  if (jobs > kMaxAgentJobs || streams > kMaxAgentStreams) {
    return r.Error(absl::StrCat("host ", t.from, " would run ", jobs, " transfers of ", streams,
                                " streams in all at once; an agent runs at most ", kMaxAgentJobs, " and ",
                                kMaxAgentStreams, " streams"));
  }
  plan->transfers.push_back(std::move(t));
  return absl::OkStatus();
}

// Each element of an array of tables ([[host]], [[transfer]]); anything else is an error.
template <typename ReadOne>
absl::Status ReadArray(const std::string& path, const toml::table& root, const std::string& key, ReadOne read,
                       Plan* plan) {
  const toml::node* node = root.get(key);
  if (node == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": no [[", key, "]] tables"));
  }
  const toml::array* array = node->as_array();
  if (array == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(path, ":", static_cast<uint64_t>(node->source().begin.line), ": ",
                                                   key, " must be [[", key, "]] tables"));
  }
  int index = 0;
  for (const toml::node& element : *array) {
    ++index;
    const toml::table* table = element.as_table();
    if (table == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(path, ":", static_cast<uint64_t>(element.source().begin.line),
                                                     ": ", key, " must be [[", key, "]] tables"));
    }
    NASPERF_RETURN_IF_ERROR(read(path, *table, index, plan));
  }
  return absl::OkStatus();
}

absl::Status ReadPlan(const std::string& path, const toml::table& root, Plan* plan) {
  TableReader r(path, root, "");
  NASPERF_RETURN_IF_ERROR(r.OnlyKeys({"label", "runs", "warmup", "pause", "on_failure", "cleanup", "interval",
                                      "link_speed", "start_delay", "collector", "host", "transfer"}));
  NASPERF_RETURN_IF_ERROR(r.String("label", &plan->label));
  NASPERF_RETURN_IF_ERROR(r.Int("runs", &plan->runs, 1, 100000));
  NASPERF_RETURN_IF_ERROR(r.Int("warmup", &plan->warmup, 0, 1000));
  NASPERF_RETURN_IF_ERROR(r.Duration("pause", &plan->pause));
  std::string on_failure = "stop";
  NASPERF_RETURN_IF_ERROR(r.OneOf("on_failure", &on_failure, {"continue", "stop"}));
  plan->stop_on_failure = on_failure == "stop";
  std::string cleanup;
  NASPERF_RETURN_IF_ERROR(r.OneOf("cleanup", &cleanup, Names<Cleanup>()));
  if (!cleanup.empty()) plan->cleanup = *Parse<Cleanup>(cleanup);
  absl::Duration interval = absl::Seconds(1);
  NASPERF_RETURN_IF_ERROR(r.Duration("interval", &interval));
  plan->interval_s = absl::ToDoubleSeconds(interval);
  plan->interval_set = r.Find("interval") != nullptr;
  if (absl::Status s = CheckInterval(plan->interval_s); !s.ok()) return r.Error(*r.Find("interval"), s.message());
  NASPERF_RETURN_IF_ERROR(r.Duration("start_delay", &plan->start_delay));
  if (plan->start_delay < absl::Milliseconds(10) || plan->start_delay > absl::Seconds(60)) {
    return r.Error(*r.Find("start_delay"), "start_delay must be between 10ms and 60s");
  }
  std::string link;
  NASPERF_RETURN_IF_ERROR(r.String("link_speed", &link));
  if (!link.empty()) {
    auto speed = ParseLinkSpeed(link);
    if (!speed.ok()) return r.Error(*r.Find("link_speed"), absl::StrCat("link_speed: ", speed.status().message()));
    plan->link_mbps = *speed;
  }
  if (const toml::node* node = r.Find("collector")) {
    const toml::table* table = node->as_table();
    if (table == nullptr) return r.Error(*node, "collector must be a [collector] table");
    TableReader c(path, *table, "[collector]: ");
    NASPERF_RETURN_IF_ERROR(c.OnlyKeys({"out", "listen", "address", "http", "http_token_file", "http_tls"}));
    NASPERF_RETURN_IF_ERROR(c.String("out", &plan->collector.out));
    NASPERF_RETURN_IF_ERROR(c.Address("listen", kCollectorPort, true, &plan->collector.listen, false));
    HostPort external;
    NASPERF_RETURN_IF_ERROR(c.Address("address", kCollectorPort, false, &external, false));
    if (!external.host.empty()) plan->collector.address = FormatHostPort(external);
    if (!plan->collector.address.empty() && c.Find("listen") != nullptr) {
      return c.Error(*c.Find("listen"), "give listen (embedded collector) or address (external), not both");
    }
    HostPort http{"", 0};
    NASPERF_RETURN_IF_ERROR(c.Address("http", kHttpPort, true, &http, false));
    if (c.Find("http") != nullptr) plan->collector.http = http;
    NASPERF_RETURN_IF_ERROR(c.String("http_token_file", &plan->collector.http_token_file));
    NASPERF_RETURN_IF_ERROR(c.Bool("http_tls", &plan->collector.http_tls));
    if (plan->collector.http && !plan->collector.address.empty()) {
      return c.Error(*c.Find("http"),
                     "http is the embedded collector's: give it to the external one (collector --http)");
    }
    if (!plan->collector.http && (c.Find("http_token_file") != nullptr || c.Find("http_tls") != nullptr)) {
      return c.Error(*c.Find(c.Find("http_tls") != nullptr ? "http_tls" : "http_token_file"), "needs http = \"ADDR\"");
    }
  }
  NASPERF_RETURN_IF_ERROR(ReadArray(path, root, "host", ReadHost, plan));
  NASPERF_RETURN_IF_ERROR(ReadArray(path, root, "transfer", ReadTransfer, plan));
  return absl::OkStatus();
}

}  // namespace

const PlanHost* Plan::FindHost(const std::string& name) const {
  for (const PlanHost& host : hosts) {
    if (host.name == name) return &host;
  }
  return nullptr;
}

absl::StatusOr<Plan> ParsePlan(const std::string& text, const std::string& path) {
  Plan plan;
  plan.path = path;
  toml::table root;
  try {
    root = toml::parse(text, path);
  } catch (const toml::parse_error& e) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ":", static_cast<uint64_t>(e.source().begin.line), ": ", std::string(e.description())));
  }
  if (absl::Status s = ReadPlan(path, root, &plan); !s.ok()) return s;
  return plan;
}

proto::RunSpec SpecOf(const Plan& plan, const PlanTransfer& t) {
  proto::RunSpec spec;
  spec.set_transport(t.transport);
  if (!t.ToIsHost()) spec.set_to(t.to);  // an SSH login, a share's URL or a local directory, as the plan wrote it
  for (const std::string& flag : t.transport_flags) spec.add_transport_flags(flag);
  for (const auto& [role, path] : {std::pair{"credentials", &t.credentials}, std::pair{"ssh_identity", &t.ssh_identity},
                                   std::pair{"ssh_known_hosts", &t.ssh_known_hosts}}) {
    if (path->empty()) continue;
    proto::RunSpec::File* file = spec.add_files();
    file->set_role(role);
    file->set_path(*path);
  }
  spec.set_size(t.size);
  spec.set_file(t.file);
  spec.set_file_count(static_cast<uint64_t>(t.files));
  spec.set_file_size(t.file_size);
  spec.set_files_per_dir(static_cast<uint64_t>(t.files_per_dir));
  spec.set_pattern(t.pattern);
  spec.set_streams(t.streams);
  spec.set_label(plan.label);
  spec.set_write_mode(t.write_mode);
  spec.set_sync(t.sync_policy);
  if (plan.cleanup) spec.set_cleanup(Name(*plan.cleanup));
  spec.set_verify(t.verify);
  spec.set_direction(t.direction);
  if (t.direction == Name(Direction::kRead)) {  // unnamed: the agent's default (cold, buffered)
    spec.set_cache(t.cache);
    spec.set_read_mode(t.read_mode);
  }
  spec.set_link_mbps(plan.link_mbps);
  return spec;
}

absl::StatusOr<Plan> LoadPlan(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read the plan ", path));
  std::stringstream text;
  text << in.rdbuf();
  return ParsePlan(text.str(), path);
}

double SampleIntervalFor(double shortest_s, double most_s) {
  constexpr double kSamplesPerTransfer = 10;
  if (!(shortest_s > 0) || !(most_s > 0)) return most_s;
  const double ms = std::floor(shortest_s / kSamplesPerTransfer * 1000) / 1000;
  return std::clamp(ms, kMinIntervalS, std::max(most_s, kMinIntervalS));
}

}  // namespace nasperf
