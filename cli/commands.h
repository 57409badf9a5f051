// The nasperf subcommands. Each Add function declares one subcommand and its flags on
// `app` and returns how to run it once the command line is parsed; main.cc only calls
// them in order. Single-threaded: call from main before parsing.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "CLI/CLI.hpp"

namespace nasperf::cli {

struct Command {
  CLI::App* app = nullptr;   // the subcommand, to ask whether it was given
  std::function<int()> run;  // its work; returns the exit status
};

// A command whose flags live in a Flags struct that `add` declares on `app` (returning
// the subcommand) and `run` reads after parsing: the struct lives as long as the Command.
template <typename Flags, typename Add, typename Run>
Command CommandOf(CLI::App& app, Add add, Run run) {
  auto flags = std::make_shared<Flags>();
  return {add(app, *flags), [flags, run] { return run(*flags); }};
}

Command AddReceiverCommand(CLI::App& app);  // cli/receiver_command.cc
Command AddAgentCommand(CLI::App& app);
Command AddFingerprintCommand(CLI::App& app);
Command AddSenderCommand(CLI::App& app);  // cli/sender_command.cc
Command AddProbeCommand(CLI::App& app);
Command AddDemoCommand(CLI::App& app);
Command AddCollectorCommand(CLI::App& app);  // cli/collector_command.cc
Command AddFlushCommand(CLI::App& app);
Command AddLabCommand(CLI::App& app);     // cli/lab_command.cc
Command AddReportCommand(CLI::App& app);  // cli/report_command.cc
Command AddCompareCommand(CLI::App& app);
Command AddWatchCommand(CLI::App& app);  // cli/watch_command.cc
// Hidden: one per transport entry with a worker (TransportEntry::worker), the helper
// processes its runs start themselves (cli/sender_command.cc).
std::vector<Command> AddTransportWorkerCommands(CLI::App& app);

}  // namespace nasperf::cli
