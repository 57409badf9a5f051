// The registry: every transport word has exactly one entry, that entry is the one
// TransportFor returns (a word with none gets an entry that can do nothing), and what
// the CLI refuses follows from its capabilities.
#include "transport/registry.h"

#include <algorithm>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "transport/share_config.h"

namespace nasperf {
namespace {

TEST(Registry, EveryTransportWordHasOneEntry) {
  std::set<std::string> seen;
  for (const TransportEntry& entry : Transports()) {
    EXPECT_TRUE(seen.insert(entry.name).second) << entry.name << " is listed twice";
    // The collector and the Hello check take a peer's word by this shape only.
    EXPECT_TRUE(IsTransportWord(entry.name)) << entry.name;
    EXPECT_EQ(FindTransport(entry.name), &entry);
    EXPECT_EQ(&TransportFor(entry.name), &entry);
    EXPECT_NE(entry.make, nullptr);
    EXPECT_NE(std::string(entry.summary), "");
  }
  EXPECT_EQ(FindTransport("observed"), nullptr);  // watch's word: rows only, no run
  // The suite's fake (tests/unit/testing/fake_transport.cc) only where a test links it.
  EXPECT_EQ(FindTransport("fake"), nullptr);
  EXPECT_EQ(FindTransport("Native"), nullptr);
  // The receiver's rows say the wire's word: the entry that talks to it has it.
  ASSERT_NE(FindTransport(kWireTransport), nullptr);
  EXPECT_TRUE(FindTransport(kWireTransport)->caps.agent);
}

// A test binary adds a transport by a registrar before main (the suite's fake); once the
// list was read, a registrar aborts in one line: nothing at run time adds or swaps one.
TEST(RegistryDeathTest, ARegistrarAfterTheFirstReadAborts) {
  ASSERT_NE(FindTransport("nfs"), nullptr);
  const size_t entries = Transports().size();
  EXPECT_DEATH({ TransportRegistrar late(+[]() -> TransportEntry { return TransportFor("nfs"); }); },
               "nasperf: transport nfs: registered after the registry was first read");
  EXPECT_EQ(Transports().size(), entries);
}

TEST(Registry, ATransportWordIsShort) {
  EXPECT_TRUE(IsTransportWord("native"));
  EXPECT_TRUE(IsTransportWord("sixteen-chars-ok"));
  EXPECT_FALSE(IsTransportWord("seventeen-chars-x"));
  EXPECT_FALSE(IsTransportWord(""));
  EXPECT_FALSE(IsTransportWord("Native"));
  EXPECT_FALSE(IsTransportWord("nfs\x1b[2J"));
  EXPECT_FALSE(IsTransportWord("a b"));
}

// What only some transports have to say comes from their entries, so cli/ and lab/
// name none: SMB's hidden worker command and its one-channel hint, the SSH
// transports' start-up line, why a static build lacks SMB.
TEST(Registry, WhatOneTransportSaysIsItsEntrys) {
  std::vector<std::string> workers, startup;
  for (const TransportEntry& entry : Transports()) {
    if (entry.worker.command != nullptr) {
      workers.push_back(entry.worker.command);
      EXPECT_NE(entry.worker.run, nullptr) << entry.name;
      EXPECT_NE(entry.worker.help, nullptr) << entry.name;
    }
    if (entry.startup_summary != nullptr) startup.push_back(entry.name);
  }
  EXPECT_EQ(workers, std::vector<std::string>{"smb-worker"});
  EXPECT_EQ(absl::StrJoin(startup, "|"), TransportsWith(&TransportCaps::ssh_login));
  const TransportEntry& smb = TransportFor("smb");
  EXPECT_NE(std::string(smb.unbuilt_why).find("static build has no SMB"), std::string::npos);
  ASSERT_NE(smb.nas_waited_hint, nullptr);
  RunOptions one;
  EXPECT_NE(smb.nas_waited_hint(one).find("--smb-channels 2 keeps two"), std::string::npos);
  RunOptions two;
  ShareOptions channels;
  channels.smb_channels = 2;
  two.config = std::make_shared<ShareConfig>(channels, "nas");
  EXPECT_EQ(smb.nas_waited_hint(two), "");
  EXPECT_EQ(TransportFor("nfs").nas_waited_hint, nullptr);
}

// --transport's and --to's help are the entries' own words.
TEST(Registry, HelpTextsListEveryEntry) {
  for (const TransportEntry& entry : Transports()) {
    EXPECT_NE(TransportsHelp().find(absl::StrCat(entry.name, ": ", entry.summary)), std::string::npos) << entry.name;
    ASSERT_NE(entry.to_form, nullptr) << entry.name;
    EXPECT_NE(TransportToFormsHelp().find(entry.to_form), std::string::npos) << entry.name;
  }
  EXPECT_NE(TransportToFormsHelp().find("scp|sftp: [user@]host[:port]:/remote/dir"), std::string::npos);
}

// A plan or a job naming watch's word is refused, not run as the first entry.
TEST(Registry, NoRunCanAskForAnObservedCopy) {
  const std::vector<std::string> words = RunTransportWords();  // smb only in builds with libsmbclient
  EXPECT_EQ(std::count(words.begin(), words.end(), "observed"), 0);
  EXPECT_EQ(words.front(), "native");
  auto observed = ParseRunTransport("observed");
  ASSERT_FALSE(observed.ok());
  EXPECT_EQ(observed.status().message(),
            absl::StrCat("transport 'observed' is not one a run can use: ", absl::StrJoin(words, "|")));
  EXPECT_EQ(*ParseRunTransport(""), DefaultTransport());
  EXPECT_EQ(*ParseRunTransport("sftp"), "sftp");
}

// A word with no entry never runs as another transport (it used to get the first
// entry, the agent's, with all its capabilities): its entry can do nothing, is not
// built and cannot be made, and the share flags refuse it, each naming the word.
TEST(Registry, AWordWithNoEntryCanDoNothing) {
  const TransportEntry& none = TransportFor("ftp");
  for (const TransportEntry& entry : Transports()) EXPECT_NE(&none, &entry) << entry.name;
  EXPECT_EQ(&TransportFor(""), &none) << "the default is ParseRunTransport's to give";
  for (bool TransportCaps::*cap : {&TransportCaps::agent, &TransportCaps::ssh_login, &TransportCaps::write_modes,
                                   &TransportCaps::dsync_writes, &TransportCaps::verify, &TransportCaps::verify_reads,
                                   &TransportCaps::reads, &TransportCaps::read_cache, &TransportCaps::reads_laid_out,
                                   &TransportCaps::barrier, &TransportCaps::url, &TransportCaps::credentials_file}) {
    EXPECT_FALSE(none.caps.*cap);
  }
  EXPECT_FALSE(none.built);
  EXPECT_EQ(none.add_flags, nullptr);
  EXPECT_EQ(none.worker.command, nullptr);
  const std::string refusal(ParseRunTransport("ftp").status().message());
  RunOptions options;
  options.transport = "ftp";
  auto made = none.make(options, RunContext{});
  ASSERT_FALSE(made.ok());
  EXPECT_EQ(made.status().message(), refusal);

  TransportAsks verify;
  verify.verify = true;
  ASSERT_EQ(RefusalsFor("ftp", verify).size(), 1u);
  EXPECT_EQ(RefusalsFor("ftp", verify).front().ask, Ask::kVerify);

  for (const std::vector<std::string>& words :
       {std::vector<std::string>{}, std::vector<std::string>{"--smb-signing", "required"}}) {
    absl::Status s = ParseTransportFlagWords("ftp", words).status();
    EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
    EXPECT_EQ(s.message(), absl::StrCat("transport_flags: ", refusal));
  }
}

// Issue 44 step 13: a make reads only its own entry's config (ConfigOf). A run built
// without its entry's parse, or with another entry's config, fails closed in one line
// naming the transport, before any connection (the old native make took an empty
// address, the SSH ones an empty login).
class ForeignConfig : public TransportConfig {
 public:
  std::string Peer() const override { return "elsewhere"; }
};

TEST(Registry, AMakeWithoutItsOwnConfigRefusesNamingTheTransport) {
  const std::shared_ptr<const TransportConfig> foreign = std::make_shared<ForeignConfig>();
  for (const TransportEntry& entry : Transports()) {
    if (!entry.built) continue;
    for (const std::shared_ptr<const TransportConfig>& config : {std::shared_ptr<const TransportConfig>(), foreign}) {
      RunOptions options;
      options.transport = entry.name;
      options.config = config;
      const RunContext context;
      auto made = entry.make(options, context);
      ASSERT_FALSE(made.ok()) << entry.name;
      EXPECT_EQ(made.status().message(),
                absl::StrCat("transport ", entry.name, ": no config of its own (its entry's parse makes one)"));
    }
  }
}

TEST(Registry, CapabilitiesNameTheTransportsThatHaveThem) {
  EXPECT_EQ(TransportsWith(&TransportCaps::ssh_login), "scp|sftp");
  EXPECT_EQ(TransportsWith(&TransportCaps::verify), "native|sftp|nfs|smb|path");
  EXPECT_EQ(TransportsWith(&TransportCaps::verify_reads), "native");
  EXPECT_EQ(TransportsWith(&TransportCaps::reads), "native|sftp|nfs|smb|path");
  EXPECT_EQ(TransportsWith(&TransportCaps::url), "nfs|smb");
  // A transport's --to is one of: an agent's address, an SSH login, a share's URL, or
  // (none of the three: path) a directory of the host that runs it, which a lab cannot
  // reach yet; each entry's own parse reads it (the CLI, a plan and an agent ask it).
  for (const TransportEntry& entry : Transports()) {
    EXPECT_LE(int{entry.caps.agent} + int{entry.caps.ssh_login} + int{entry.caps.url}, 1) << entry.name;
    EXPECT_NE(entry.parse, nullptr) << entry.name;
  }
}

// The SSH login flags are the scp and sftp entries' own (one function both point at):
// the CLI declares them once and refuses them with native, naming "scp|sftp".
TEST(Registry, TheSshLoginFlagsBelongToTheSshTransports) {
  EXPECT_EQ(TransportFor("native").add_flags, nullptr);
  const AddTransportFlags ssh = TransportFor("sftp").add_flags;
  ASSERT_NE(ssh, nullptr);
  EXPECT_EQ(TransportsWith(ssh), TransportsWith(&TransportCaps::ssh_login));
}

// The one refusal function the sender's flags, a lab plan and an agent's job go
// through: each ask is refused exactly when the transport lacks its capability.
TEST(Registry, RefusalsFollowTheCapabilities) {
  TransportAsks everything;
  everything.verify = true;
  everything.write_mode = WriteMode::kDirect;
  everything.ssh_login = true;
  everything.read = everything.read_laid_out = everything.read_cache = true;
  auto asks = [](const char* kind, const TransportAsks& a) {
    std::vector<Ask> out;
    for (const Refusal& r : RefusalsFor(kind, a)) out.push_back(r.ask);
    return out;
  };
  const char *native = "native", *scp = "scp", *sftp = "sftp";
  EXPECT_EQ(asks(native, everything), std::vector<Ask>{Ask::kSshLogin});
  EXPECT_EQ(asks(sftp, everything),
            (std::vector<Ask>{Ask::kVerify, Ask::kWriteMode, Ask::kReadLaidOut, Ask::kReadCache}));
  EXPECT_EQ(asks(scp, everything),
            (std::vector<Ask>{Ask::kVerify, Ask::kWriteMode, Ask::kRead, Ask::kReadLaidOut, Ask::kReadCache}));
  // NFS writes FILE_SYNC for dsync, but has no O_DIRECT.
  const char* nfs = "nfs";
  EXPECT_EQ(asks(nfs, everything), (std::vector<Ask>{Ask::kVerify, Ask::kWriteMode, Ask::kSshLogin, Ask::kReadCache}));
  TransportAsks dsync;
  dsync.write_mode = WriteMode::kDsync;
  EXPECT_TRUE(RefusalsFor(nfs, dsync).empty());
  EXPECT_EQ(asks(sftp, dsync), std::vector<Ask>{Ask::kWriteMode});
  const std::vector<Refusal> refused = RefusalsFor(sftp, everything);
  EXPECT_EQ(refused.front().able, "native");  // who can verify a read
  // A write is verified by reading the file back wherever the transport can read it.
  TransportAsks verify_write;
  verify_write.verify = true;
  EXPECT_TRUE(RefusalsFor(nfs, verify_write).empty());
  EXPECT_TRUE(RefusalsFor(sftp, verify_write).empty());
  EXPECT_TRUE(RefusalsFor("smb", verify_write).empty());
  EXPECT_EQ(asks(scp, verify_write), std::vector<Ask>{Ask::kVerify});
  EXPECT_EQ(RefusalsFor(scp, verify_write).front().able, "native|sftp|nfs|smb|path");
  // A mounted directory takes every write mode (O_DIRECT where its file system does).
  EXPECT_EQ(asks("path", everything), (std::vector<Ask>{Ask::kVerify, Ask::kSshLogin, Ask::kReadCache}));
  for (const TransportEntry& entry : Transports()) {
    EXPECT_TRUE(RefusalsFor(entry.name, TransportAsks{}).empty()) << entry.name << " refuses a plain write";
    EXPECT_TRUE(entry.caps.barrier) << entry.name << " cannot start with a lab's other streams";
  }
  EXPECT_EQ(DefaultTransport(), Transports().front().name);
}

}  // namespace
}  // namespace nasperf
