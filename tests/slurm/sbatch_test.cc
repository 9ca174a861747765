// The batch script writer: what each `#SBATCH` line and the srun line say, and that no value
// can change the script's structure (bash itself reads the values back).
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "compiler/base/shell.h"
#include "targets/slurm/sbatch.h"

using namespace mlenv::target::slurm;
using mlenv::shell_quote;

namespace {

BatchJob cpu_job() {
  BatchJob job;
  job.title = "lab/trainer";
  job.job_name = "trainer";
  job.partition = "cpu";
  job.nodes = 2;
  job.logs_dir = "logs";
  job.config = "boot.json";
  return job;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

struct BashRun {
  int status = -1;  ///< bash's exit status, or 128 + the signal that ended it
  std::string out;
};

// Runs `script` with bash.
BashRun bash_run(const std::string& script) {
  char path[] = "/tmp/mlenv-sbatch-test.XXXXXX";
  int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  FILE* f = fdopen(fd, "w");
  std::fputs(script.c_str(), f);
  std::fclose(f);
  BashRun run;
  FILE* p = popen(("bash " + std::string(path)).c_str(), "r");
  REQUIRE(p != nullptr);
  char buffer[4096];
  std::size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, p)) > 0) run.out.append(buffer, n);
  int status = pclose(p);
  std::remove(path);
  if (WIFEXITED(status)) run.status = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) run.status = 128 + WTERMSIG(status);
  return run;
}

// Runs `script` with bash and returns its stdout.
std::string bash_output(const std::string& script) {
  BashRun run = bash_run(script);
  CHECK(run.status == 0);
  return run.out;
}

const char* const kHostile[] = {"it's",           "a\"b",        "$(touch /tmp/mlenv-pwned)",
                                "`id`",           "line\nbreak", "end'; rm -rf /",
                                "${HOME}",        "back\\slash", "'\"'\"'",
                                "tab\there",      "*",           "-n",
                                "\n#SBATCH --x=1"};

}  // namespace

TEST_CASE("slurm.sbatch: directives say nodes, one task per node, logs, no gpus on CPU jobs") {
  std::string s = batch_script(cpu_job());
  CHECK(s.starts_with("#!/bin/bash\n"));
  CHECK(contains(s, "#SBATCH --job-name=trainer\n"));
  CHECK(contains(s, "#SBATCH --partition=cpu\n"));
  CHECK(contains(s, "#SBATCH --nodes=2\n"));
  CHECK(contains(s, "#SBATCH --ntasks-per-node=1\n"));
  CHECK(contains(s, "#SBATCH --output=logs/%x-%j.out\n"));
  CHECK(contains(s, "#SBATCH --error=logs/%x-%j.err\n"));
  CHECK_FALSE(contains(s, "--gpus-per-node"));
  CHECK_FALSE(contains(s, "--exclusive"));
  CHECK_FALSE(contains(s, "--account"));
  CHECK_FALSE(contains(s, "--container-image"));
  CHECK(contains(s, "boot=${MLENV_BOOT:-mlenv-boot}\n"));
  CHECK(
      contains(s, " --ntasks-per-node=1 --kill-on-bad-exit=1 --label \"$boot\" \"${args[@]}\"\n"));
}

// The script's lines that find rank 0's address: from the line that asks for the job's node
// names to the export of MLENV_RDZV_HOST.
std::string node_lookup(const std::string& script) {
  std::size_t ask = script.find("scontrol show hostnames");
  REQUIRE(ask != std::string::npos);
  std::size_t begin = script.rfind('\n', ask) + 1;
  std::string_view end_line = "export MLENV_RDZV_HOST\n";
  std::size_t end = script.find(end_line, begin);
  REQUIRE(end != std::string::npos);
  return script.substr(begin, end + end_line.size() - begin);
}

// What mlenv-boot is started with: the script's lines from `envdir=` to srun, run by bash with
// srun replaced by printing its arguments.
std::string srun_arguments(const std::string& script) {
  std::string body = script.substr(script.find("envdir=$PWD"));
  std::string lookup = node_lookup(body);
  body.erase(body.find(lookup), lookup.size());
  std::string run =
      "unset MLENV_BOOT && cd /tmp && : >boot.json && SLURM_JOB_NAME=ranks "
      "SLURM_JOB_ID=7 && "
      "srun() { printf '%s\\n' \"$@\"; }\n";
  std::size_t exec = body.find("exec srun");
  return bash_output(run + body.substr(0, exec) + body.substr(exec + 5));
}

TEST_CASE("slurm.sbatch: srun starts mlenv-boot once per node with boot.json beside the script") {
  std::string host = srun_arguments(batch_script(cpu_job()));
  CHECK(host ==
        "--nodes=2\n--ntasks=2\n--ntasks-per-node=1\n--kill-on-bad-exit=1\n--label\nmlenv-boot\n"
        "--config\n/tmp/boot.json\n");
  BatchJob acceptance = cpu_job();
  acceptance.nccl_check = true;
  acceptance.container_image = "registry#team/img:1";
  std::string in_image = srun_arguments(batch_script(acceptance));
  CHECK(contains(in_image, "--container-image=registry#team/img:1\n"));
  CHECK(contains(in_image, "--container-mounts=/tmp:/mlenv\n"));
  CHECK(contains(in_image,
                 "mlenv-boot\n--config\n/mlenv/boot.json\n--nccl-check\n--results\n"
                 "/mlenv/logs/ranks-7.results.json\n"));
}

// A stand-in scontrol that answers as Slurm's does: `show hostnames` prints one name a line
// through stdio (SchedMD/slurm src/scontrol/scontrol.c, `_show_it` → `scontrol_print_hosts`),
// the first name at once and the rest after a pause, as a large list reaches its reader in
// several buffers; `show node` prints a record whose NodeAddr is the node's address.
constexpr const char* kStandInScontrol = R"(#!/bin/bash
case "$1 $2" in
  "show hostnames")
    echo node0000
    sleep 0.3
    seq -f 'node%04g' 1 1023 ;;
  "show node")
    printf 'NodeName=%s Arch=x86_64 CoresPerSocket=1\n' "$3"
    printf '   NodeAddr=10.0.0.7 NodeHostName=%s Version=23.02.7\n' "$3" ;;
  *) exit 2 ;;
esac
)";

// Issue 31 item 4: under `set -o pipefail`, `scontrol show hostnames | head -n 1` ended large
// jobs with status 141 (scontrol killed by SIGPIPE once head had gone); the lookup must read
// the whole list.
TEST_CASE("slurm.sbatch: a 1,024-node job finds rank 0's NodeAddr under pipefail") {
  char dir[] = "/tmp/mlenv-scontrol.XXXXXX";
  REQUIRE(mkdtemp(dir) != nullptr);
  const std::string scontrol = std::string(dir) + "/scontrol";
  {
    std::ofstream out(scontrol);
    out << kStandInScontrol;
  }
  REQUIRE(chmod(scontrol.c_str(), 0755) == 0);
  BatchJob job = cpu_job();
  job.nodes = 1024;
  BashRun run =
      bash_run("set -euo pipefail\nPATH=" + std::string(dir) +
               ":$PATH\nSLURM_JOB_NODELIST='node[0000-1023]'\n" + node_lookup(batch_script(job)) +
               "printf '%s %s\\n' \"$first\" \"$MLENV_RDZV_HOST\"\n");
  std::remove(scontrol.c_str());
  rmdir(dir);
  CHECK(run.status == 0);
  CHECK(run.out == "node0000 10.0.0.7\n");
}

TEST_CASE("slurm.sbatch: sbatch reads directives only before the first command") {
  // sbatch stops reading #SBATCH lines at the first line that is not blank or a comment
  // (https://slurm.schedmd.com/sbatch.html, "before any executable commands").
  BatchJob job = cpu_job();
  job.account = "proj1";
  job.qos = "high";
  job.time = "1-00:00:00";
  job.gpus_per_node = 8;
  job.exclusive = true;
  std::string s = batch_script(job);
  std::size_t first_command = s.find("\nset -euo pipefail");
  for (const char* d : {"--account=proj1", "--qos=high", "--time=1-00:00:00", "--gpus-per-node=8",
                        "--exclusive\n"}) {
    std::size_t at = s.find(std::string("#SBATCH ") + d);
    CHECK(at != std::string::npos);
    CHECK(at < first_command);
  }
}

TEST_CASE("slurm.sbatch: shell_quote gives bash back every hostile value byte for byte") {
  for (const char* value : kHostile) {
    CAPTURE(value);
    CHECK(bash_output("printf '%s' " + shell_quote(value)) == value);
  }
}

TEST_CASE("slurm.sbatch: hostile mount paths and image names stay one value each") {
  for (const char* value : kHostile) {
    CAPTURE(value);
    BatchJob job = cpu_job();
    job.container_image = std::string("img") + value + ".sqsh";
    job.squashfs_in_envdir = true;
    job.mounts.push_back({std::string("/ws") + value, "/workspace"});
    std::string s = batch_script(job);
    // The container options the script builds, printed instead of given to srun.
    std::string probe = s.substr(s.find("case $envdir"));
    probe = probe.substr(0, probe.find("# One mlenv-boot"));
    std::string out = bash_output("envdir=/tmp\n" + probe + "printf '%s\\0' \"${container[@]}\"\n");
    std::string expected = std::string("--container-image=/tmp/img") + value + ".sqsh" + '\0' +
                           "--container-mounts=/tmp:/mlenv,/ws" + value + ":/workspace" + '\0' +
                           "--no-container-entrypoint" + '\0';
    CHECK(out == expected);
  }
}

TEST_CASE("slurm.sbatch: the script parses and hostile values add no directive") {
  for (const char* value : kHostile) {
    CAPTURE(value);
    BatchJob job = cpu_job();
    job.container_image = std::string("registry#team/") + value;
    job.mounts.push_back({std::string("/ws") + value, "/workspace"});
    std::string s = batch_script(job);
    CHECK(bash_output("bash -n <<'MLENV_EOF'\n" + s + "\nMLENV_EOF\necho ok\n") == "ok\n");
    // sbatch reads directives only up to the first line that is neither blank nor a
    // comment (https://slurm.schedmd.com/sbatch.html): those are the script's structure.
    std::size_t directives = 0;
    std::istringstream lines(s);
    for (std::string line; std::getline(lines, line);) {
      if (!line.empty() && !line.starts_with('#')) break;
      if (line.starts_with("#SBATCH")) ++directives;
    }
    CHECK(directives == 6);
  }
}

TEST_CASE("slurm.sbatch: safe_sbatch_value admits names and times, nothing sbatch would split") {
  for (const char* ok :
       {"gpu", "a100_80g", "proj-1.x", "1-00:00:00", "UNLIMITED", "gpu,gpu-long"}) {
    CHECK(safe_sbatch_value(ok));
  }
  for (const char* bad : {"", "a b", "a\nb", "a'b", "a\"b", "a#b", "$(x)", "a;b", "a\tb"}) {
    CAPTURE(bad);
    CHECK_FALSE(safe_sbatch_value(bad));
  }
}

TEST_CASE("slurm.sbatch: safe_mount_path refuses what pyxis would split or misread") {
  CHECK(safe_mount_path("/lustre/team a/ws"));
  CHECK_FALSE(safe_mount_path("relative/ws"));
  CHECK_FALSE(safe_mount_path("/a,b"));
  CHECK_FALSE(safe_mount_path("/a:b"));
  CHECK_FALSE(safe_mount_path("/a\nb"));
}
