// nasperf lab: the flags of a multi-host plan run and their wiring.
#include <cstdio>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "cli/flags.h"
#include "lab/controller.h"
#include "lab/plan.h"

namespace nasperf::cli {
namespace {

// ----------------------------------------------------------------- lab

struct LabFlags {
  std::string plan, token_file, run_id;
  std::string deploy_binary;
  bool check = false, ssh = false;
  ClientTls tls;
};

CLI::App* AddLab(CLI::App& app, LabFlags& f) {
  auto* cmd = app.add_subcommand("lab", "Run a multi-host plan: agents on many hosts start together, one CSV");
  cmd->add_option("plan", f.plan, "The plan, a TOML file (see README: Multi-host lab runs)")->required();
  AddTokenFlag(cmd, f.token_file);
  cmd->add_option("--run-id", f.run_id, "Run id shared by every transfer of this lab (default: time + random)");
  cmd->add_flag("--check", f.check, "Only parse the plan and print what it would run");
  cmd->add_flag(
      "--ssh", f.ssh,
      "Start the agent of a host with ssh = \"[user@]host[:port]\" over SSH when none answers; stop it at the end");
  cmd->add_option(
      "--deploy-binary", f.deploy_binary,
      "With --ssh: the static nasperf to upload to hosts without nasperf = ... (default: this one, if static)");
  AddClientTlsFlags(cmd, f.tls);
  return cmd;
}

int RunLabCommand(const LabFlags& f) {
  const std::string cmd = "lab";
  auto plan = LoadPlan(f.plan);
  if (!plan.ok()) return Fail(cmd, plan.status());
  if (f.check) {
    std::printf("plan %s: %zu hosts, %zu transfers, %d runs (+%d warm-up), on_failure %s\n", f.plan.c_str(),
                plan->hosts.size(), plan->transfers.size(), plan->runs, plan->warmup,
                plan->stop_on_failure ? "stop" : "continue");
    return 0;
  }
  const TokenSource token = TokenFlag(cmd, f.token_file, /*generate_if_missing=*/false);
  LabOptions options;
  options.stop = StopOnSignal(cmd, "aborting every transfer");
  options.token = token.token;
  options.run_id = f.run_id;
  options.ssh = f.ssh;
  options.deploy_binary = f.deploy_binary;
  if (!f.deploy_binary.empty() && !f.ssh) UsageError("lab", "--deploy-binary", "only with --ssh");
  options.trust = TrustFlags(cmd, f.tls);
  auto outcome = RunLab(*plan, options);
  if (!outcome.ok()) return Fail(cmd, outcome.status());
  if (outcome->interrupted) return 130;
  return outcome->failed > 0 ? 1 : 0;
}

}  // namespace

Command AddLabCommand(CLI::App& app) { return CommandOf<LabFlags>(app, AddLab, RunLabCommand); }

}  // namespace nasperf::cli
