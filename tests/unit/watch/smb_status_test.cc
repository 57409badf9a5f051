// What smbd negotiated, read from `smbstatus --json` (watch/smb_status.h): a text
// captured from Samba 4.17 in the namespace lab, and what a broken or hostile
// smbstatus could print instead.
#include "watch/smb_status.h"

#include <string>

#include "gtest/gtest.h"

namespace nasperf {
namespace {

// smbstatus --json during an SMB copy into the lab (one session, one open file), trimmed.
constexpr char kCaptured[] = R"({"timestamp": "2026-12-05T03:26:38.753678+0000", "version": "4.17.12-Debian",
 "smb_conf": "/run/nasperf-lab/dev/smb/smb.conf", "sessions": {"2770564513": {"session_id": "2770564513",
 "server_id": {"pid": "24933", "task_id": "0", "vnn": "4294967295", "unique_id": "4363064600801693280"},
 "uid": 0, "gid": 0, "username": "root", "groupname": "root", "remote_machine": "198.18.0.11",
 "hostname": "ipv4:198.18.0.11:49302", "session_dialect": "SMB3_11", "encryption": {"cipher": "-", "degree": "none"},
 "signing": {"cipher": "AES-128-GMAC", "degree": "partial"}}}, "tcons": {"1218307491": {"service": "cache",
 "server_id": {"pid": "24933"}, "tcon_id": "1218307491", "session_id": "2770564513",
 "encryption": {"cipher": "-", "degree": "none"}, "signing": {"cipher": "-", "degree": "none"}}},
 "open_files": {}})";

TEST(SmbStatus, TheSessionOfTheServingProcessIsDescribed) {
  EXPECT_EQ(SmbSessionOf(kCaptured, 24933), "smb SMB3_11 signing=AES-128-GMAC(partial) encryption=none (smbstatus)");
  EXPECT_EQ(SmbSessionOf(kCaptured, 24934), std::nullopt);  // another smbd's client
  const std::string encrypted = R"({"sessions": {"9": {"server_id": {"pid": "7"}, "session_dialect": "SMB3_11",
    "signing": {"cipher": "AES-128-GMAC", "degree": "full"}, "encryption": {"cipher": "AES-128-GCM", "degree": "full"}}}})";
  EXPECT_EQ(SmbSessionOf(encrypted, 7),
            "smb SMB3_11 signing=AES-128-GMAC(full) encryption=AES-128-GCM(full) (smbstatus)");
}

TEST(SmbStatus, WhatIsNotSmbstatusOrNotSafeIsNotCarried) {
  EXPECT_EQ(SmbSessionOf("", 1), std::nullopt);
  EXPECT_EQ(SmbSessionOf("not json", 1), std::nullopt);
  EXPECT_EQ(SmbSessionOf(R"({"sessions": ["a list"]})", 1), std::nullopt);
  EXPECT_EQ(SmbSessionOf(R"({"sessions": {"1": {"server_id": {"pid": 1}}}})", 1), std::nullopt);  // pid not a string
  // Words with a comma, a newline or an escape, or too long, become "?": the row stays one CSV cell.
  const std::string hostile = R"({"sessions": {"1": {"server_id": {"pid": "5"}, "session_dialect": "SMB3,\n\u001b[2J",
    "signing": {"cipher": "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "degree": "full"}}}})";
  EXPECT_EQ(SmbSessionOf(hostile, 5), "smb ? signing=?(full) encryption=none (smbstatus)");
}

TEST(SmbStatus, TheConfigFileComesFromSmbdsCommandLine) {
  using std::string_literals::operator""s;
  EXPECT_EQ(SmbdConfigFile("smbd\0-F\0--no-process-group\0-s\0/run/lab/smb.conf\0"s), "/run/lab/smb.conf");
  EXPECT_EQ(SmbdConfigFile("/usr/sbin/smbd\0--configfile=/etc/x.conf\0"s), "/etc/x.conf");
  EXPECT_EQ(SmbdConfigFile("smbd\0--configfile\0/etc/y.conf\0"s), "/etc/y.conf");
  EXPECT_EQ(SmbdConfigFile("smbd\0-s/etc/z.conf\0"s), "/etc/z.conf");
  EXPECT_EQ(SmbdConfigFile("/usr/sbin/smbd\0--foreground\0--no-process-group\0"s), "");
  EXPECT_EQ(SmbdConfigFile("smbd\0-s"s), "");  // no file after it
}

}  // namespace
}  // namespace nasperf
