// Lab plans: a good plan reads back field by field; every bad plan fails with the
// file, the line and what is wrong.
#include "lab/plan.h"

#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lab/agent_limits.h"
#include "testing/config_of.h"
#include "transport/registry.h"
#include "transport/run_spec.h"
#include "wire/validate.h"

namespace nasperf {
namespace {

using ::testing::HasSubstr;

constexpr char kGood[] = R"(label = "three-clients"
runs = 5
warmup = 1
pause = "30s"
on_failure = "continue"
link_speed = "10gbit"
[collector]
out = "results"
listen = ":7700"
[[host]]
name = "nas"
agent = "198.18.1.10:7600"
target = "/mnt/user/downloads"
mtu = 9000
[[host]]
name = "client1"
agent = "198.18.0.11"
[[transfer]]
from = "client1"
to = "nas"
size = "4GiB"
streams = 2
write_mode = "direct"
sync = "every=64MiB"
)";

TEST(PlanTest, GoodPlanReadsBack) {
  auto plan = ParsePlan(kGood, "plan.toml");
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->label, "three-clients");
  EXPECT_EQ(plan->runs, 5);
  EXPECT_EQ(plan->warmup, 1);
  EXPECT_EQ(plan->pause, absl::Seconds(30));
  EXPECT_FALSE(plan->stop_on_failure);
  EXPECT_EQ(plan->link_mbps, 10000u);
  EXPECT_EQ(plan->collector.out, "results");
  EXPECT_EQ(plan->collector.listen.port, 7700);
  ASSERT_EQ(plan->hosts.size(), 2u);
  EXPECT_EQ(plan->hosts[0].agent.host, "198.18.1.10");
  EXPECT_EQ(plan->hosts[0].target, "/mnt/user/downloads");
  EXPECT_EQ(plan->hosts[0].mtu, 9000u);
  EXPECT_EQ(plan->hosts[0].line, 10);
  EXPECT_EQ(plan->hosts[1].agent.port, 7600);  // the default port
  ASSERT_EQ(plan->transfers.size(), 1u);
  EXPECT_EQ(plan->transfers[0].size, 4ULL << 30);
  EXPECT_EQ(plan->transfers[0].streams, 2);
  EXPECT_EQ(plan->transfers[0].write_mode, "direct");
  EXPECT_EQ(plan->transfers[0].sync_policy, "every=64MiB");
  ASSERT_NE(plan->FindHost("client1"), nullptr);
  EXPECT_EQ(plan->FindHost("client9"), nullptr);
}

TEST(PlanTest, DefaultsForAMinimalPlan) {
  auto plan = ParsePlan(R"([[host]]
name = "a"
agent = "10.0.0.1"
[[host]]
name = "b"
agent = "10.0.0.2"
[[transfer]]
from = "a"
to = "b"
file = "/data/big.mov"
)",
                        "p.toml");
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->runs, 1);
  EXPECT_TRUE(plan->stop_on_failure);
  EXPECT_EQ(plan->collector.listen.port, 0);
  EXPECT_TRUE(plan->collector.address.empty());
  EXPECT_EQ(plan->transfers[0].file, "/data/big.mov");
  EXPECT_EQ(plan->transfers[0].size, 0u);
}

// Replaces the first occurrence of `from` in the good plan.
std::string GoodWith(const std::string& from, const std::string& to) {
  std::string text = kGood;
  size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return text.replace(at, from.size(), to);
}

// The NAS's host may watch its target while the runs go (lab/observations.h).
TEST(PlanTest, AHostMayObserveItsTarget) {
  auto plan = ParsePlan(GoodWith("mtu = 9000", "observe = true\nobserve_dir = \"media\""), "p.toml");
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_TRUE(plan->hosts[0].observe);
  EXPECT_EQ(plan->hosts[0].observe_dir, "media");
  EXPECT_FALSE(plan->hosts[1].observe);
}

TEST(PlanTest, TheEmbeddedCollectorMayServeTheLiveView) {
  auto plan = ParsePlan(GoodWith("out = \"results\"", "out = \"r\"\nhttp = \"127.0.0.1\"\nhttp_tls = true"), "p.toml");
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_TRUE(plan->collector.http.has_value());
  EXPECT_EQ(FormatHostPort(*plan->collector.http), "127.0.0.1:7701");
  EXPECT_TRUE(plan->collector.http_tls);
  EXPECT_FALSE(ParsePlan(kGood, "p.toml")->collector.http.has_value());
}

TEST(PlanTest, ATransferMayRead) {
  auto plan =
      ParsePlan(GoodWith("streams = 2", "direction = \"read\"\ncache = \"warm\"\nread_mode = \"direct\""), "p.toml");
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->transfers[0].direction, "read");
  EXPECT_EQ(plan->transfers[0].cache, "warm");
  EXPECT_EQ(plan->transfers[0].read_mode, "direct");
  auto plain = ParsePlan(kGood, "p.toml");
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->transfers[0].direction, "write");
}

// files = N with file_size: a many-files transfer, carried to the agent's run as the
// sender's --files and --file-size are; the direct writes and every= sync of kGood are
// what a set cannot take, so they go.
TEST(PlanTest, ATransferMayWriteManyFiles) {
  const std::string set = GoodWith("size = \"4GiB\"", "files = 500\nfile_size = \"photos\"\nfiles_per_dir = 100");
  const std::string text = set.substr(0, set.find("write_mode = \"direct\""));
  auto plan = ParsePlan(text, "p.toml");
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->transfers[0].files, 500);
  const proto::RunSpec spec = SpecOf(*plan, plan->transfers[0]);
  EXPECT_EQ(spec.file_count(), 500u);
  EXPECT_EQ(spec.file_size(), "photos");
  EXPECT_EQ(spec.files_per_dir(), 100u);
  EXPECT_EQ(spec.size(), 0u);
  auto refused = ParsePlan(GoodWith("size = \"4GiB\"", "size = \"4GiB\"\nfile_size = \"photos\""), "p.toml");
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(std::string(refused.status().message()), HasSubstr("file_size is for files = N"));
  auto spread_alone = ParsePlan(GoodWith("size = \"4GiB\"", "size = \"4GiB\"\nfiles_per_dir = 10"), "p.toml");
  ASSERT_FALSE(spread_alone.ok());
  EXPECT_THAT(std::string(spread_alone.status().message()), HasSubstr("files_per_dir is for files = N"));
}

struct BadPlan {
  std::string name, text, want;
};

class BadPlanTest : public ::testing::TestWithParam<BadPlan> {};

TEST_P(BadPlanTest, FailsNamingFileAndLine) {
  auto plan = ParsePlan(GetParam().text, "plan.toml");
  ASSERT_FALSE(plan.ok());
  EXPECT_TRUE(absl::IsInvalidArgument(plan.status())) << plan.status();
  EXPECT_THAT(std::string(plan.status().message()), HasSubstr(GetParam().want));
}

INSTANTIATE_TEST_SUITE_P(
    Plans, BadPlanTest,
    ::testing::Values(
        BadPlan{"Syntax", GoodWith("runs = 5", "runs = = 5"), "plan.toml:2:"},
        BadPlan{"UnknownTopKey", GoodWith("runs = 5", "rnus = 5"), "plan.toml:2: unknown key \"rnus\""},
        BadPlan{"RunsNotInteger", GoodWith("runs = 5", "runs = \"five\""), "plan.toml:2: runs must be an integer"},
        BadPlan{"RunsZero", GoodWith("runs = 5", "runs = 0"), "plan.toml:2: runs = 0 is not between 1 and"},
        BadPlan{"BadPause", GoodWith("pause = \"30s\"", "pause = \"30 parsecs\""), "plan.toml:4: pause:"},
        BadPlan{"BadOnFailure", GoodWith("on_failure = \"continue\"", "on_failure = \"retry\""),
                "plan.toml:5: on_failure = \"retry\" is not one of: continue, stop"},
        BadPlan{"BadLinkSpeed", GoodWith("link_speed = \"10gbit\"", "link_speed = \"fast\""),
                "plan.toml:6: link_speed:"},
        BadPlan{"UnknownCollectorKey", GoodWith("out = \"results\"", "outdir = \"results\""),
                "plan.toml:8: [collector]: unknown key \"outdir\""},
        BadPlan{"ListenAndAddress", GoodWith("out = \"results\"", "address = \"10.0.0.1:7700\""),
                "give listen (embedded collector) or address (external), not both"},
        BadPlan{"HostWithoutAgent", GoodWith("agent = \"198.18.1.10:7600\"", ""),
                "plan.toml:10: [[host]] 1: missing key \"agent\""},
        BadPlan{"BadAgentAddress", GoodWith("198.18.1.10:7600", "198.18.1.10:99999"),
                "plan.toml:12: [[host]] 1: agent:"},
        BadPlan{"DuplicateHost", GoodWith("name = \"client1\"", "name = \"nas\""),
                "plan.toml:16: [[host]] 2: host \"nas\" is already defined at line 10"},
        BadPlan{"BadMtu", GoodWith("mtu = 9000", "mtu = 12"), "plan.toml:14: [[host]] 1: mtu = 12 is not between"},
        BadPlan{"ObserveNotABool", GoodWith("mtu = 9000", "observe = \"yes\""), "[[host]] 1: observe must be"},
        BadPlan{"HttpOnAnExternalCollector",
                GoodWith("listen = \":7700\"", "address = \"10.0.0.1:7700\"\nhttp = \":7701\""),
                "http is the embedded collector's"},
        BadPlan{"HttpTokenWithoutHttp", GoodWith("out = \"results\"", "out = \"r\"\nhttp_tls = true"),
                "needs http = \"ADDR\""},
        BadPlan{"ObserveDirAlone", GoodWith("mtu = 9000", "observe_dir = \"media\""),
                "[[host]] 1: observe_dir needs observe = true"},
        BadPlan{"UnknownHostInTransfer", GoodWith("to = \"nas\"", "to = \"nas2\""),
                "plan.toml:20: [[transfer]] 1: to = \"nas2\" names no [[host]]"},
        BadPlan{"SameHost", GoodWith("to = \"nas\"", "to = \"client1\""), "from and to are the same host"},
        BadPlan{"SizeAndFile", GoodWith("size = \"4GiB\"", "size = \"4GiB\"\nfile = \"/x\""),
                "give one of size = \"4GiB\", file = \"/path\" or files = N (with file_size)"},
        BadPlan{"BadSize", GoodWith("size = \"4GiB\"", "size = \"lots\""), "plan.toml:21: [[transfer]] 1: size:"},
        BadPlan{"TooManyStreams", GoodWith("streams = 2", "streams = 65"),
                "plan.toml:22: [[transfer]] 1: streams = 65"},
        BadPlan{"BadWriteMode", GoodWith("write_mode = \"direct\"", "write_mode = \"fast\""),
                "plan.toml:23: [[transfer]] 1: write_mode = \"fast\" is not one of"},
        BadPlan{"BadSync", GoodWith("sync = \"every=64MiB\"", "sync = \"sometimes\""),
                "plan.toml:24: [[transfer]] 1: invalid sync policy \"sometimes\" (expected none, end or every=SIZE)"},
        BadPlan{"BadDirection", GoodWith("streams = 2", "direction = \"sideways\""),
                "plan.toml:22: [[transfer]] 1: direction = \"sideways\" is not one of"},
        BadPlan{"CacheOnAWrite", GoodWith("streams = 2", "cache = \"warm\""), "cache is for direction = \"read\""},
        BadPlan{"ReadModeOnAWrite", GoodWith("streams = 2", "read_mode = \"direct\""),
                "read_mode is for direction = \"read\""},
        BadPlan{"UnknownReadMode", GoodWith("streams = 2", "direction = \"read\"\nread_mode = \"mmap\""), "read_mode"},
        BadPlan{"ReadOfAFile", GoodWith("size = \"4GiB\"", "file = \"/x\"\ndirection = \"read\""),
                "plan.toml:21: [[transfer]] 1: file: a read streams a file the receiver lays out: give a size"},
        // A path the sending agent would refuse (transport/run_spec.h CheckRunSpec) is
        // refused when the plan is read, at its key: before, the plan passed.
        BadPlan{"RelativeFile", GoodWith("size = \"4GiB\"", "file = \"data/big.mov\""),
                "plan.toml:21: [[transfer]] 1: file: must be an absolute path on the sending host"},
        BadPlan{"FileTooLong", GoodWith("size = \"4GiB\"", "file = \"/" + std::string(4100, 'f') + "\""),
                "plan.toml:21: [[transfer]] 1: file: longer than 4095 bytes"},
        BadPlan{"NoTransfers", std::string(kGood).substr(0, std::string(kGood).find("[[transfer]]")),
                "plan.toml: no [[transfer]] tables"},
        BadPlan{"HostNotATable", "label = \"x\"\nhost = 3\n", "plan.toml:2: host must be [[host]] tables"}),
    [](const ::testing::TestParamInfo<BadPlan>& info) { return info.param.name; });

// A run starts every transfer of one host at once, each a job of its agent: a plan
// the agent would refuse (lab/agent_limits.h) is refused here, naming the transfer.
TEST(PlanTest, AHostsTransfersFitItsAgentsLimits) {
  auto with = [](int transfers, int streams) {
    std::string text = kGood;
    for (int i = 0; i < transfers; ++i) {
      text += "[[transfer]]\nfrom = \"client1\"\nto = \"nas\"\nsize = \"1GiB\"\nstreams = " + std::to_string(streams) +
              "\n";
    }
    return ParsePlan(text, "plan.toml");
  };
  EXPECT_TRUE(with(kMaxAgentJobs - 1, 2).ok()) << "8 jobs of 2 streams";
  EXPECT_TRUE(with(1, kMaxAgentStreams - 2).ok()) << "64 streams in all";
  auto jobs = with(kMaxAgentJobs, 1);
  ASSERT_FALSE(jobs.ok());
  EXPECT_THAT(std::string(jobs.status().message()),
              HasSubstr("[[transfer]] 9: host client1 would run 9 transfers of 10 streams in all at once; an agent "
                        "runs at most 8 and 64 streams"));
  auto streams = with(1, kMaxAgentStreams - 1);
  ASSERT_FALSE(streams.ok());
  EXPECT_THAT(std::string(streams.status().message()), HasSubstr("2 transfers of 65 streams"));
}

TEST(PlanTest, SshKeysForStartingAgents) {
  auto plan = ParsePlan(GoodWith("mtu = 9000", R"(mtu = 9000
ssh = "root@198.18.1.10:2222"
ssh_identity = "/k/id"
ssh_known_hosts = "/k/known"
nasperf = "/opt/nasperf"
agent_flags = ["--min-free", "off"])"),
                        "plan.toml");
  ASSERT_TRUE(plan.ok()) << plan.status();
  const PlanHost& nas = plan->hosts[0];
  EXPECT_EQ(nas.ssh, "root@198.18.1.10:2222");
  EXPECT_EQ(nas.ssh_identity, "/k/id");
  EXPECT_EQ(nas.ssh_known_hosts, "/k/known");
  EXPECT_EQ(nas.nasperf, "/opt/nasperf");
  EXPECT_THAT(nas.agent_flags, ::testing::ElementsAre("--min-free", "off"));
  EXPECT_EQ(plan->hosts[1].nasperf, "") << "no nasperf = ...: the static binary is uploaded";

  auto bad = ParsePlan(GoodWith("mtu = 9000", "agent_flags = \"--min-free off\""), "plan.toml");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("plan.toml:14: [[host]] 1: agent_flags must be an array"));
}

// One client whose agent sends over an SSH transport; `lines` go into the transfer.
std::string SshTransferPlan(const std::string& lines) {
  return "[[host]]\nname = \"client1\"\nagent = \"198.18.0.11\"\n"  // lines 1-3
         "[[transfer]]\nfrom = \"client1\"\nsize = \"32MiB\"\n" +   // lines 4-6
         lines +
         "\n";
}

TEST(PlanTest, TransportDefaultsToTheRegistrysFirst) {
  auto plan = ParsePlan(kGood, "plan.toml");
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->transfers[0].transport, DefaultTransport());
  EXPECT_TRUE(plan->transfers[0].ToIsHost());
}

TEST(PlanTest, AnSshTransportSendsToALogin) {
  auto plan = ParsePlan(SshTransferPlan(R"(transport = "sftp"
to = "root@198.18.1.10:2222:/mnt/cache"
ssh_identity = "/root/.ssh/id_ed25519"
ssh_known_hosts = "/etc/nasperf/known_hosts"
sync = "end")"),
                        "plan.toml");
  ASSERT_TRUE(plan.ok()) << plan.status();
  const PlanTransfer& t = plan->transfers[0];
  EXPECT_EQ(t.transport, "sftp");
  EXPECT_FALSE(t.ToIsHost());
  EXPECT_EQ(t.to, "root@198.18.1.10:2222:/mnt/cache");  // the job's `to`: the agent parses it as a peer's
  EXPECT_EQ(t.ssh_identity, "/root/.ssh/id_ed25519");
  EXPECT_EQ(t.ssh_known_hosts, "/etc/nasperf/known_hosts");

  auto plain = ParsePlan(SshTransferPlan("transport = \"scp\"\nto = \"[fd00::1]:/tank\""), "plan.toml");
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ(plain->transfers[0].to, "[fd00::1]:/tank");
  EXPECT_TRUE(plain->transfers[0].ssh_identity.empty());
  // What the entry's parse refuses is refused at the plan's `to`, in its words.
  auto relative = ParsePlan(SshTransferPlan("transport = \"sftp\"\nto = \"root@nas:tank\""), "plan.toml");
  ASSERT_FALSE(relative.ok());
  EXPECT_NE(relative.status().message().find("logs in over SSH"), std::string::npos) << relative.status();
}

TEST(PlanTest, AShareTransportSendsToAUrl) {
  auto plan = ParsePlan(SshTransferPlan(R"(transport = "smb"
to = "smb://root@198.18.1.10/cache"
credentials = "/root/.smbcred"
transport_flags = ["--smb-signing", "required", "--smb-encrypt=desired"]
verify = true)"),
                        "plan.toml");
  ASSERT_TRUE(plan.ok()) << plan.status();
  const PlanTransfer& t = plan->transfers[0];
  EXPECT_FALSE(t.ToIsHost());
  EXPECT_EQ(t.to, "smb://root@198.18.1.10/cache");
  EXPECT_EQ(t.credentials, "/root/.smbcred");
  EXPECT_THAT(t.transport_flags, ::testing::ElementsAre("--smb-signing", "required", "--smb-encrypt=desired"));
  auto nfs = ParsePlan(SshTransferPlan("transport = \"nfs\"\nto = \"nfs://nas/srv/array\""), "plan.toml");
  ASSERT_TRUE(nfs.ok()) << nfs.status();
  EXPECT_TRUE(nfs->transfers[0].credentials.empty());
  // The sending agent would refuse uid=/gid= (its requests carry its own user): the
  // plan says so when it is read, in the agent's words.
  for (const char* query : {"?uid=0&gid=0", "?uid=1000", "?gid=0"}) {
    auto as = ParsePlan(SshTransferPlan(absl::StrCat("transport = \"nfs\"\nto = \"nfs://nas/srv/array", query, "\"")),
                        "plan.toml");
    EXPECT_FALSE(as.ok()) << query;
    EXPECT_THAT(std::string(as.status().message()),
                ::testing::HasSubstr("to: an agent takes no uid= or gid= in a job's nfs:// URL"))
        << as.status();
  }
}

// A mounted directory on the sending host (transport path): its `to` is an absolute
// directory the plan sends as written (the agent's --allow-path decides there); a
// relative one, or one with "..", is refused when the plan is read.
TEST(PlanTest, AMountedDirectoryTransferWritesOnItsSendersHost) {
  auto plan = ParsePlan(SshTransferPlan("transport = \"path\"\nto = \"/mnt/nas/bench\""), "plan.toml");
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_FALSE(plan->transfers[0].ToIsHost());
  EXPECT_EQ(SpecOf(*plan, plan->transfers[0]).to(), "/mnt/nas/bench");
  for (const char* to : {"mnt/nas", "/mnt/../etc"}) {
    auto bad = ParsePlan(SshTransferPlan(absl::StrCat("transport = \"path\"\nto = \"", to, "\"")), "plan.toml");
    ASSERT_FALSE(bad.ok()) << to;
    EXPECT_THAT(std::string(bad.status().message()), ::testing::HasSubstr("to: transport = \"path\": ")) << to;
  }
}

// The run a transfer becomes (SpecOf) is one its sending agent takes: the login as
// the plan wrote it, its files by role, read there beneath --allow-source
// (transport/run_spec.h MakeRunOptions, Origin::kPeer).
TEST(PlanTest, ATransfersSpecIsARunItsAgentTakes) {
  char made[] = "/tmp/nasperf-plan-spec-XXXXXX";
  ASSERT_NE(mkdtemp(made), nullptr);
  const std::string dir = made;
  for (const char* name : {"/id", "/known_hosts", "/smbcred"}) {
    std::ofstream(dir + name) << "x\n";
    ::chmod((dir + name).c_str(), 0600);
  }
  auto allowed = OpenAllowedDirectory(dir);
  ASSERT_TRUE(allowed.ok()) << allowed.status();
  const std::vector<AllowedDirectory> dirs = {*allowed};
  const LocalPolicy peer{Origin::kPeer, &dirs, "token", nullptr};

  auto plan = ParsePlan(SshTransferPlan(absl::StrCat(
                            "transport = \"sftp\"\nto = \"root@198.18.1.10:2222:/mnt/cache\"\n", "ssh_identity = \"",
                            dir, "/id\"\nssh_known_hosts = \"", dir, "/known_hosts\"\nstreams = 2\nsync = \"end\"")),
                        "plan.toml");
  ASSERT_TRUE(plan.ok()) << plan.status();
  proto::RunSpec spec = SpecOf(*plan, plan->transfers[0]);
  EXPECT_EQ(spec.to(), "root@198.18.1.10:2222:/mnt/cache");
  ASSERT_EQ(spec.files_size(), 2);
  EXPECT_EQ(spec.files(0).role(), "ssh_identity");
  EXPECT_EQ(spec.files(1).role(), "ssh_known_hosts");
  std::string field;
  auto o = MakeRunOptions(spec, peer, &field);
  ASSERT_TRUE(o.ok()) << field << ": " << o.status();
  EXPECT_EQ(SshOf(*o).port, 2222);
  EXPECT_EQ(SshOf(*o).identity_text, "x\n");
  EXPECT_EQ(o->streams, 2);
  EXPECT_EQ(o->size, 32u << 20);

  auto share = ParsePlan(
      SshTransferPlan(absl::StrCat("transport = \"smb\"\nto = \"smb://root@198.18.1.10/cache\"\n", "credentials = \"",
                                   dir, "/smbcred\"\n", "transport_flags = [\"--smb-signing\", \"required\"]")),
      "plan.toml");
  ASSERT_TRUE(share.ok()) << share.status();
  spec = SpecOf(*share, share->transfers[0]);
  auto s = MakeRunOptions(spec, peer, &field);
  ASSERT_TRUE(s.ok()) << field << ": " << s.status();
  EXPECT_EQ(ShareOf(*s).url, "smb://root@198.18.1.10/cache");
  EXPECT_EQ(ShareOf(*s).smb_signing, "required");
  EXPECT_EQ(ShareOf(*s).credentials_text, "x\n");

  // A share's read that names no cache state: the agent reads as the share's client
  // does (before, the plan passed and every agent refused it: "cannot do the NAS's cache").
  for (const char* share_to :
       {"transport = \"nfs\"\nto = \"nfs://nas/srv/array\"", "transport = \"smb\"\nto = \"smb://nas/cache\""}) {
    auto read = ParsePlan(SshTransferPlan(absl::StrCat(share_to, "\ndirection = \"read\"")), "plan.toml");
    ASSERT_TRUE(read.ok()) << read.status();
    spec = SpecOf(*read, read->transfers[0]);
    EXPECT_TRUE(spec.cache().empty());
    auto r = MakeRunOptions(spec, peer, &field);
    ASSERT_TRUE(r.ok()) << share_to << ": " << field << ": " << r.status();
    EXPECT_EQ(r->direction, Direction::kRead);
  }

  auto native = ParsePlan(kGood, "plan.toml");
  ASSERT_TRUE(native.ok()) << native.status();
  EXPECT_TRUE(SpecOf(*native, native->transfers[0]).to().empty()) << "the controller puts the host's address in";
  std::filesystem::remove_all(dir);
}

// What the transport cannot do is refused when the plan is read, at the key that
// asks it, with the transports that can (transport/registry.h RefusalsFor).
INSTANTIATE_TEST_SUITE_P(
    Transports, BadPlanTest,
    ::testing::Values(
        BadPlan{"UnknownTransport", SshTransferPlan("transport = \"afp\"\nto = \"nas:/x\""),
                "plan.toml:7: [[transfer]] 1: transport = \"afp\" is not one of: native, scp, sftp, nfs, smb"},
        BadPlan{"ShareTransportToALogin", SshTransferPlan("transport = \"smb\"\nto = \"nas:/x\""),
                "plan.toml:8: [[transfer]] 1: to: transport = \"smb\": not an smb://[user@]host[:port]/share[/dir] "
                "URL: it must begin with smb://"},
        BadPlan{"CredentialsOverNfs",
                SshTransferPlan("transport = \"nfs\"\nto = \"nfs://nas/x\"\ncredentials = \"/root/c\""),
                "plan.toml:9: [[transfer]] 1: credentials: transport nfs takes no credentials (transport smb does)"},
        BadPlan{"TransportFlagsOfAnother",
                SshTransferPlan("transport = \"nfs\"\nto = \"nfs://nas/x\"\ntransport_flags = [\"--smb-signing\", "
                                "\"required\"]"),
                "plan.toml:9: [[transfer]] 1: transport_flags: The following arguments were not expected: "
                "required --smb-signing"},
        BadPlan{"TransportFlagOutOfItsWords",
                SshTransferPlan("transport = \"smb\"\nto = \"smb://nas/x\"\ntransport_flags = [\"--smb-encrypt\", "
                                "\"maybe\"]"),
                "plan.toml:9: [[transfer]] 1: transport_flags: --smb-encrypt: maybe not in {default,off,desired,"
                "required}"},
        BadPlan{"CredentialsAsATransportFlag",
                SshTransferPlan("transport = \"smb\"\nto = \"smb://nas/x\"\ntransport_flags = "
                                "[\"--smb-credentials=/etc/shadow\"]"),
                "transport_flags: --smb-credentials: give the login file as the transfer's `credentials`"},
        BadPlan{"TransportFlagsOverScp",
                SshTransferPlan("transport = \"scp\"\nto = \"nas:/x\"\ntransport_flags = [\"--nfs-in-flight\", "
                                "\"4\"]"),
                "transport_flags: transport scp takes none (nfs|smb do)"},
        BadPlan{"RelativeCredentials",
                SshTransferPlan("transport = \"smb\"\nto = \"smb://nas/x\"\ncredentials = \"cred\""),
                "plan.toml:9: [[transfer]] 1: credentials: must be an absolute path on the sending host"},
        BadPlan{"CredentialsWithAControlCharacter",
                SshTransferPlan("transport = \"smb\"\nto = \"smb://nas/x\"\ncredentials = \"/root/c\\tx\""),
                "plan.toml:9: [[transfer]] 1: credentials: has a space or a control character"},
        BadPlan{"IdentityWithASpace",
                SshTransferPlan("transport = \"sftp\"\nto = \"nas:/x\"\nssh_identity = \"/k/my id\""),
                "plan.toml:9: [[transfer]] 1: ssh_identity: has a space or a control character"},
        BadPlan{"KnownHostsTooLong",
                SshTransferPlan("transport = \"sftp\"\nto = \"nas:/x\"\nssh_known_hosts = \"/" +
                                std::string(4100, 'k') + "\""),
                "plan.toml:9: [[transfer]] 1: ssh_known_hosts: longer than 4096 bytes"},
        BadPlan{"CacheOverNfs",
                SshTransferPlan("transport = \"nfs\"\nto = \"nfs://nas/x\"\ndirection = \"read\"\ncache = \"cold\""),
                "plan.toml:10: [[transfer]] 1: cache: transport = \"nfs\" cannot; transport = \""},
        BadPlan{
            "DirectOverSftp", GoodWith("to = \"nas\"", "to = \"root@nas:/x\"\ntransport = \"sftp\""),
            "plan.toml:24: [[transfer]] 1: write_mode: transport = \"sftp\" cannot; transport = \"native|path\" can"},
        BadPlan{"VerifyOverScp", SshTransferPlan("transport = \"scp\"\nto = \"nas:/x\"\nverify = true"),
                "plan.toml:9: [[transfer]] 1: verify: transport = \"scp\" cannot; transport = "
                "\"native|sftp|nfs|smb|path\" can; "
                "compare files with cmp or sha256sum"},
        BadPlan{"ReadOverSftp", SshTransferPlan("transport = \"sftp\"\nto = \"nas:/x\"\ndirection = \"read\""),
                "plan.toml:9: [[transfer]] 1: direction: transport = \"sftp\" cannot; transport = "
                "\"native|nfs|smb|path\" can "
                "(a plan's read streams a file `to` lays out)"},
        BadPlan{"SftpToAHostName", GoodWith("to = \"nas\"", "to = \"nas\"\ntransport = \"sftp\""),
                "plan.toml:20: [[transfer]] 1: to: transport = \"sftp\" logs in over SSH: expected "
                "[user@]host:/remote/dir"},
        BadPlan{"SftpToARelativeDir", SshTransferPlan("transport = \"sftp\"\nto = \"nas:2222:bench\""),
                "the directory must be absolute"},
        BadPlan{
            "LoginKeysWithAnAgent", GoodWith("streams = 2", "ssh_identity = \"/k/id\""),
            "plan.toml:22: [[transfer]] 1: ssh_identity: transport native takes no ssh_identity (transport scp|sftp "
            "does)"},
        BadPlan{"RelativeIdentity", SshTransferPlan("transport = \"sftp\"\nto = \"nas:/x\"\nssh_identity = \"id\""),
                "plan.toml:9: [[transfer]] 1: ssh_identity: must be an absolute path on the sending host"}),
    [](const ::testing::TestParamInfo<BadPlan>& info) { return info.param.name; });

TEST(PlanTest, MissingFileIsNotFound) {
  auto plan = LoadPlan("/nonexistent/plan.toml");
  ASSERT_FALSE(plan.ok());
  EXPECT_THAT(std::string(plan.status().message()), HasSubstr("/nonexistent/plan.toml"));
}

}  // namespace
}  // namespace nasperf

namespace nasperf {
namespace {

// Issue 30: 0.3 s transfers sampled every second had one sample each and no timeline.
TEST(PlanTest, TheLabSamplesAboutTenTimesInTheShortestTransfer) {
  EXPECT_DOUBLE_EQ(SampleIntervalFor(0.3, 1.0), 0.03);
  EXPECT_DOUBLE_EQ(SampleIntervalFor(0.305, 1.0), 0.03) << "whole milliseconds";
  EXPECT_DOUBLE_EQ(SampleIntervalFor(60, 1.0), 1.0) << "never coarser than the plan's default";
  EXPECT_DOUBLE_EQ(SampleIntervalFor(0.02, 1.0), kMinIntervalS) << "never finer than an agent accepts";
  EXPECT_DOUBLE_EQ(SampleIntervalFor(0, 1.0), 1.0);
  auto plan = ParsePlan(kGood, "plan.toml");
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_FALSE(plan->interval_set);
  auto named = ParsePlan(absl::StrCat("interval = \"250ms\"\n", kGood), "plan.toml");
  ASSERT_TRUE(named.ok()) << named.status();
  EXPECT_TRUE(named->interval_set);
  EXPECT_DOUBLE_EQ(named->interval_s, 0.25);
}

}  // namespace
}  // namespace nasperf
