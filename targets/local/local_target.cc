#include "targets/local/local_target.h"

#include <algorithm>

#include "compiler/base/sha256.h"
#include "targets/common/assembly.h"
#include "targets/common/boot_json.h"
#include "targets/common/dockerfile.h"
#include "targets/common/plan_json.h"

namespace mlenv::target::local {
namespace {

// Every node is a process of this machine: rank 0 listens on loopback, where the others reach
// it. Its rendezvous and trainer ports are the env's own; no other node listens.
BootPlacement placement() {
  BootPlacement p;
  p.rank_env = kRankVariable;
  p.rendezvous_host = "127.0.0.1";
  // On the host: no /workspace or /run/mlenv, so no shell environment or hostfile is written
  // (two ranks of one machine would also write the same files).
  p.on_host = true;
  return p;
}

// The program's local envs, in program order.
std::vector<const ir::Env*> local_envs(const std::vector<const ir::Env*>& envs) {
  std::vector<const ir::Env*> out;
  for (const ir::Env* env : envs) {
    if (env->cluster.platform == ir::Platform::local) out.push_back(env);
  }
  return out;
}

// Every local env listens on this machine's one network namespace: rank 0's mlenv-boot on
// `rdzv_port` and its trainer's store on `master_port`. A port used twice, by one env or by
// two that run at once, fails at start (EADDRINUSE). `envs[i]` against itself and the earlier.
void check_ports(const std::vector<const ir::Env*>& envs, std::size_t i, Diagnostics& diagnostics) {
  const ir::Env& env = *envs[i];
  auto report = [&](int port, const std::string& other) {
    diagnostics.report(Code::E0423, env.port_clash_at().second,
                       "env `" + env.name + "`: port " + std::to_string(port) +
                           " is also the port of " + other + " on this machine",
                       "give each local env its own `rdzv_port` and `master_port`");
  };
  if (env.rdzv_port == env.master_port) report(env.rdzv_port, "its `master_port`");
  for (std::size_t j = 0; j < i; ++j) {
    for (int port : {env.rdzv_port, env.master_port}) {
      if (port == envs[j]->rdzv_port || port == envs[j]->master_port) {
        report(port, "env `" + envs[j]->name + "`");
        break;
      }
    }
  }
}

// debugpy listens on 127.0.0.1:5678 in a debug env's rank 0 (runtime/debugpy.h), and this
// machine has one such port: one local debug env at a time, and no env's own port on it.
void check_debugpy_port(const std::vector<const ir::Env*>& envs, std::size_t i,
                        Diagnostics& diagnostics) {
  const ir::Env& env = *envs[i];
  if (!env.debug) return;
  auto report = [&](const std::string& other) {
    diagnostics.report(Code::E0423, env.range,
                       "env `" + env.name + "`: debugpy's port " + std::to_string(kDebugpyPort) +
                           " is also " + other + " on this machine",
                       "set `debug = true` on one local env at a time, and give no env that port");
  };
  for (std::size_t j = 0; j <= i; ++j) {
    const ir::Env& other = *envs[j];
    if (j < i && other.debug) report("the debugpy port of env `" + other.name + "`");
    if (other.rdzv_port == kDebugpyPort || other.master_port == kDebugpyPort) {
      report("a port of env `" + other.name + "`");
    }
  }
}

// apply starts the nodes (PLAN_JSON.md): the env has no objects, so after nothing. An env
// with an image names it, its Dockerfile (from the plan directory, as a push does) and the
// cluster's `runtime`, which apply builds and runs it with.
PlanActions plan_actions(const EnvLayout& layout) {
  PlanActions steps;
  plan::PlanAction& start = steps.actions.emplace_back();
  start.action = "start";
  if (!layout.env->on_host && layout.env->cluster.runtime != "host") {
    start.image = layout.image_tag;
    start.dockerfile = layout.dir + "/Dockerfile";
    start.runtime = layout.env->cluster.runtime;
  }
  return steps;
}

// Where an env with an image runs depends on this machine: said once per env.
std::string image_note(const EnvLayout& layout) {
  const std::string& runtime = layout.env->cluster.runtime;
  if (runtime == "host")
    return "runs on this machine's host (cluster `runtime = host`), not in its image `" +
           layout.image_tag + "`";
  const std::string with = runtime.empty() ? "the first of podman and docker on PATH" : runtime;
  return "runs in its image `" + layout.image_tag + "`, which apply builds, with " + with +
         " (one container per node, host network); on the host where none is found";
}

// How apply builds the image, for the Dockerfile's header.
std::string build_command(const EnvLayout& layout) {
  const std::string& runtime = layout.env->cluster.runtime;
  return (runtime == "docker" ? "docker" : "podman") +
         std::string(" build -f <this Dockerfile> -t ") + layout.image_tag + " <output root>";
}

// `envs` are the program's local envs, `layout` the one of envs[i].
EnvOutput render_env(const EnvLayout& layout, const std::vector<const ir::Env*>& envs,
                     std::size_t i, const PlanContext& context, bool tree) {
  const ir::Env& env = *layout.env;
  EnvOutput out;
  check_ports(envs, i, out.diagnostics);
  check_debugpy_port(envs, i, out.diagnostics);
  if (!env.on_host) out.notes.push_back({layout.dir, image_note(layout)});
  if (!tree || out.diagnostics.has_errors()) return out;
  std::vector<PlannedFile> listed;
  auto add_file = [&](std::string name, std::string bytes) {
    listed.push_back({name, sha256_hex(bytes)});
    out.files.push_back({layout.dir + "/" + name, std::move(bytes)});
  };
  add_file("boot.json", boot_json(layout, placement()));
  if (!env.on_host && env.cluster.runtime != "host")
    add_file("Dockerfile", dockerfile(layout, build_command(layout)));
  // Makes run/ part of the tree and keeps the pids, logs and token apply writes out of git.
  add_file(std::string(kRunDir) + "/.gitignore", "*\n!.gitignore\n");
  std::sort(listed.begin(), listed.end(),
            [](const auto& a, const auto& b) { return a.path < b.path; });
  out.files.push_back(
      {layout.dir + "/plan.json", plan_json(layout, context, {}, listed, plan_actions(layout))});
  return out;
}

// What apply needs on this machine.
const char* const kBootNote =
    "apply runs mlenv-boot from PATH or the path in MLENV_BOOT: build it once from the output "
    "tree's _runtime/ (cmake -S _runtime -B build && cmake --build build --target mlenv-boot)";

}  // namespace

std::vector<std::string> LocalTarget::check(const ir::Program& program,
                                            Diagnostics& diagnostics) const {
  std::vector<const ir::Env*> all;
  for (const ir::Env& env : program.envs) all.push_back(&env);
  const std::vector<const ir::Env*> envs = local_envs(all);
  for (std::size_t i = 0; i < envs.size(); ++i) check_ports(envs, i, diagnostics);
  return grouped(std::vector<Note>(envs.empty() ? 0 : 1, Note{"", kBootNote}));
}

Output LocalTarget::render(const ir::Program& program, Diagnostics& diagnostics,
                           Scope scope) const {
  auto render_one = [](const std::vector<EnvLayout>& layouts, std::size_t i,
                       const PlanContext& context, bool tree) {
    std::vector<const ir::Env*> all;
    for (const EnvLayout& layout : layouts) all.push_back(layout.env);
    const std::vector<const ir::Env*> envs = local_envs(all);
    const std::size_t at = static_cast<std::size_t>(
        std::find(envs.begin(), envs.end(), layouts[i].env) - envs.begin());
    EnvOutput out = render_env(layouts[i], envs, at, context, tree);
    out.notes.push_back({"", kBootNote});
    return out;
  };
  return render_program(program, ir::Platform::local, scope, diagnostics, render_one);
}

}  // namespace mlenv::target::local
