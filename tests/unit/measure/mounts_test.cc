#include "measure/mounts.h"

#include <fcntl.h>
#include <unistd.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace nasperf {
namespace {

// Captured from Linux 6.x mounts (the cifs and nfs4 ones from a client with those
// modules: this test kernel has neither).
constexpr char kCifs[] =
    "97 29 0:52 / /mnt/nas rw,relatime shared:49 - cifs //192.168.1.10/share "
    "rw,vers=3.1.1,cache=strict,username=bob,uid=0,noforceuid,gid=0,noforcegid,addr=192.168.1.10,"
    "file_mode=0755,dir_mode=0755,soft,nounix,serverino,mapposix,rsize=4194304,wsize=4194304,bsize=1048576,"
    "retrans=1,echo_interval=60,actimeo=1,closetimeo=1,multichannel,max_channels=4";
constexpr char kNfs4[] =
    "120 29 0:60 / /mnt/nfs rw,relatime shared:60 - nfs4 nas.lan:/export/pool "
    "rw,vers=4.2,rsize=1048576,wsize=1048576,namlen=255,hard,proto=tcp,nconnect=8,timeo=600,retrans=2,"
    "sec=sys,clientaddr=192.168.1.5,local_lock=none,addr=192.168.1.10";
constexpr char kRclone[] =
    "130 29 0:70 / /mnt/gdrive rw,nosuid,nodev,relatime shared:70 - fuse.rclone gdrive: rw,user_id=0,group_id=0";
constexpr char kSshfs[] =
    "140 29 0:75 / /tmp/it/mnt rw,nosuid,nodev,relatime shared:75 - fuse.sshfs root@127.0.0.1:/tmp/it/remote "
    "rw,user_id=0,group_id=0";
constexpr char kExt4[] = "29 1 7:3 / /tmp/it/disk rw,relatime shared:1 - ext4 /dev/loop3 rw";
constexpr char kSpaced[] = "150 29 7:4 / /mnt/my\\040disk rw,sync,relatime shared:9 master:2 - xfs /dev/loop4 rw,attr2";

TEST(MountsTest, CifsKeepsTheOptionsThatDecideSpeed) {
  absl::StatusOr<MountFacts> m = ParseMountinfoLine(kCifs);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->Describe(),
            "cifs vers=3.1.1 cache=strict rsize=4194304 wsize=4194304 actimeo=1 multichannel "
            "max_channels=4");
  EXPECT_TRUE(m->network());
  EXPECT_EQ(m->Host(), "192.168.1.10");
  EXPECT_EQ(m->Peer(), "//192.168.1.10/share");
  EXPECT_EQ(m->mount_point, "/mnt/nas");
}

TEST(MountsTest, Nfs4WithNconnect) {
  absl::StatusOr<MountFacts> m = ParseMountinfoLine(kNfs4);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->Describe(), "nfs4 vers=4.2 rsize=1048576 wsize=1048576 nconnect=8");
  EXPECT_EQ(m->Host(), "nas.lan");
  EXPECT_EQ(m->Peer(), "nas.lan:/export/pool");
}

TEST(MountsTest, FuseMountsAreNetworkFileSystems) {
  absl::StatusOr<MountFacts> rclone = ParseMountinfoLine(kRclone);
  ASSERT_TRUE(rclone.ok()) << rclone.status();
  EXPECT_EQ(rclone->Describe(), "fuse.rclone");
  EXPECT_TRUE(rclone->network());
  EXPECT_EQ(rclone->Host(), "");  // a remote's name, not a host
  EXPECT_EQ(rclone->Peer(), "gdrive:");
  absl::StatusOr<MountFacts> sshfs = ParseMountinfoLine(kSshfs);
  ASSERT_TRUE(sshfs.ok()) << sshfs.status();
  EXPECT_EQ(sshfs->Describe(), "fuse.sshfs");
  EXPECT_EQ(sshfs->Host(), "127.0.0.1");
  EXPECT_EQ(sshfs->Peer(), "root@127.0.0.1:/tmp/it/remote");
}

TEST(MountsTest, LocalFileSystemsSaySo) {
  absl::StatusOr<MountFacts> m = ParseMountinfoLine(kExt4);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->Describe(), "local ext4");
  EXPECT_FALSE(m->network());
  EXPECT_EQ(m->Peer(), "local");
  EXPECT_EQ(m->Host(), "");
}

TEST(MountsTest, EscapedSpaceAndOptionalFields) {
  absl::StatusOr<MountFacts> m = ParseMountinfoLine(kSpaced);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->mount_point, "/mnt/my disk");
  EXPECT_EQ(m->Describe(), "local xfs sync");
  EXPECT_EQ(m->major, 7u);
  EXPECT_EQ(m->minor, 4u);
}

TEST(MountsTest, HostileTextStaysHarmless) {
  // An escape sequence in a source, a value with shell characters, an IPv6 host.
  absl::StatusOr<MountFacts> m = ParseMountinfoLine(
      "160 29 0:80 / /mnt/x rw - cifs //evil\\033[31m/share rw,vers=3.1.1;reboot,cache=\\033x,wsize=65536");
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->Describe(), "cifs wsize=65536");
  EXPECT_EQ(m->Peer(), "//evil\\x1b[31m/share");
  EXPECT_EQ(m->Host(), "");  // not a plain host
  absl::StatusOr<MountFacts> v6 = ParseMountinfoLine("161 29 0:81 / /mnt/y rw - nfs [fd00::1]:/export rw,vers=3");
  ASSERT_TRUE(v6.ok()) << v6.status();
  EXPECT_EQ(v6->Host(), "fd00::1");
  for (const char* bad : {"", "1 2 3", "x 29 0:1 / /m rw - ext4 /dev/a rw", "1 29 0:1 / /m rw ext4 /dev/a rw",
                          "1 29 0:1 / /m rw - ext4"}) {
    EXPECT_FALSE(ParseMountinfoLine(bad).ok()) << bad;
  }
  EXPECT_FALSE(ParseMountinfoLine(absl::StrCat(kExt4, std::string(kMaxMountinfoLine, 'a'))).ok());
}

TEST(MountsTest, FindMountByIdThenByDevice) {
  const std::string text = absl::StrCat(kCifs, "\n", kExt4, "\n", "garbage line\n", kSshfs, "\n",
                                        "200 29 7:3 /sub /tmp/it/bind rw - ext4 /dev/loop3 rw,sync\n");
  absl::StatusOr<MountFacts> by_id = FindMount(text, 140, 0, 0);
  ASSERT_TRUE(by_id.ok()) << by_id.status();
  EXPECT_EQ(by_id->fstype, "fuse.sshfs");
  absl::StatusOr<MountFacts> by_device = FindMount(text, std::nullopt, 7, 3);  // the later mount is on top
  ASSERT_TRUE(by_device.ok()) << by_device.status();
  EXPECT_EQ(by_device->mount_point, "/tmp/it/bind");
  EXPECT_FALSE(FindMount(text, 999, 9, 9).ok());
  // Lines past the bound are not read.
  std::string many;
  for (size_t i = 0; i < kMaxMountinfoLines; ++i) many += "x\n";
  EXPECT_FALSE(FindMount(absl::StrCat(many, kExt4), std::nullopt, 7, 3).ok());
}

TEST(MountsTest, MountOfThisDirectory) {
  const int fd = ::open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  absl::StatusOr<MountFacts> m = MountOf(fd);
  ::close(fd);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_FALSE(m->fstype.empty());
  EXPECT_EQ(FsTypeOfMagic(0xEF53), "ext2/3/4");
  EXPECT_EQ(FsTypeOfMagic(0x65735546), "fuse");
  EXPECT_EQ(FsTypeOfMagic(1), "");
}

}  // namespace
}  // namespace nasperf
