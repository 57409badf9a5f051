// The transports a run can measure with, one entry each: its word (--transport,
// the CSV's transport column, a lab plan's `transport`), what it can do, and how to
// make it, and the flags of its own. The loop, the CLI and the lab ask here instead
// of naming a transport; a new transport is a file of its own that defines its entry,
// one line in registry.cc's NASPERF_TRANSPORTS and one in transport/CMakeLists.txt
// (docs/DESIGN.md §10a). Built once, read-only after: thread-safe.
#ifndef NASPERF_TRANSPORT_REGISTRY_H_
#define NASPERF_TRANSPORT_REGISTRY_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "common/fd.h"
#include "common/log.h"
#include "common/policy.h"
#include "transport/run_context.h"
#include "transport/run_options.h"
#include "transport/transport.h"

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace nasperf {

// Where a transport's flag declarations bind while CLI11 checks them: each takes a
// part of its own type (the types give --help its words). Nothing reads a part back:
// the given values reach the entry's parse as ParsedFlags words. One per CLI11 app.
class FlagScratch {
 public:
  template <class T>
  T& Part() {
    auto part = std::make_shared<T>();
    parts_.push_back(part);
    return *part;
  }

 private:
  std::vector<std::shared_ptr<void>> parts_;
};

// Declares a transport's own flags on `nasperf sender`, bound into a part of `scratch`,
// and returns them so the CLI can tell which were given. Several entries may share
// one: the CLI declares each function's flags once, and refuses a given flag when
// the chosen transport's entry has another.
using AddTransportFlags = std::vector<CLI::Option*> (*)(CLI::App& sender, FlagScratch& scratch);

// What a transport can do, so that a flag it cannot honour is refused in one line
// before the run and each figure is said only where it can be true.
struct TransportCaps {
  bool agent = false;         // a nasperf receiver at the far end: its own row, the token, TLS, --to HOST[:PORT]
  bool ssh_login = false;     // logs in over SSH: --identity, --known-hosts, --ssh-config, ... and --to user@host:/dir
  bool write_modes = false;   // --write-mode other than buffered (and --direct-fallback)
  bool dsync_writes = false;  // --write-mode dsync only: a share's stable WRITEs (no O_DIRECT over NFS)
  bool verify = false;        // --verify of writes: checksums at both ends, or the file read back
  bool verify_reads = false;  // --verify of reads: the far end hashes the file it streams
  bool reads = false;         // --direction read
  bool read_cache = false;    // --cache and --read-mode: the far end's page cache is ours to set
  bool reads_laid_out = false;  // a read may read a file the far end lays out (--size); else only --remote-file
  bool barrier = false;  // a write's streams wait in RunContext::before_first_byte: a lab can start them together
  bool url = false;      // --to is the share's URL (nfs://host/export/dir), kept in the entry's config
  bool credentials_file = false;  // a login's file of username=/password= (the spec's "credentials" file)
  // `to` is a directory on the sending host (a mount point or one in it): a lab job's
  // is opened beneath the agent's --allow-path and handed over (TakeDirectory).
  bool local_dir = false;
  bool file_sets = false;  // --files: a transfer writes many files one after another
};

// Who gave a run's `to` and flags: the user on the command line, a lab plan, a
// controller's job (a peer), or a worker process. A parse trusts each differently
// (a peer may not deploy a receiver over SSH, nor name a local file).
enum class Origin { kUser, kPlan, kPeer, kWorker };

// The transport flags a run gave, by name as --help spells them ("--ssh-port"), with
// their values ("" for a switch), in --help order.
class ParsedFlags {
 public:
  void Add(std::string name, std::string value) { given_.emplace_back(std::move(name), std::move(value)); }
  bool Given(absl::string_view name) const;
  std::string Text(absl::string_view name, std::string dflt = "") const;
  const std::vector<std::pair<std::string, std::string>>& given() const { return given_; }

 private:
  std::vector<std::pair<std::string, std::string>> given_;
};

// What an entry's parse made of a run's `to` and flags: only the same entry reads its
// insides (make, begin). Read-only once made: shared by the threads of a run.
class TransportConfig {
 public:
  virtual ~TransportConfig() = default;
  // The rows' peer before the transport starts (lost rows, the console).
  virtual std::string Peer() const = 0;
  // What the run must bring the transport besides the config.
  struct Needs {
    bool shared_token = false;  // the token a nasperf agent there shares with us (--token-file)
    bool trust = false;         // TLS toward the far end (--tls-ca, --plaintext)
    bool pins_own_key = false;  // the far end shows its key another way (over SSH): no --tls-ca, no --plaintext
  };
  virtual Needs needs() const { return {}; }
  // A file the run's spec names by `role` ("ssh_identity", "ssh_known_hosts",
  // "credentials"; transport/run_spec.cc checked it against the entry's caps), before
  // the config is shared: `bytes` set, it was read once through the descriptor an
  // agent checked (--allow-source) and the name is never opened again; unset (the
  // user's), the transport opens `path` at make. An entry without the role refuses.
  virtual absl::Status TakeFile(absl::string_view role, const std::string& path, std::optional<std::string> bytes);
  // `to`, a directory on this host (TransportCaps::local_dir), as an agent opened it
  // beneath its --allow-path (transport/run_spec.cc), before the config is shared: the
  // transport works beneath `dir` and never opens `path` again. An entry without
  // local_dir refuses.
  virtual absl::Status TakeDirectory(const std::string& path, std::shared_ptr<const Fd> dir);
};

// A make's own config: `options.config` as the entry's type, or a one-line refusal
// naming the transport (a run built without its entry's parse fails closed).
template <class C>
absl::StatusOr<const C*> ConfigOf(const RunOptions& options) {
  const C* config = dynamic_cast<const C*>(options.config.get());
  if (config == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat("transport ", options.transport, ": no config of its own (its entry's parse makes one)"));
  }
  return config;
}

// Work an entry does around a run (native: a receiver started over SSH for it).
// End() is called once, after the run, from the thread that began it.
class RunScope {
 public:
  virtual ~RunScope() = default;
  virtual absl::Status End() = 0;
};

struct TransportEntry {
  // The word: --transport, the CSV's transport column, a lab plan's and a job's
  // `transport`. Lowercase, at most kMaxTransportWord characters (registry_test).
  const char* name;
  const char* summary;  // one line for --help
  TransportCaps caps;
  // The transport of a run: what it asks and the hooks it is lent (the lab's barrier,
  // the journal's transfer ids), read from `context`. Both must outlive the transport.
  absl::StatusOr<std::unique_ptr<Transport>> (*make)(const RunOptions& options, const RunContext& context);
  AddTransportFlags add_flags = nullptr;  // null: no flags of its own
  // What --to (a plan's `to`) is with it, for --help: "nfs://host[:port]/export[/dir]".
  const char* to_form = nullptr;
  // False where this build lacks it (the static build's SMB: no libsmbclient archive);
  // make then says so in one line, and unbuilt_why is what a lab's preflight tells the
  // plan's author when a host's nasperf lacks it ("a static build has no ...").
  bool built = true;
  const char* unbuilt_why = nullptr;
  // A hidden subcommand of its own, when it runs helper processes of nasperf (SMB's
  // workers): `nasperf <command>`, which only the transport starts. command null: none.
  struct Worker {
    const char* command = nullptr;
    const char* help = nullptr;
    int (*run)() = nullptr;  // the process's exit status
  };
  Worker worker = {};
  // After a write loop whose NAS observer says the NAS waited for this client: a hint
  // line on how this transport can keep the NAS busier ("" none). Null: none ever.
  std::string (*nas_waited_hint)(const RunOptions& options) = nullptr;
  // The summary's line on whose parts a write run's verdicts judged, when it is not
  // the default for a transport without an agent ("" the default). Null: never.
  std::string (*verdict_scope)(const RunOptions& options) = nullptr;
  // The summary's start-up line, after "start-up: N of these ", for transfers that paid
  // the session's start-up (TransferResult's startup). Null: none of its transfers do.
  const char* startup_summary = nullptr;
  // Its `to` and given flags (its own, and borrowed_flags') as a config; a refusal is
  // one line about *bad_field ("--to", a flag). Origin::kUser may ask all a user may;
  // a plan's or a peer's `to` and flags get less (NFS: no uid=/gid=, SMB: no login file
  // by flag, SSH: no --ssh-config nor the SFTP knobs). Every entry has one (registry_test).
  absl::StatusOr<std::unique_ptr<TransportConfig>> (*parse)(const std::string& to, const ParsedFlags& flags,
                                                            Origin origin, std::string* bad_field) = nullptr;
  // Another entry's flags its parse also takes (native: the SSH login's, for a
  // receiver it starts over SSH); given with this entry, they are not refused as foreign.
  AddTransportFlags borrowed_flags = nullptr;
  // Work before the run, with options.config set by parse: it may replace
  // options.config with one naming what it started (say() hears its lines); its
  // scope's End() undoes it after the run.
  // Null, or a null scope: nothing to do.
  absl::StatusOr<std::unique_ptr<RunScope>> (*begin)(RunOptions& options, const ConsoleLine& say) = nullptr;
};

// What a run asks of its transport that not every transport can do. The CLI fills
// it from its flags and a lab plan from a transfer's keys; RefusalsFor decides which
// asks the transport refuses, so both refuse the same things (each in its own words).
struct TransportAsks {
  bool verify = false;
  WriteMode write_mode = WriteMode::kBuffered;
  bool ssh_login = false;      // SSH login options were given
  bool read = false;           // direction read
  bool read_laid_out = false;  // a read of a file the far end lays out (no remote file named)
  bool read_cache = false;     // the far end's page cache or read mode was set
  bool file_set = false;       // --files
};

enum class Ask { kVerify, kWriteMode, kSshLogin, kRead, kReadLaidOut, kReadCache, kFileSet };

struct Refusal {
  Ask ask;
  std::string able;  // the transports that can, as "scp|sftp" (TransportsWith)
};

// In the order of Ask; empty when the transport can do everything asked.
// `word` is an entry's name; a word with no entry can do nothing: every ask is refused.
std::vector<Refusal> RefusalsFor(absl::string_view word, const TransportAsks& asks);

// The entries: the product's (registry.cc's NASPERF_TRANSPORTS, a line each), then
// the registrars'. Built on the first call, read-only after: safe from any thread.
const std::vector<TransportEntry>& Transports();

// A transport a test binary adds, in one line of the file that defines it
// (tests/unit/testing/fake_transport.cc):
//   const TransportRegistrar kFake(FakeTransportEntry);
// a namespace-scope object, so it runs during static initialisation, before main. Its
// entry comes after the product's. Only code linked into the binary can register, and
// only before the list is first read: Transports() freezes it, and a registrar after
// that, or an entry whose word is taken or not a transport word, aborts with one line.
// So no run-time input can add or change a transport, and the product's transports
// stay registry.cc's list; the product links no registrar (test_transport_names.sh
// reads its --transport words). Chosen over a list a test installs: nothing to call
// at run time, nothing to forget before the first read.
class TransportRegistrar {
 public:
  explicit TransportRegistrar(TransportEntry (*entry)());
};

// The entry named `word`; null when there is none. For a word not checked yet (a
// peer's, a row's): the caller says what is wrong with an unknown one.
const TransportEntry* FindTransport(absl::string_view word);
// The entry of a word its way in already checked: the CLI's (--transport's set is
// RunTransportWords), ParseRunTransport's (plans, jobs, RunSender). A word with no
// entry never gets another transport's: it gets an entry named "(none)" that can do
// nothing (no caps, not built, make refuses naming the word), so a caller that skipped
// the check fails closed.
const TransportEntry& TransportFor(absl::string_view word);
// The first entry's word: what a run uses when none is named (--transport, a plan, a job).
std::string DefaultTransport();
// The words a run can ask for: the entries'. The transport column knows more words
// (watch's kObservedTransport) that no run can use.
std::vector<std::string> RunTransportWords();
// A run's transport word (a plan's, a job's): "" = DefaultTransport(); a word with no
// entry is refused, naming the ones there are.
absl::StatusOr<std::string> ParseRunTransport(absl::string_view word);
// The words of the transports this build can run (TransportEntry::built).
std::vector<std::string> BuiltTransportWords();
// The words of the transports that have `cap`, as "scp|sftp", for refusals.
std::string TransportsWith(bool TransportCaps::*cap);
// --transport's and --to's help, an entry a clause: "native: SUMMARY; scp: ...";
// "native: TO_FORM; scp|sftp: TO_FORM" (entries with one form share a clause).
std::string TransportsHelp();
std::string TransportToFormsHelp();
// The words of the transports whose flags `add` declares, as "scp|sftp".
std::string TransportsWith(AddTransportFlags add);
// The first entry whose add_flags declares `name` ("--smb-signing", or a short "-x"),
// or null: every entry's flags are declared once, at the first call.
const TransportEntry* FlagOwner(absl::string_view name);

// A lab transfer's `transport_flags` (["--smb-signing", "required"]): a share
// transport's own flags, parsed by its own declarations (checked as on the command
// line), as the ParsedFlags its entry's parse takes (Origin::kPlan, kPeer). Refused:
// a transport without a URL, over 16 words or a word over 256 characters, any other
// flag, and --smb-credentials (a login file comes by the plan's `credentials`, which
// the agent checks against its --allow-source), and a `transport` with no entry
// (ParseRunTransport's refusal); each refusal begins "transport_flags: ".
absl::StatusOr<ParsedFlags> ParseTransportFlagWords(absl::string_view transport, const std::vector<std::string>& words);

// For an entry's parse: each given flag through the flags `declare` adds to an app
// (the command line's checks; bound where the entry reads them); a refusal is
// CLI11's line, naming the flag in *bad_field. A flag not declared is refused.
absl::Status ApplyTransportFlags(const std::function<void(CLI::App&)>& declare, const ParsedFlags& flags,
                                 std::string* bad_field);
// The same with the entry's own typed declarations, their values set in `into`.
template <class T>
absl::Status ApplyTransportFlags(std::vector<CLI::Option*> (*bind)(CLI::App&, T&), const ParsedFlags& flags, T& into,
                                 std::string* bad_field) {
  return ApplyTransportFlags([&](CLI::App& app) { bind(app, into); }, flags, bad_field);
}

}  // namespace nasperf

#endif  // NASPERF_TRANSPORT_REGISTRY_H_
