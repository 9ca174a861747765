// Submitting, watching and cancelling Slurm jobs: parsers on the clients' documented output,
// and (tag [real], run by cluster.sh as ctest slurm.jobs) the real clients on the test cluster.
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "compiler/apply/runner.h"
#include "targets/slurm/slurm_jobs.h"

using namespace mlenv::plan::slurm;
namespace fs = std::filesystem;

TEST_CASE("slurm.jobs: the job id of sbatch --parsable, with or without a cluster") {
  // sbatch(1): "--parsable Outputs only the job id number and the cluster name if present.
  // The values are separated by a semicolon." (https://slurm.schedmd.com/sbatch.html)
  CHECK(parse_job_id("42\n") == "42");
  CHECK(parse_job_id("1234;cluster-a\n") == "1234");
  CHECK_FALSE(parse_job_id("").has_value());
  CHECK_FALSE(parse_job_id("Submitted batch job 42\n").has_value());
  CHECK_FALSE(parse_job_id("sbatch: error: invalid partition\n").has_value());
  // More digits than a record's Slurm-Job trailer holds (fuzz_plan found it: apply recorded an
  // id that the record could never be read back with).
  CHECK(parse_job_id("\r\r\r" + std::string(20, '4')) == std::string(20, '4'));
  CHECK_FALSE(parse_job_id(std::string(21, '4')).has_value());
}

TEST_CASE("slurm.jobs: submit runs sbatch in the env directory") {
  CHECK(submit_command("/usr/bin/sbatch", "/plans/lab/ranks", "ranks.sbatch") ==
        std::vector<std::string>{"/usr/bin/sbatch", "--parsable", "--chdir=/plans/lab/ranks",
                                 "/plans/lab/ranks/ranks.sbatch"});
  // The copy of boot.json apply checked, then the squashfs it imported (slurm_image.h).
  CHECK(submit_command("sbatch", "/p", "r.sbatch", "logs/.applied/boot-1.json",
                       "logs/.applied/image-2.sqsh") ==
        std::vector<std::string>{"sbatch", "--parsable", "--chdir=/p", "/p/r.sbatch",
                                 "logs/.applied/boot-1.json", "logs/.applied/image-2.sqsh"});
}

TEST_CASE("slurm.jobs: squeue and sacct states, finished or not") {
  std::optional<JobState> pending = parse_squeue("PENDING|Resources\n");
  REQUIRE(pending);
  CHECK(pending->state == "PENDING");
  CHECK(pending->reason == "Resources");
  CHECK_FALSE(pending->finished);
  std::optional<JobState> running = parse_squeue("RUNNING|None\n");
  REQUIRE(running);
  CHECK(running->reason.empty());
  std::optional<JobState> done = parse_squeue("COMPLETED|None\n");
  REQUIRE(done);
  CHECK(done->finished);
  CHECK(done->succeeded);
  CHECK_FALSE(parse_squeue("").has_value());
  // sacct -P separates fields with '|'; a cancelled job's state names who cancelled it.
  std::optional<JobState> cancelled = parse_sacct("CANCELLED by 1000|0:15\n");
  REQUIRE(cancelled);
  CHECK(cancelled->state == "CANCELLED");
  CHECK(cancelled->reason == "exit code 0:15");
  CHECK(cancelled->finished);
  CHECK_FALSE(cancelled->succeeded);
  std::optional<JobState> failed = parse_sacct("FAILED|1:0\n");
  REQUIRE(failed);
  CHECK(failed->finished);
  CHECK_FALSE(failed->succeeded);
}

TEST_CASE("slurm.jobs: squeue's and sacct's node list, as recorded from the test cluster") {
  // squeue(1) -o: %T the state, %r the reason, %N the nodes allocated (a hostlist expression,
  // empty while pending) (https://slurm.schedmd.com/squeue.html#OPT_format). Recorded:
  // `squeue -h -t all -j 2 -o '%T|%r|%N'` on tests/slurm/cluster.sh, running then cancelled.
  std::optional<JobState> running = parse_squeue("RUNNING|None|n[1-2]\n");
  REQUIRE(running);
  CHECK(running->state == "RUNNING");
  CHECK(running->reason.empty());
  CHECK(running->nodes == "n[1-2]");
  std::optional<JobState> cancelled = parse_squeue("CANCELLED|None|n[1-2]\n");
  REQUIRE(cancelled);
  CHECK(cancelled->finished);
  CHECK_FALSE(cancelled->succeeded);
  std::optional<JobState> pending = parse_squeue("PENDING|Resources|\n");
  REQUIRE(pending);
  CHECK(pending->reason == "Resources");
  CHECK(pending->nodes.empty());
  // sacct(1) --parsable2 (-P): fields separated by '|' with no trailing '|'; NodeList of a job
  // that never started is `None assigned` (https://slurm.schedmd.com/sacct.html).
  std::optional<JobState> done = parse_sacct("COMPLETED|0:0|gpu[01-04]\n");
  REQUIRE(done);
  CHECK(done->succeeded);
  CHECK(done->nodes == "gpu[01-04]");
  std::optional<JobState> never = parse_sacct("CANCELLED by 1000|0:0|None assigned\n");
  REQUIRE(never);
  CHECK(never->state == "CANCELLED");
  CHECK(never->nodes.empty());
}

TEST_CASE("slurm.jobs: scontrol show hostnames gives the nodes in rank order") {
  // scontrol(1) `show hostnames`: "one hostname per line" of a hostlist expression
  // (https://slurm.schedmd.com/scontrol.html); recorded for `n[1-2]`.
  CHECK(hostnames_command("n[1-2]") ==
        std::vector<std::string>{"scontrol", "show", "hostnames", "n[1-2]"});
  CHECK(parse_hostnames("n1\nn2\n") == std::vector<std::string>{"n1", "n2"});
  CHECK(parse_hostnames("").empty());
}

TEST_CASE("slurm.jobs: srun --label lines carry their task, the batch script's do not") {
  // srun(1) -l, --label: "Prepend task number to lines of stdout/err"; with ten tasks or more
  // the number is padded to the widest (` 7: `) (https://slurm.schedmd.com/srun.html#OPT_label).
  // Recorded from the test cluster: `1: out 1`.
  LabelledLine one = parse_labelled_line("1: out 1");
  CHECK(one.task == 1);
  CHECK(one.text == "out 1");
  LabelledLine padded = parse_labelled_line(" 7: hello: world");
  CHECK(padded.task == 7);
  CHECK(padded.text == "hello: world");
  CHECK(parse_labelled_line("12: x").task == 12);
  for (const char* own : {"mlenv: no boot.json in /x", "slurmstepd: error: *** JOB 4 CANCELLED", "",
                          ": x", "1:x", "abc: d", "12345678901: x"}) {
    CAPTURE(own);
    LabelledLine line = parse_labelled_line(own);
    CHECK_FALSE(line.task.has_value());
    CHECK(line.text == own);
  }
}

TEST_CASE("slurm.jobs: a shell is a step of the running job on one node") {
  // srun(1) --jobid: run under an existing job's allocation; --overlap: share its resources
  // with the running step; --pty: a pseudo terminal for task 0
  // (https://slurm.schedmd.com/srun.html).
  CHECK(shell_command("/usr/bin/srun", "42", "n2", true) ==
        std::vector<std::string>{"/usr/bin/srun", "--jobid=42", "--overlap", "--nodes=1",
                                 "--ntasks=1", "--nodelist=n2", "--pty", "bash", "-l"});
  CHECK(shell_command("srun", "42", "n2", false).back() == "-l");
  CHECK(results_file("accept", "42") == "logs/accept-42.results.json");
}

TEST_CASE("slurm.jobs: log files are the script's --output and --error") {
  CHECK(log_files("ranks", "17") ==
        std::vector<std::string>{"logs/ranks-17.out", "logs/ranks-17.err"});
}

namespace {

// A job directory like an env's: a script and its logs directory.
fs::path job_dir(const std::string& name, const std::string& body) {
  const char* root = std::getenv("MLENV_SLURM_DIR");
  REQUIRE(root != nullptr);
  fs::path dir = fs::path(root) / name;
  fs::create_directories(dir / "logs");
  std::ofstream(dir / (name + ".sbatch"))
      << "#!/bin/bash\n#SBATCH --job-name=" << name << "\n#SBATCH --nodes=2\n"
      << "#SBATCH --ntasks-per-node=1\n#SBATCH --output=logs/%x-%j.out\n"
      << "#SBATCH --error=logs/%x-%j.err\n"
      << body;
  return dir;
}

JobState wait_until(const std::string& id, bool (*done)(const JobState&)) {
  for (int i = 0; i < 600; ++i) {
    std::optional<JobState> state = job_state(id, 10);
    if (state && done(*state)) return *state;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  FAIL("job " << id << " never got there");
  return {};
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

TEST_CASE("slurm.jobs: a real job is submitted, finishes, and leaves its logs", "[.real]") {
  fs::path dir = job_dir("hello", "srun bash -c 'echo \"hello from $SLURMD_NODENAME\"'\n");
  std::string error;
  std::optional<std::string> id = submit(dir.string(), "hello.sbatch", "", "", 30, error);
  INFO(error);
  REQUIRE(id);
  JobState state = wait_until(*id, [](const JobState& s) { return s.finished; });
  CHECK(state.succeeded);
  std::string out = read_file(dir / log_files("hello", *id)[0]);
  CHECK(out.find("hello from n1") != std::string::npos);
  CHECK(out.find("hello from n2") != std::string::npos);
}

TEST_CASE("slurm.jobs: a real job is cancelled", "[.real]") {
  fs::path dir = job_dir("sleeper", "srun sleep 600\n");
  std::string error;
  std::optional<std::string> id = submit(dir.string(), "sleeper.sbatch", "", "", 30, error);
  INFO(error);
  REQUIRE(id);
  wait_until(*id, [](const JobState& s) { return s.state == "RUNNING"; });
  std::vector<std::string> cancel = cancel_command(*id);
  cancel[0] = mlenv::plan::find_on_path(cancel[0]).value_or(cancel[0]);
  CHECK(mlenv::plan::run_command(cancel, "", 30).status == 0);
  JobState state = wait_until(*id, [](const JobState& s) { return s.finished; });
  CHECK(state.state == "CANCELLED");
  CHECK_FALSE(state.succeeded);
}

TEST_CASE("slurm.jobs: a real job's nodes come back in rank order", "[.real]") {
  fs::path dir = job_dir("nodes", "srun sleep 600\n");
  std::string error;
  std::optional<std::string> id = submit(dir.string(), "nodes.sbatch", "", "", 30, error);
  INFO(error);
  REQUIRE(id);
  JobState state = wait_until(*id, [](const JobState& s) { return s.state == "RUNNING"; });
  CHECK(job_nodes(state.nodes, 10) == std::vector<std::string>{"n1", "n2"});
  CHECK(cancel(*id, 30));
  CHECK(wait_until(*id, [](const JobState& s) { return s.finished; }).state == "CANCELLED");
}

TEST_CASE("slurm.jobs: a job Slurm never had has no state", "[.real]") {
  CHECK_FALSE(job_state("999999", 10).has_value());
}
