// SpecOfFlags (cli/sender_spec.h): `nasperf sender`'s flags as CLI11 fills them, copied
// into the RunSpec that MakeRunOptions makes into the run, as it does a lab job's.
#include "cli/sender_spec.h"

#include <string>
#include <vector>

#include "absl/algorithm/container.h"
#include "gtest/gtest.h"
#include "testing/config_of.h"
#include "transport/run_spec.h"

namespace nasperf::cli {
namespace {

// The transports' own flags declared as `nasperf sender` declares them, then `words` parsed.
void ParseTransportFlags(CLI::App& app, SenderFlags& f, const std::string& words) {
  std::vector<AddTransportFlags> added;
  for (const TransportEntry& entry : Transports()) {
    if (entry.add_flags == nullptr || absl::c_linear_search(added, entry.add_flags)) continue;
    added.push_back(entry.add_flags);
    for (CLI::Option* option : entry.add_flags(app, f.from_transport_flags)) f.transport_flags.push_back(option);
  }
  app.parse(words, /*program_name_included=*/false);
}

absl::StatusOr<RunOptions> Make(const proto::RunSpec& spec, std::string& field) {
  LocalPolicy user;
  user.origin = Origin::kUser;
  return MakeRunOptions(spec, user, &field);
}

TEST(SenderSpecTest, TheFlagsAreCopiedFieldForField) {
  SenderFlags f;
  f.to = "10.0.0.2:7600";
  f.size = "1MiB";
  f.pause = "2s";
  f.interval = "250ms";
  f.window = "1MiB";
  f.link_speed = "10gbit";
  f.runs = 3;
  f.warmup = 1;
  f.streams = 4;
  f.label = "cache-on";
  f.write_mode = "direct";
  f.direct_fallback = true;
  const proto::RunSpec spec = SpecOfFlags(f);
  EXPECT_EQ(spec.transport(), DefaultTransport());
  EXPECT_EQ(spec.size(), 1u << 20);
  EXPECT_DOUBLE_EQ(spec.pause_s(), 2);
  EXPECT_DOUBLE_EQ(spec.interval_s(), 0.25);
  EXPECT_EQ(spec.window_bytes(), 1u << 20);
  EXPECT_EQ(spec.link_mbps(), 10000u);
  EXPECT_EQ(spec.transport_flags_size(), 0);
  std::string field;
  auto o = Make(spec, field);
  ASSERT_TRUE(o.ok()) << field << ": " << o.status();
  EXPECT_EQ(AgentOf(*o).port, 7600);
  EXPECT_EQ(o->runs, 3);
  EXPECT_EQ(o->warmup, 1);
  EXPECT_EQ(o->streams, 4);
  EXPECT_EQ(o->write_mode, WriteMode::kDirect);
  EXPECT_TRUE(o->direct_fallback);
  EXPECT_EQ(o->label, "cache-on");
}

TEST(SenderSpecTest, TransportFlagsBecomeWordsAndALoginFileStaysAPath) {
  SenderFlags f;
  CLI::App app;
  ParseTransportFlags(app, f, "--identity relative/key --ssh-port 2222 --accept-new-host-key");
  f.transport = "sftp";
  f.to = "root@nas:/mnt/cache";
  f.size = "1MiB";
  proto::RunSpec spec = SpecOfFlags(f);
  ASSERT_EQ(spec.transport_flags_size(), 6);
  EXPECT_EQ(spec.transport_flags(0), "--ssh-port");
  EXPECT_EQ(spec.transport_flags(1), "2222");
  std::string field;
  auto o = Make(spec, field);
  ASSERT_TRUE(o.ok()) << field << ": " << o.status();
  EXPECT_EQ(SshOf(*o).identity, "relative/key");  // the transport opens it at make, as before
  EXPECT_FALSE(SshOf(*o).identity_text.has_value());
  EXPECT_EQ(SshOf(*o).port, 2222);
  EXPECT_TRUE(SshOf(*o).accept_new_host_key);

  f.transport = "native";  // a receiver started over SSH: the login flags and --deploy-binary
  f.deploy_binary = "/usr/local/bin/nasperf";
  spec = SpecOfFlags(f);
  o = Make(spec, field);
  ASSERT_TRUE(o.ok()) << field << ": " << o.status();
  EXPECT_EQ(SshOf(*o).port, 2222);
  EXPECT_EQ(SshOf(*o).identity, "relative/key");
  EXPECT_EQ(SshOf(*o).to.dir, "/mnt/cache");

  f.to = "nas";  // an agent already there: the login's flags are refused
  spec = SpecOfFlags(f);
  o = Make(spec, field);
  ASSERT_FALSE(o.ok());
  EXPECT_EQ(field, "transport_flags");
  EXPECT_EQ(o.status().message(), "--ssh-port: only with --to [user@]host:/dir or --transport scp|sftp");
}

}  // namespace
}  // namespace nasperf::cli
