#include "targets/slurm/slurm_target.h"

#include <algorithm>

#include "compiler/base/sha256.h"
#include "targets/common/assembly.h"
#include "targets/common/boot_json.h"
#include "targets/common/dockerfile.h"
#include "targets/common/plan_json.h"
#include "targets/slurm/sbatch.h"

namespace mlenv::target::slurm {

std::string script_name(const ir::Env& env) {
  return env.name + ".sbatch";
}

namespace {

// Where pyxis mounts the cluster's host directories, as on the other platforms.
constexpr const char* kWorkspace = "/workspace";
constexpr const char* kDatasets = "/datasets";

// The image apply pushes for an env with `image.registry`: `<registry>/<image>:<tag>`, once
// for the envs that run it, the Kubernetes target's name too (one image per declaration).
std::string pushed_image(const EnvLayout& layout) {
  return layout.env->image.registry + "/" + layout.image_tag;
}

BatchJob batch_job(const EnvLayout& layout) {
  const ir::Env& env = *layout.env;
  const ir::Slurm& slurm = env.cluster.slurm;
  BatchJob job;
  job.title = layout.dir;
  job.job_name = env.name;
  job.partition = slurm.partition;
  job.account = slurm.account;
  job.qos = slurm.qos;
  job.time = slurm.time;
  job.nodes = env.nodes;
  job.gpus_per_node = env.gpus;
  // An env asking for every GPU of a node takes the whole node: nothing else shares its
  // NICs, memory bandwidth or NVLink.
  job.exclusive = env.gpus > 0 && env.gpus == env.cluster.gpus.per_node;
  // Without -c every task gets one CPU (sbatch(1), --cpus-per-task), and the one task per node
  // runs every worker, data loader and NCCL proxy thread; without --mem the partition's
  // default applies. A whole node is all of its CPUs and memory: --mem=0 (sbatch(1), --mem).
  job.cpus_per_task = job.exclusive ? 0 : env.resources.whole_cpus;
  job.mem_mib = job.exclusive ? 0 : env.resources.memory_mib;
  job.logs_dir = kLogsDir;
  job.config = "boot.json";
  job.nccl_check = env.kind == ir::EnvKind::acceptance;
  if (env.on_host) return job;
  if (env.image.registry.empty()) {
    job.container_image = env.name + ".sqsh";
    job.squashfs_in_envdir = true;
  } else {
    // By its tag only when the script runs without apply's argument, the pushed digest.
    job.container_image = enroot_uri(pushed_image(layout));
  }
  // Commands and the DeepSpeed files point at /workspace: without the cluster's workspace_dir
  // the env directory's own workspace/ (shared by every node, as the env directory is) is it.
  job.mounts.push_back({slurm.workspace_dir, kWorkspace});
  if (!slurm.datasets_dir.empty()) job.mounts.push_back({slurm.datasets_dir, kDatasets});
  return job;
}

// Rank 0's node runs mlenv-boot's rendezvous listener and the trainer's store (MASTER_PORT) side
// by side in one network namespace, so the same port for both fails at start (EADDRINUSE).
void check_ports(const ir::Env& env, Diagnostics& diagnostics) {
  if (env.rdzv_port != env.master_port) return;
  const auto [field, at] = env.port_clash_at();
  const std::string other = field == std::string("rdzv_port") ? "master_port" : "rdzv_port";
  diagnostics.report(Code::E0423, at,
                     "env `" + env.name + "`: `" + field + "` " + std::to_string(env.rdzv_port) +
                         " is also the port of `" + other + "`",
                     "choose another `" + std::string(field) + "`");
}

// The values the language already restricts (cluster.mlenv's patterns), checked again where
// they meet a script: a value that could change the script's structure is never written.
void check_script_values(const ir::Env& env, Diagnostics& diagnostics) {
  const ir::Slurm& slurm = env.cluster.slurm;
  auto bad = [&](const char* field, const char* why) {
    diagnostics.report(Code::E0530, env.cluster.range,
                       std::string("cluster `") + env.cluster.name + "` field `" + field +
                           "` cannot be written into a batch script: " + why);
  };
  if (!safe_sbatch_value(slurm.partition)) bad("partition", "not a plain name");
  const std::pair<const char*, const std::string*> optional[] = {
      {"account", &slurm.account}, {"qos", &slurm.qos}, {"time", &slurm.time}};
  for (const auto& [field, value] : optional) {
    if (!value->empty() && !safe_sbatch_value(*value)) bad(field, "not a plain name");
  }
  const std::pair<const char*, const std::string*> paths[] = {
      {"workspace_dir", &slurm.workspace_dir}, {"datasets_dir", &slurm.datasets_dir}};
  for (const auto& [field, value] : paths) {
    if (!value->empty() && !safe_mount_path(*value)) {
      bad(field, "pyxis mounts need an absolute path without ',' or ':'");
    }
  }
}

// apply submits the script (PLAN_JSON.md): the env has no objects, so after nothing. An image
// mlenvc builds (no `image.registry`) is built and imported by apply first: `image` is its
// local name, `dockerfile` its Dockerfile relative to the output root. An image at
// `image.registry` is built and pushed first (`push`, as on Kubernetes), and the job runs it
// by the pushed digest.
PlanActions plan_actions(const EnvLayout& layout) {
  const ir::Env& env = *layout.env;
  PlanActions steps;
  if (!env.on_host && !env.image.registry.empty()) {
    plan::PlanAction& push = steps.actions.emplace_back();
    push.action = "push";
    push.image = pushed_image(layout);
    push.dockerfile = layout.dir + "/Dockerfile";
  }
  plan::PlanAction& submit = steps.actions.emplace_back();
  submit.action = "submit";
  submit.script = script_name(env);
  if (!env.on_host && env.image.registry.empty()) {
    submit.image = layout.image_tag;
    submit.dockerfile = layout.dir + "/Dockerfile";
  }
  return steps;
}

// The command that builds the env's image from the output root, from `dockerfile`.
std::string build_command(const EnvLayout& layout, const std::string& dockerfile) {
  return "podman build -f " + dockerfile + " -t " + layout.image_tag + " <output root>";
}

// How the env's image reaches the nodes, for the people who run the build.
std::string image_note(const EnvLayout& layout) {
  const ir::Env& env = *layout.env;
  if (!env.image.registry.empty()) {
    return "mlenvc apply builds and pushes " + pushed_image(layout) +
           " and the job runs it by the pushed digest (podman, buildah or docker where apply "
           "runs; pyxis pulls it on the nodes)";
  }
  const std::string build = build_command(layout, layout.dir + "/Dockerfile");
  return "mlenvc apply builds the image and imports it for pyxis into " + layout.dir +
         "/logs/.applied/ (by hand: " + build + " && enroot import -o " + layout.dir + "/" +
         env.name + ".sqsh podman://" + layout.image_tag + ")";
}

// Where mlenv-boot finds its rank and rank 0 on Slurm: SLURM_NODEID, and the NodeAddr of the
// job's first node, which the script exports.
BootPlacement placement(const ir::Env& env) {
  BootPlacement p;
  p.rank_env = "SLURM_NODEID";
  p.rendezvous_host_env = "MLENV_RDZV_HOST";
  p.on_host = env.on_host;
  // DeepSpeed's runner reads the world from the hostfile and, without one, refuses more than
  // one node (deepspeed/launcher/runner.py: "Num nodes is >1 but no extra nodes available via
  // hostfile"). Each env's own logs/ directory is writable (enroot mounts the image read-only
  // without --container-writable), out of git, and not shared with other envs the way a
  // cluster's workspace_dir is; on the host mlenv-boot runs in the env directory.
  const std::string logs = kLogsDir;
  const std::string dir = env.on_host ? logs : std::string(kContainerEnvDir) + "/" + logs;
  p.hostfile = dir + "/hostfile";
  // Beside it, not in a workspace_dir the cluster's envs share; none on a host, as before.
  if (!env.on_host) p.deepspeed_env = dir + "/.deepspeed_env";
  return p;
}

EnvOutput render_env(const EnvLayout& layout, const PlanContext& context, bool tree) {
  const ir::Env& env = *layout.env;
  EnvOutput out;
  check_script_values(env, out.diagnostics);
  check_ports(env, out.diagnostics);
  if (!env.on_host) out.notes.push_back({layout.dir, image_note(layout)});
  if (!tree || out.diagnostics.has_errors()) return out;
  std::vector<PlannedFile> listed;
  auto add_file = [&](std::string name, std::string bytes) {
    listed.push_back({name, sha256_hex(bytes)});
    out.files.push_back({layout.dir + "/" + name, std::move(bytes)});
  };
  add_file(script_name(env), batch_script(batch_job(layout)));
  add_file("boot.json", boot_json(layout, placement(env)));
  // Slurm does not create the directory of --output; this file makes it part of the tree and
  // keeps the job logs out of git.
  add_file(std::string(kLogsDir) + "/.gitignore", "*\n!.gitignore\n");
  if (!env.on_host && env.cluster.slurm.workspace_dir.empty()) {
    add_file(std::string(kEnvWorkspaceDir) + "/.gitignore", "*\n!.gitignore\n");
  }
  if (!env.on_host)
    add_file("Dockerfile", dockerfile(layout, build_command(layout, "<this Dockerfile>")));
  // A squashfs imported by hand beside the script stays out of git (apply refuses a plan
  // directory with untracked files); apply imports into logs/.applied/.
  if (!env.on_host && env.image.registry.empty()) add_file(".gitignore", "/*.sqsh\n");
  std::sort(listed.begin(), listed.end(),
            [](const auto& a, const auto& b) { return a.path < b.path; });
  out.files.push_back(
      {layout.dir + "/plan.json", plan_json(layout, context, {}, listed, plan_actions(layout))});
  return out;
}

// What every node needs before an env without an image runs.
const char* const kHostNote =
    "envs without an image run the mlenv-boot of each node's PATH, or the one MLENV_BOOT names "
    "(sbatch passes the environment): build it once on a shared file system from the output "
    "tree's _runtime/ (cmake -S _runtime -B build && cmake --build build --target mlenv-boot)";

}  // namespace

std::vector<std::string> SlurmTarget::check(const ir::Program& program,
                                            Diagnostics& diagnostics) const {
  std::vector<Note> notes;
  for (const ir::Env& env : program.envs) {
    check_script_values(env, diagnostics);
    check_ports(env, diagnostics);
    if (env.on_host) notes.push_back({"", kHostNote});
  }
  return grouped(notes);
}

Output SlurmTarget::render(const ir::Program& program, Diagnostics& diagnostics,
                           Scope scope) const {
  auto render_one = [](const std::vector<EnvLayout>& layouts, std::size_t i,
                       const PlanContext& context, bool tree) {
    EnvOutput out = render_env(layouts[i], context, tree);
    if (layouts[i].env->on_host) out.notes.push_back({"", kHostNote});
    return out;
  };
  return render_program(program, ir::Platform::slurm, scope, diagnostics, render_one);
}

}  // namespace mlenv::target::slurm
