// `mlenvc port-forward FILE ENV [TOOL...]`: forwards the env's tools (and debugpy) from the pod
// that runs them to the same ports on this machine: on Kubernetes, where tools have no Route,
// and for debugpy everywhere.

#include <unistd.h>

#include <iostream>

#include "compiler/base/file_system.h"
#include "compiler/driver/commands.h"
#include "compiler/driver/options.h"
#include "compiler/driver/pipeline.h"
#include "compiler/plan/apply/runner.h"
#include "targets/kube/port_forward.h"

namespace mlenv::driver {
namespace {

constexpr const char* kUsage =
    "usage: mlenvc port-forward FILE ENV [TOOL...] [--kubectl PATH] [--dry-run]\n"
    "\n"
    "Forwards the tools of env ENV of FILE (vscode 8080, jupyter 8888, tensorboard 6006,\n"
    "debugpy 5678; all the env has when none is named) from pod 0 of a dev env, or rank 0 of a\n"
    "run, to the same ports on 127.0.0.1, until interrupted.\n"
    "\n"
    "  --kubectl PATH  the client (default: oc on OpenShift, kubectl elsewhere, on PATH)\n"
    "  --dry-run       print the commands, run nothing\n";

const ir::Env* find_env(const ir::Program& program, const std::string& name) {
  for (const ir::Env& env : program.envs) {
    if (env.name == name) return &env;
  }
  return nullptr;
}

std::string client_for(const ir::Env& env, const Options& options) {
  if (auto named = options.value("kubectl")) return *named;
  const char* first = env.cluster.platform == ir::Platform::openshift ? "oc" : "kubectl";
  return plan::find_on_path(first).value_or(plan::find_on_path("kubectl").value_or("kubectl"));
}

// The pod to forward to: named for a dev env, found by its labels for a run.
std::optional<std::string> pod_of(const std::string& client, const std::string& ns,
                                  const target::kube::PortForward& forward, bool dry_run) {
  if (!forward.pod.empty()) return forward.pod;
  std::vector<std::string> get = {client, "get", "pod",           "-n", ns, "-o",
                                  "name", "-l",  forward.selector};
  std::cerr << "$ " << plan::shell_words(get) << '\n';
  if (dry_run) return "RANK0_POD";  // found when it runs
  plan::RunResult found = plan::run_command(get, "", 60, true);
  std::string pod = found.output.substr(0, found.output.find('\n'));
  if (found.status != 0 || pod.empty()) {
    std::cerr << "mlenvc port-forward: no pod of rank 0 is running\n";
    return std::nullopt;
  }
  return pod;
}

}  // namespace

int run_port_forward(const Args& args) {
  Options options = parse_options(args, {"help", "h", "dry-run"}, {"kubectl"});
  if (options.flag("help") || options.flag("h")) {
    std::cout << kUsage;
    return 0;
  }
  if (!options.error.empty() || options.positional.size() < 2) {
    std::cerr << "mlenvc port-forward: "
              << (options.error.empty() ? "name a file and an env" : options.error) << '\n'
              << kUsage;
    return 1;
  }
  DiskFileSystem disk;
  auto compilation = compile(options.positional[0], disk);
  print_diagnostics(*compilation, false);
  if (!compilation->program) return 1;
  const ir::Env* env = find_env(*compilation->program, options.positional[1]);
  if (!env) {
    std::cerr << "mlenvc port-forward: no env `" << options.positional[1] << "` in "
              << options.positional[0] << '\n';
    return 1;
  }
  const target::EnvLayout layout = target::make_layout(*env);
  const std::vector<std::string> names(options.positional.begin() + 2, options.positional.end());
  const target::kube::PortForward forward = target::kube::port_forward(layout, names);
  if (forward.ports.empty()) {
    std::cerr << "mlenvc port-forward: env `" << env->name << "` runs none of these tools\n";
    return 1;
  }
  const bool dry_run = options.flag("dry-run");
  const std::string client = client_for(*env, options);
  std::optional<std::string> pod = pod_of(client, layout.namespace_name, forward, dry_run);
  if (!pod) return 1;
  std::vector<std::string> argv = {client, "port-forward", "-n", layout.namespace_name, *pod};
  for (int port : forward.ports) argv.push_back(std::to_string(port) + ":" + std::to_string(port));
  std::cerr << "$ " << plan::shell_words(argv) << '\n';
  if (dry_run) return 0;
  std::vector<char*> raw;
  for (std::string& word : argv) raw.push_back(word.data());
  raw.push_back(nullptr);
  ::execvp(raw[0], raw.data());
  std::cerr << "mlenvc port-forward: cannot run " << client << '\n';
  return 1;
}

}  // namespace mlenv::driver
