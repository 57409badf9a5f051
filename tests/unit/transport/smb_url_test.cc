// --to smb://... and the SMB login: what is accepted, and the one line for the rest.
#include <fcntl.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <string>

#include "common/fd.h"
#include "gtest/gtest.h"
#include "transport/registry.h"
#include "transport/run_options.h"
#include "transport/smb.h"

namespace nasperf {
namespace {

TEST(SmbUrlTest, UserHostPortShareAndDirectory) {
  absl::StatusOr<SmbUrl> url = ParseSmbUrl("smb://me@nas.local:4455/media//films/new/");
  ASSERT_TRUE(url.ok()) << url.status();
  EXPECT_EQ(url->user, "me");
  EXPECT_EQ(url->host, "nas.local");
  EXPECT_EQ(url->port, 4455);
  EXPECT_EQ(url->share, "media");
  EXPECT_EQ(url->dir, "/films/new");
  absl::StatusOr<SmbUrl> plain = ParseSmbUrl("smb://198.18.1.10/cache");
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ(plain->dir, "/");
  EXPECT_EQ(plain->port, 0);
  EXPECT_TRUE(plain->user.empty());
}

TEST(SmbUrlTest, RefusesWhatItCannotHonourInOneLine) {
  const struct {
    const char* url;
    const char* says;
  } cases[] = {
      {"nfs://nas/x", "must begin with smb://"},
      {"smb://nas", "no share"},
      {"smb://nas/", "no share"},
      {"smb://me:secret@nas/x", "no password in the URL"},
      {"smb://nas/x?domain=y", "no ?, #, ; or \\"},
      {"smb://nas:0/x", "bad port"},
      {"smb://n@s@nas/x", "bad user"},
      {"smb://na s/x", "bad host"},
      {"smb://nas/x/../y", "\"..\""},
      {"smb://nas/x\r", "control character"},
  };
  for (const auto& c : cases) {
    absl::StatusOr<SmbUrl> url = ParseSmbUrl(c.url);
    ASSERT_FALSE(url.ok()) << c.url;
    EXPECT_NE(url.status().message().find(c.says), std::string::npos) << c.url << ": " << url.status();
  }
  EXPECT_NE(ParseSmbUrl("smb://nas/" + std::string(1100, 'a')).status().message().find("longer than 1024 characters"),
            std::string::npos);
  std::string deep = "smb://nas";
  for (int i = 0; i < 40; ++i) deep += "/d";
  EXPECT_NE(ParseSmbUrl(deep).status().message().find("more than 32 path parts"), std::string::npos);
  EXPECT_TRUE(ParseSmbUrl(deep.substr(0, 9 + 32 * 2)).ok()) << "32 parts are allowed";
}

class SmbLoginTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/smb_login_test.XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    dir_ = dir;
    unsetenv("NASPERF_SMB_USER");
    unsetenv("NASPERF_SMB_PASSWORD");
  }
  void TearDown() override { (void)system(("rm -rf " + dir_).c_str()); }
  std::string Write(const std::string& text, mode_t mode) {
    const std::string path = dir_ + "/cred";
    std::ofstream(path) << text;
    chmod(path.c_str(), mode);
    return path;
  }
  std::string dir_;
};

TEST_F(SmbLoginTest, ReadsAMountCifsFileOnlyItsOwnerMayRead) {
  SmbUrl url = *ParseSmbUrl("smb://nas/share");
  absl::StatusOr<SmbLogin> login =
      ReadSmbLogin(url, Write("# lab\nusername=root\npassword = s3cr=t\ndomain=WORKGROUP\n", 0600));
  ASSERT_TRUE(login.ok()) << login.status();
  EXPECT_EQ(login->user, "root");
  EXPECT_EQ(login->password, "s3cr=t");
  EXPECT_EQ(login->domain, "WORKGROUP");
  // The URL's user wins.
  EXPECT_EQ(ReadSmbLogin(*ParseSmbUrl("smb://me@nas/share"), dir_ + "/cred")->user, "me");
}

TEST_F(SmbLoginTest, RefusesAFileOthersMayReadAndNeverEchoesALine) {
  SmbUrl url = *ParseSmbUrl("smb://nas/share");
  absl::StatusOr<SmbLogin> open = ReadSmbLogin(url, Write("username=root\npassword=x\n", 0644));
  ASSERT_FALSE(open.ok());
  EXPECT_NE(open.status().message().find("chmod 600"), std::string::npos) << open.status();
  absl::StatusOr<SmbLogin> odd = ReadSmbLogin(url, Write("username=root\nhunter2\n", 0600));
  ASSERT_FALSE(odd.ok());
  EXPECT_EQ(odd.status().message().find("hunter2"), std::string::npos) << odd.status();
  EXPECT_NE(odd.status().message().find(":2:"), std::string::npos) << odd.status();
  const std::string link = dir_ + "/link";
  ASSERT_EQ(symlink((dir_ + "/cred").c_str(), link.c_str()), 0);
  EXPECT_FALSE(ReadSmbLogin(url, link).ok());  // O_NOFOLLOW
  EXPECT_FALSE(ReadSmbLogin(url, dir_ + "/missing").ok());
}

// Issue 42, row 3: an agent hands over the bytes it read through the checked
// descriptor; the name is never opened again (here it names nothing at all).
TEST_F(SmbLoginTest, BytesReadWhereTheFileWasCheckedAreUsedAndTheNameIsNotOpened) {
  const std::string path = Write("username=checked\npassword=pw\n", 0600);
  Fd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  ASSERT_TRUE(fd.valid());
  ASSERT_EQ(lseek(fd.get(), 5, SEEK_SET), 5);  // read from the first byte, wherever the offset is
  absl::StatusOr<std::string> text = ReadPrivateFd(fd.get(), "share_credentials " + path, 64 << 10);
  ASSERT_TRUE(text.ok()) << text.status();
  ShareOptions share;
  share.smb_credentials = dir_ + "/gone";  // what the job named: swapped away, or a link now
  share.credentials_text = *text;
  absl::StatusOr<SmbLogin> login = SmbLoginFor(*ParseSmbUrl("smb://nas/share"), share);
  ASSERT_TRUE(login.ok()) << login.status();
  EXPECT_EQ(login->user, "checked");
  EXPECT_EQ(login->password, "pw");
  share.credentials_text = "username=x\nhunter2\n";
  absl::StatusOr<SmbLogin> odd = SmbLoginFor(*ParseSmbUrl("smb://nas/share"), share);
  ASSERT_FALSE(odd.ok());
  EXPECT_EQ(odd.status().message().find("hunter2"), std::string::npos) << odd.status();
  // The same privacy checks as --smb-credentials.
  ASSERT_EQ(fchmod(fd.get(), 0640), 0);
  absl::StatusOr<std::string> open_to_group = ReadPrivateFd(fd.get(), "share_credentials " + path, 64 << 10);
  ASSERT_FALSE(open_to_group.ok());
  EXPECT_NE(open_to_group.status().message().find("chmod 600"), std::string::npos) << open_to_group.status();
}

TEST_F(SmbLoginTest, TheEnvironmentWhenNoFileAndAUserIsNeeded) {
  SmbUrl url = *ParseSmbUrl("smb://nas/share");
  EXPECT_FALSE(ReadSmbLogin(url, "").ok());  // no user anywhere
  setenv("NASPERF_SMB_USER", "backup", 1);
  setenv("NASPERF_SMB_PASSWORD", "pw", 1);
  absl::StatusOr<SmbLogin> login = ReadSmbLogin(url, "");
  ASSERT_TRUE(login.ok()) << login.status();
  EXPECT_EQ(login->user, "backup");
  EXPECT_EQ(login->password, "pw");
}

// Issue 42, row 10: a process that loads an SMB login leaves no core dump of the
// password (and no one but root reads its memory). Made in a child, whose state the
// test process keeps apart; the child's exit code says what it saw.
TEST_F(SmbLoginTest, AProcessThatLoadsALoginCannotDumpCore) {
  const TransportEntry& smb = TransportFor("smb");
  if (!smb.built) GTEST_SKIP() << "this build has no SMB";
  RunOptions options;
  ShareOptions share;
  share.url = "smb://nas.invalid/share";
  share.smb_credentials = Write("username=root\npassword=hunter2\n", 0600);
  options.transport = "smb";
  options.config = std::make_shared<ShareConfig>(share, "nas.invalid");
  if (prctl(PR_GET_DUMPABLE) != 1) GTEST_SKIP() << "the test itself runs undumpable: the check would mean nothing";
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const RunContext context;
    absl::StatusOr<std::unique_ptr<Transport>> made =
        smb.make(options, context);  // reads the login; connects nowhere yet
    struct rlimit core {};
    const bool no_core = getrlimit(RLIMIT_CORE, &core) == 0 && core.rlim_cur == 0 && core.rlim_max == 0;
    _exit(!made.ok() ? 3 : prctl(PR_GET_DUMPABLE) != 0 ? 1 : !no_core ? 2 : 0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_NE(WEXITSTATUS(status), 3) << "the SMB transport was not made";
  EXPECT_NE(WEXITSTATUS(status), 1) << "still dumpable with the login loaded";
  EXPECT_NE(WEXITSTATUS(status), 2) << "RLIMIT_CORE is not 0 with the login loaded";
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

}  // namespace
}  // namespace nasperf
