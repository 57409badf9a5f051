#include "common/grpc_auth.h"

#include <chrono>

#include "absl/strings/str_cat.h"
#include "common/log.h"
#include "common/token.h"

namespace nasperf {

void ConfigureServer(grpc::ServerBuilder* builder) {
  builder->SetMaxReceiveMessageSize(kMaxMessageBytes);
  builder->SetMaxSendMessageSize(kMaxMessageBytes);
  builder->AddChannelArgument(GRPC_ARG_SERVER_HANDSHAKE_TIMEOUT_MS, kServerHandshakeTimeoutMs);
  builder->AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
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
  std::string expected = absl::StrCat("Bearer ", token);
  if (it == metadata.end() || !ConstantTimeEquals(absl::string_view(it->second.data(), it->second.size()), expected)) {
    // A flood of wrong tokens must not fill the disk with log lines.
    static LogThrottle* throttle = new LogThrottle(10, 10.0);
    uint64_t held = 0;
    if (throttle->Allow(&held)) {
      Log(LogLevel::kWarning, component, "refused a call from %s: wrong or missing token%s",
          TerminalSafe(context.peer()), LogThrottle::Held(held));
    }
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
