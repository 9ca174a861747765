// The Slurm target on IR fixtures: which files an env gets, what boot.json tells mlenv-boot,
// and that a value which could change a script's structure is reported (E0530), not written.
#include <catch2/catch.hpp>

#include "targets/slurm/sbatch.h"
#include "targets/slurm/slurm_target.h"

using namespace mlenv;

namespace {

ir::Env slurm_env(bool with_image) {
  ir::Env env;
  env.name = "ranks";
  env.kind = ir::EnvKind::run;
  env.cluster.name = "lab";
  env.cluster.platform = ir::Platform::slurm;
  env.cluster.slurm.partition = "cpu";
  env.nodes = 2;
  env.nproc_per_node = 1;
  env.command = {"python", "train.py"};
  env.on_host = !with_image;
  if (with_image) {
    env.image.name = "img";
    env.image.from = "nvcr.io/nvidia/pytorch:25.09-py3";
    env.image.tag = "v1";
  }
  return env;
}

const target::File* find(const target::Output& out, const std::string& path) {
  for (const target::File& f : out.files) {
    if (f.path == path) return &f;
  }
  return nullptr;
}

target::Output render(const ir::Env& env, Diagnostics& diagnostics) {
  ir::Program program;
  program.source = "lab.mlenv";
  program.envs.push_back(env);
  return target::slurm::SlurmTarget().render(program, diagnostics, target::Scope::Tree);
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("slurm.target: a host env gets a script, boot.json v3 and a logs directory") {
  Diagnostics diagnostics;
  target::Output out = render(slurm_env(false), diagnostics);
  REQUIRE_FALSE(diagnostics.has_errors());
  REQUIRE(find(out, "lab/ranks/ranks.sbatch"));
  REQUIRE(find(out, "lab/ranks/logs/.gitignore"));
  REQUIRE(find(out, "lab/ranks/plan.json"));
  CHECK_FALSE(find(out, "lab/ranks/Dockerfile"));
  CHECK(find(out, "_runtime/CMakeLists.txt"));
  const std::string& boot = find(out, "lab/ranks/boot.json")->content;
  CHECK(contains(boot, "\"format_version\": 3"));
  CHECK(contains(boot, "\"env\": \"SLURM_NODEID\""));
  CHECK(contains(boot, "\"host_env\": \"MLENV_RDZV_HOST\""));
  // A host has no /workspace or /run/mlenv to write into; the DeepSpeed hostfile goes to the
  // env directory's logs/, where mlenv-boot runs (the job's working directory).
  CHECK(contains(boot, "\"hostfile\": \"logs/hostfile\""));
  CHECK(contains(boot, "\"shell_env\": \"\""));
  CHECK(contains(find(out, "lab/ranks/plan.json")->content, "\"script\": \"ranks.sbatch\""));
  CHECK(out.stream.empty());
}

TEST_CASE("slurm.target: an env with an image runs in it through pyxis, with the cluster's dirs") {
  ir::Env env = slurm_env(true);
  env.cluster.slurm.workspace_dir = "/lustre/team";
  env.gpus = 8;
  env.cluster.gpus.per_node = 8;
  Diagnostics diagnostics;
  target::Output out = render(env, diagnostics);
  REQUIRE_FALSE(diagnostics.has_errors());
  const std::string& script = find(out, "lab/ranks/ranks.sbatch")->content;
  // pyxis runs the squashfs apply imported and passes as the second argument (by the image's
  // ID, under logs/.applied/), else the one imported by hand beside the script, which git
  // ignores: apply refuses a plan directory with untracked files (E0701).
  CHECK(contains(script, "image=${2:-'ranks.sqsh'}\n"));
  CHECK(contains(script, "--container-image=\"$envdir/$image\""));
  CHECK(find(out, "lab/ranks/.gitignore")->content == "/*.sqsh\n");
  const std::string& plan = find(out, "lab/ranks/plan.json")->content;
  CHECK(contains(plan, "\"image\": \"img:"));  // named after the image, which envs share
  CHECK(contains(plan, "\"dockerfile\": \"lab/ranks/Dockerfile\""));
  CHECK(contains(script, "mounts+=',/lustre/team:/workspace'\n"));
  CHECK(contains(script, "#SBATCH --gpus-per-node=8\n#SBATCH --exclusive\n"));
  CHECK(find(out, "lab/ranks/Dockerfile"));
  // The cluster's workspace_dir is shared by its envs: each env's hostfile is in its own logs/.
  CHECK(contains(find(out, "lab/ranks/boot.json")->content,
                 "\"hostfile\": \"/mlenv/logs/hostfile\""));
  CHECK_FALSE(find(out, "lab/ranks/workspace/.gitignore"));
}

TEST_CASE("slurm.target: DeepSpeed on Slurm gets a hostfile it can write and read, host or image") {
  // deepspeed/launcher/runner.py: fetch_hostfile(args.hostfile) finds no file, the resource
  // pool becomes localhost only, and `--num_nodes` > 1 raises "Num nodes is >1 but no extra
  // nodes available via hostfile". enroot mounts the image's root read-only unless
  // --container-writable (pyxis_slurmstepd.c, ENROOT_ROOTFS_WRITABLE), so the file must lie in a
  // mount: the env directory, mounted read-write at /mlenv, whose logs/ git ignores.
  for (bool with_image : {false, true}) {
    ir::Env env = slurm_env(with_image);
    env.command = {"deepspeed", "train.py"};
    env.launcher = "deepspeed";
    Diagnostics diagnostics;
    target::Output out = render(env, diagnostics);
    REQUIRE_FALSE(diagnostics.has_errors());
    const std::string& boot = find(out, "lab/ranks/boot.json")->content;
    CHECK(contains(boot, with_image ? "\"hostfile\": \"/mlenv/logs/hostfile\""
                                    : "\"hostfile\": \"logs/hostfile\""));
    const std::string& script = find(out, "lab/ranks/ranks.sbatch")->content;
    if (with_image) CHECK(contains(script, "mounts=\"$envdir\"':/mlenv'\n"));
    CHECK(contains(script, "envdir=$PWD\n"));
  }
}

TEST_CASE("slurm.target: an image env without workspace_dir mounts the env's own workspace/") {
  // Commands, the acceptance results and the DeepSpeed files name /workspace; pyxis mounts
  // nothing there unless told (--container-mounts).
  Diagnostics diagnostics;
  target::Output out = render(slurm_env(true), diagnostics);
  REQUIRE_FALSE(diagnostics.has_errors());
  const std::string& script = find(out, "lab/ranks/ranks.sbatch")->content;
  CHECK(contains(script, "mkdir -p \"$envdir\"/workspace\n"));
  CHECK(contains(script, "mounts+=,\"$envdir\"/workspace':/workspace'\n"));
  REQUIRE(find(out, "lab/ranks/workspace/.gitignore"));
  CHECK(find(out, "lab/ranks/workspace/.gitignore")->content == "*\n!.gitignore\n");
  // A host env has no container, hence no mount.
  Diagnostics host_diagnostics;
  target::Output host = render(slurm_env(false), host_diagnostics);
  CHECK_FALSE(contains(find(host, "lab/ranks/ranks.sbatch")->content, "/workspace"));
  CHECK_FALSE(find(host, "lab/ranks/workspace/.gitignore"));
}

TEST_CASE("slurm.target: resources { cpu, memory } are --cpus-per-task and --mem") {
  // sbatch(1): without -c each task gets one processor; --mem is MB per node (suffix M), and
  // --mem=0 is all of each node's memory, which a whole node (--exclusive) should have.
  ir::Env env = slurm_env(true);
  env.resources.cpu.text = "7.5";
  env.resources.whole_cpus = 8;
  env.resources.memory.text = "64Gi";
  env.resources.memory_mib = 65536;
  Diagnostics diagnostics;
  std::string script = find(render(env, diagnostics), "lab/ranks/ranks.sbatch")->content;
  CHECK(contains(script, "#SBATCH --cpus-per-task=8\n"));
  CHECK(contains(script, "#SBATCH --mem=65536M\n"));
  CHECK(contains(script, " --label --cpus-per-task=8 "));
  env.gpus = 8;
  env.cluster.gpus.per_node = 8;
  script = find(render(env, diagnostics), "lab/ranks/ranks.sbatch")->content;
  // A whole node: all of its memory and every CPU for its one task, whatever `resources` say.
  CHECK(contains(script, "#SBATCH --exclusive\n#SBATCH --mem=0\n"));
  CHECK_FALSE(contains(script, "--mem=65536M"));
  CHECK_FALSE(contains(script, "#SBATCH --cpus-per-task"));
  CHECK(contains(script, " --label --cpus-per-task=\"$SLURM_CPUS_ON_NODE\" "));
  env.resources = {};
  script = find(render(env, diagnostics), "lab/ranks/ranks.sbatch")->content;
  CHECK_FALSE(contains(script, "#SBATCH --cpus-per-task"));
  CHECK(contains(script, " --label --cpus-per-task=\"$SLURM_CPUS_ON_NODE\" "));
  CHECK_FALSE(diagnostics.has_errors());
}

TEST_CASE("slurm.target: a value sbatch or pyxis would split is E0530 and no script") {
  struct Case {
    const char* field;
    void (*set)(ir::Slurm&);
  };
  const Case cases[] = {
      {"partition", [](ir::Slurm& s) { s.partition = "cpu\n#SBATCH --uid=0"; }},
      {"account", [](ir::Slurm& s) { s.account = "a b"; }},
      {"time", [](ir::Slurm& s) { s.time = "$(reboot)"; }},
      {"workspace_dir", [](ir::Slurm& s) { s.workspace_dir = "/a,/etc:/x"; }},
  };
  for (const Case& c : cases) {
    CAPTURE(c.field);
    ir::Env env = slurm_env(true);
    c.set(env.cluster.slurm);
    Diagnostics diagnostics;
    target::Output out = render(env, diagnostics);
    REQUIRE(diagnostics.has_errors());
    CHECK(diagnostics.all().front().code == Code::E0530);
    CHECK(contains(diagnostics.all().front().message, c.field));
    CHECK_FALSE(find(out, "lab/ranks/ranks.sbatch"));
  }
}

TEST_CASE("slurm.target: with image.registry, apply pushes the image and the job runs its digest") {
  // apply pushes `<registry>/<image>:<tag>`, as the Kubernetes target does (one image for the
  // envs that run it, named after its declaration `img`, not the env `ranks`; plan.json's
  // `push`, after nothing: the env has no objects), and passes the pushed digest as the
  // script's second argument; enroot spells the image `<registry host>#<path>/<image>:<tag>`
  // (enroot's doc/cmd/import.md, `docker://[USER@][REGISTRY#]IMAGE[:TAG]`), which pyxis pulls
  // only when the script runs without apply.
  ir::Env env = slurm_env(true);
  env.image.registry = "registry.example.com:5000/team";
  Diagnostics diagnostics;
  target::Output out = render(env, diagnostics);
  REQUIRE_FALSE(diagnostics.has_errors());
  const std::string pushed = "registry.example.com:5000/team/img:v1";
  bool noted = false;
  for (const std::string& note : out.notes) noted = noted || contains(note, " " + pushed + " ");
  CHECK(noted);
  const std::string& script = find(out, "lab/ranks/ranks.sbatch")->content;
  CHECK(contains(script, "image=${2:-'registry.example.com:5000#team/img:v1'}\n"));
  CHECK(contains(script, "container=(--container-image=\"$image\" "));
  CHECK_FALSE(contains(script, "/ranks:"));
  const std::string& plan = find(out, "lab/ranks/plan.json")->content;
  CHECK(contains(plan, "      \"action\": \"push\",\n      \"after\": \"\",\n      \"image\": \"" +
                           pushed + "\",\n      \"dockerfile\": \"lab/ranks/Dockerfile\"\n"));
  CHECK_FALSE(find(out, "lab/ranks/.gitignore"));
}

TEST_CASE("slurm.target: an image's enroot URI, by tag or by digest") {
  using target::slurm::enroot_uri;
  CHECK(enroot_uri("registry.example.com:5000/team/ranks:v1") ==
        "registry.example.com:5000#team/ranks:v1");
  CHECK(enroot_uri("registry.example.com/ranks:v1") == "registry.example.com#ranks:v1");
  // The digest as the tag: enroot fetches `/v2/<image>/manifests/<tag>` and admits ':' in a tag
  // since 3.0.1 (NVIDIA/enroot 0a48a03, src/docker.sh); `@sha256:` parses only from 4.0.
  const std::string hex(64, 'a');
  CHECK(enroot_uri("registry.example.com:5000/team/ranks@sha256:" + hex) ==
        "registry.example.com:5000#team/ranks:sha256:" + hex);
}
