// The SSH login flags of `nasperf sender`, shared by the scp and sftp entries (and read
// for a receiver started over SSH with --to user@host:/dir). Here, not in ssh.cc, so
// that declaring them needs CLI11 and not libssh.
#include <vector>

#include "CLI/CLI.hpp"
#include "transport/ssh.h"

namespace nasperf {

std::vector<CLI::Option*> AddSshLoginFlags(CLI::App& sender, RunOptions& into) {
  SshOptions& ssh = into.ssh;
  return {
      sender.add_option("--ssh-port", ssh.port, "SSH port (default: ~/.ssh/config's, else 22)")
          ->check(CLI::Range(1, 65535)),
      sender.add_option("--identity", ssh.identity,
                        "SSH private key file to log in with (default: ssh-agent, then ~/.ssh/id_*)"),
      sender.add_option("--known-hosts", ssh.known_hosts,
                        "known_hosts file to check the SSH host key against (default ~/.ssh/known_hosts)"),
      sender.add_option("--ssh-config", ssh.config_file,
                        "ssh_config file to read (default ~/.ssh/config and /etc/ssh/ssh_config)"),
      sender.add_flag("--accept-new-host-key", ssh.accept_new_host_key,
                      "Record an unknown SSH host key (a changed one is still refused)"),
  };
}

}  // namespace nasperf
