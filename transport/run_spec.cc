#include "transport/run_spec.h"

#include <limits.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/strings/cord.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "common/fd.h"
#include "common/file_set.h"
#include "common/payload.h"
#include "common/policy.h"
#include "common/units.h"
#include "wire/validate.h"

namespace nasperf {
namespace {

constexpr size_t kMaxSecretBytes = 64 << 10;                         // a key or a login file
constexpr size_t kMaxKnownHostsBytes = 1 << 20;                      // a known_hosts file
constexpr size_t kMaxPathBytes = 4096;                               // a file the spec names
constexpr int kMaxIterations = 100000;                               // --runs, --warmup
constexpr double kMaxPauseS = 86400;                                 // --pause
constexpr char kRefusalPayload[] = "nasperf.dev/transport-refusal";  // "ASK:ABLE" (TransportRefusalOf)

struct FileRole {
  const char* role;
  bool TransportCaps::*cap;
  bool secret;  // owner-only, kept out of core dumps
};
constexpr FileRole kFileRoles[] = {
    {"ssh_identity", &TransportCaps::ssh_login, true},
    {"ssh_known_hosts", &TransportCaps::ssh_login, false},
    {"credentials", &TransportCaps::credentials_file, true},
};

absl::Status Refuse(std::string* bad_field, const std::string& field, absl::string_view why) {
  *bad_field = field;
  return absl::InvalidArgumentError(why);
}

absl::Status Fail(std::string* bad_field, const std::string& field, absl::Status status) {
  *bad_field = field;
  return status;
}

const FileRole* FindRole(const std::string& role) {
  for (const FileRole& r : kFileRoles) {
    if (role == r.role) return &r;
  }
  return nullptr;
}

// The transport flags a user gave, as [name, value] words: the entry's own and the
// ones its parse borrows; --deploy-binary only where a receiver may be started over
// SSH. Another transport's flag is refused naming who takes it.
absl::StatusOr<ParsedFlags> UserFlags(const proto::RunSpec& spec, const TransportEntry& entry, std::string* bad_field) {
  auto refuse = [&](const std::string& name, absl::string_view why) {
    return Refuse(bad_field, "transport_flags", absl::StrCat(name, ": ", why));
  };
  if (spec.transport_flags_size() % 2 != 0) return refuse("transport_flags", "not [name, value] pairs");
  ParsedFlags given;
  for (int i = 0; i < spec.transport_flags_size(); i += 2) {
    const std::string& name = spec.transport_flags(i);
    const std::string& value = spec.transport_flags(i + 1);
    if (name == "--deploy-binary") {
      if (entry.borrowed_flags == nullptr) return refuse(name, "only with --to [user@]host:/dir");
      given.Add(name, value);
      continue;
    }
    const TransportEntry* owner = FlagOwner(name);
    if (owner == nullptr) return refuse(name, "not a transport's flag");
    if (owner->add_flags != entry.add_flags && owner->add_flags != entry.borrowed_flags) {
      if (owner->caps.ssh_login) {
        return refuse(name, absl::StrCat("only with --to [user@]host:/dir or --transport ",
                                         TransportsWith(&TransportCaps::ssh_login)));
      }
      return refuse(name, absl::StrCat("only with --transport ", TransportsWith(owner->add_flags)));
    }
    given.Add(name, value);
  }
  return given;
}

// The word, its flags (a user's: UserFlags; any other origin's: its own declarations,
// ParseTransportFlagWords), and `to` by its entry's parse for `origin` into *config
// (the spec's files still to come: ReadFiles).
absl::Status ResolveTransport(const proto::RunSpec& spec, Origin origin, RunOptions& o,
                              std::unique_ptr<TransportConfig>* made, std::string* bad_field) {
  absl::StatusOr<std::string> word = ParseRunTransport(spec.transport());
  if (!word.ok()) return Fail(bad_field, "transport", word.status());
  o.transport = *word;
  const TransportEntry& entry = TransportFor(o.transport);
  const std::vector<std::string> words(spec.transport_flags().begin(), spec.transport_flags().end());
  absl::StatusOr<ParsedFlags> flags =
      origin == Origin::kUser ? UserFlags(spec, entry, bad_field) : ParseTransportFlagWords(o.transport, words);
  if (!flags.ok()) return Fail(bad_field, "transport_flags", flags.status());
  if (entry.parse == nullptr)
    return Refuse(bad_field, "transport", absl::StrCat("transport ", entry.name, " takes no `to`"));
  std::string field;
  auto config = entry.parse(spec.to(), *flags, origin, &field);
  if (!config.ok()) {  // a flag's refusal names it, as a plan's does
    if (field.empty() || field == "--to") return Fail(bad_field, "to", config.status());
    return Fail(bad_field, "transport_flags",
                absl::Status(config.status().code(), absl::StrCat(field, ": ", config.status().message())));
  }
  *made = *std::move(config);
  return absl::OkStatus();
}

// Printable, no spaces, absolute, bounded: a name no shell nor libssh reads as more.
absl::Status CheckPathText(const std::string& field, const std::string& path, std::string* bad_field) {
  if (path.size() > kMaxPathBytes)
    return Refuse(bad_field, field, absl::StrCat("longer than ", kMaxPathBytes, " bytes"));
  for (char c : path) {
    if (static_cast<unsigned char>(c) <= ' ' || c == 0x7f)
      return Refuse(bad_field, field, "has a space or a control character");
  }
  if (!absl::StartsWith(path, "/")) return Refuse(bad_field, field, "must be an absolute path on the sending host");
  return absl::OkStatus();
}

// A peer's file, through the descriptor that passed --allow-source: the name is
// never opened again, so a link swapped in after the check hands over nothing new.
absl::StatusOr<std::string> ReadAllowed(const FileRole& role, const std::string& path, const LocalPolicy& policy) {
  static const std::vector<AllowedDirectory> kNone;
  auto file = OpenAllowedSource(path, policy.allowed_sources != nullptr ? *policy.allowed_sources : kNone);
  if (!file.ok()) return file.status();
  const std::string what = absl::StrCat(role.role, " ", file->path);
  if (!role.secret) return ReadFdBounded(file->fd->get(), what, kMaxKnownHostsBytes);
  if (absl::Status s = KeepOutOfCoreDumps(); !s.ok()) return s;  // a secret from here on
  return ReadPrivateFd(file->fd->get(), what, kMaxSecretBytes);
}

// Each file by a role the transport takes, once, named as an absolute path.
absl::Status CheckFiles(const proto::RunSpec& spec, const TransportEntry& entry, std::string* bad_field) {
  std::vector<std::string> seen;
  for (const proto::RunSpec::File& file : spec.files()) {
    const FileRole* role = FindRole(file.role());
    if (role == nullptr || !(entry.caps.*role->cap)) {
      const std::string able = role == nullptr ? "" : absl::StrCat(" (transport ", TransportsWith(role->cap), " does)");
      return Refuse(
          bad_field, "files",
          absl::StrCat("transport ", entry.name, " takes no ", role == nullptr ? "such file" : role->role, able));
    }
    if (absl::c_linear_search(seen, file.role())) return Refuse(bad_field, file.role(), "given twice");
    seen.push_back(file.role());
    if (absl::Status s = CheckPathText(role->role, file.path(), bad_field); !s.ok()) return s;
  }
  return absl::OkStatus();
}

// The checked files into the entry's config, before it is shared; a peer's read under
// --allow-source, once, and only its bytes go there.
absl::Status ReadFiles(const proto::RunSpec& spec, const LocalPolicy& policy, TransportConfig& config,
                       std::string* bad_field) {
  for (const proto::RunSpec::File& file : spec.files()) {
    const FileRole& role = *FindRole(file.role());
    std::optional<std::string> bytes;
    if (policy.origin != Origin::kUser && policy.open_files) {
      auto read = ReadAllowed(role, file.path(), policy);
      if (!read.ok()) return Fail(bad_field, role.role, read.status());
      bytes = *std::move(read);
    }
    if (absl::Status s = config.TakeFile(role.role, file.path(), std::move(bytes)); !s.ok())
      return Fail(bad_field, role.role, s);
  }
  return absl::OkStatus();
}

// `to` as a directory of this host (TransportCaps::local_dir), a peer's or a plan's:
// opened beneath --allow-path (OpenAllowedPath) and handed to the config, which
// works beneath that descriptor and never opens the name again.
absl::Status OpenLocalDir(const proto::RunSpec& spec, const RunOptions& o, const LocalPolicy& policy,
                          TransportConfig& config, std::string* bad_field) {
  if (!TransportFor(o.transport).caps.local_dir || policy.origin == Origin::kUser || !policy.open_files)
    return absl::OkStatus();
  static const std::vector<AllowedDirectory> kNone;
  auto dir = OpenAllowedPath(spec.to(), policy.allowed_paths != nullptr ? *policy.allowed_paths : kNone);
  if (!dir.ok()) return Fail(bad_field, "to", dir.status());
  if (absl::Status s = config.TakeDirectory(dir->path, dir->fd); !s.ok()) return Fail(bad_field, "to", s);
  return absl::OkStatus();
}

// The set's sizes: a real tree's (--tree, the user's own), or `file_count` drawn from
// `file_size`.
absl::Status SetSizes(const proto::RunSpec& spec, const LocalPolicy& policy, RunOptions& o, std::string* bad_field) {
  if (spec.tree().empty()) {
    if (spec.file_count() == 0 || spec.file_count() > kMaxSetFiles)
      return Refuse(bad_field, "file_count", absl::StrCat("must be 1..", kMaxSetFiles, " with a file size"));
    auto dist = ParseFileSizeDist(spec.file_size().empty() ? "1MiB" : spec.file_size());
    if (!dist.ok()) return Fail(bad_field, "file_size", dist.status());
    o.file_sizes =
        std::make_shared<std::vector<uint64_t>>(FileSetSizes(*dist, spec.file_count(), /*seed=*/spec.file_count()));
    o.file_size_text = dist->text;
    return absl::OkStatus();
  }
  if (policy.origin != Origin::kUser) return Refuse(bad_field, "tree", "is the command line's only");
  if (spec.file_count() != 0 || !spec.file_size().empty())
    return Refuse(bad_field, "tree", "takes the sizes of the tree's files: not with --files or --file-size");
  absl::StatusOr<TreeSizes> tree = WalkTree(spec.tree());
  if (!tree.ok()) return Fail(bad_field, "tree", tree.status());
  if (tree->files.empty())
    return Refuse(bad_field, "tree", absl::StrCat(spec.tree(), " holds no file of 1 byte or more"));
  auto sizes = std::make_shared<std::vector<uint64_t>>();
  sizes->reserve(tree->files.size());
  for (const TreeFile& file : tree->files) sizes->push_back(file.size);
  o.file_sizes = std::move(sizes);
  o.tree_files = std::make_shared<std::vector<TreeFile>>(std::move(tree->files));
  o.file_size_text = kTreeFileSize;
  o.tree = spec.tree();
  o.tree_left_out = tree->empty_files + tree->other_entries;
  return absl::OkStatus();
}

// A many-files run: a set of files of generated data, written.
absl::Status ResolveFileSet(const proto::RunSpec& spec, const LocalPolicy& policy, RunOptions& o,
                            std::string* bad_field) {
  if (spec.size() != 0 || !spec.file().empty())
    return Refuse(bad_field, spec.size() != 0 ? "size" : "file", "a many-files run takes --file-size instead");
  if (o.direction != Direction::kWrite) return Refuse(bad_field, "file_count", "many files are written, not read");
  if (o.verify) return Refuse(bad_field, "verify", "reads one file back; not with many files");
  if (o.sync_policy.kind == SyncPolicy::kEvery)
    return Refuse(bad_field, "sync", "with many files, end syncs each file before its close and none syncs none");
  if (absl::Status s = SetSizes(spec, policy, o, bad_field); !s.ok()) return s;
  if (spec.files_per_dir() > o.file_sizes->size())
    return Refuse(bad_field, "files_per_dir", absl::StrCat("must be 1..", o.file_sizes->size(), " (the files)"));
  o.files_per_dir = spec.files_per_dir();
  o.size = 0;
  for (uint64_t size : *o.file_sizes) o.size += size;
  auto pattern = ParsePattern(spec.pattern().empty() ? "random" : spec.pattern());
  if (!pattern.ok()) return Fail(bad_field, "pattern", pattern.status());
  o.pattern = *pattern;
  return absl::OkStatus();
}

// What to send: generated data of `size`, or a file (a peer's opened beneath
// --allow-source, read through that descriptor only). A read lays its file out.
absl::Status ResolvePayload(const proto::RunSpec& spec, const LocalPolicy& policy, RunOptions& o,
                            std::string* bad_field) {
  const bool user = policy.origin == Origin::kUser;
  if (spec.file_count() > 0 || !spec.file_size().empty() || !spec.tree().empty())
    return ResolveFileSet(spec, policy, o, bad_field);
  if (spec.files_per_dir() > 0)
    return Refuse(bad_field, "files_per_dir", "spreads a set of files; give --files N or --tree DIR");
  const bool remote = user && !spec.remote_file().empty();
  if ((spec.size() == 0) == spec.file().empty() && !(remote && spec.size() == 0 && spec.file().empty())) {
    return Refuse(bad_field, "size", user ? "give --size SIZE or --file PATH" : "give a size or a file");
  }
  o.size = spec.size();
  if (!spec.file().empty()) {
    if (policy.origin != Origin::kUser && spec.file().size() >= PATH_MAX)  // never under --allow-source
      return Refuse(bad_field, "file", absl::StrCat("longer than ", PATH_MAX - 1, " bytes"));
    if (policy.origin != Origin::kUser && !absl::StartsWith(spec.file(), "/"))
      return Refuse(bad_field, "file", "must be an absolute path on the sending host");
    if (policy.origin == Origin::kUser || !policy.open_files) {
      o.file = spec.file();
    } else {
      static const std::vector<AllowedDirectory> kNone;
      auto file = OpenAllowedSource(spec.file(), policy.allowed_sources != nullptr ? *policy.allowed_sources : kNone);
      if (!file.ok()) return Fail(bad_field, "file", file.status());
      o.file = file->path;
      o.file_fd = file->fd;
    }
  }
  auto pattern = ParsePattern(spec.pattern().empty() ? "random" : spec.pattern());
  if (!pattern.ok()) return Fail(bad_field, "pattern", pattern.status());
  o.pattern = *pattern;
  return absl::OkStatus();
}

// What only a user's read names (the others' are refused by ResolveDirection): a
// file of the far end's xor a size, as a plain name; on a write none of the read's.
absl::Status CheckUserRead(const proto::RunSpec& spec, Direction direction, std::string* bad_field) {
  if (direction != Direction::kRead) {
    for (const auto& [field, given] :
         {std::pair{"cache", !spec.cache().empty()}, std::pair{"read_mode", !spec.read_mode().empty()},
          std::pair{"remote_file", !spec.remote_file().empty()},
          std::pair{"local_target", !spec.local_target().empty()}}) {
      if (given) return Refuse(bad_field, field, "only with --direction read");
    }
    return absl::OkStatus();
  }
  if (!spec.file().empty()) {
    return Refuse(bad_field, "file",
                  "is what a write sends; a read reads --remote-file, or a file of --size the NAS lays out");
  }
  if ((spec.size() == 0) == spec.remote_file().empty())
    return Refuse(bad_field, "size", "a read needs --size SIZE or --remote-file NAME");
  if (!spec.remote_file().empty()) {
    if (absl::Status s = CheckFileName("--remote-file", spec.remote_file()); !s.ok())
      return Fail(bad_field, "remote_file", s);
  }
  return absl::OkStatus();
}

// The direction, and a read's cache state and read mode (ignored for a write). Only
// the command line names a file of the far end's or a local target.
absl::Status ResolveDirection(const proto::RunSpec& spec, Origin origin, RunOptions& o, std::string* bad_field) {
  if (origin != Origin::kUser) {
    for (const auto& [field, given] : {std::pair{"remote_file", !spec.remote_file().empty()},
                                       std::pair{"local_target", !spec.local_target().empty()},
                                       std::pair{"direct_fallback", spec.direct_fallback()}}) {
      if (given) return Refuse(bad_field, field, "only on the command line");
    }
  }
  auto direction = ParseOr(spec.direction(), Direction::kWrite);
  if (!direction.ok()) return Fail(bad_field, "direction", direction.status());
  o.direction = *direction;
  if (origin == Origin::kUser) {
    if (absl::Status s = CheckUserRead(spec, o.direction, bad_field); !s.ok()) return s;
  }
  o.remote_file = spec.remote_file();
  o.local_target = spec.local_target();
  if (o.direction != Direction::kRead) return absl::OkStatus();
  if (!spec.file().empty())
    return Refuse(bad_field, "file", "a read streams a file the receiver lays out: give a size");
  auto cache = ParseOr(spec.cache(), CacheState::kCold);
  if (!cache.ok()) return Fail(bad_field, "cache", cache.status());
  o.cache = *cache;
  auto read_mode = ParseOr(spec.read_mode(), ReadMode::kBuffered);
  if (!read_mode.ok()) return Fail(bad_field, "read_mode", read_mode.status());
  o.read_mode = *read_mode;
  return absl::OkStatus();
}

// How the far end writes: write mode, sync, cleanup, verify.
absl::Status ResolveHow(const proto::RunSpec& spec, RunOptions& o, std::string* bad_field) {
  if (!spec.write_mode().empty()) {
    auto mode = Parse<WriteMode>(spec.write_mode());
    if (!mode.ok()) return Fail(bad_field, "write_mode", mode.status());
    o.write_mode = *mode;
  }
  if (!spec.sync().empty()) {
    auto sync = ParseSyncPolicy(spec.sync());
    if (!sync.ok()) return Fail(bad_field, "sync", sync.status());
    o.sync_policy = *sync;
  }
  if (!spec.cleanup().empty()) {
    auto cleanup = Parse<Cleanup>(spec.cleanup());
    if (!cleanup.ok()) return Fail(bad_field, "cleanup", cleanup.status());
    o.cleanup = *cleanup;
  }
  o.verify = spec.verify();
  o.direct_fallback = spec.direct_fallback();
  return absl::OkStatus();
}

// The same refusals as a plan's and the sender's flags (RefusalsFor). A read's cache
// control is asked when the run names a cache state or read mode, from any origin: a
// run that names none reads as the transport reads (a share: through its client).
absl::Status RefuseWhatTheTransportCannotDo(const RunOptions& o, const proto::RunSpec& spec, std::string* bad_field) {
  TransportAsks asks;
  asks.verify = o.verify;
  asks.write_mode = o.write_mode;
  asks.read = o.direction == Direction::kRead;
  asks.read_laid_out = o.remote_file.empty();
  asks.read_cache = asks.read && (!spec.cache().empty() || !spec.read_mode().empty());
  asks.file_set = spec.file_count() > 0 || !spec.tree().empty();
  std::vector<Refusal> refused = RefusalsFor(o.transport, asks);
  if (refused.empty()) return absl::OkStatus();
  static constexpr std::pair<const char*, const char*> kAsked[] = {{"verify", "verify"},
                                                                   {"write_mode", "write_mode"},
                                                                   {"files", "an SSH login"},
                                                                   {"direction", "direction read"},
                                                                   {"size", "a read of a file it lays out"},
                                                                   {"cache", "the NAS's cache"},
                                                                   {"file_count", "many files"}};
  const auto& [field, asked] = kAsked[static_cast<int>(refused.front().ask)];
  absl::Status status = Refuse(
      bad_field, field,
      absl::StrCat("transport ", o.transport, " cannot do ", asked, "; transport ", refused.front().able, " can"));
  status.SetPayload(kRefusalPayload,
                    absl::Cord(absl::StrCat(static_cast<int>(refused.front().ask), ":", refused.front().able)));
  return status;
}

// The loop: streams, iterations, pause, interval, window, run id, label.
absl::Status ResolveLoop(const proto::RunSpec& spec, RunOptions& o, std::string* bad_field) {
  if (spec.streams() < 1 || spec.streams() > kMaxStreams) {
    return Refuse(bad_field, "streams", absl::StrCat("must be 1..", kMaxStreams));
  }
  o.streams = spec.streams();
  if (spec.runs() < 0 || spec.runs() > kMaxIterations || spec.warmup() < 0 || spec.warmup() > kMaxIterations) {
    return Refuse(bad_field, spec.runs() < 0 || spec.runs() > kMaxIterations ? "runs" : "warmup",
                  absl::StrCat("must be 0..", kMaxIterations));
  }
  o.runs = spec.runs() == 0 && spec.warmup() == 0 ? 1 : spec.runs();
  o.warmup = spec.warmup();
  if (!std::isfinite(spec.pause_s()) || spec.pause_s() < 0 || spec.pause_s() > kMaxPauseS) {
    return Refuse(bad_field, "pause_s", absl::StrCat("must be 0..", kMaxPauseS, " s"));
  }
  o.pause = absl::Seconds(spec.pause_s());
  if (absl::Status s = CheckInterval(spec.interval_s()); !s.ok()) return Fail(bad_field, "interval_s", s);
  o.interval_s = spec.interval_s();
  if (spec.window_bytes() != 0 && (spec.window_bytes() < kMinWindow || spec.window_bytes() > kMaxWindow)) {
    return Refuse(bad_field, "window_bytes",
                  absl::StrCat("must be 0 or between ", FormatSize(kMinWindow), " and ", FormatSize(kMaxWindow)));
  }
  o.window_bytes = spec.window_bytes();
  o.link_mbps = spec.link_mbps();
  if (!spec.run_id().empty()) {
    if (absl::Status s = CheckRunId(spec.run_id()); !s.ok()) return Fail(bad_field, "run_id", s);
  }
  o.run_id = spec.run_id();
  o.label = spec.label();
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckRunSpec(const proto::RunSpec& spec, Origin origin, std::string* bad_field) {
  LocalPolicy policy;
  policy.origin = origin;
  policy.open_files = false;
  return MakeRunOptions(spec, policy, bad_field).status();
}

std::optional<Refusal> TransportRefusalOf(const absl::Status& status) {
  auto payload = status.GetPayload(kRefusalPayload);  // absl::optional<absl::Cord>
  if (!payload) return std::nullopt;
  const std::string text(*payload);
  int ask = 0;
  const size_t colon = text.find(':');
  if (colon == std::string::npos || !absl::SimpleAtoi(text.substr(0, colon), &ask) || ask < 0 ||
      ask > static_cast<int>(Ask::kFileSet)) {
    return std::nullopt;
  }
  return Refusal{static_cast<Ask>(ask), text.substr(colon + 1)};
}

absl::StatusOr<RunOptions> MakeRunOptions(const proto::RunSpec& spec, const LocalPolicy& policy,
                                          std::string* bad_field) {
  if (!policy.open_files && policy.origin == Origin::kPeer) {
    return Refuse(bad_field, "files", "a peer's run always opens its files");
  }
  RunOptions o;
  std::unique_ptr<TransportConfig> config;
  // Every check first; files are opened and read only for a run that passed them.
  if (absl::Status s = ResolveTransport(spec, policy.origin, o, &config, bad_field); !s.ok()) return s;
  if (absl::Status s = CheckFiles(spec, TransportFor(o.transport), bad_field); !s.ok()) return s;
  if (absl::Status s = ResolveDirection(spec, policy.origin, o, bad_field); !s.ok()) return s;
  if (absl::Status s = ResolveHow(spec, o, bad_field); !s.ok()) return s;
  if (absl::Status s = ResolveLoop(spec, o, bad_field); !s.ok()) return s;
  if (absl::Status s = CheckFingerprint("receiver_fingerprint", spec.receiver_fingerprint()); !s.ok()) {
    return Fail(bad_field, "receiver_fingerprint", s);
  }
  o.receiver_fingerprint = spec.receiver_fingerprint();
  if (absl::Status s = RefuseWhatTheTransportCannotDo(o, spec, bad_field); !s.ok()) return s;
  if (absl::Status s = ResolvePayload(spec, policy, o, bad_field); !s.ok()) return s;
  if (absl::Status s = ReadFiles(spec, policy, *config, bad_field); !s.ok()) return s;
  if (absl::Status s = OpenLocalDir(spec, o, policy, *config, bad_field); !s.ok()) return s;
  o.config = std::move(config);
  o.token = policy.token;  // never the spec's
  o.trust = policy.trust;
  return o;
}

}  // namespace nasperf
