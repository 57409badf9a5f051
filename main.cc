// nasperf: one binary, git/iperf3-style subcommands. This file only wires them:
// each subcommand's flags live in cli/, and its work in the library of its folder.
#include <signal.h>

#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "cli/commands.h"
#include "cli/flags.h"
#include "common/log.h"

int main(int argc, char** argv) {
  using namespace nasperf;
  using namespace nasperf::cli;
  signal(SIGPIPE, SIG_IGN);
  CLI::App app{"nasperf: how fast does your NAS really take data over the network?"};
  app.require_subcommand(1);
  // A service (the .deb's systemd unit) keeps its settings in a file: `nasperf --config
  // F agent`, with F's [agent] (or [receiver]) table holding `flag = value` lines.
  app.set_config("--config", "",
                 "Read flags from this TOML file: a [agent] or [receiver] table of `flag = value` (no --)");
  app.allow_config_extras(CLI::config_extras_mode::error);  // a misspelt key is an error, not ignored
  app.set_version_flag("--version", std::string("nasperf ") + NASPERF_VERSION + " (" NASPERF_BUILD_INFO ")");
  bool verbose = false;
  app.add_flag("-v,--verbose", verbose, "Log each transfer on the receiver");
  // In the order `nasperf --help` lists them.
  std::vector<Command> commands = {
      AddReceiverCommand(app),  AddSenderCommand(app), AddAgentCommand(app),       AddLabCommand(app),
      AddCollectorCommand(app), AddFlushCommand(app),  AddFingerprintCommand(app), AddProbeCommand(app),
      AddDemoCommand(app),      AddReportCommand(app), AddCompareCommand(app),     AddWatchCommand(app),
  };
  for (Command& worker : AddTransportWorkerCommands(app)) commands.push_back(std::move(worker));
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::string where;
    for (const CLI::App* sub : app.get_subcommands()) where = absl::StrCat(" ", sub->get_name());
    std::fprintf(stderr, "nasperf%s: %s (see --help)\n", where.c_str(), TerminalSafe(e.what()).c_str());  // --config
    return kUsageError;
  }
  if (verbose) SetLogLevel(LogLevel::kDebug);
  for (const Command& command : commands) {
    if (app.got_subcommand(command.app)) return command.run();
  }
  return kUsageError;
}
