// TLS on every control channel with nothing to set up, the way SSH does it: each
// server has its own key and self-signed certificate (made at first start, 0600 beside
// the token) and each client pins the certificate's fingerprint on first use in
// ~/.config/nasperf/known_agents. Users with their own CA keep --tls-cert/--tls-key/
// --tls-ca; plaintext needs --plaintext. Everything here is thread-safe.
#ifndef NASPERF_WIRE_TLS_H_
#define NASPERF_WIRE_TLS_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/optional.h"
#include "grpcpp/grpcpp.h"

namespace nasperf {

// "SHA256:" + unpadded base64 of the SHA-256 of the certificate's DER, as ssh-keygen -l.
absl::StatusOr<std::string> CertificateFingerprint(absl::string_view cert_pem);

// This host's key and self-signed certificate, both in ConfigPath("tls.pem").
struct TlsIdentity {
  std::string key_pem, cert_pem, fingerprint, path;
  bool generated = false;  // made by this call
};
absl::StatusOr<TlsIdentity> LoadOrCreateIdentity();

// Server side (receiver, agent, collector).
struct ServerTls {
  std::string cert, key;   // --tls-cert/--tls-key (PEM files); empty: this host's identity
  bool plaintext = false;  // --plaintext: no TLS at all
};
struct ServerSecurity {
  std::shared_ptr<grpc::ServerCredentials> credentials;
  std::string fingerprint;  // what clients pin; empty when plaintext
  std::string summary;      // one line for the start banner
};
absl::StatusOr<ServerSecurity> ServerCredentials(const ServerTls& tls);
// The key and certificate a server shows (not plaintext): --tls-cert/--tls-key, else
// this host's identity. Also for the collector's HTTPS (`--http-tls`).
struct ServerIdentity {
  std::string key_pem, cert_pem, fingerprint, summary;
};
absl::StatusOr<ServerIdentity> LoadServerIdentity(const ServerTls& tls);

// Client side (sender, probe, flush, lab, agents, reporters).
struct ClientTls {
  std::string ca;            // --tls-ca: trust certificates from this CA instead of pinning
  bool plaintext = false;    // --plaintext
  bool accept_new = false;   // --accept-new-agent-key: pin a peer not seen before
  std::string known_agents;  // empty: ConfigPath("known_agents")
};

// How this process trusts its peers. A peer showing this host's own certificate is
// trusted without an entry (it holds our private key).
class PeerTrust {
 public:
  static absl::StatusOr<std::shared_ptr<const PeerTrust>> Create(const ClientTls& tls);
  virtual ~PeerTrust() = default;
  // Credentials for a channel to `address` (HOST:PORT as given to NewChannel). With
  // `fingerprint`, the peer must show exactly that certificate (a lab controller
  // hands its agents the fingerprints it pinned); otherwise known_agents decides.
  virtual std::shared_ptr<grpc::ChannelCredentials> CredentialsFor(const std::string& address,
                                                                   const std::string& fingerprint = "") const = 0;
  // The fingerprint pinned for `address` (known_agents, or this host's own); empty when
  // none, with --tls-ca or --plaintext.
  virtual std::string PinnedFingerprint(const std::string& address) const = 0;
  virtual bool plaintext() const = 0;
  // The server name a channel asks for instead of the address's host: the name in
  // every generated certificate when pinning; empty otherwise.
  virtual std::string server_name() const = 0;
};

// The last pinning refusal for `address` (unknown or changed key), taken once: a
// failed handshake surfaces in gRPC as a bare UNAVAILABLE, and FromGrpc puts this
// one-line reason in its place.
absl::optional<std::string> TakePinRefusal(const std::string& address);

}  // namespace nasperf

#endif  // NASPERF_WIRE_TLS_H_
