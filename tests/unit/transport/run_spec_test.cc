// MakeRunOptions (transport/run_spec.h) as a lab agent calls it, on a peer's spec
// (Origin::kPeer): every check the agent made by hand before (the old agent_test
// SetJobTransport cases, kept), each with a spec that would pass without it, and
// what is read through --allow-source descriptors only.
#include "transport/run_spec.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/file_set.h"
#include "common/policy.h"
#include "gtest/gtest.h"
#include "temp_dir.h"
#include "testing/config_of.h"
#include "transport/nfs.h"
#include "transport/ssh.h"
#include "wire/tls.h"

namespace nasperf {
namespace {

class RunSpecTest : public TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    std::filesystem::create_directories(dir_ + "/allowed/keys");
    key_ = dir_ + "/allowed/keys/id";
    Write(key_, "KEY", 0600);
    known_hosts_ = dir_ + "/allowed/known_hosts";
    Write(known_hosts_, "nas ssh-ed25519 AAAA\n", 0644);
    credentials_ = dir_ + "/allowed/smbcred";
    Write(credentials_, "username=root\npassword=x\n", 0600);
    auto allowed = OpenAllowedDirectory(dir_ + "/allowed");
    ASSERT_TRUE(allowed.ok()) << allowed.status();
    allowed_.push_back(*allowed);
    policy_ = {Origin::kPeer, &allowed_, "agent-token", nullptr};
  }
  static void Write(const std::string& path, const std::string& text, mode_t mode) {
    std::ofstream(path) << text;
    ::chmod(path.c_str(), mode);
  }
  static void AddFile(proto::RunSpec& spec, const std::string& role, const std::string& path) {
    proto::RunSpec::File* file = spec.add_files();
    file->set_role(role);
    file->set_path(path);
  }
  proto::RunSpec Sftp() const {
    proto::RunSpec spec;
    spec.set_transport("sftp");
    spec.set_to("root@198.18.1.10:2222:/mnt/cache");
    AddFile(spec, "ssh_identity", key_);
    spec.set_size(1 << 20);
    spec.set_streams(1);
    return spec;
  }
  proto::RunSpec Smb() const {
    proto::RunSpec spec;
    spec.set_transport("smb");
    spec.set_to("smb://root@198.18.1.10/cache");
    AddFile(spec, "credentials", credentials_);
    spec.set_size(1 << 20);
    spec.set_streams(1);
    return spec;
  }
  static proto::RunSpec Native() {
    proto::RunSpec spec;
    spec.set_to("10.0.0.2:7600");
    spec.set_size(1 << 20);
    spec.set_streams(1);
    return spec;
  }
  absl::StatusOr<RunOptions> Make(const proto::RunSpec& spec) {
    field_.clear();
    return MakeRunOptions(spec, policy_, &field_);
  }
  // Refused as invalid (or `code`), with `want` in its one line and `field` named.
  void ExpectRefused(const proto::RunSpec& spec, const std::string& field, const std::string& want,
                     absl::StatusCode code = absl::StatusCode::kInvalidArgument) {
    auto o = Make(spec);
    ASSERT_FALSE(o.ok()) << want;
    EXPECT_EQ(o.status().code(), code) << o.status();
    EXPECT_NE(std::string(o.status().message()).find(want), std::string::npos) << o.status();
    EXPECT_EQ(field_, field) << o.status();
  }

  std::string key_, known_hosts_, credentials_, field_;
  std::vector<AllowedDirectory> allowed_;
  LocalPolicy policy_;
};

TEST_F(RunSpecTest, AnSftpSpecBecomesAnSshLoginWithTheKeysBytes) {
  proto::RunSpec spec = Sftp();
  AddFile(spec, "ssh_known_hosts", known_hosts_);
  auto o = Make(spec);
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->transport, "sftp");
  EXPECT_EQ(SshOf(*o).to.user, "root");
  EXPECT_EQ(SshOf(*o).to.host, "198.18.1.10");
  EXPECT_EQ(SshOf(*o).to.dir, "/mnt/cache");
  EXPECT_EQ(SshOf(*o).port, 2222);
  EXPECT_EQ(SshOf(*o).identity, key_);
  EXPECT_EQ(SshOf(*o).identity_text, "KEY") << "read through the descriptor that passed --allow-source";
  EXPECT_EQ(SshOf(*o).known_hosts_text, "nas ssh-ed25519 AAAA\n");
  EXPECT_FALSE(SshOf(*o).accept_new_host_key);
  EXPECT_FALSE(SshOf(*o).prompt);
  EXPECT_TRUE(SshOf(*o).config_file.empty());

  auto n = Make(Native());
  ASSERT_TRUE(n.ok()) << n.status();
  EXPECT_EQ(n->transport, "native") << "an unset transport is the default, with an agent";
  EXPECT_EQ(AgentOf(*n).port, 7600);
}

TEST_F(RunSpecTest, HostileLoginsAreRefused) {
  proto::RunSpec spec = Sftp();
  spec.set_transport("smb");
  ExpectRefused(spec, "to", "smb");
  spec = Smb();
  AddFile(spec, "ssh_identity", key_);
  ExpectRefused(spec, "files", "transport smb takes no ssh_identity");
  for (const auto& [to, want] : std::vector<std::pair<std::string, std::string>>{
           {absl::StrCat("root@", std::string(256, 'a'), ":/mnt"), "the login's host is over 255 bytes"},
           {"-oProxyCommand=x@nas:/mnt", "the login's user starts with -"},
           {"-oProxyCommand=x:/mnt", "the login's host starts with -"},
           {"root@nas:/a b", "the login's directory has a space or a control character"},
           {"root@nas:relative", "the directory must be absolute"},
           {"root@nas:70000:/mnt", "port 70000"}}) {
    spec = Sftp();
    spec.set_to(to);
    ExpectRefused(spec, "to", want);
  }
  spec = Sftp();
  AddFile(spec, "ssh_known_hosts", "known_hosts");
  ExpectRefused(spec, "ssh_known_hosts", "must be an absolute path on the sending host");
  spec = Sftp();
  AddFile(spec, "ssh_identity", key_);
  ExpectRefused(spec, "ssh_identity", "given twice");
  spec = Native();
  spec.set_to("root@nas:/mnt");
  ExpectRefused(spec, "to", "a receiver is started over SSH for the command line's runs only");
  spec = Native();
  AddFile(spec, "ssh_identity", key_);
  ExpectRefused(spec, "files", "transport native takes no ssh_identity");
  spec = Sftp();
  spec.add_transport_flags("--ssh-config");
  spec.add_transport_flags("/tmp/x");
  ExpectRefused(spec, "transport_flags", "takes none");
}

TEST_F(RunSpecTest, AShareSpecBecomesAUrlAndTheLoginFilesBytes) {
  auto o = Make(Smb());
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(ShareOf(*o).url, "smb://root@198.18.1.10/cache");
  EXPECT_EQ(ShareOf(*o).smb_credentials, credentials_);
  EXPECT_EQ(ShareOf(*o).credentials_text, "username=root\npassword=x\n");

  proto::RunSpec bad = Smb();
  bad.set_to("smb://nas/x/../etc");
  ExpectRefused(bad, "to", "are not allowed");
  bad = Smb();
  bad.mutable_files(0)->set_path("relative");
  ExpectRefused(bad, "credentials", "absolute path");
  bad = Smb();
  bad.mutable_files(0)->set_path("/a\nb");
  ExpectRefused(bad, "credentials", "control character");
  bad = Smb();
  bad.set_transport("nfs");
  bad.set_to("nfs://nas/export");
  ExpectRefused(bad, "files", "transport nfs takes no credentials");
  bad = Sftp();
  AddFile(bad, "credentials", credentials_);
  ExpectRefused(bad, "files", "transport sftp takes no credentials");
  bad = Smb();
  bad.add_transport_flags("--smb-credentials=/root/.smbcred");
  ExpectRefused(bad, "transport_flags", "give the login file as the transfer's `credentials`");
  bad = Smb();
  for (int i = 0; i < 17; ++i) bad.add_transport_flags("--smb-signing=required");
  ExpectRefused(bad, "transport_flags", "more than 16 words");
  Write(credentials_, "username=root\npassword=x\n", 0644);
  ExpectRefused(Smb(), "credentials", "", absl::StatusCode::kPermissionDenied);  // a secret is owner-only
}

// Issue 42, row 9: AUTH_SYS carries whatever ids the client says, so a peer's nfs://
// URL may not pick them (the CLI's own --to keeps ?uid=&gid=: ParseNfsUrl takes them).
TEST_F(RunSpecTest, AnNfsSpecCarriesTheAgentsOwnIds) {
  proto::RunSpec spec = Native();
  spec.set_transport("nfs");
  spec.set_to("nfs://198.18.1.10/srv/array");
  auto o = Make(spec);
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(ShareOf(*o).url, "nfs://198.18.1.10/srv/array");
  for (const char* to :
       {"nfs://nas/srv/array?uid=1000&gid=100", "nfs://nas/srv/array?uid=0", "nfs://nas/srv/array?version=3&gid=0"}) {
    spec.set_to(to);
    ExpectRefused(spec, "to", "an agent takes no uid= or gid= in a job's nfs:// URL",
                  absl::StatusCode::kPermissionDenied);
  }
  EXPECT_TRUE(ParseNfsUrl("nfs://nas/srv/array?uid=1000&gid=100").ok());  // the sender's own --to
}

// Every file a peer names opens beneath --allow-source, once: the payload is read
// through that descriptor (a link swapped in after the check reads nothing new), and
// a link inside the directory, a file outside it, or no directory at all is refused.
TEST_F(RunSpecTest, FilesOpenOnlyBeneathAllowSourceAndAreReadThroughTheDescriptor) {
  Write(dir_ + "/allowed/data.bin", "checked", 0644);
  Write(dir_ + "/secret", "secret!", 0600);
  proto::RunSpec spec = Native();
  spec.set_size(0);
  spec.set_file(dir_ + "/allowed/data.bin");
  auto o = Make(spec);
  ASSERT_TRUE(o.ok()) << o.status();
  ASSERT_NE(o->file_fd, nullptr);
  std::filesystem::remove(dir_ + "/allowed/data.bin");
  std::filesystem::create_symlink(dir_ + "/secret", dir_ + "/allowed/data.bin");
  char buffer[16];
  ASSERT_EQ(::pread(o->file_fd->get(), buffer, sizeof buffer, 0), 7);
  EXPECT_EQ(std::string(buffer, 7), "checked");
  ExpectRefused(spec, "file", "is not a file under this agent's --allow-source directories",
                absl::StatusCode::kPermissionDenied);  // the link now there

  proto::RunSpec outside = Smb();
  outside.mutable_files(0)->set_path(dir_ + "/secret");
  ExpectRefused(outside, "credentials", dir_ + "/secret is not a file under this agent's --allow-source directories",
                absl::StatusCode::kPermissionDenied);
  std::filesystem::create_symlink(dir_ + "/secret", dir_ + "/allowed/link");
  outside.mutable_files(0)->set_path(dir_ + "/allowed/link");
  ExpectRefused(outside, "credentials", "is not a file under this agent's --allow-source directories",
                absl::StatusCode::kPermissionDenied);
  policy_.allowed_sources = nullptr;
  ExpectRefused(Sftp(), "ssh_identity", "start it with --allow-source DIR", absl::StatusCode::kPermissionDenied);
}

// Some trust, to tell the policy's from none.
class FakeTrust : public PeerTrust {
 public:
  std::shared_ptr<grpc::ChannelCredentials> CredentialsFor(const std::string&, const std::string&) const override {
    return nullptr;
  }
  std::string PinnedFingerprint(const std::string&) const override { return ""; }
  bool plaintext() const override { return true; }
  std::string server_name() const override { return ""; }
};

TEST_F(RunSpecTest, TokenAndTrustComeFromThePolicyOnly) {
  std::shared_ptr<const PeerTrust> trust = std::make_shared<FakeTrust>();
  policy_.trust = trust;
  proto::RunSpec spec = Native();
  const std::string key = "SHA256:" + std::string(43, 'a');
  spec.set_receiver_fingerprint(key);
  auto o = Make(spec);
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->token, "agent-token");
  EXPECT_EQ(o->trust, trust);
  EXPECT_EQ(o->receiver_fingerprint, key);
  spec.set_receiver_fingerprint("not-a-key");
  ExpectRefused(spec, "receiver_fingerprint", "is not a SHA256:... TLS key fingerprint");
}

TEST_F(RunSpecTest, TheLoopIsBounded) {
  proto::RunSpec spec = Native();
  for (uint64_t window : {uint64_t{1}, kMinWindow - 1, kMaxWindow + 1}) {
    spec.set_window_bytes(window);
    ExpectRefused(spec, "window_bytes", "must be 0 or between");
  }
  spec.set_window_bytes(kMinWindow);
  EXPECT_TRUE(Make(spec).ok());
  for (int streams : {0, kMaxStreams + 1}) {
    spec = Native();
    spec.set_streams(streams);
    ExpectRefused(spec, "streams", "must be 1..");
  }
  spec = Native();
  spec.set_interval_s(-1);
  ExpectRefused(spec, "interval_s", "");
  spec = Native();
  spec.set_run_id("../etc");
  ExpectRefused(spec, "run_id", "run id");
  spec = Native();
  spec.set_size(0);
  ExpectRefused(spec, "size", "give a size or a file");
}

TEST_F(RunSpecTest, WhatTheTransportCannotDoIsRefusedAndAPeerNamesNoLocalFiles) {
  proto::RunSpec spec = Sftp();
  spec.set_transport("scp");
  spec.set_verify(true);
  ExpectRefused(spec, "verify", "transport scp cannot do verify");
  spec = Sftp();
  spec.set_direction("read");
  ExpectRefused(spec, "size", "cannot do a read of a file it lays out");
  spec = Native();
  spec.set_direction("read");
  spec.set_size(0);
  spec.set_file(dir_ + "/allowed/keys/id");
  ExpectRefused(spec, "file", "a read streams a file the receiver lays out");
  spec = Native();
  spec.set_local_target("/etc");
  ExpectRefused(spec, "local_target", "only on the command line");
  spec = Native();
  spec.set_remote_file("/etc/shadow");
  ExpectRefused(spec, "remote_file", "only on the command line");
}

// A many-files run from a peer: the set's sizes made once (their total the transfer's
// length), each refusal at its field, and the native wire's refusal as an ask.
TEST_F(RunSpecTest, AFileSetIsBoundedAndWrittenOnlyWhereATransportCan) {
  proto::RunSpec spec = Smb();
  spec.set_size(0);
  spec.set_file_count(50);
  spec.set_file_size("4KiB-64KiB");
  auto o = Make(spec);
  ASSERT_TRUE(o.ok()) << o.status();
  ASSERT_NE(o->file_sizes, nullptr);
  ASSERT_EQ(o->file_sizes->size(), 50u);
  uint64_t total = 0;
  for (uint64_t size : *o->file_sizes) total += size;
  EXPECT_EQ(o->size, total);
  EXPECT_EQ(o->file_size_text, "4KiB-64KiB");
  proto::RunSpec too_many = spec;
  too_many.set_file_count(kMaxSetFiles + 1);
  ExpectRefused(too_many, "file_count", "must be 1..1000000");
  proto::RunSpec with_size = spec;
  with_size.set_size(1 << 20);
  ExpectRefused(with_size, "size", "takes --file-size instead");
  proto::RunSpec bad_size = spec;
  bad_size.set_file_size("64KiB-4KiB");
  ExpectRefused(bad_size, "file_size", "the low size must be under the high one");
  proto::RunSpec size_alone = Smb();
  size_alone.set_size(0);
  size_alone.set_file_size("photos");
  ExpectRefused(size_alone, "file_count", "with a file size");
  proto::RunSpec spread = spec;
  spread.set_files_per_dir(20);
  auto spread_options = Make(spread);
  ASSERT_TRUE(spread_options.ok()) << spread_options.status();
  EXPECT_EQ(spread_options->files_per_dir, 20u);
  spread.set_files_per_dir(51);
  ExpectRefused(spread, "files_per_dir", "must be 1..50");
  proto::RunSpec spread_alone = Smb();
  spread_alone.set_files_per_dir(10);
  ExpectRefused(spread_alone, "files_per_dir", "give --files N");
  proto::RunSpec every = spec;
  every.set_sync("every=1MiB");
  ExpectRefused(every, "sync", "end syncs each file");
  proto::RunSpec verify = spec;
  verify.set_verify(true);
  ExpectRefused(verify, "verify", "not with many files");
  proto::RunSpec native = Native();  // the receiver writes the set
  native.set_size(0);
  native.set_file_count(10);
  auto made = Make(native);
  ASSERT_TRUE(made.ok()) << made.status();
  EXPECT_EQ(made->file_sizes->size(), 10u);
  EXPECT_EQ(made->size, 10u << 20);  // 1 MiB each by default
}

// --tree DIR: the user's own tree is the set, its files' sizes and places (its empty
// files and links counted as left out); a peer may not name a directory of this host to
// be read, and a tree is not also a count or a distribution.
TEST_F(RunSpecTest, ATreeSizesTheSetOnTheCommandLineOnly) {
  const std::string tree = dir_ + "/tree";
  std::filesystem::create_directories(tree + "/b");
  Write(tree + "/b/two", std::string(2000, 'x'), 0644);
  Write(tree + "/a", std::string(30, 'x'), 0644);
  Write(tree + "/empty", "", 0644);
  std::filesystem::create_symlink("/etc/passwd", tree + "/link");
  proto::RunSpec spec = Native();
  spec.set_size(0);
  spec.set_tree(tree);
  ExpectRefused(spec, "tree", "is the command line's only");
  policy_ = {Origin::kUser, nullptr, "", nullptr};
  auto o = Make(spec);
  ASSERT_TRUE(o.ok()) << o.status();
  ASSERT_NE(o->file_sizes, nullptr);
  EXPECT_EQ(*o->file_sizes, (std::vector<uint64_t>{30, 2000}));  // a, then b/two
  ASSERT_NE(o->tree_files, nullptr);
  ASSERT_EQ(o->tree_files->size(), 2u);
  EXPECT_EQ((*o->tree_files)[1].path, "b/two");
  EXPECT_EQ(o->size, 2030u);
  EXPECT_EQ(o->file_size_text, kTreeFileSize);
  EXPECT_EQ(o->tree_left_out, 2u);
  proto::RunSpec counted = spec;
  counted.set_file_count(2);
  ExpectRefused(counted, "tree", "not with --files or --file-size");
  proto::RunSpec spread = spec;
  spread.set_files_per_dir(3);
  ExpectRefused(spread, "files_per_dir", "must be 1..2");
  proto::RunSpec missing = spec;
  missing.set_tree(dir_ + "/no-such-tree");
  ExpectRefused(missing, "tree", "no-such-tree", absl::StatusCode::kNotFound);
  proto::RunSpec hollow = spec;
  std::filesystem::create_directories(dir_ + "/hollow/d");
  Write(dir_ + "/hollow/d/empty", "", 0644);
  hollow.set_tree(dir_ + "/hollow");
  ExpectRefused(hollow, "tree", "holds no file of 1 byte or more");
}

// The review's gaps: a name a shell could read, a key by flag, and every check made
// before a file is opened (an agent with no --allow-source refuses the streams first).
TEST_F(RunSpecTest, LoginNamesAreNamesAndChecksComeBeforeAnyOpen) {
  for (const std::string to : {"root@nas;id:/mnt", "a@b@nas:/mnt", "r$(id)@nas:/mnt", "root@n\\as:/mnt"}) {
    proto::RunSpec spec = Sftp();
    spec.set_to(to);
    ExpectRefused(spec, "to", "may hold only letters, digits and ._-");
  }
  proto::RunSpec v6 = Sftp();
  v6.set_to("backup_1@[fe80::1%eth0]:/mnt/cache");
  auto o = Make(v6);
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(SshOf(*o).to.host, "fe80::1%eth0");

  for (const char* flag : {"--identity", "--known-hosts"}) {
    ParsedFlags flags;
    flags.Add(flag, "/root/.ssh/id_rsa");
    std::string field;
    auto config = ParseSshTo("root@nas:/mnt", flags, Origin::kPeer, &field);
    ASSERT_FALSE(config.ok()) << flag;
    EXPECT_EQ(field, flag);
    EXPECT_TRUE(ParseSshTo("root@nas:/mnt", flags, Origin::kUser, &field).ok()) << flag;
  }

  std::vector<AllowedDirectory> none;
  policy_.allowed_sources = &none;
  proto::RunSpec spec = Sftp();
  spec.set_streams(0);
  ExpectRefused(spec, "streams", "must be 1..");
  spec = Sftp();
  spec.set_write_mode("sideways");
  ExpectRefused(spec, "write_mode", "");
  spec = Native();
  AddFile(spec, "ssh_config", "/etc/ssh/ssh_config");
  ExpectRefused(spec, "files", "takes no such file");
  spec = Native();
  spec.set_direct_fallback(true);
  ExpectRefused(spec, "direct_fallback", "only on the command line");
}

// The check-only mode (CheckRunSpec: a lab plan's runs, checked on the controller, whose
// files are on the agents' hosts): every text check, no file opened; never a peer's.
TEST_F(RunSpecTest, CheckRunSpecMakesEveryTextCheckButOpensNoFile) {
  proto::RunSpec spec = Sftp();
  spec.mutable_files(0)->set_path("/nowhere/on/this/host/id");
  spec.set_file("/nowhere/on/this/host/data");
  spec.set_size(0);
  std::string field;
  EXPECT_TRUE(CheckRunSpec(spec, Origin::kPlan, &field).ok()) << field;
  ExpectRefused(spec, "file", "not a file under", absl::StatusCode::kPermissionDenied);  // the agent opens it
  for (const auto& [path, why] : {std::pair{std::string("/k/my id"), "has a space or a control character"},
                                  std::pair{std::string("/k/i\td"), "has a space or a control character"},
                                  std::pair{"/" + std::string(4100, 'k'), "longer than 4096 bytes"},
                                  std::pair{std::string("k/id"), "must be an absolute path"}}) {
    spec.mutable_files(0)->set_path(path);
    const absl::Status s = CheckRunSpec(spec, Origin::kPlan, &field);
    EXPECT_NE(std::string(s.message()).find(why), std::string::npos) << path << ": " << s;
    EXPECT_EQ(field, "ssh_identity");
  }
  spec = Native();
  spec.set_size(0);
  spec.set_file("data/big.mov");  // never beneath an --allow-source directory
  EXPECT_FALSE(CheckRunSpec(spec, Origin::kPlan, &field).ok());
  EXPECT_EQ(field, "file");
  ExpectRefused(spec, "file", "must be an absolute path on the sending host");
  LocalPolicy peer = policy_;
  peer.open_files = false;
  EXPECT_FALSE(MakeRunOptions(Native(), peer, &field).ok()) << "a peer's run always opens its files";
  EXPECT_FALSE(CheckRunSpec(Native(), Origin::kPeer, &field).ok());
}

// A share's read that names no cache state nor read mode reads as the share's client
// does, from any origin (a lab plan's as the command line's); naming one is refused.
TEST_F(RunSpecTest, AShareReadNamingNoCacheIsTakenFromAPeer) {
  proto::RunSpec spec = Smb();
  spec.set_direction("read");
  auto o = Make(spec);
  ASSERT_TRUE(o.ok()) << field_ << ": " << o.status();
  EXPECT_EQ(o->direction, Direction::kRead);
  spec.set_cache("cold");
  ExpectRefused(spec, "cache", "cannot do the NAS's cache");
}

// A job may not name a directory of the agent's own host (`transport = "path"`): a
// token holder would pick where the root agent makes files.
// A mounted directory's job (transport path): a plan's `to` passes its text checks
// with nothing opened; a peer's is opened beneath --allow-path only, and that
// descriptor (not the name) is what the run's config holds. Without --allow-path,
// outside it, by "..", or through a symlink out: refused, naming the field and flag.
TEST_F(RunSpecTest, AMountedDirectoryJobWritesOnlyBeneathAllowPath) {
  std::filesystem::create_directories(dir_ + "/bench/sub");
  std::filesystem::create_directories(dir_ + "/other");
  std::filesystem::create_directory_symlink(dir_ + "/other", dir_ + "/bench/out");
  proto::RunSpec spec = Native();
  spec.set_transport("path");
  spec.set_to(dir_ + "/bench/sub");

  std::string field;
  EXPECT_TRUE(CheckRunSpec(spec, Origin::kPlan, &field).ok()) << "a plan's to is its agent's to open";
  spec.set_to("relative/dir");
  EXPECT_FALSE(CheckRunSpec(spec, Origin::kPlan, &field).ok());
  EXPECT_EQ(field, "to");
  spec.set_to(dir_ + "/bench/sub");

  ExpectRefused(spec, "to", "start it with --allow-path DIR", absl::StatusCode::kPermissionDenied);
  auto bench = OpenAllowedDirectory(dir_ + "/bench");
  ASSERT_TRUE(bench.ok()) << bench.status();
  std::vector<AllowedDirectory> paths = {*bench};
  policy_.allowed_paths = &paths;
  for (const std::string& to : {dir_ + "/other", dir_ + "/bench/out", dir_ + "/allowed"}) {
    spec.set_to(to);
    ExpectRefused(spec, "to", "is not a directory under this agent's --allow-path",
                  absl::StatusCode::kPermissionDenied);
  }
  spec.set_to(dir_ + "/bench/../other");
  ExpectRefused(spec, "to", "holds a \"..\" component");

  spec.set_to(dir_ + "/bench/sub");
  auto o = Make(spec);
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->transport, "path");
  EXPECT_EQ(o->config->Peer(), "local");
  spec.set_to(dir_ + "/bench");
  EXPECT_TRUE(Make(spec).ok()) << "the allowed directory itself";

  // A run whose directory no agent opened (a plan's, checked only) fails closed at
  // make: a job's `to` is never opened by its name.
  LocalPolicy plan;
  plan.origin = Origin::kPlan;
  plan.open_files = false;
  auto checked = MakeRunOptions(spec, plan, &field);
  ASSERT_TRUE(checked.ok()) << checked.status();
  RunContext context;
  auto made = TransportFor("path").make(*checked, context);
  ASSERT_FALSE(made.ok());
  EXPECT_NE(std::string(made.status().message()).find("not opened beneath the agent's --allow-path"), std::string::npos)
      << made.status();
}

// The command line's spec (cli/sender_spec.h SpecOfFlags): Origin::kUser may ask what
// no peer may, through the same checks, and its files stay paths the transport opens.
TEST_F(RunSpecTest, AUsersSpecAsksWhatOnlyAUserMayAndStaysPaths) {
  policy_ = {Origin::kUser, nullptr, "", nullptr};
  proto::RunSpec spec = Native();
  spec.set_transport("sftp");
  spec.set_to("u@nas:relative/dir");
  for (const char* word : {"--identity", "k", "--ssh-config", "/x/config", "--accept-new-host-key", "true"})
    spec.add_transport_flags(word);
  auto o = Make(spec);
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(SshOf(*o).identity, "k");
  EXPECT_FALSE(SshOf(*o).identity_text.has_value());
  EXPECT_EQ(SshOf(*o).config_file, "/x/config");
  EXPECT_TRUE(SshOf(*o).accept_new_host_key);

  spec = Native();  // a receiver started over SSH logs in with the login's flags
  spec.set_to("root@nas:/mnt/x");
  for (const char* word : {"--ssh-port", "2222", "--deploy-binary", "/usr/bin/nasperf"}) spec.add_transport_flags(word);
  o = Make(spec);
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(SshOf(*o).port, 2222);
  EXPECT_EQ(SshOf(*o).to.host, "nas");

  spec = Smb();
  spec.clear_files();
  for (const char* word : {"--smb-credentials", "cred/file"}) spec.add_transport_flags(word);
  o = Make(spec);
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(ShareOf(*o).smb_credentials, "cred/file");
  EXPECT_FALSE(ShareOf(*o).credentials_text.has_value());

  spec = Native();
  spec.set_direction("read");
  spec.set_size(0);
  spec.set_remote_file("big.bin");
  spec.set_local_target("/tmp/in");
  spec.set_direct_fallback(true);
  o = Make(spec);
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->remote_file, "big.bin");
  EXPECT_EQ(o->local_target, "/tmp/in");
}

TEST_F(RunSpecTest, AUsersSpecIsRefusedInTheCommandLinesTerms) {
  policy_ = {Origin::kUser, nullptr, "", nullptr};
  const std::pair<std::vector<std::string>, std::string> foreign[] = {
      {{"--ssh-port", "22"}, "--ssh-port: only with --to [user@]host:/dir or --transport scp|sftp"},
      {{"--smb-signing", "required"}, "--smb-signing: only with --transport smb"},
      {{"--bogus", "1"}, "--bogus: not a transport's flag"},
      {{"--identity"}, "not [name, value] pairs"}};
  for (const auto& [words, want] : foreign) {
    proto::RunSpec spec = Native();
    for (const std::string& word : words) spec.add_transport_flags(word);
    ExpectRefused(spec, "transport_flags", want);
  }
  proto::RunSpec spec = Native();
  spec.set_transport("nfs");
  spec.set_to("nfs://nas/export");
  for (const char* word : {"--identity", "k"}) spec.add_transport_flags(word);
  ExpectRefused(spec, "transport_flags", "--identity: only with --to [user@]host:/dir or --transport scp|sftp");
  spec = Sftp();
  spec.clear_files();
  for (const char* word : {"--deploy-binary", "/x"}) spec.add_transport_flags(word);
  ExpectRefused(spec, "transport_flags", "--deploy-binary: only with --to [user@]host:/dir");
  spec = Native();
  spec.set_read_mode("direct");
  ExpectRefused(spec, "read_mode", "only with --direction read");
  spec.clear_read_mode();
  spec.set_direction("read");
  spec.set_remote_file("f");
  ExpectRefused(spec, "size", "a read needs --size SIZE or --remote-file NAME");
  spec.set_size(0);
  spec.set_remote_file("../etc/shadow");
  ExpectRefused(spec, "remote_file", "is not a file name in the target");
  spec = Native();
  spec.set_size(0);
  ExpectRefused(spec, "size", "give --size SIZE or --file PATH");
}

TEST_F(RunSpecTest, WhatTheTransportCannotDoCarriesTheAskForTheFrontEndsWords) {
  for (Origin origin : {Origin::kUser, Origin::kPeer}) {
    policy_.origin = origin;
    proto::RunSpec spec = Sftp();
    spec.clear_files();
    spec.set_transport("scp");
    spec.set_verify(true);
    auto o = Make(spec);
    ASSERT_FALSE(o.ok());
    std::optional<Refusal> refused = TransportRefusalOf(o.status());
    ASSERT_TRUE(refused.has_value()) << o.status();
    EXPECT_EQ(refused->ask, Ask::kVerify);
    EXPECT_EQ(refused->able, TransportsWith(&TransportCaps::verify));
  }
  EXPECT_FALSE(TransportRefusalOf(absl::InvalidArgumentError("transport scp cannot do verify")).has_value());
}

}  // namespace
}  // namespace nasperf
