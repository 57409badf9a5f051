#include "wire/grpc_auth.h"

#include <chrono>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/fd.h"
#include "common/log.h"
#include "common/token.h"
#include "grpcpp/resource_quota.h"
#include "grpcpp/security/auth_metadata_processor.h"
#include "grpcpp/security/server_credentials.h"

namespace nasperf {

namespace {

constexpr char kWrongToken[] =
    "wrong or missing token (set NASPERF_TOKEN or --token-file to the same token on every nasperf of this lab)";

bool TokenMatches(absl::string_view authorization, const std::string& token) {
  return ConstantTimeEquals(authorization, absl::StrCat("Bearer ", token));
}

// A flood of wrong tokens must not fill the disk with log lines.
void LogRefusal(const char* component, const std::string& who) {
  static LogThrottle* throttle = new LogThrottle(10, 10.0);
  uint64_t held = 0;
  if (throttle->Allow(&held)) {
    Log(LogLevel::kWarning, component, "refused a call %s: wrong or missing token%s", TerminalSafe(who),
        LogThrottle::Held(held));
  }
}

// Runs in gRPC core's server auth filter on a call's initial metadata, on the
// transport's thread (IsBlocking() is false: no thread pool, no wait). A refusal
// cancels the call before its message is received. The peer's address is not known
// here (gRPC hands the processor only the metadata and the TLS session), so the log
// line names the method.
class TokenProcessor final : public grpc::AuthMetadataProcessor {
 public:
  TokenProcessor(std::string token, const char* component) : token_(std::move(token)), component_(component) {}
  bool IsBlocking() const override { return false; }
  grpc::Status Process(const InputMetadata& metadata, grpc::AuthContext*, OutputMetadata*, OutputMetadata*) override {
    auto it = metadata.find("authorization");
    if (it != metadata.end() && TokenMatches(absl::string_view(it->second.data(), it->second.size()), token_)) {
      return grpc::Status::OK;
    }
    auto path = metadata.find(":path");
    LogRefusal(component_,
               path == metadata.end()
                   ? std::string("before reading it")
                   : absl::StrCat("to ", std::string(path->second.data(), path->second.size()), " before reading it"));
    return grpc::Status(grpc::StatusCode::UNAUTHENTICATED, kWrongToken);
  }

 private:
  const std::string token_;
  const char* const component_;
};

}  // namespace

absl::Status CheckServerFileLimit(uint64_t limit) {
  if (limit >= kMinServerOpenFiles) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      "the open-file limit is ", limit, " (hard limit, RLIMIT_NOFILE), below the ", kMinServerOpenFiles,
      " a server needs so that idle connections cannot use up its descriptors; raise it to 65536 or more "
      "(as root: ulimit -Hn 65536 before starting; systemd: LimitNOFILE=65536; docker: --ulimit nofile=65536)"));
}

absl::Status RaiseServerFileLimit(std::string* warning) {
  absl::StatusOr<uint64_t> files = RaiseFileLimit();
  if (files.ok()) return CheckServerFileLimit(*files);
  *warning = std::string(files.status().message());
  return absl::OkStatus();
}

void ConfigureServer(grpc::ServerBuilder* builder, const ServerLimits& limits) {
  builder->SetMaxReceiveMessageSize(limits.max_request_bytes);
  builder->SetMaxSendMessageSize(kMaxMessageBytes);
  builder->AddChannelArgument(GRPC_ARG_SERVER_HANDSHAKE_TIMEOUT_MS, kServerHandshakeTimeoutMs);
  builder->AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  grpc::ResourceQuota quota(limits.name);
  quota.Resize(static_cast<size_t>(limits.max_memory_bytes));
  quota.SetMaxThreads(limits.max_threads);
  builder->SetResourceQuota(quota);
}

void RequireTokenFirst(ServerSecurity* security, const std::string& token, const char* component) {
  // Insecure credentials have no auth filter (and abort on a processor).
  if (security->fingerprint.empty()) return;
  security->credentials->SetAuthMetadataProcessor(std::make_shared<TokenProcessor>(token, component));
}

std::shared_ptr<grpc::Channel> NewChannel(const std::string& address, const PeerTrust* trust,
                                          const std::string& fingerprint) {
  auto credentials =
      trust == nullptr ? grpc::InsecureChannelCredentials() : trust->CredentialsFor(address, fingerprint);
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 200);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 2000);
  args.SetMaxReceiveMessageSize(kMaxMessageBytes);
  args.SetMaxSendMessageSize(kMaxMessageBytes);
  if (trust != nullptr && !trust->server_name().empty()) args.SetSslTargetNameOverride(trust->server_name());
  return grpc::CreateCustomChannel(address, credentials, args);
}

void PrepareCall(grpc::ClientContext* context, const std::string& token, absl::Duration deadline) {
  context->AddMetadata("authorization", absl::StrCat("Bearer ", token));
  context->set_deadline(std::chrono::system_clock::now() +
                        std::chrono::milliseconds(absl::ToInt64Milliseconds(deadline)));
}

grpc::Status CheckToken(const grpc::ServerContext& context, const std::string& token, const char* component) {
  const auto& metadata = context.client_metadata();
  auto it = metadata.find("authorization");
  if (it == metadata.end() || !TokenMatches(absl::string_view(it->second.data(), it->second.size()), token)) {
    LogRefusal(component, absl::StrCat("from ", context.peer()));
    return grpc::Status(grpc::StatusCode::UNAUTHENTICATED, kWrongToken);
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

absl::Status FromGrpc(const grpc::Status& status, const std::string& what, const std::string& address) {
  if (status.ok()) return absl::OkStatus();
  auto code = static_cast<absl::StatusCode>(status.error_code());
  if (code == absl::StatusCode::kUnavailable || code == absl::StatusCode::kDeadlineExceeded) {
    if (auto refusal = TakePinRefusal(address)) {
      return absl::UnauthenticatedError(absl::StrCat(what, " ", address, ": ", *refusal));
    }
    return absl::Status(code, absl::StrCat(what, " ", address, " unreachable: ", TerminalSafe(status.error_message())));
  }
  // The peer wrote this text: it reaches consoles and error cells escaped (common/log.h).
  return absl::Status(code, absl::StrCat(what, " ", address, ": ", TerminalSafe(status.error_message())));
}

}  // namespace nasperf
