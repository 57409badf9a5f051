#include "common/grpc_auth.h"

#include <chrono>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "common/log.h"
#include "common/token.h"

namespace nasperf {
namespace {

absl::StatusOr<std::string> ReadPem(const std::string& path, const char* flag) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat(flag, ": cannot read ", path));
  std::stringstream text;
  text << in.rdbuf();
  if (text.str().find("-----BEGIN") == std::string::npos) {
    return absl::InvalidArgumentError(absl::StrCat(flag, ": ", path, " is not a PEM file"));
  }
  return text.str();
}

}  // namespace

absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> ServerCredentials(const TlsFiles& tls) {
  if (tls.cert.empty() && tls.key.empty()) return grpc::InsecureServerCredentials();
  if (tls.cert.empty() || tls.key.empty()) {
    return absl::InvalidArgumentError("TLS needs both --tls-cert and --tls-key");
  }
  auto cert = ReadPem(tls.cert, "--tls-cert");
  if (!cert.ok()) return cert.status();
  auto key = ReadPem(tls.key, "--tls-key");
  if (!key.ok()) return key.status();
  grpc::SslServerCredentialsOptions options;
  options.pem_key_cert_pairs.push_back({*key, *cert});
  return grpc::SslServerCredentials(options);
}

absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> ClientCredentials(const TlsFiles& tls) {
  if (tls.ca.empty()) return grpc::InsecureChannelCredentials();
  auto ca = ReadPem(tls.ca, "--tls-ca");
  if (!ca.ok()) return ca.status();
  grpc::SslCredentialsOptions options;
  options.pem_root_certs = *ca;
  return grpc::SslCredentials(options);
}

void LimitMessages(grpc::ServerBuilder* builder) {
  builder->SetMaxReceiveMessageSize(kMaxMessageBytes);
  builder->SetMaxSendMessageSize(kMaxMessageBytes);
}

std::shared_ptr<grpc::Channel> NewChannel(const std::string& address,
                                          std::shared_ptr<grpc::ChannelCredentials> credentials) {
  if (credentials == nullptr) credentials = grpc::InsecureChannelCredentials();
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 200);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 2000);
  args.SetMaxReceiveMessageSize(kMaxMessageBytes);
  args.SetMaxSendMessageSize(kMaxMessageBytes);
  return grpc::CreateCustomChannel(address, credentials, args);
}

void PrepareCall(grpc::ClientContext* context, const std::string& token, absl::Duration deadline) {
  context->AddMetadata("authorization", absl::StrCat("Bearer ", token));
  context->set_deadline(std::chrono::system_clock::now() +
                        std::chrono::milliseconds(absl::ToInt64Milliseconds(deadline)));
}

grpc::Status CheckToken(const grpc::ServerContext& context, const std::string& token,
                        const char* component) {
  const auto& metadata = context.client_metadata();
  auto it = metadata.find("authorization");
  std::string expected = absl::StrCat("Bearer ", token);
  if (it == metadata.end() ||
      !ConstantTimeEquals(absl::string_view(it->second.data(), it->second.size()), expected)) {
    Log(LogLevel::kWarning, component, "refused a call from %s: wrong or missing token",
        context.peer());
    return grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                        "wrong or missing token (set NASPERF_TOKEN or --token-file to the same "
                        "token on every nasperf of this lab)");
  }
  return grpc::Status::OK;
}

std::string PeerHost(const grpc::ServerContext& context) {
  std::string peer = context.peer();
  for (const char* prefix : {"ipv4:", "ipv6:"}) {
    if (peer.rfind(prefix, 0) == 0) peer = peer.substr(5);
  }
  if (!peer.empty() && peer.front() == '[') return peer.substr(1, peer.find(']') - 1);
  size_t colon = peer.rfind(':');
  return colon == std::string::npos ? peer : peer.substr(0, colon);
}

grpc::Status ToGrpc(const absl::Status& s) {
  return grpc::Status(static_cast<grpc::StatusCode>(s.code()), std::string(s.message()));
}

absl::Status FromGrpc(const grpc::Status& status, const std::string& what,
                      const std::string& address) {
  if (status.ok()) return absl::OkStatus();
  auto code = static_cast<absl::StatusCode>(status.error_code());
  if (code == absl::StatusCode::kUnavailable || code == absl::StatusCode::kDeadlineExceeded) {
    return absl::Status(code, absl::StrCat(what, " ", address, " unreachable: ", status.error_message()));
  }
  return absl::Status(code, absl::StrCat(what, " ", address, ": ", status.error_message()));
}

}  // namespace nasperf
