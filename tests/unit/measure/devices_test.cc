// Which devices hold a directory (measure/devices.h), on a fake sysfs tree laid out as the
// kernel lays out /sys (partitions inside their disk's directory, class/block and
// dev/block links, md's and dm's attributes, btrfs's devices/), and `zpool status -P`
// parsed from a captured sample: this kernel has btrfs but no md, dm or ZFS.
#include "measure/devices.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace nasperf {
namespace {

using ::testing::ElementsAre;
using ::testing::Field;

class FakeSysfs : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = std::string(::testing::TempDir()) + "/sysfs-XXXXXX";
    ASSERT_NE(mkdtemp(root_.data()), nullptr);
  }
  void TearDown() override { std::filesystem::remove_all(root_); }

  void Dir(const std::string& relative) { std::filesystem::create_directories(root_ + "/" + relative); }
  void File(const std::string& relative, const std::string& content) {
    const size_t slash = relative.rfind('/');
    Dir(relative.substr(0, slash));
    FILE* f = std::fopen((root_ + "/" + relative).c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs(content.c_str(), f);
    std::fclose(f);
  }
  void Link(const std::string& target, const std::string& relative) {
    Dir(relative.substr(0, relative.rfind('/')));
    ASSERT_EQ(symlink(target.c_str(), (root_ + "/" + relative).c_str()), 0) << relative;
  }
  // A block device at devices/PARENT/NAME with its class/block and dev/block links.
  void Block(const std::string& parent, const std::string& name, const std::string& dev) {
    const std::string where = "devices/" + parent + "/" + name;
    Dir(where);
    Link("../../" + where, "class/block/" + name);
    Link("../../" + where, "dev/block/" + dev);
  }
  void Partition(const std::string& disk_parent, const std::string& disk, const std::string& name,
                 const std::string& dev) {
    Block(disk_parent + "/" + disk, name, dev);
    File("devices/" + disk_parent + "/" + disk + "/" + name + "/partition", "1\n");
  }
  FsFacts Dev(unsigned major, unsigned minor) {
    FsFacts f;
    f.major = major;
    f.minor = minor;
    return f;
  }

  std::string root_;
};

TEST_F(FakeSysfs, APartitionIsHeldByItsWholeDisk) {
  Block("pci0/block", "sda", "8:0");
  Partition("pci0/block", "sda", "sda1", "8:1");
  EXPECT_EQ(WholeDisk("sda1", root_), "sda");
  EXPECT_EQ(WholeDisk("sda", root_), "sda");
  EXPECT_THAT(DevicesUnder(Dev(8, 1), root_),
              ElementsAre(AllOf(Field(&BlockDevice::name, "sda"), Field(&BlockDevice::role, ""),
                                Field(&BlockDevice::under_target, true))));
  EXPECT_TRUE(DevicesUnder(Dev(7, 99), root_).empty());  // no such device: nothing, no error
}

TEST_F(FakeSysfs, MdMembersBySlotAndSparesAsSparesUnderDm) {
  for (const char* disk : {"sdb", "sdc", "sdd"})
    Block("pci0/block", disk, std::string("8:") + (disk[2] == 'b' ? "16" : disk[2] == 'c' ? "32" : "48"));
  Partition("pci0/block", "sdb", "sdb1", "8:17");
  Block("virtual/block", "md0", "9:0");
  File("devices/virtual/block/md0/md/level", "raid1\n");
  File("devices/virtual/block/md0/md/dev-sdb1/slot", "0\n");
  File("devices/virtual/block/md0/md/dev-sdc/slot", "1\n");
  File("devices/virtual/block/md0/md/dev-sdd/slot", "none\n");
  File("devices/virtual/block/md0/md/dev-sdd/state", "spare\n");
  for (const char* slave : {"sdb1", "sdc", "sdd"})
    Link("../../../../../devices/x", std::string("devices/virtual/block/md0/slaves/") + slave);
  Block("virtual/block", "dm-0", "253:0");
  File("devices/virtual/block/dm-0/dm/name", "vg-data\n");
  Link("../../md0", "devices/virtual/block/dm-0/slaves/md0");

  EXPECT_THAT(
      DevicesUnder(Dev(9, 0), root_),
      ElementsAre(AllOf(Field(&BlockDevice::name, "sdb"), Field(&BlockDevice::role, "slot 0 of the md raid1 md0")),
                  AllOf(Field(&BlockDevice::name, "sdc"), Field(&BlockDevice::role, "slot 1 of the md raid1 md0")),
                  AllOf(Field(&BlockDevice::name, "sdd"), Field(&BlockDevice::role, "spare of the md raid1 md0"))));
  const std::vector<BlockDevice> under_dm = DevicesUnder(Dev(253, 0), root_);
  ASSERT_EQ(under_dm.size(), 3u);
  EXPECT_EQ(under_dm[0].role, "slot 0 of the md raid1 md0, part of dm vg-data");
}

TEST_F(FakeSysfs, AStackThatLoopsEndsAtTheDepthBound) {
  Block("virtual/block", "dm-1", "253:1");
  Link("../../dm-1", "devices/virtual/block/dm-1/slaves/dm-1");
  const std::vector<BlockDevice> devices = DevicesUnder(Dev(253, 1), root_);
  ASSERT_EQ(devices.size(), 1u);  // the depth bound ends it; the device itself is what is left
  EXPECT_EQ(devices[0].name, "dm-1");
}

TEST_F(FakeSysfs, BtrfsMembersByDevidAndProfile) {
  Block("virtual/block", "loop6", "7:6");
  Block("virtual/block", "loop7", "7:7");
  const std::string fsid = "a1bccafb-ffae-43ec-b9de-a5b10c8e2384";
  Link("../../../../devices/virtual/block/loop6", "fs/btrfs/" + fsid + "/devices/loop6");
  Link("../../../../devices/virtual/block/loop7", "fs/btrfs/" + fsid + "/devices/loop7");
  Dir("fs/btrfs/" + fsid + "/allocation/data/raid1");
  Dir("fs/btrfs/" + fsid + "/allocation/data/single");  // left over from mkfs: raid1 is the profile
  FsFacts facts = Dev(0, 40);                           // btrfs's anonymous st_dev names no device
  facts.btrfs_fsid = fsid;
  facts.btrfs_profile = "raid1";
  facts.btrfs_devids = {{"loop6", 1}, {"loop7", 2}};
  EXPECT_THAT(
      DevicesUnder(facts, root_),
      ElementsAre(AllOf(Field(&BlockDevice::name, "loop6"), Field(&BlockDevice::role, "member 1 of the btrfs raid1")),
                  AllOf(Field(&BlockDevice::name, "loop7"), Field(&BlockDevice::role, "member 2 of the btrfs raid1"))));
  facts.btrfs_devids.clear();  // the ioctl did not answer: no member number is made up
  EXPECT_EQ(DevicesUnder(facts, root_)[0].role, "member of the btrfs raid1");
  facts.btrfs_fsid = "../../etc";
  EXPECT_TRUE(DevicesUnder(facts, root_).empty());
}

TEST_F(FakeSysfs, AllDisksAreEveryEntryOfBlock) {
  Dir("block/sda");
  Dir("block/loop0");
  EXPECT_THAT(AllDisks(root_), ElementsAre(Field(&BlockDevice::name, "loop0"), Field(&BlockDevice::name, "sda")));
  EXPECT_FALSE(AllDisks(root_)[0].under_target);
}

TEST(ProbeFileSystem, ARealDirectoryAndAMissingOne) {
  auto facts = ProbeFileSystem(::testing::TempDir());
  ASSERT_TRUE(facts.ok()) << facts.status();
  (void)DevicesUnder(*facts);  // whatever this machine has: bounded, no crash
  auto missing = ProbeFileSystem("/nonexistent/nasperf");
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(std::string(missing.status().message()), ::testing::HasSubstr("/nonexistent/nasperf"));
}

// Captured from OpenZFS 2.1 (`zpool status -P tank`), names shortened: a mirror of an
// NVMe and a SATA SSD, a raidz1 of three disks, a mirrored log, a cache and a spare.
constexpr char kZpoolStatus[] = R"(  pool: tank
 state: ONLINE
  scan: scrub repaired 0B in 00:12:31 with 0 errors on Sun Nov 10 00:36:32 2024
config:

	NAME                                                STATE     READ WRITE CKSUM
	tank                                                ONLINE       0     0     0
	  mirror-0                                          ONLINE       0     0     0
	    /dev/disk/by-id/nvme-Samsung_SSD_970_EVO-part1  ONLINE       0     0     0
	    /dev/disk/by-id/ata-CT1000MX500SSD1-part1       ONLINE       0     0     0
	  raidz1-1                                          ONLINE       0     0     0
	    /dev/sdc1                                       ONLINE       0     0     0
	    /dev/sdd1                                       ONLINE       0     0     0
	    /dev/sde1                                       ONLINE       0     0     0
	logs
	  mirror-2                                          ONLINE       0     0     0
	    /dev/nvme1n1p1                                  ONLINE       0     0     0
	    /dev/nvme2n1p1                                  ONLINE       0     0     0
	cache
	  /dev/sdf1                                         ONLINE       0     0     0
	spares
	  /dev/sdg1                                         AVAIL

errors: No known data errors
)";

TEST(ParseZpoolStatus, MirrorRaidzLogCacheAndSpare) {
  const std::vector<ZpoolVdev> vdevs = ParseZpoolStatus(kZpoolStatus);
  ASSERT_EQ(vdevs.size(), 9u);
  EXPECT_EQ(vdevs[0].path, "/dev/disk/by-id/nvme-Samsung_SSD_970_EVO-part1");
  EXPECT_EQ(vdevs[0].role, "member of mirror-0, ZFS pool tank");
  EXPECT_EQ(vdevs[1].role, "member of mirror-0, ZFS pool tank");
  EXPECT_EQ(vdevs[2].path, "/dev/sdc1");
  EXPECT_EQ(vdevs[2].role, "member of raidz1-1, ZFS pool tank");
  EXPECT_EQ(vdevs[5].role, "member of mirror-2, log of ZFS pool tank");
  EXPECT_EQ(vdevs[7].path, "/dev/sdf1");
  EXPECT_EQ(vdevs[7].role, "cache of ZFS pool tank");
  EXPECT_EQ(vdevs[8].role, "spare of ZFS pool tank");
}

TEST(ParseZpoolStatus, AStripeAndGarbage) {
  const std::vector<ZpoolVdev> stripe =
      ParseZpoolStatus("  pool: p\nconfig:\n\tNAME STATE\n\tp ONLINE\n\t  /dev/sdb ONLINE 0 0 0\nerrors: none\n");
  ASSERT_EQ(stripe.size(), 1u);
  EXPECT_EQ(stripe[0].role, "a disk of ZFS pool p");
  EXPECT_TRUE(ParseZpoolStatus("no pools available\n").empty());
  EXPECT_TRUE(ParseZpoolStatus(std::string(1 << 20, '\t')).empty());
  std::string many = "  pool: p\nconfig:\n";
  for (int i = 0; i < 100; ++i) many += "\t  /dev/sd" + std::to_string(i) + " ONLINE\n";
  EXPECT_EQ(ParseZpoolStatus(many).size(), kMaxDevices);
}

TEST_F(FakeSysfs, ThePoolsVdevsAreItsDevices) {
  for (const char* disk : {"sdc", "sdd"}) {
    Block("pci0/block", disk, disk[2] == 'c' ? "8:32" : "8:48");
    Partition("pci0/block", disk, std::string(disk) + "1", disk[2] == 'c' ? "8:33" : "8:49");
  }
  const std::vector<BlockDevice> devices =
      ZpoolDevices({{"/dev/sdc1", "member of raidz1-1, ZFS pool tank"},
                    {"/dev/sdd1", "member of raidz1-1, ZFS pool tank"},
                    {"/tmp/a-file-vdev", "a disk of ZFS pool tank"}},  // a file vdev is no block device
                   root_);
  EXPECT_THAT(devices, ElementsAre(AllOf(Field(&BlockDevice::name, "sdc"),
                                         Field(&BlockDevice::role, "member of raidz1-1, ZFS pool tank"),
                                         Field(&BlockDevice::under_target, true)),
                                   Field(&BlockDevice::name, "sdd")));
}

// emhttp's disks.ini as Unraid 6.12 writes it (fields shortened): two parity disks, two
// data disks, an empty slot, a cache pool and the boot flash.
constexpr char kDisksIni[] = R"(["parity"]
idx="0"
name="parity"
device="sdb"
status="DISK_OK"
type="Parity"
["parity2"]
idx="29"
name="parity2"
device="sdg"
type="Parity"
["disk1"]
idx="1"
name="disk1"
device="sdc"
type="Data"
fsType="xfs"
["disk2"]
idx="2"
name="disk2"
device=""
status="DISK_NP"
type="Data"
["cache"]
idx="30"
name="cache"
device="nvme0n1"
type="Cache"
["flash"]
name="flash"
device="sda"
type="Flash"
)";

TEST(ApplyUnraidRoles, ParityDataAndCacheAsUnraidStatesThem) {
  std::vector<BlockDevice> devices = {{"sda", "", false},
                                      {"sdb", "", false},
                                      {"sdc", "", false},
                                      {"sdg", "", false},
                                      {"nvme0n1", "", false},
                                      {"sdh", "", false},
                                      {"md1", "slot 0 of the md raid1 md1", true}};
  ApplyUnraidRoles(kDisksIni, &devices);
  EXPECT_EQ(devices[0].role, "");  // the boot flash is no part of the array
  EXPECT_EQ(devices[1].role, "Unraid parity");
  EXPECT_EQ(devices[2].role, "Unraid data disk disk1");
  EXPECT_EQ(devices[3].role, "Unraid parity2");
  EXPECT_EQ(devices[4].role, "Unraid cache pool cache");
  EXPECT_EQ(devices[5].role, "");                            // in no slot: nothing made up
  EXPECT_EQ(devices[6].role, "slot 0 of the md raid1 md1");  // a role already stated stays
  std::vector<BlockDevice> hostile = {{"sdb", "", false}};
  ApplyUnraidRoles("[\"x\"]\nname=\"par ity\"\ndevice=\"sdb\"\ntype=\"Parity\"\n", &hostile);
  EXPECT_EQ(hostile[0].role, "");  // a name with a blank is not one Unraid writes
}

// /proc/self/mountinfo lines as the kernel prints them: optional fields before "-".
constexpr char kMountinfo[] =
    "22 1 253:1 / / rw,relatime shared:1 - ext4 /dev/vda1 rw\n"
    "36 22 0:45 / /mnt/tank/media rw,noatime shared:20 master:3 - zfs tank/media rw,xattr,posixacl\n"
    "40 22 0:52 / /mnt/pool rw,relatime - btrfs /dev/loop7 rw,space_cache=v2,subvolid=5,subvol=/\n";

TEST(MountOfDevice, TypeAndSourceAfterTheOptionalFields) {
  auto zfs = MountOfDevice(kMountinfo, 0, 45);
  ASSERT_TRUE(zfs.has_value());
  EXPECT_EQ(zfs->fstype, "zfs");
  EXPECT_EQ(zfs->source, "tank/media");
  auto btrfs = MountOfDevice(kMountinfo, 0, 52);
  ASSERT_TRUE(btrfs.has_value());
  EXPECT_EQ(btrfs->source, "/dev/loop7");
  EXPECT_FALSE(MountOfDevice(kMountinfo, 0, 99).has_value());
  EXPECT_FALSE(MountOfDevice("36 22 0:45 / /x rw shared:20\n", 0, 45).has_value());  // no "-": not a line of it
  EXPECT_EQ(ZfsPool("tank/media"), "tank");
  EXPECT_EQ(ZfsPool("tank@snap"), "tank");
  EXPECT_EQ(ZfsPool("tank"), "tank");
  EXPECT_EQ(ZfsPool("-o/x"), "");
  EXPECT_EQ(ZfsPool("../etc"), "");
  EXPECT_EQ(ZfsPool("ta nk/x"), "");
}

TEST(RunForOutput, OutputWithinItsBoundsAndNoPathSearch) {
  auto echo = RunForOutput({"/bin/echo", "pool: tank"}, 5000, 1024);
  ASSERT_TRUE(echo.ok()) << echo.status();
  EXPECT_EQ(*echo, "pool: tank\n");
  auto env = RunForOutput({"/usr/bin/env"}, 5000, 1024);
  ASSERT_TRUE(env.ok()) << env.status();
  EXPECT_EQ(*env, "");  // nothing of the receiver's environment reaches the tool
  EXPECT_FALSE(RunForOutput({"echo", "x"}, 5000, 1024).ok());
  EXPECT_FALSE(RunForOutput({"/nonexistent/zpool"}, 5000, 1024).ok());
  // Endless output and a tool that never answers: killed at the bound.
  auto yes = RunForOutput({"/usr/bin/yes"}, 5000, 4096);
  EXPECT_TRUE(absl::IsDeadlineExceeded(yes.status())) << yes.status();
  auto silent = RunForOutput({"/bin/sleep", "30"}, 100, 4096);
  EXPECT_TRUE(absl::IsDeadlineExceeded(silent.status())) << silent.status();
}

TEST_F(FakeSysfs, AVdevPathIsItsWholeDisk) {
  Block("pci0/block", "sdc", "8:32");
  Partition("pci0/block", "sdc", "sdc1", "8:33");
  // Not on this machine's /dev: the path's own name, through the fake tree.
  EXPECT_EQ(KernelNameOfPath("/dev/sdc1", root_), "sdc");
  EXPECT_EQ(KernelNameOfPath("/etc/passwd", root_), "");
}

}  // namespace
}  // namespace nasperf
