// What a test reads of a run's transport config (RunOptions::config), by copy: the
// SSH login (scp, sftp, or native's receiver started over SSH), the share's URL and
// knobs, the native agent's address. Defaults where the config is another's.
#ifndef NASPERF_TESTS_UNIT_TESTING_CONFIG_OF_H_
#define NASPERF_TESTS_UNIT_TESTING_CONFIG_OF_H_

#include <memory>
#include <utility>

#include "transport/native.h"
#include "transport/run_options.h"
#include "transport/share_config.h"
#include "transport/ssh.h"

namespace nasperf {

inline SshOptions SshOf(const RunOptions& o) {
  if (const auto* ssh = dynamic_cast<const SshConfig*>(o.config.get())) return ssh->login;
  SshOptions login;
  if (const auto* native = dynamic_cast<const NativeConfig*>(o.config.get())) {
    login = native->ssh;
    if (native->login) login.to = *native->login;
  }
  return login;
}

inline ShareOptions ShareOf(const RunOptions& o) {
  const auto* share = dynamic_cast<const ShareConfig*>(o.config.get());
  return share != nullptr ? share->share() : ShareOptions();
}

inline HostPort AgentOf(const RunOptions& o) {
  const auto* native = dynamic_cast<const NativeConfig*>(o.config.get());
  return native != nullptr ? native->agent : HostPort();
}

// A run's config for the native agent at `to`, as its entry's parse of HOST:PORT makes.
inline std::shared_ptr<const TransportConfig> AgentAt(HostPort to) {
  auto config = std::make_shared<NativeConfig>();
  config->agent = std::move(to);
  return config;
}

}  // namespace nasperf

#endif  // NASPERF_TESTS_UNIT_TESTING_CONFIG_OF_H_
