// nasperf sender, probe and demo: the flags of the client end and their wiring.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/observer.h"
#include "cli/sender_spec.h"
#include "collector/csv_sink.h"
#include "common/file_set.h"
#include "common/log.h"
#include "common/token.h"
#include "receiver/receiver.h"
#include "report/html.h"
#include "report/table.h"
#include "sender/loop_journal.h"
#include "sender/sender.h"
#include "transport/path_check.h"
#include "transport/registry.h"
#include "transport/run_spec.h"

namespace nasperf::cli {
namespace {

// ----------------------------------------------------------------- sender

// Each transport's own flags, in registry order, each owner's once.
void AddTransportsFlags(CLI::App& cmd, SenderFlags& f) {
  std::vector<AddTransportFlags> added;
  for (const TransportEntry& entry : Transports()) {
    if (entry.add_flags == nullptr || std::find(added.begin(), added.end(), entry.add_flags) != added.end()) continue;
    added.push_back(entry.add_flags);
    for (CLI::Option* option : entry.add_flags(cmd, f.from_transport_flags)) f.transport_flags.push_back(option);
  }
}

// --files and --file-size, or --tree: many files per transfer, instead of `one_file`
// (--file, --size).
void AddFileSetFlags(CLI::App* cmd, SenderFlags& f, std::initializer_list<CLI::Option*> one_file) {
  auto* files = cmd->add_option("--files", f.files,
                                absl::StrCat("Many files: each transfer writes N files one after another, as Explorer "
                                             "and cp -r copy a folder (--streams N: N at once, as robocopy /MT); "
                                             "--transport ",
                                             TransportsWith(&TransportCaps::file_sets)))
                    ->check(CLI::Range(uint64_t{1}, kMaxSetFiles));
  cmd->add_option("--file-size", f.file_size,
                  "With --files: each file's size: SIZE, LOW-HIGH (log-uniform, e.g. 2MiB-20MiB), photos (2MiB-20MiB) "
                  "or source-tree (512B-64KiB); default 1MiB")
      ->needs(files);
  auto* tree = cmd->add_option("--tree", f.tree,
                               "Many files from a real tree: each transfer writes one file for each regular file "
                               "beneath DIR (empty ones, links and devices left out), with its bytes, depth first with "
                               "each directory's names sorted; the files land side by side under nasperf's names")
                   ->type_name("DIR")
                   ->excludes(files);
  cmd->add_option("--files-per-dir", f.files_per_dir,
                  "With --files or --tree: at most K files in each directory, each a new directory beside where the "
                  "files would be (a camera's folders of 999); default all in one")
      ->check(CLI::Range(uint64_t{1}, kMaxSetFiles));
  for (CLI::Option* other : one_file) {
    files->excludes(other);
    tree->excludes(other);
  }
}

CLI::App* AddSender(CLI::App& app, SenderFlags& f) {
  auto* cmd = app.add_subcommand(
      "sender",
      "Push files or generated data to a receiver, or to a server with no nasperf (--transport), in timed runs");
  cmd->add_option("--to", f.to, absl::StrCat("Where, by --transport. ", TransportToFormsHelp()))->required();
  cmd->add_option("--transport", f.transport, absl::StrCat("How the bytes go. ", TransportsHelp()))
      ->capture_default_str()
      ->check(CLI::IsMember(RunTransportWords()));
  AddTransportsFlags(*cmd, f);
  cmd->add_option(
      "--deploy-binary", f.deploy_binary,
      "With --to user@host:/dir: the static nasperf to upload (default: this one, if it is the static build)");
  cmd->add_option("--direction", f.direction,
                  absl::StrCat("write: push to the NAS; read: pull a file from it (--transport ",
                               TransportsWith(&TransportCaps::reads), ")"))
      ->capture_default_str()
      ->check(CLI::IsMember(Names<Direction>()));
  cmd->add_option(
      "--cache", f.cache,
      "Reads: the NAS's page cache before each run: cold (the file's pages dropped) or warm (read once first); "
      "default cold");
  cmd->add_option("--read-mode", f.read_mode,
                  "Reads: how the NAS reads the file: buffered (through its page cache) or direct (O_DIRECT, past "
                  "it: a cold read where dropping pages cannot promise one, e.g. ZFS 2.3+); default buffered")
      ->check(CLI::IsMember(Names<ReadMode>()));
  cmd->add_option("--remote-file", f.remote_file,
                  "Reads: read this existing file in the receiver's target (a name, no '/'); default: the NAS lays out "
                  "a file of --size, untimed, and removes it after the run");
  cmd->add_option(
      "--local-target", f.local_target,
      "Reads: write what arrives into this directory (--write-mode, --sync, --cleanup apply); default: discard");
  auto* file = cmd->add_option("--file", f.file, "Send this file (zero-copy unless --verify)");
  auto* size = cmd->add_option("--size", f.size, "Send this much generated data, e.g. 45GiB");
  file->excludes(size);
  AddFileSetFlags(cmd, f, {file, size});
  cmd->add_option("--pattern", f.pattern, "Generated data: random (incompressible) or zero")
      ->capture_default_str()
      ->check(CLI::IsMember({"random", "zero"}));
  cmd->add_option("--runs", f.runs, "Measured iterations")->capture_default_str()->check(CLI::Range(1, 100000));
  cmd->add_option("--warmup", f.warmup, "Warm-up iterations first (recorded, marked, not in statistics)")
      ->capture_default_str()
      ->check(CLI::Range(0, 1000));
  cmd->add_option("--streams", f.streams, "Parallel streams per iteration")
      ->capture_default_str()
      ->check(CLI::Range(1, kMaxStreams));
  cmd->add_option("--pause", f.pause, "Pause between iterations, e.g. 30s")->capture_default_str();
  cmd->add_option("--label", f.label, "Configuration label for comparisons (e.g. cache-on)");
  cmd->add_option("--run-id", f.run_id, "Run id (default: time + random)");
  cmd->add_option("--write-mode", f.write_mode, "Receiver write mode: buffered|direct|dsync")
      ->capture_default_str()
      ->check(CLI::IsMember(Names<WriteMode>()));
  cmd->add_option("--sync", f.sync,
                  "Sync policy: none|end|every=SIZE (a transport with no agent syncs as its protocol can, and says "
                  "at start when it cannot)")
      ->capture_default_str();
  cmd->add_option("--cleanup", f.cleanup,
                  "Delete received files: each|end|never (default: the receiver's; with no agent at the far end, "
                  "each)")
      ->check(CLI::IsMember(Names<Cleanup>()));
  cmd->add_flag("--verify", f.verify,
                absl::StrCat("Compare XXH3 checksums end to end (--transport ", TransportsWith(&TransportCaps::verify),
                             "; with no agent at the far end, each written file is read back after its clock stops)"));
  cmd->add_flag("--direct-fallback", f.direct_fallback,
                "With --write-mode direct: write buffered (and say so) when the target refuses O_DIRECT");
  cmd->add_option("--out", f.out, "Directory for transfers.csv and samples.csv")->capture_default_str();
  cmd->add_option("--resume", f.resume,
                  "Go on with the loop that was killed or interrupted, DIR being its --out directory: the same run, "
                  "from the copy it was at (recorded once as aborted), warm-ups done not repeated");
  cmd->add_option("--interval", f.interval, "Per-interval samples every DUR (0 = none)")->capture_default_str();
  AddTokenFlag(cmd, f.token_file);
  cmd->add_flag("--no-progress", f.no_progress, "No live progress line");
  AddLinkSpeedFlag(cmd, f.link_speed);
  cmd->add_option("--window", f.window,
                  "Fixed TCP socket buffers at both ends, e.g. 16MiB (default: 2 x bandwidth-delay product when "
                  "autotuning falls short)");
  AddReportingFlags(cmd, f.reporting);
  AddObserverFlags(cmd, f.observer);
  return cmd;
}

// A refusal of MakeRunOptions' as the flag it is about: one line, exit 2. What the
// transport cannot do (RefusalsFor, decided there) in the command line's words.
[[noreturn]] void SayRefusal(const proto::RunSpec& spec, const std::string& field, const absl::Status& status) {
  const std::string cmd = "sender";
  const std::string name = TransportFor(ParseRunTransport(spec.transport()).value_or("")).name;
  if (std::optional<Refusal> refused = TransportRefusalOf(status)) {
    const std::string& able = refused->able;
    switch (refused->ask) {
      case Ask::kVerify:
        UsageError(cmd, "--verify",
                   absl::StrCat("--transport ", name, " cannot: it needs --transport ", able,
                                "; compare files with cmp or sha256sum"));
      case Ask::kWriteMode:
        UsageError(cmd, "--write-mode", absl::StrCat("--transport ", name, " cannot: it needs --transport ", able));
      case Ask::kRead:
        UsageError(cmd, "--direction", absl::StrCat("--transport ", name, " cannot read; --transport ", able, " can"));
      case Ask::kReadLaidOut:
        UsageError(cmd, "--remote-file", absl::StrCat("a read over ", name, " pulls an existing file: give its name"));
      case Ask::kReadCache:
        UsageError(cmd, !spec.cache().empty() ? "--cache" : "--read-mode",
                   absl::StrCat("needs --transport ", able, ": over ", name,
                                " the server's page cache is not nasperf's to control"));
      case Ask::kFileSet:
        UsageError(cmd, "--files",
                   absl::StrCat("--transport ", name, " sends one file per transfer; --transport ", able, " can"));
      case Ask::kSshLogin:
        break;  // a login flag's owner is named by its own refusal (transport_flags)
    }
  }
  if (field == "transport_flags") {  // "--flag: why"
    const std::string line(status.message());
    const size_t colon = line.find(": ");
    if (colon != std::string::npos) UsageError(cmd, line.substr(0, colon), line.substr(colon + 2));
  }
  static constexpr std::pair<const char*, const char*> kFlagOf[] = {{"pause_s", "--pause"},
                                                                    {"interval_s", "--interval"},
                                                                    {"link_mbps", "--link-speed"},
                                                                    {"window_bytes", "--window"},
                                                                    {"file_count", "--files"}};
  std::string flag = absl::StrCat("--", absl::StrReplaceAll(field, {{"_", "-"}}));
  for (const auto& [spec_field, cli_flag] : kFlagOf) {
    if (field == spec_field) flag = cli_flag;
  }
  UsageError(cmd, flag, status.message());
}

// The flags as a RunSpec, made into a run by MakeRunOptions as a lab agent makes a
// job's (Origin::kUser: files stay paths the transport opens at make); then what is
// the command line's own: its TLS flags against a receiver started over SSH, and the
// token and trust, loaded only when the run or --collector needs them (so a mistake
// in the flags is exit 2 before a missing token is exit 1).
absl::StatusOr<SenderOptions> MakeSenderOptions(const SenderFlags& f) {
  const std::string cmd = "sender";
  const proto::RunSpec spec = SpecOfFlags(f);
  LocalPolicy policy;  // the user's: no --allow-source, files stay paths; the token below
  policy.origin = Origin::kUser;
  std::string field;
  auto made = MakeRunOptions(spec, policy, &field);
  if (!made.ok()) SayRefusal(spec, field, made.status());
  SenderOptions o = *std::move(made);
  const TransportConfig::Needs needs = o.config->needs();
  if (needs.pins_own_key && (f.reporting.tls.plaintext || !f.reporting.tls.ca.empty())) {
    UsageError(cmd, f.reporting.tls.plaintext ? "--plaintext" : "--tls-ca",
               "not with --to [user@]host:/dir: the receiver started there serves TLS with the key it shows over SSH");
  }
  // The observer's rows join the loop's run.
  if (f.observer.Given() && o.run_id.empty()) o.run_id = NewRunId();
  // A receiver started over SSH gets a token of its own (the entry's begin); the
  // shared one is needed only toward a collector then.
  const bool observed = f.observer.Given();
  if (needs.shared_token || !f.reporting.collector.empty() || observed) {
    o.token = TokenFlag(cmd, f.token_file, /*generate_if_missing=*/false).token;
  }
  if (needs.trust || !f.reporting.collector.empty() || observed) o.trust = TrustFlags(cmd, f.reporting.tls);
  return o;
}

// Prints where the rows went and turns the outcome into the exit status.
int FinishSender(const absl::StatusOr<SenderOutcome>& outcome, const CsvSink* csv, SpoolingSink* spool) {
  if (!outcome.ok()) return Fail("sender", outcome.status());
  if (csv != nullptr) {
    std::printf("\nresults: %s\n         %s\n", csv->transfers_path().c_str(), csv->samples_path().c_str());
  }
  if (spool != nullptr) ReportSpool("sender", *spool, absl::Seconds(10));
  if (outcome->failed > 0) {
    std::fprintf(stderr, "nasperf sender: %d of %d transfers failed (see the error column)\n", outcome->failed,
                 outcome->transfers);
    return 1;
  }
  return 0;
}

// A line of the transport's begin and end (a host's paths, its recorded key): on stdout.
void SayOnStdout(const std::string& line) {
  std::printf("%s\n", TerminalSafe(line).c_str());
  std::fflush(stdout);
}

// The work the transport did around the run undone (a receiver it started stopped);
// a failure is said and becomes the run's when the run itself went well.
void EndRunScope(std::unique_ptr<RunScope> scope, absl::StatusOr<SenderOutcome>& outcome) {
  if (scope == nullptr) return;
  absl::Status ended = scope->End();
  if (ended.ok()) return;
  std::fprintf(stderr, "nasperf sender: %s\n", TerminalSafe(ended.message()).c_str());  // the host's log lines
  if (outcome.ok()) outcome = ended;
}

// The loop's journal in its --out directory; with --resume, the killed loop's, checked
// against these flags (the same loop, or nothing).
absl::StatusOr<std::unique_ptr<LoopJournal>> OpenJournal(const SenderFlags& f, SenderOptions& o,
                                                         std::optional<LoopState>& resumed) {
  LoopState state;
  state.label = o.label;
  state.runs = o.runs;
  state.warmup = o.warmup;
  state.streams = o.streams;
  state.size = o.size;
  if (!f.resume.empty()) {
    auto read = ReadLoopJournal(f.resume);
    if (!read.ok()) return read.status();
    if (read->label != state.label || read->runs != state.runs || read->warmup != state.warmup ||
        read->streams != state.streams || read->size != state.size) {
      return absl::InvalidArgumentError(absl::StrCat("--resume ", f.resume, ": the killed loop was --label '",
                                                     read->label, "' --runs ", read->runs, " --warmup ", read->warmup,
                                                     " --streams ", read->streams, " --size ", read->size,
                                                     " bytes: give the same flags to go on with it"));
    }
    resumed = *read;
    o.run_id = read->run_id;
  } else if (o.run_id.empty()) {
    o.run_id = NewRunId();  // the journal names the run before the loop starts
  }
  state.run_id = o.run_id;
  return std::make_unique<LoopJournal>(f.resume.empty() ? f.out : f.resume, state);
}

int RunSenderCommand(const SenderFlags& f) {
  const std::atomic<bool>* stop = StopOnSignal("sender", "aborting the transfers");
  auto options = MakeSenderOptions(f);
  if (!options.ok()) return Fail("sender", options.status());
  std::optional<LoopState> resumed;
  auto journal = OpenJournal(f, *options, resumed);
  if (!journal.ok()) return Fail("sender", journal.status());
  RunContext context;  // the loop's hooks: the journal (--resume), Ctrl-C, the live feed, the progress line
  context.journal = journal->get();
  context.resumed = resumed ? &*resumed : nullptr;
  context.transfer_opened = [j = journal->get()](int stream, uint64_t id) { (void)j->Opened(stream, id); };
  context.cancel = stop;
  context.progress = !f.no_progress && isatty(STDOUT_FILENO);
  auto spool = StartReporting("sender", f.reporting, options->token, options->trust);
  if (!spool.ok()) return Fail("sender", spool.status());
  // The collector's live page and /metrics while the loop runs.
  std::unique_ptr<LiveFeed> live = StartLiveFeed("sender", f.reporting, options->token, options->trust, spool->get());
  context.live = live.get();
  std::unique_ptr<CsvSink> csv;
  ReportSink* sink = spool->get();
  if (sink == nullptr) {
    auto opened = CsvSink::Open(f.resume.empty() ? f.out : f.resume);
    if (!opened.ok()) return Fail("sender", opened.status());
    csv = std::move(*opened);
    sink = csv.get();
  }
  std::unique_ptr<RunScope> scope;  // e.g. a receiver started over SSH for the run
  if (const TransportEntry& entry = TransportFor(options->transport); entry.begin != nullptr) {
    auto begun = entry.begin(*options, SayOnStdout);
    if (!begun.ok()) return Fail("sender", begun.status());
    scope = std::move(*begun);
  }
  auto observer = LoopObserver::Start(f.observer, options->label, options->run_id, options->link_mbps,
                                      options->interval_s, options->token, options->trust.get());
  if (!observer.ok()) return Fail("sender", observer.status());
  if (*observer) {
    std::printf("observer %s: watching %s on the NAS\n", f.observer.address.c_str(), (*observer)->dir().c_str());
    std::fflush(stdout);
  }
  absl::StatusOr<SenderOutcome> outcome = RunSender(*options, context, *sink, stdout);
  if (outcome.ok()) SayWhoseVerdicts(*options, *observer != nullptr);
  if (*observer) {
    auto observed = (*observer)->Finish(*sink);
    if (observed.ok()) {
      SayObserved(f.observer.address, *observed, *options);
    } else {
      std::fprintf(stderr, "nasperf sender: observer %s: %s\n", f.observer.address.c_str(),
                   TerminalSafe(observed.status().message()).c_str());
      if (outcome.ok()) outcome = observed.status();
    }
  }
  const TransportConfig::Needs needs = options->config ? options->config->needs() : TransportConfig::Needs{};
  if (absl::IsUnavailable(outcome.status()) && !f.reporting.tls.plaintext && needs.trust && !needs.pins_own_key) {
    outcome = absl::UnavailableError(
        absl::StrCat(outcome.status().message(), " (if the receiver runs with --plaintext, pass --plaintext too)"));
  }
  EndRunScope(std::move(scope), outcome);
  const int rc = FinishSender(outcome, csv.get(), spool->get());
  return stop->load() ? 130 : rc;
}

// ----------------------------------------------------------------- probe

struct ProbeFlags {
  std::string to, token_file, link_speed;
  ClientTls tls;
};

CLI::App* AddProbe(CLI::App& app, ProbeFlags& f) {
  auto* cmd =
      app.add_subcommand("probe", "Check the path to a receiver (MTU, path MTU, MSS, link); exit 1 on a problem");
  cmd->add_option("to", f.to, "Receiver HOST[:PORT] (control port, default 7600)")->required();
  AddTokenFlag(cmd, f.token_file);
  AddLinkSpeedFlag(cmd, f.link_speed);
  AddClientTlsFlags(cmd, f.tls);
  return cmd;
}

int RunProbeCommand(const ProbeFlags& f) {
  const std::string cmd = "probe";
  ProbeOptions o;
  o.to = AddressFlag(cmd, "to", f.to, kAgentPort, false);
  o.link_mbps = LinkSpeedFlag(cmd, f.link_speed);
  const TokenSource token = TokenFlag(cmd, f.token_file, /*generate_if_missing=*/false);
  o.token = token.token;
  o.trust = TrustFlags(cmd, f.tls);
  auto verdict = RunProbe(o, stdout);
  if (!verdict.ok()) return Fail(cmd, verdict.status());
  return *verdict;
}

// ----------------------------------------------------------------- demo

struct DemoFlags {
  std::string size = "256MiB", dir;
  int runs = 5;
};

CLI::App* AddDemo(CLI::App& app, DemoFlags& f) {
  auto* cmd = app.add_subcommand("demo", "Receiver + sender on loopback: a few runs into a temporary target");
  cmd->add_option("--size", f.size, "Size of each transfer")->capture_default_str();
  cmd->add_option("--runs", f.runs, "Measured iterations (one warm-up comes first)")
      ->capture_default_str()
      ->check(CLI::Range(1, 100));
  cmd->add_option("--dir", f.dir, "Where to put the target and the results (default: a new temporary directory)");
  return cmd;
}

int RunDemo(const DemoFlags& f) {
  const std::string cmd = "demo";
  std::string dir = f.dir;
  if (dir.empty()) {
    char pattern[] = "/tmp/nasperf-demo-XXXXXX";
    if (mkdtemp(pattern) == nullptr) return Fail(cmd, absl::InternalError("mkdtemp failed"));
    dir = pattern;
  }
  std::error_code ec;
  std::filesystem::create_directories(dir + "/target", ec);
  if (ec) return Fail(cmd, absl::InternalError(absl::StrCat("mkdir ", dir, "/target: ", ec.message())));

  ReceiverOptions rx;
  rx.target = dir + "/target";
  rx.listen = {"127.0.0.1", 0};
  rx.token = RandomHex(16);
  rx.min_free = 0;
  auto receiver = Receiver::Start(rx);
  if (!receiver.ok()) return Fail(cmd, receiver.status());
  std::printf("nasperf demo: receiver on 127.0.0.1:%u writing into %s\n\n", (*receiver)->control_port(),
              rx.target.c_str());

  SenderOptions tx;
  std::string bad_field;  // the receiver it just started, as its entry's parse makes it
  auto config = TransportFor(tx.transport)
                    .parse(FormatHostPort({"127.0.0.1", (*receiver)->control_port()}), {}, Origin::kUser, &bad_field);
  if (!config.ok()) return Fail(cmd, config.status());
  tx.config = *std::move(config);
  tx.token = rx.token;
  tx.trust = TrustFlags(cmd, {});
  tx.receiver_fingerprint = (*receiver)->security().fingerprint;  // TLS, pinned to the receiver it just started
  tx.size = SizeFlag(cmd, "--size", f.size);
  tx.runs = f.runs;
  tx.warmup = 1;
  tx.pause = absl::Milliseconds(200);
  tx.label = "demo";
  tx.verify = true;
  tx.interval_s = 0.25;
  RunContext context;
  context.progress = isatty(STDOUT_FILENO);
  auto sink = CsvSink::Open(dir + "/results");
  if (!sink.ok()) return Fail(cmd, sink.status());
  int rc = FinishSender(RunSender(tx, context, **sink, stdout), sink->get(), nullptr);
  (*receiver)->Shutdown();
  std::printf(
      "\nThe sender's rows time what a user waits for (first byte to the receiver's answer);\n"
      "the receiver's rows time first byte to data on disk (fdatasync done).\n");
  const std::string results = dir + "/results";
  const std::string html = results + "/report.html";
  auto table = LoadResults({results});
  absl::Status written =
      table.ok() ? WriteHtmlReportFor(*table, std::nullopt, html, "nasperf " NASPERF_VERSION) : table.status();
  if (!written.ok()) {
    Fail(cmd, absl::InternalError(absl::StrCat("no HTML report: ", written.message())));
    return rc != 0 ? rc : 1;
  }
  std::printf("\nreport:  %s (charts; open it in a browser; or: nasperf report %s)\n", html.c_str(), results.c_str());
  return rc;
}

}  // namespace

Command AddSenderCommand(CLI::App& app) { return CommandOf<SenderFlags>(app, AddSender, RunSenderCommand); }

Command AddProbeCommand(CLI::App& app) { return CommandOf<ProbeFlags>(app, AddProbe, RunProbeCommand); }

Command AddDemoCommand(CLI::App& app) { return CommandOf<DemoFlags>(app, AddDemo, RunDemo); }

std::vector<Command> AddTransportWorkerCommands(CLI::App& app) {
  std::vector<Command> commands;
  for (const TransportEntry& entry : Transports()) {
    if (entry.worker.command == nullptr) continue;
    CLI::App* cmd = app.add_subcommand(entry.worker.command, entry.worker.help);
    cmd->group("");  // not in --help: nobody runs it by hand
    commands.push_back(Command{cmd, entry.worker.run});
  }
  return commands;
}

}  // namespace nasperf::cli
