#include "wire/tls.h"

#include <fcntl.h>
#include <openssl/bn.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <sstream>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/synchronization/mutex.h"
#include "common/fd.h"
#include "common/log.h"
#include "common/token.h"
#include "grpcpp/security/tls_certificate_provider.h"
#include "grpcpp/security/tls_certificate_verifier.h"
#include "grpcpp/security/tls_credentials_options.h"

namespace nasperf {
namespace {

constexpr size_t kMaxPemBytes = 64 << 10;
constexpr size_t kMaxKnownAgentsBytes = 1 << 20;
constexpr size_t kMaxAddressChars = 300;
constexpr char kIdentityFile[] = "tls.pem";
// The one name in every generated certificate, and the name pinned channels ask
// for: a self-signed key is not bound to an address, and gRPC then has no name
// mismatch to log.
constexpr char kCertificateName[] = "nasperf";

struct BioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};
struct X509Free {
  void operator()(X509* x) const { X509_free(x); }
};
struct PkeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
using BioPtr = std::unique_ptr<BIO, BioFree>;
using X509Ptr = std::unique_ptr<X509, X509Free>;
using PkeyPtr = std::unique_ptr<EVP_PKEY, PkeyFree>;

absl::StatusOr<std::string> ReadSmallFile(const std::string& path, const char* what) {
  std::ifstream in(path);
  if (!in) return ErrnoStatus(errno, absl::StrCat(what, " ", path));
  std::string text(kMaxPemBytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  if (text.size() > kMaxPemBytes) {
    return absl::InvalidArgumentError(absl::StrCat(what, " ", path, " is larger than ", kMaxPemBytes, " bytes"));
  }
  return text;
}

std::string BioText(BIO* bio) {
  char* data = nullptr;
  long size = BIO_get_mem_data(bio, &data);
  return std::string(data, static_cast<size_t>(size));
}

// The PEM block that starts with "-----BEGIN <label>", through its END line.
std::string PemBlock(absl::string_view text, absl::string_view label) {
  std::string begin = absl::StrCat("-----BEGIN ", label, "-----");
  std::string end = absl::StrCat("-----END ", label, "-----");
  size_t from = text.find(begin);
  if (from == absl::string_view::npos) return "";
  size_t to = text.find(end, from);
  if (to == absl::string_view::npos) return "";
  return absl::StrCat(text.substr(from, to + end.size() - from), "\n");
}

bool AddSubjectAltName(X509* cert) {
  X509V3_CTX context;
  X509V3_set_ctx_nodb(&context);
  X509V3_set_ctx(&context, cert, cert, nullptr, nullptr, 0);
  std::string value = absl::StrCat("DNS:", kCertificateName);
  X509_EXTENSION* extension = X509V3_EXT_conf_nid(nullptr, &context, NID_subject_alt_name, value.c_str());
  if (extension == nullptr) return false;
  bool added = X509_add_ext(cert, extension, -1) == 1;
  X509_EXTENSION_free(extension);
  return added;
}

absl::StatusOr<std::string> NewIdentityPem() {
  PkeyPtr key(EVP_EC_gen("P-256"));
  X509Ptr cert(X509_new());
  if (key == nullptr || cert == nullptr) return absl::InternalError("cannot make a TLS key");
  unsigned char serial[16];
  RandomBytes(serial, sizeof serial);
  serial[0] &= 0x7f;  // a positive serial number
  std::unique_ptr<BIGNUM, decltype(&BN_free)> number(BN_bin2bn(serial, sizeof serial, nullptr), BN_free);
  X509_NAME* name = X509_get_subject_name(cert.get());
  bool built = number != nullptr && X509_set_version(cert.get(), 2) == 1 &&
               BN_to_ASN1_INTEGER(number.get(), X509_get_serialNumber(cert.get())) != nullptr &&
               X509_gmtime_adj(X509_getm_notBefore(cert.get()), -24 * 3600) != nullptr &&
               X509_gmtime_adj(X509_getm_notAfter(cert.get()), 100L * 365 * 24 * 3600) != nullptr &&
               X509_set_pubkey(cert.get(), key.get()) == 1 &&
               X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                                          reinterpret_cast<const unsigned char*>(kCertificateName), -1, -1, 0) == 1 &&
               X509_set_issuer_name(cert.get(), name) == 1 && AddSubjectAltName(cert.get()) &&
               X509_sign(cert.get(), key.get(), EVP_sha256()) > 0;
  BioPtr out(BIO_new(BIO_s_mem()));
  built = built && out != nullptr &&
          PEM_write_bio_PrivateKey(out.get(), key.get(), nullptr, nullptr, 0, nullptr, nullptr) == 1 &&
          PEM_write_bio_X509(out.get(), cert.get()) == 1;
  if (!built) return absl::InternalError("cannot make a self-signed TLS certificate");
  return BioText(out.get());
}

absl::StatusOr<TlsIdentity> ParseIdentity(const std::string& path, absl::string_view text) {
  TlsIdentity id;
  id.path = path;
  id.key_pem = PemBlock(text, "PRIVATE KEY");
  id.cert_pem = PemBlock(text, "CERTIFICATE");
  if (id.key_pem.empty() || id.cert_pem.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, " holds no key and certificate; remove it and a new one is made at the next start"));
  }
  auto fingerprint = CertificateFingerprint(id.cert_pem);
  if (!fingerprint.ok()) return absl::InvalidArgumentError(absl::StrCat(path, ": ", fingerprint.status().message()));
  id.fingerprint = *fingerprint;
  return id;
}

absl::StatusOr<TlsIdentity> LoadIdentity(const std::string& path) {
  auto text = ReadSmallFile(path, "TLS identity");
  if (!text.ok()) return text.status();
  return ParseIdentity(path, *text);
}

// --------------------------------------------------------------- refusals

struct Refusals {
  absl::Mutex mu;
  absl::flat_hash_map<std::string, std::string> by_address ABSL_GUARDED_BY(mu);
};

Refusals& PinRefusals() {
  static Refusals* refusals = new Refusals;
  return *refusals;
}

void RecordRefusal(const std::string& address, const std::string& reason) {
  Refusals& r = PinRefusals();
  absl::MutexLock lock(&r.mu);
  if (r.by_address.size() > 1024) r.by_address.clear();  // bounded; a refusal is also logged
  r.by_address[address] = reason;
}

// ------------------------------------------------------------ known_agents

// The pinned fingerprints, one "ADDRESS SHA256:..." per line, re-read on every miss
// so that pins another nasperf added meanwhile count; and the keys this process
// accepted, by address.
class KnownAgents {
 public:
  KnownAgents(std::string path, bool accept_new) : path_(std::move(path)), accept_new_(accept_new) {}

  absl::Status Check(const std::string& address, const std::string& seen, const std::string& required) {
    absl::Status verdict = Decide(address, seen, required);
    if (verdict.ok()) {
      absl::MutexLock lock(&mu_);
      if (accepted_.size() < 4096) accepted_[address] = seen;
    }
    return verdict;
  }

  std::string Pinned(const std::string& address) {
    absl::MutexLock lock(&mu_);
    auto it = accepted_.find(address);
    return it != accepted_.end() ? it->second : Find(address).fingerprint;
  }

 private:
  struct Entry {
    std::string fingerprint;
    int line = 0;
  };

  absl::Status Decide(const std::string& address, const std::string& seen, const std::string& required) {
    if (!required.empty()) {
      if (seen == required) return absl::OkStatus();
      return absl::UnauthenticatedError(
          absl::StrCat("shows TLS key ", seen, ", not the ", required,
                       " expected for it (pinned by the lab controller, or read over SSH)"));
    }
    absl::MutexLock lock(&mu_);
    if (seen == Own()) return absl::OkStatus();
    Entry entry = Find(address);
    if (entry.fingerprint == seen) return absl::OkStatus();
    if (!entry.fingerprint.empty()) {
      return absl::UnauthenticatedError(absl::StrCat(
          "TLS key changed: ", path_, " line ", entry.line, " says ", entry.fingerprint, ", it now shows ", seen,
          ". If that nasperf was reinstalled, compare with `nasperf fingerprint` on it, then delete that line"));
    }
    if (!accept_new_) {
      return absl::UnauthenticatedError(
          absl::StrCat("TLS key ", seen, " is not in ", path_,
                       " yet: compare it with the fingerprint that nasperf printed at "
                       "start (or `nasperf fingerprint` there), then run again with --accept-new-agent-key"));
    }
    if (address.size() > kMaxAddressChars || address.find_first_of(" \t\r\n#") != std::string::npos) {
      return absl::InvalidArgumentError(absl::StrCat("cannot pin a key for the address ", TerminalSafe(address)));
    }
    std::string line = absl::StrCat(address, " ", seen, "\n");
    absl::Status appended = Append(line);
    if (!appended.ok()) return appended;
    Log(LogLevel::kInfo, "tls", "pinned %s for %s in %s", seen, address, path_);
    return absl::OkStatus();
  }

  // Read when first needed: a receiver makes its key after its reporter's trust exists.
  const std::string& Own() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (own_.empty()) {
      const std::string identity = ConfigPath(kIdentityFile);
      if (::access(identity.c_str(), F_OK) == 0) {
        auto id = LoadIdentity(identity);
        if (id.ok()) own_ = id->fingerprint;
      }
    }
    return own_;
  }

  Entry Find(const std::string& address) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    std::ifstream in(path_);
    std::string line;
    int number = 0;
    size_t read = 0;
    while (read < kMaxKnownAgentsBytes && std::getline(in, line)) {
      read += line.size() + 1;
      ++number;
      std::vector<absl::string_view> fields = absl::StrSplit(line, ' ', absl::SkipEmpty());
      if (fields.size() != 2 || fields[0] != address || !absl::StartsWith(fields[1], "SHA256:")) continue;
      return {std::string(fields[1]), number};
    }
    return {};
  }

  absl::Status Append(const std::string& line) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (::access(path_.c_str(), F_OK) != 0) {
      absl::Status created =
          CreatePrivateFile(path_, absl::StrCat("# nasperf: pinned TLS keys, ADDRESS FINGERPRINT\n", line));
      if (!absl::IsAlreadyExists(created)) return created;
    }
    Fd fd(::open(path_.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW));
    if (!fd.valid()) return ErrnoStatus(errno, absl::StrCat("open ", path_));
    return WriteAll(fd.get(), line.data(), line.size(), absl::StrCat("append to ", path_));
  }

  const std::string path_;
  const bool accept_new_;
  absl::Mutex mu_;
  std::string own_ ABSL_GUARDED_BY(mu_);  // this host's key; empty until it exists
  absl::flat_hash_map<std::string, std::string> accepted_ ABSL_GUARDED_BY(mu_);
};

class PinVerifier : public grpc::experimental::ExternalCertificateVerifier {
 public:
  PinVerifier(std::shared_ptr<KnownAgents> known, std::string address, std::string required)
      : known_(std::move(known)), address_(std::move(address)), required_(std::move(required)) {}

  bool Verify(grpc::experimental::TlsCustomVerificationCheckRequest* request, std::function<void(grpc::Status)>,
              grpc::Status* sync_status) override {
    grpc::string_ref cert = request->peer_cert();
    auto seen = CertificateFingerprint(absl::string_view(cert.data(), cert.size()));
    absl::Status verdict = seen.ok() ? known_->Check(address_, *seen, required_) : seen.status();
    if (verdict.ok()) {
      *sync_status = grpc::Status::OK;
    } else {
      std::string reason(verdict.message());
      RecordRefusal(address_, reason);  // FromGrpc reports it
      *sync_status = grpc::Status(grpc::StatusCode::UNAUTHENTICATED, reason);
    }
    return true;  // decided synchronously
  }
  void Cancel(grpc::experimental::TlsCustomVerificationCheckRequest*) override {}

 private:
  const std::shared_ptr<KnownAgents> known_;
  const std::string address_;
  const std::string required_;
};

class PinningTrust : public PeerTrust {
 public:
  // roots: any certificate. Nothing is verified against it, but without one gRPC reads
  // the system's CA bundle, which a NAS or the static binary's chroot may not have.
  PinningTrust(std::shared_ptr<KnownAgents> known, std::string roots)
      : known_(std::move(known)), roots_(std::move(roots)) {}
  std::shared_ptr<grpc::ChannelCredentials> CredentialsFor(const std::string& address,
                                                           const std::string& fingerprint) const override {
    grpc::experimental::TlsChannelCredentialsOptions options;
    // A provider per channel: channels created at once on one shared provider race in
    // gRPC 1.51's certificate distributor, and the loser fails every handshake with
    // "Failed to create security handshaker".
    options.set_certificate_provider(std::make_shared<grpc::experimental::StaticDataCertificateProvider>(roots_));
    options.watch_root_certs();
    // The certificate is self-signed and names no host: the pin is the whole check.
    options.set_verify_server_certs(false);
    options.set_check_call_host(false);
    options.set_certificate_verifier(
        grpc::experimental::ExternalCertificateVerifier::Create<PinVerifier>(known_, address, fingerprint));
    return grpc::experimental::TlsCredentials(options);
  }
  std::string PinnedFingerprint(const std::string& address) const override { return known_->Pinned(address); }
  bool plaintext() const override { return false; }
  std::string server_name() const override { return kCertificateName; }

 private:
  const std::shared_ptr<KnownAgents> known_;
  const std::string roots_;
};

// --tls-ca, or --plaintext: one credential for every peer.
class FixedTrust : public PeerTrust {
 public:
  FixedTrust(std::shared_ptr<grpc::ChannelCredentials> credentials, bool plaintext)
      : credentials_(std::move(credentials)), plaintext_(plaintext) {}
  std::shared_ptr<grpc::ChannelCredentials> CredentialsFor(const std::string&, const std::string&) const override {
    return credentials_;
  }
  std::string PinnedFingerprint(const std::string&) const override { return ""; }
  bool plaintext() const override { return plaintext_; }
  std::string server_name() const override { return ""; }

 private:
  const std::shared_ptr<grpc::ChannelCredentials> credentials_;
  const bool plaintext_;
};

absl::StatusOr<std::string> ReadPem(const std::string& path, const char* flag) {
  auto text = ReadSmallFile(path, flag);
  if (!text.ok()) return text.status();
  if (text->find("-----BEGIN") == std::string::npos) {
    return absl::InvalidArgumentError(absl::StrCat(flag, ": ", path, " is not a PEM file"));
  }
  return text;
}

}  // namespace

absl::StatusOr<std::string> CertificateFingerprint(absl::string_view cert_pem) {
  if (cert_pem.size() > kMaxPemBytes) return absl::InvalidArgumentError("TLS certificate too large");
  BioPtr in(BIO_new_mem_buf(cert_pem.data(), static_cast<int>(cert_pem.size())));
  X509Ptr cert(in == nullptr ? nullptr : PEM_read_bio_X509(in.get(), nullptr, nullptr, nullptr));
  if (cert == nullptr) return absl::InvalidArgumentError("not a PEM certificate");
  unsigned char* der = nullptr;
  int size = i2d_X509(cert.get(), &der);
  if (size <= 0) return absl::InvalidArgumentError("cannot encode the certificate");
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int digest_size = 0;
  bool hashed = EVP_Digest(der, static_cast<size_t>(size), digest, &digest_size, EVP_sha256(), nullptr) == 1;
  OPENSSL_free(der);
  if (!hashed) return absl::InternalError("SHA-256 failed");
  std::string base64 = absl::Base64Escape(absl::string_view(reinterpret_cast<char*>(digest), digest_size));
  return absl::StrCat("SHA256:", absl::StripSuffix(absl::StripSuffix(base64, "="), "="));
}

absl::StatusOr<TlsIdentity> LoadOrCreateIdentity() {
  const std::string path = ConfigPath(kIdentityFile);
  if (::access(path.c_str(), F_OK) == 0) return LoadIdentity(path);
  auto pem = NewIdentityPem();
  if (!pem.ok()) return pem.status();
  absl::Status created = CreatePrivateFile(path, *pem);
  if (absl::IsAlreadyExists(created)) return LoadIdentity(path);  // another nasperf made it a moment ago
  if (!created.ok()) return created;
  auto id = ParseIdentity(path, *pem);
  if (id.ok()) id->generated = true;
  return id;
}

absl::StatusOr<ServerIdentity> LoadServerIdentity(const ServerTls& tls) {
  ServerIdentity out;
  if (tls.cert.empty() && tls.key.empty()) {
    auto id = LoadOrCreateIdentity();
    if (!id.ok()) return id.status();
    out.key_pem = id->key_pem;
    out.cert_pem = id->cert_pem;
    out.fingerprint = id->fingerprint;
    out.summary = absl::StrCat("TLS key ", id->fingerprint, id->generated ? " (new, in " : " (from ", id->path,
                               "); clients pin it on first use");
    return out;
  }
  if (tls.cert.empty() || tls.key.empty()) return absl::InvalidArgumentError("TLS needs both --tls-cert and --tls-key");
  auto cert = ReadPem(tls.cert, "--tls-cert");
  if (!cert.ok()) return cert.status();
  auto key = ReadPem(tls.key, "--tls-key");
  if (!key.ok()) return key.status();
  auto fingerprint = CertificateFingerprint(*cert);
  if (!fingerprint.ok())
    return absl::InvalidArgumentError(absl::StrCat("--tls-cert ", tls.cert, ": ", fingerprint.status().message()));
  out.key_pem = *key;
  out.cert_pem = *cert;
  out.fingerprint = *fingerprint;
  out.summary = absl::StrCat("TLS with ", tls.cert, " (", *fingerprint, ")");
  return out;
}

absl::StatusOr<ServerSecurity> ServerCredentials(const ServerTls& tls) {
  ServerSecurity security;
  if (tls.plaintext) {
    if (!tls.cert.empty() || !tls.key.empty()) {
      return absl::InvalidArgumentError("--plaintext and --tls-cert/--tls-key exclude each other");
    }
    security.credentials = grpc::InsecureServerCredentials();
    security.summary = "control port in PLAINTEXT (--plaintext): the token crosses the network readable";
    return security;
  }
  absl::StatusOr<ServerIdentity> id = LoadServerIdentity(tls);
  if (!id.ok()) return id.status();
  security.fingerprint = id->fingerprint;
  security.summary = id->summary;
  grpc::SslServerCredentialsOptions options;
  options.pem_key_cert_pairs.push_back({id->key_pem, id->cert_pem});
  security.credentials = grpc::SslServerCredentials(options);
  return security;
}

absl::StatusOr<std::shared_ptr<const PeerTrust>> PeerTrust::Create(const ClientTls& tls) {
  if (tls.plaintext) {
    if (!tls.ca.empty()) return absl::InvalidArgumentError("--plaintext and --tls-ca exclude each other");
    return std::make_shared<FixedTrust>(grpc::InsecureChannelCredentials(), true);
  }
  if (!tls.ca.empty()) {
    auto ca = ReadPem(tls.ca, "--tls-ca");
    if (!ca.ok()) return ca.status();
    grpc::SslCredentialsOptions options;
    options.pem_root_certs = *ca;
    return std::make_shared<FixedTrust>(grpc::SslCredentials(options), false);
  }
  std::string path = tls.known_agents.empty() ? ConfigPath("known_agents") : tls.known_agents;
  auto throwaway = NewIdentityPem();
  if (!throwaway.ok()) return throwaway.status();
  return std::make_shared<PinningTrust>(std::make_shared<KnownAgents>(path, tls.accept_new),
                                        PemBlock(*throwaway, "CERTIFICATE"));
}

absl::optional<std::string> TakePinRefusal(const std::string& address) {
  Refusals& r = PinRefusals();
  absl::MutexLock lock(&r.mu);
  auto it = r.by_address.find(address);
  if (it == r.by_address.end()) return absl::nullopt;
  std::string reason = std::move(it->second);
  r.by_address.erase(it);
  return reason;
}

}  // namespace nasperf
