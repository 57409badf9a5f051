// TLS with pinned keys between real processes' parts on loopback: a receiver with
// its own generated key, and ReceiverClients whose trust comes from a known_agents
// file. Each host is a config directory (XDG_CONFIG_HOME), so "another machine" is
// another directory with another key.
#include "wire/tls.h"

#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "gtest/gtest.h"
#include "receiver/receiver.h"
#include "wire/receiver_client.h"
#include "wire/validate.h"

namespace nasperf {
namespace {

class TlsTest : public testing::Test {
 protected:
  void SetUp() override {
    root_ = std::filesystem::temp_directory_path() / "nasperf-tls-XXXXXX";
    ASSERT_NE(mkdtemp(root_.data()), nullptr);
  }
  void TearDown() override {
    if (receiver_) receiver_->Shutdown();
    unsetenv("XDG_CONFIG_HOME");
    std::filesystem::remove_all(root_);
  }

  // Acts as the machine whose configuration lives in root_/name.
  void BeHost(const std::string& name) { setenv("XDG_CONFIG_HOME", (root_ + "/" + name).c_str(), 1); }

  void StartReceiver(const std::string& host, bool plaintext = false) {
    BeHost(host);
    ReceiverOptions options;
    options.target = "discard";
    options.listen = {"127.0.0.1", 0};
    options.token = "token";
    options.tls.plaintext = plaintext;
    auto receiver = Receiver::Start(options);
    ASSERT_TRUE(receiver.ok()) << receiver.status();
    receiver_ = std::move(*receiver);
  }
  HostPort address() const { return {"127.0.0.1", receiver_->control_port()}; }
  std::string known_agents() const { return root_ + "/client/nasperf/known_agents"; }

  // Hello from the machine "client" with these TLS flags.
  absl::Status HelloFromClient(ClientTls tls, const std::string& fingerprint = "") {
    BeHost("client");
    auto trust = PeerTrust::Create(tls);
    if (!trust.ok()) return trust.status();
    ReceiverClient client(address(), "token", *trust, fingerprint);
    return client.Hello().status();
  }

  std::string ReadFile(const std::string& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }

  std::string root_;
  std::unique_ptr<Receiver> receiver_;
};

TEST_F(TlsTest, AGeneratedIdentityIsPrivateStableAndFingerprinted) {
  BeHost("nas");
  auto first = LoadOrCreateIdentity();
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_TRUE(first->generated);
  struct stat st {};
  ASSERT_EQ(stat(first->path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_TRUE(CheckFingerprint("fp", first->fingerprint).ok()) << first->fingerprint;
  auto again = LoadOrCreateIdentity();
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(again->generated);
  EXPECT_EQ(again->fingerprint, first->fingerprint);
  BeHost("other");
  auto other = LoadOrCreateIdentity();
  ASSERT_TRUE(other.ok());
  EXPECT_NE(other->fingerprint, first->fingerprint);
}

TEST_F(TlsTest, FingerprintsAreCheckedWhereTheyEnter) {
  EXPECT_FALSE(CertificateFingerprint("not a certificate").ok());
  EXPECT_TRUE(CheckFingerprint("fp", "").ok());
  EXPECT_FALSE(CheckFingerprint("fp", "SHA256:short").ok());
  EXPECT_FALSE(CheckFingerprint("fp", "MD5:" + std::string(43, 'a')).ok());
  EXPECT_FALSE(CheckFingerprint("fp", "SHA256:" + std::string(42, 'a') + "\n").ok());
  EXPECT_TRUE(CheckFingerprint("fp", "SHA256:" + std::string(43, 'a')).ok());
}

TEST_F(TlsTest, AnUnknownKeyIsRefusedThenPinnedOnRequestThenTrusted) {
  StartReceiver("nas");
  absl::Status unknown = HelloFromClient({});
  ASSERT_TRUE(absl::IsUnauthenticated(unknown)) << unknown;
  EXPECT_NE(unknown.message().find("--accept-new-agent-key"), std::string::npos) << unknown;
  EXPECT_NE(unknown.message().find(receiver_->security().fingerprint), std::string::npos) << unknown;
  EXPECT_FALSE(std::filesystem::exists(known_agents()));

  ClientTls accept;
  accept.accept_new = true;
  ASSERT_TRUE(HelloFromClient(accept).ok());
  EXPECT_NE(ReadFile(known_agents()).find(FormatHostPort(address()) + " " + receiver_->security().fingerprint),
            std::string::npos)
      << ReadFile(known_agents());
  EXPECT_TRUE(HelloFromClient({}).ok()) << "a pinned key must be trusted without the flag";
}

TEST_F(TlsTest, AChangedKeyIsRefusedEvenWithAcceptNew) {
  StartReceiver("nas");
  ClientTls accept;
  accept.accept_new = true;
  ASSERT_TRUE(HelloFromClient(accept).ok());
  const std::string pinned = ReadFile(known_agents());
  // The same address now answers with another machine's key.
  receiver_->Shutdown();
  HostPort same = address();
  BeHost("impostor");
  ReceiverOptions options;
  options.target = "discard";
  options.listen = same;
  options.token = "token";
  auto impostor = Receiver::Start(options);
  ASSERT_TRUE(impostor.ok()) << impostor.status();
  receiver_ = std::move(*impostor);
  absl::Status changed = HelloFromClient(accept);
  ASSERT_TRUE(absl::IsUnauthenticated(changed)) << changed;
  EXPECT_NE(changed.message().find("TLS key changed"), std::string::npos) << changed;
  EXPECT_NE(changed.message().find("line 2"), std::string::npos) << changed;
  EXPECT_EQ(ReadFile(known_agents()), pinned) << "a changed key must not be re-pinned";
}

TEST_F(TlsTest, AKeyPinnedByTheCallerMustMatchExactly) {
  StartReceiver("nas");
  ClientTls accept;
  accept.accept_new = true;
  absl::Status wrong = HelloFromClient(accept, "SHA256:" + std::string(43, 'A'));
  ASSERT_TRUE(absl::IsUnauthenticated(wrong)) << wrong;
  EXPECT_NE(wrong.message().find("expected for it (pinned by the lab controller"), std::string::npos) << wrong;
  EXPECT_FALSE(std::filesystem::exists(known_agents())) << "an explicit pin never writes known_agents";
  EXPECT_TRUE(HelloFromClient({}, receiver_->security().fingerprint).ok());
}

TEST_F(TlsTest, ThisHostsOwnKeyNeedsNoPin) {
  StartReceiver("client");  // the server and the client share one config directory
  EXPECT_TRUE(HelloFromClient({}).ok());
  EXPECT_FALSE(std::filesystem::exists(known_agents()));
}

TEST_F(TlsTest, PlaintextAndTlsDoNotMix) {
  StartReceiver("nas");
  ClientTls plaintext;
  plaintext.plaintext = true;
  EXPECT_TRUE(absl::IsUnavailable(HelloFromClient(plaintext)));
  receiver_->Shutdown();
  StartReceiver("nas", /*plaintext=*/true);
  EXPECT_EQ(receiver_->security().fingerprint, "");
  ClientTls accept;
  accept.accept_new = true;
  EXPECT_TRUE(absl::IsUnavailable(HelloFromClient(accept)));
  EXPECT_TRUE(HelloFromClient(plaintext).ok());
}

TEST_F(TlsTest, PlaintextExcludesCertificates) {
  ServerTls server;
  server.plaintext = true;
  server.cert = "cert.pem";
  server.key = "key.pem";
  EXPECT_FALSE(ServerCredentials(server).ok());
  ClientTls client;
  client.plaintext = true;
  client.ca = "ca.pem";
  EXPECT_FALSE(PeerTrust::Create(client).ok());
}

}  // namespace
}  // namespace nasperf
