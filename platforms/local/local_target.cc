#include "platforms/local/local_target.h"

#include <algorithm>

#include "compiler/base/sha256.h"
#include "platforms/common/assembly.h"
#include "platforms/common/boot_json.h"
#include "platforms/common/plan_json.h"

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

// Rank 0 runs mlenv-boot's rendezvous listener and the trainer's store on one address, so the
// same port for both fails at start (EADDRINUSE), as on every platform.
void check_ports(const ir::Env& env, Diagnostics& diagnostics) {
  if (env.rdzv_port != env.master_port) return;
  diagnostics.report(Code::E0423, env.range,
                     "env `" + env.name + "`: `rdzv_port` " + std::to_string(env.rdzv_port) +
                         " is also the port of `master_port`",
                     "choose another `rdzv_port`");
}

// apply starts the nodes (PLAN_JSON.md): the env has no objects, so after nothing.
PlanActions plan_actions() {
  PlanActions steps;
  Value& start = steps.actions.push(Value::map());
  start.set("action", "start");
  start.set("after", "");
  return steps;
}

// Running an env in its image is not done yet: say so rather than silently differ.
std::string image_note(const EnvLayout& layout) {
  return "runs on this machine's host with the mlenv-boot of PATH or MLENV_BOOT, not in its "
         "image `" +
         layout.image_tag + "` (containers are not supported on platform local yet)";
}

EnvOutput render_env(const EnvLayout& layout, const PlanContext& context, bool tree) {
  const ir::Env& env = *layout.env;
  EnvOutput out;
  check_ports(env, out.diagnostics);
  if (!env.on_host) out.notes.push_back({layout.dir, image_note(layout)});
  if (!tree || out.diagnostics.has_errors()) return out;
  std::vector<PlannedFile> listed;
  auto add_file = [&](std::string name, std::string bytes) {
    listed.push_back({name, sha256_hex(bytes)});
    out.files.push_back({layout.dir + "/" + name, std::move(bytes)});
  };
  add_file("boot.json", boot_json(layout, placement()));
  // Makes run/ part of the tree and keeps the pids, logs and token apply writes out of git.
  add_file(std::string(kRunDir) + "/.gitignore", "*\n!.gitignore\n");
  std::sort(listed.begin(), listed.end(),
            [](const auto& a, const auto& b) { return a.path < b.path; });
  out.files.push_back(
      {layout.dir + "/plan.json", plan_json(layout, context, {}, listed, plan_actions())});
  return out;
}

// What apply needs on this machine.
const char* const kBootNote =
    "apply runs mlenv-boot from PATH or the path in MLENV_BOOT: build it once from the output "
    "tree's _runtime/ (cmake -S _runtime -B build && cmake --build build --target mlenv-boot)";

}  // namespace

std::vector<std::string> LocalTarget::check(const ir::Program& program,
                                            Diagnostics& diagnostics) const {
  std::vector<Note> notes;
  for (const ir::Env& env : program.envs) {
    check_ports(env, diagnostics);
    notes.push_back({"", kBootNote});
  }
  return grouped(notes);
}

Output LocalTarget::render(const ir::Program& program, Diagnostics& diagnostics,
                           Scope scope) const {
  auto render_one = [](const std::vector<EnvLayout>& layouts, std::size_t i,
                       const PlanContext& context, bool tree) {
    EnvOutput out = render_env(layouts[i], context, tree);
    out.notes.push_back({"", kBootNote});
    return out;
  };
  return render_program(program, ir::Platform::local, scope, diagnostics, render_one);
}

}  // namespace mlenv::target::local
