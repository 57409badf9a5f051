#include "transport/registry.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <utility>

#include "CLI/CLI.hpp"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/log.h"

// The product's transports, one line each, in --transport's order (the first is the
// default): X(Name) is the entry `TransportEntry NameTransportEntry()` that the
// transport's own file defines (transport/native.cc, ...). Adding a transport adds a
// line here; registry.cc includes none of their headers.
#define NASPERF_TRANSPORTS(X) \
  X(Native)                   \
  X(Scp)                      \
  X(Sftp)                     \
  X(Nfs)                      \
  X(Smb)                      \
  X(Path)

namespace nasperf {

#define NASPERF_DECLARE_TRANSPORT_ENTRY(Name) TransportEntry Name##TransportEntry();
NASPERF_TRANSPORTS(NASPERF_DECLARE_TRANSPORT_ENTRY)
#undef NASPERF_DECLARE_TRANSPORT_ENTRY

namespace {

// The registrars' entries (TransportRegistrar), taken once by Transports()'s first read.
struct Registrations {
  std::mutex mu;
  bool frozen = false;  // Transports() was read: a registrar now aborts
  std::vector<TransportEntry (*)()> entries;
};

Registrations& Registered() {
  static auto* registered = new Registrations;
  return *registered;
}

[[noreturn]] void BadRegistration(const char* name, const char* why) {
  std::fprintf(stderr, "nasperf: transport %s: %s (transport/registry.h TransportRegistrar)\n", name, why);
  std::abort();
}

// The product's entries, then the registrars' in link order; the list is frozen.
std::vector<TransportEntry>* BuildTransports() {
#define NASPERF_TRANSPORT_ENTRY(Name) Name##TransportEntry(),
  auto* entries = new std::vector<TransportEntry>{NASPERF_TRANSPORTS(NASPERF_TRANSPORT_ENTRY)};
#undef NASPERF_TRANSPORT_ENTRY
  Registrations& registered = Registered();
  std::lock_guard<std::mutex> lock(registered.mu);
  registered.frozen = true;
  for (TransportEntry (*make_entry)() : registered.entries) {
    TransportEntry entry = make_entry();
    if (!IsTransportWord(entry.name)) BadRegistration(entry.name, "its word is not a transport word");
    const bool taken = std::any_of(entries->begin(), entries->end(), [&](const TransportEntry& other) {
      return other.name == absl::string_view(entry.name);
    });
    if (taken) BadRegistration(entry.name, "its word is another entry's");
    entries->push_back(entry);
  }
  return entries;
}

}  // namespace

TransportRegistrar::TransportRegistrar(TransportEntry (*entry)()) {
  Registrations& registered = Registered();
  std::lock_guard<std::mutex> lock(registered.mu);
  if (registered.frozen) BadRegistration(entry().name, "registered after the registry was first read");
  registered.entries.push_back(entry);
}

const std::vector<TransportEntry>& Transports() {
  static const std::vector<TransportEntry>* entries = BuildTransports();
  return *entries;
}

const TransportEntry* FindTransport(absl::string_view word) {
  for (const TransportEntry& entry : Transports()) {
    if (entry.name == word) return &entry;
  }
  return nullptr;
}

bool ParsedFlags::Given(absl::string_view name) const {
  return std::any_of(given_.begin(), given_.end(), [&](const auto& flag) { return flag.first == name; });
}

std::string ParsedFlags::Text(absl::string_view name, std::string dflt) const {
  for (const auto& [flag, value] : given_) {
    if (flag == name) return value;
  }
  return dflt;
}

namespace {

// make of the entry a word with no entry gets: ParseRunTransport's refusal of it.
absl::StatusOr<std::unique_ptr<Transport>> RefuseUnknownTransport(const RunOptions& options, const RunContext&) {
  absl::StatusOr<std::string> word = ParseRunTransport(options.transport);
  if (!word.ok()) return word.status();
  return absl::InvalidArgumentError(
      absl::StrCat("transport ", *word, ": asked for by a word with no entry (it was not checked)"));
}

const TransportEntry& NoTransport() {
  static const TransportEntry* none = [] {
    auto* entry = new TransportEntry{"(none)", "a word with no entry: it can do nothing", TransportCaps{},
                                     RefuseUnknownTransport};
    entry->built = false;
    entry->unbuilt_why = "no transport has that word";
    return entry;
  }();
  return *none;
}

}  // namespace

const TransportEntry& TransportFor(absl::string_view word) {
  const TransportEntry* entry = FindTransport(word);
  return entry != nullptr ? *entry : NoTransport();
}

std::string DefaultTransport() { return Transports().front().name; }

std::vector<std::string> RunTransportWords() {
  std::vector<std::string> words;
  for (const TransportEntry& entry : Transports()) words.push_back(entry.name);
  return words;
}

absl::StatusOr<std::string> ParseRunTransport(absl::string_view word) {
  if (word.empty()) return DefaultTransport();
  if (const TransportEntry* entry = FindTransport(word); entry != nullptr) return std::string(entry->name);
  return absl::InvalidArgumentError(
      absl::StrCat("transport '", word, "' is not one a run can use: ", absl::StrJoin(RunTransportWords(), "|")));
}

std::vector<std::string> BuiltTransportWords() {
  std::vector<std::string> words;
  for (const TransportEntry& entry : Transports()) {
    if (entry.built) words.push_back(entry.name);
  }
  return words;
}

std::string TransportsWith(bool TransportCaps::*cap) {
  std::vector<std::string> names;
  for (const TransportEntry& entry : Transports()) {
    if (entry.caps.*cap) names.push_back(entry.name);
  }
  return absl::StrJoin(names, "|");
}

std::string TransportsHelp() {
  std::vector<std::string> clauses;
  for (const TransportEntry& entry : Transports()) clauses.push_back(absl::StrCat(entry.name, ": ", entry.summary));
  return absl::StrJoin(clauses, "; ");
}

std::string TransportToFormsHelp() {
  std::vector<std::pair<std::string, std::string>> forms;  // words, form; in registry order
  for (const TransportEntry& entry : Transports()) {
    const std::string form = entry.to_form == nullptr ? "" : entry.to_form;
    auto same = std::find_if(forms.begin(), forms.end(), [&](const auto& f) { return f.second == form; });
    if (same != forms.end()) {
      absl::StrAppend(&same->first, "|", entry.name);
    } else {
      forms.emplace_back(entry.name, form);
    }
  }
  std::vector<std::string> clauses;
  for (const auto& [words, form] : forms) clauses.push_back(absl::StrCat(words, ": ", form));
  return absl::StrJoin(clauses, "; ");
}

std::string TransportsWith(AddTransportFlags add) {
  std::vector<std::string> names;
  for (const TransportEntry& entry : Transports()) {
    if (entry.add_flags == add) names.push_back(entry.name);
  }
  return absl::StrJoin(names, "|");
}

const TransportEntry* FlagOwner(absl::string_view name) {
  static const auto* const owners = [] {
    auto* made = new absl::flat_hash_map<std::string, const TransportEntry*>();
    for (const TransportEntry& entry : Transports()) {
      if (entry.add_flags == nullptr) continue;
      CLI::App app{"transport flags"};
      FlagScratch scratch;
      for (const CLI::Option* option : entry.add_flags(app, scratch)) {
        for (const std::string& l : option->get_lnames()) made->emplace(absl::StrCat("--", l), &entry);
        for (const std::string& s : option->get_snames()) made->emplace(absl::StrCat("-", s), &entry);
      }
    }
    return made;
  }();
  const auto found = owners->find(name);
  return found == owners->end() ? nullptr : found->second;
}

absl::StatusOr<ParsedFlags> ParseTransportFlagWords(absl::string_view transport,
                                                    const std::vector<std::string>& words) {
  constexpr size_t kMaxWords = 16, kMaxWordChars = 256;
  auto refuse = [](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat("transport_flags: ", why));
  };
  const absl::StatusOr<std::string> word = ParseRunTransport(transport);
  if (!word.ok()) return refuse(word.status().message());
  if (words.empty()) return ParsedFlags{};
  const TransportEntry& entry = TransportFor(*word);
  if (!entry.caps.url || entry.add_flags == nullptr) {
    return refuse(absl::StrCat("transport ", entry.name, " takes none (", TransportsWith(&TransportCaps::url), " do)"));
  }
  if (words.size() > kMaxWords) return refuse(absl::StrCat("more than ", kMaxWords, " words"));
  for (const std::string& word : words) {
    if (word.size() > kMaxWordChars) return refuse(absl::StrCat("a word over ", kMaxWordChars, " characters"));
    if (absl::StartsWith(word, "--smb-credentials")) {
      return refuse("--smb-credentials: give the login file as the transfer's `credentials`");
    }
  }
  CLI::App app{"transport_flags"};
  FlagScratch scratch;
  const std::vector<CLI::Option*> options = entry.add_flags(app, scratch);
  std::vector<std::string> reversed(words.rbegin(), words.rend());  // CLI11 parses from the back
  try {
    app.parse(reversed);
  } catch (const CLI::ParseError& e) {
    return refuse(TerminalSafe(e.what()));
  }
  ParsedFlags given;
  for (const CLI::Option* option : options) {
    if (option->count() == 0) continue;
    const std::vector<std::string>& values = option->results();
    given.Add(option->get_name(), values.empty() ? "" : values.back());
  }
  return given;
}

absl::Status TransportConfig::TakeFile(absl::string_view role, const std::string& /*path*/,
                                       std::optional<std::string> /*bytes*/) {
  return absl::InvalidArgumentError(absl::StrCat("this transport takes no ", role, " file"));
}

absl::Status TransportConfig::TakeDirectory(const std::string& path, std::shared_ptr<const Fd> /*dir*/) {
  return absl::InvalidArgumentError(absl::StrCat("this transport takes no directory of the sending host (", path, ")"));
}

absl::Status ApplyTransportFlags(const std::function<void(CLI::App&)>& declare, const ParsedFlags& flags,
                                 std::string* bad_field) {
  for (const auto& [name, value] : flags.given()) {
    CLI::App app{"transport flags"};
    declare(app);
    const CLI::Option* option = app.get_option_no_throw(name);
    const bool a_switch = option != nullptr && option->get_expected_min() == 0;
    // NAME=VALUE: a value that begins with '-' stays the flag's; an empty one is a word
    // of its own (CLI11 parses from the back)
    std::vector<std::string> words{a_switch ? name : absl::StrCat(name, "=", value)};
    if (!a_switch && value.empty()) words = {"", name};
    try {
      app.parse(words);
    } catch (const CLI::ParseError& e) {
      *bad_field = name;
      return absl::InvalidArgumentError(TerminalSafe(e.what()));
    }
  }
  return absl::OkStatus();
}

std::vector<Refusal> RefusalsFor(absl::string_view word, const TransportAsks& asks) {
  const TransportCaps& caps = TransportFor(word).caps;
  std::vector<Refusal> refused;
  const std::pair<bool, std::pair<Ask, bool TransportCaps::*>> rules[] = {
      {asks.verify && !asks.read, {Ask::kVerify, &TransportCaps::verify}},
      {asks.verify && asks.read, {Ask::kVerify, &TransportCaps::verify_reads}},
      {asks.write_mode != WriteMode::kBuffered, {Ask::kWriteMode, &TransportCaps::write_modes}},
      {asks.ssh_login, {Ask::kSshLogin, &TransportCaps::ssh_login}},
      {asks.read, {Ask::kRead, &TransportCaps::reads}},
      {asks.read && asks.read_laid_out, {Ask::kReadLaidOut, &TransportCaps::reads_laid_out}},
      {asks.read && asks.read_cache, {Ask::kReadCache, &TransportCaps::read_cache}},
      {asks.file_set, {Ask::kFileSet, &TransportCaps::file_sets}},
  };
  for (const auto& [asked, rule] : rules) {
    if (!asked || caps.*rule.second) continue;
    if (rule.first == Ask::kWriteMode && asks.write_mode == WriteMode::kDsync && caps.dsync_writes) continue;
    refused.push_back({rule.first, TransportsWith(rule.second)});
  }
  return refused;
}

}  // namespace nasperf
