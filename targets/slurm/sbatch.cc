#include "targets/slurm/sbatch.h"

#include <algorithm>

#include "compiler/base/shell.h"

namespace mlenv::target::slurm {

bool safe_sbatch_value(std::string_view value) {
  // sbatch reads `#SBATCH` lines with its own tokenizer (src/sbatch/opt.c, _get_argument):
  // whitespace ends a value and quotes are removed, so only plain characters are allowed; `,`
  // separates the partitions of a list (`--partition=gpu,gpu-long`).
  return !value.empty() && std::all_of(value.begin(), value.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '_' || c == '.' || c == ':' || c == '%' || c == '/' || c == ',';
  });
}

bool safe_mount_path(std::string_view path) {
  // pyxis splits --container-mounts at ',' and each entry at ':' (SRC:DST[:FLAGS]).
  return path.starts_with('/') && path.find_first_of(",:\n") == std::string_view::npos;
}

namespace {

void directive(std::string& s, std::string_view option, std::string_view value) {
  s += "#SBATCH --";
  s += option;
  if (!value.empty()) {
    s += '=';
    s += value;
  }
  s += '\n';
}

std::string directives(const BatchJob& job) {
  std::string s;
  directive(s, "job-name", job.job_name);
  directive(s, "partition", job.partition);
  if (!job.account.empty()) directive(s, "account", job.account);
  if (!job.qos.empty()) directive(s, "qos", job.qos);
  if (!job.time.empty()) directive(s, "time", job.time);
  directive(s, "nodes", std::to_string(job.nodes));
  directive(s, "ntasks-per-node", "1");
  if (job.gpus_per_node > 0) directive(s, "gpus-per-node", std::to_string(job.gpus_per_node));
  if (job.cpus_per_task > 0) directive(s, "cpus-per-task", std::to_string(job.cpus_per_task));
  if (job.exclusive) {
    directive(s, "exclusive", "");
    directive(s, "mem", "0");
  } else if (job.mem_mib > 0) {
    directive(s, "mem", std::to_string(job.mem_mib) + "M");
  }
  directive(s, "output", job.logs_dir + "/%x-%j.out");
  directive(s, "error", job.logs_dir + "/%x-%j.err");
  return s;
}

// The job runs a copy of this script from slurmd's spool, so files beside it are found through
// the job's working directory: where it was submitted from, or `sbatch --chdir`. Every node
// must see it (a shared file system, as home and project directories are on Slurm clusters).
// mlenvc apply passes the copy of boot.json it checked as the first argument, so a job that
// waited in the queue runs that one, not what a later plan wrote (compiler/plan/apply/slurm_pin.h).
std::string find_config(const BatchJob& job) {
  std::string s;
  s += "envdir=$PWD\n";
  s += "config=${1:-" + shell_quote(job.config) + "}\n";
  s += "case $config in\n";
  s +=
      "  /* | *..*) echo \"mlenv: $config is not a file of the env's directory\" >&2; exit 78 ;;\n";
  s += "esac\n";
  s += "if [ ! -r \"$envdir/$config\" ]; then\n";
  s += "  echo \"mlenv: no $config in $envdir: submit from the env's directory\" >&2\n";
  s += "  exit 78\n";
  s += "fi\n";
  return s;
}

// Rank 0's address is Slurm's NodeAddr of the job's first node, never the node name: names
// need not resolve (and on a test cluster every node is 127.0.0.1 with its own port).
// Each scontrol's whole output is read into a variable and cut in bash: under `pipefail` a
// reader that stops early (`| head -n 1`) kills scontrol, which prints one name at a time
// through stdio (SchedMD/slurm src/scontrol/scontrol.c, `_show_it` → `scontrol_print_hosts`),
// with SIGPIPE once the list outgrows one buffer, and the job ends with status 141 and no
// message (issue 31 item 4).
std::string rendezvous_host() {
  return "nodes=$(scontrol show hostnames \"$SLURM_JOB_NODELIST\")\n"
         "first=${nodes%%$'\\n'*}\n"
         "node=$(scontrol show node \"$first\")\n"
         "MLENV_RDZV_HOST=\n"
         "if [[ $node =~ (^|[[:space:]])NodeAddr=([^[:space:]]+) ]]; then\n"
         "  MLENV_RDZV_HOST=${BASH_REMATCH[2]}\n"
         "fi\n"
         "if [ -z \"$MLENV_RDZV_HOST\" ]; then\n"
         "  echo \"mlenv: Slurm shows no NodeAddr for node $first\" >&2\n"
         "  exit 1\n"
         "fi\n"
         "export MLENV_RDZV_HOST\n";
}

// pyxis mounts the env directory (boot.json, and logs/ for results) and the cluster's host
// paths into the image.
std::string container_options(const BatchJob& job) {
  std::string s;
  s += "case $envdir in\n";
  s += "  *[,:]*) echo \"mlenv: pyxis cannot mount $envdir (',' or ':')\" >&2; exit 78 ;;\n";
  s += "esac\n";
  s += "mounts=\"$envdir\"" + shell_quote(":" + std::string(kContainerEnvDir)) + "\n";
  for (const Mount& m : job.mounts) {
    if (!m.source.empty()) {
      s += "mounts+=" + shell_quote("," + m.source + ":" + m.target) + "\n";
      continue;
    }
    const std::string dir = "\"$envdir\"/" + std::string(kEnvWorkspaceDir);
    s += "mkdir -p " + dir + "\n";
    s += "mounts+=," + dir + shell_quote(":" + m.target) + "\n";
  }
  // mlenvc apply passes the image it built as the second argument: the squashfs it imported,
  // named by the image's ID, or the image it pushed, by its digest. A job that waited in the
  // queue runs the image apply built for it, never one a later build moved the tag to.
  s += "image=${2:-" + shell_quote(job.container_image) + "}\n";
  std::string image = "\"$image\"";
  if (job.squashfs_in_envdir) {
    s += "case $image in\n";
    s += "  /* | *..*) echo \"mlenv: $image is not a file of the env's directory\" >&2; exit 78 "
         ";;\n";
    s += "esac\n";
    image = "\"$envdir/$image\"";
  }
  s += "container=(--container-image=" + image +
       " --container-mounts=\"$mounts\" --no-container-entrypoint)\n";
  return s;
}

// The run's secret (runtime/BOOT_CONFIG.md, the job token): made when the job starts and
// handed by srun to this job's tasks only, in their environment, never written to a file.
// boot.json lies on the shared file system, so anything derived from it would admit anyone.
std::string job_token() {
  return "MLENV_JOB_TOKEN=$(od -An -N32 -tx1 /dev/urandom | tr -d ' \\n')\n"
         "export MLENV_JOB_TOKEN\n";
}

std::string launch(const BatchJob& job) {
  const bool container = !job.container_image.empty();
  std::string s;
  if (container) {
    s += container_options(job);
    s += "rundir=" + shell_quote(kContainerEnvDir) + "\n";
    s += "boot=mlenv-boot\n";
  } else {
    // On the host, mlenv-boot is the one MLENV_BOOT names or the one on PATH.
    s += "rundir=$envdir\n";
    s += "boot=${MLENV_BOOT:-mlenv-boot}\n";
  }
  s += "args=(--config \"$rundir/$config\")\n";
  if (job.nccl_check) {
    // results.json beside the job's logs; rank 0 also prints it as its MLENV_RESULTS line.
    s += "args+=(--nccl-check --results \"$rundir\"/" + shell_quote(job.logs_dir) +
         "/\"$SLURM_JOB_NAME-$SLURM_JOB_ID.results.json\")\n";
  }
  // --label puts the task number, which is the node rank here, before each line of the job's
  // log (`0: ...`): `mlenvc logs` shows each rank's lines from the one file Slurm writes.
  s += "\n# One mlenv-boot per node; each takes its node rank from SLURM_NODEID.\n";
  s += "exec srun --nodes=" + std::to_string(job.nodes) + " --ntasks=" + std::to_string(job.nodes) +
       " --ntasks-per-node=1 --kill-on-bad-exit=1 --label";
  // Said again to srun: Slurm 22.05 to 23.02 steps do not inherit the job's -c, and a whole
  // node's one task takes every CPU the job got there.
  if (job.cpus_per_task > 0) {
    s += " --cpus-per-task=" + std::to_string(job.cpus_per_task);
  } else if (job.exclusive) {
    s += " --cpus-per-task=\"$SLURM_CPUS_ON_NODE\"";
  }
  if (container) s += " \"${container[@]}\"";
  s += " \"$boot\" \"${args[@]}\"\n";
  return s;
}

}  // namespace

std::string batch_script(const BatchJob& job) {
  std::string s = "#!/bin/bash\n";
  s += "# Written by mlenvc: the job of env " + job.title + ". Submit it from this directory\n";
  s += "# (`sbatch " + job.job_name + ".sbatch`, or mlenvc apply); logs go to " + job.logs_dir +
       "/.\n";
  s += directives(job);
  s += "set -euo pipefail\n\n";
  s += find_config(job);
  s += "\n";
  s += rendezvous_host();
  s += job_token();
  s += launch(job);
  return s;
}

std::string enroot_uri(std::string_view image) {
  // enroot splits `docker://[USER@][REGISTRY#]IMAGE[:TAG]` at '#' and fetches
  // `/v2/IMAGE/manifests/TAG`; since 3.0.1 a TAG may hold ':' ("Allow specifying digests in
  // Docker tags", NVIDIA/enroot 0a48a03, src/docker.sh `reg_tag="[[:alnum:]._:-]+"`), so the
  // TAG `sha256:<hex>` fetches the manifest by its digest. `IMAGE@sha256:<hex>` parses only
  // from enroot 4.0 (docker::_parse_uri), and pyxis passes the image to enroot as it is
  // (NVIDIA/pyxis pyxis_slurmstepd.c, enroot_container_create: `docker://%s`).
  std::string uri(image);
  if (std::size_t at = uri.find("@sha256:"); at != std::string::npos) uri[at] = ':';
  if (std::size_t slash = uri.find('/'); slash != std::string::npos) uri[slash] = '#';
  return uri;
}

}  // namespace mlenv::target::slurm
