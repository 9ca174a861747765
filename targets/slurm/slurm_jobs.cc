#include "targets/slurm/slurm_jobs.h"

#include <algorithm>
#include <array>

#include "compiler/apply/record_values.h"
#include "compiler/apply/runner.h"

namespace mlenv::plan::slurm {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\n' || s.front() == '\r')) {
    s.remove_prefix(1);
  }
  while (!s.empty() && (s.back() == ' ' || s.back() == '\n' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

std::string_view first_line(std::string_view s) {
  return trim(s.substr(0, s.find('\n')));
}

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// The states after which a job never runs again (squeue(1) "JOB STATE CODES",
// https://slurm.schedmd.com/squeue.html#SECTION_JOB-STATE-CODES).
bool is_final(std::string_view state) {
  constexpr std::array<std::string_view, 11> kFinal = {
      "BOOT_FAIL",     "CANCELLED", "COMPLETED", "DEADLINE",     "FAILED", "NODE_FAIL",
      "OUT_OF_MEMORY", "PREEMPTED", "REVOKED",   "SPECIAL_EXIT", "TIMEOUT"};
  return std::find(kFinal.begin(), kFinal.end(), state) != kFinal.end();
}

JobState make_state(std::string_view state, std::string_view reason) {
  JobState s;
  // sacct writes `CANCELLED by 1000`: the state is the first word.
  s.state = std::string(state.substr(0, state.find(' ')));
  s.reason = std::string(reason);
  s.finished = is_final(s.state);
  s.succeeded = s.state == "COMPLETED";
  return s;
}

// `a|b` split at the first '|'.
std::pair<std::string_view, std::string_view> split_bar(std::string_view line) {
  std::size_t bar = line.find('|');
  if (bar == std::string_view::npos) return {line, {}};
  return {line.substr(0, bar), line.substr(bar + 1)};
}

}  // namespace

std::optional<std::string> parse_job_id(std::string_view parsable) {
  std::string_view line = first_line(parsable);
  std::string_view id = line.substr(0, line.find(';'));
  // The one definition of a job id, which the record's trailer holds (at most 20 digits).
  if (!is_slurm_job_id(id)) return std::nullopt;
  return std::string(id);
}

std::vector<std::string> submit_command(const std::string& sbatch, const std::string& env_dir,
                                        const std::string& script, const std::string& config,
                                        const std::string& image) {
  std::vector<std::string> argv = {sbatch, "--parsable", "--chdir=" + env_dir,
                                   env_dir + "/" + script};
  if (!config.empty()) argv.push_back(config);
  if (!config.empty() && !image.empty()) argv.push_back(image);
  return argv;
}

std::optional<JobState> parse_squeue(std::string_view output) {
  std::string_view line = first_line(output);
  if (line.empty()) return std::nullopt;
  auto [state, rest] = split_bar(line);
  auto [reason, nodes] = split_bar(rest);
  // squeue's reason of a job that is not pending is `None`.
  JobState s = make_state(state, reason == "None" ? std::string_view() : reason);
  s.nodes = std::string(nodes);
  return s;
}

std::optional<JobState> parse_sacct(std::string_view output) {
  std::string_view line = first_line(output);
  if (line.empty()) return std::nullopt;
  auto [state, rest] = split_bar(line);
  auto [exit_code, nodes] = split_bar(rest);
  JobState s = make_state(
      state, exit_code.empty() ? std::string_view() : "exit code " + std::string(exit_code));
  // sacct names a job that never started on `None assigned`.
  if (nodes != "None assigned") s.nodes = std::string(nodes);
  return s;
}

std::vector<std::string> squeue_command(const std::string& job_id) {
  return {"squeue", "-h", "-t", "all", "-j", job_id, "-o", "%T|%r|%N"};
}

std::vector<std::string> sacct_command(const std::string& job_id) {
  return {"sacct", "-n", "-X", "-P", "-j", job_id, "-o", "State,ExitCode,NodeList"};
}

std::vector<std::string> cancel_command(const std::string& job_id) {
  return {"scancel", "--", job_id};  // `--`: an id is never an option (`--me`)
}

std::vector<std::string> log_files(const std::string& env, const std::string& job_id) {
  return {"logs/" + env + "-" + job_id + ".out", "logs/" + env + "-" + job_id + ".err"};
}

std::string results_file(const std::string& env, const std::string& job_id) {
  return "logs/" + env + "-" + job_id + ".results.json";
}

std::vector<std::string> hostnames_command(const std::string& nodes) {
  return {"scontrol", "show", "hostnames", nodes};
}

std::vector<std::string> parse_hostnames(std::string_view output) {
  std::vector<std::string> names;
  while (!output.empty()) {
    std::size_t end = output.find('\n');
    std::string_view name = trim(output.substr(0, end));
    if (!name.empty()) names.emplace_back(name);
    output.remove_prefix(end == std::string_view::npos ? output.size() : end + 1);
  }
  return names;
}

LabelledLine parse_labelled_line(std::string_view line) {
  std::size_t start = line.find_first_not_of(' ');
  std::size_t colon = line.find(": ");
  if (start == std::string_view::npos || colon == std::string_view::npos || colon <= start ||
      colon - start > 9 || !all_digits(line.substr(start, colon - start)))
    return {std::nullopt, line};
  return {std::stoi(std::string(line.substr(start, colon - start))), line.substr(colon + 2)};
}

std::vector<std::string> shell_command(const std::string& srun, const std::string& job_id,
                                       const std::string& node, bool tty) {
  std::vector<std::string> argv = {srun,        "--jobid=" + job_id, "--overlap",
                                   "--nodes=1", "--ntasks=1",        "--nodelist=" + node};
  if (tty) argv.push_back("--pty");
  argv.insert(argv.end(), {"bash", "-l"});
  return argv;
}

namespace {

// What a Slurm client printed, or nullopt when it is missing or failed (sacct without
// accounting storage fails).
std::optional<std::string> ask(std::vector<std::string> argv, int timeout_seconds) {
  std::optional<std::string> program = find_on_path(argv[0]);
  if (!program) return std::nullopt;
  argv[0] = *program;
  RunResult result = run_command(argv, "", timeout_seconds, true);
  if (result.status != 0) return std::nullopt;
  return std::move(result.output);
}

}  // namespace

std::vector<std::string> job_nodes(const std::string& nodes, int timeout_seconds) {
  if (nodes.empty()) return {};
  std::optional<std::string> out = ask(hostnames_command(nodes), timeout_seconds);
  std::vector<std::string> names = out ? parse_hostnames(*out) : std::vector<std::string>{};
  if (names.empty()) names.push_back(nodes);
  return names;
}

std::optional<JobState> job_state(const std::string& job_id, int timeout_seconds) {
  // squeue knows jobs the controller still holds (finished ones until MinJobAge); sacct
  // knows the rest where accounting is stored.
  if (std::optional<std::string> out = ask(squeue_command(job_id), timeout_seconds)) {
    if (std::optional<JobState> state = parse_squeue(*out)) return state;
  }
  if (std::optional<std::string> out = ask(sacct_command(job_id), timeout_seconds)) {
    return parse_sacct(*out);
  }
  return std::nullopt;
}

bool cancel(const std::string& job_id, int timeout_seconds) {
  return ask(cancel_command(job_id), timeout_seconds).has_value();
}

std::optional<std::string> submit(const std::string& env_dir, const std::string& script,
                                  const std::string& config, const std::string& image,
                                  int timeout_seconds, std::string& error) {
  std::optional<std::string> sbatch = find_on_path("sbatch");
  if (!sbatch) {
    error = "`sbatch` is not on PATH: apply Slurm envs from a host of the cluster";
    return std::nullopt;
  }
  RunResult result = run_command(submit_command(*sbatch, env_dir, script, config, image), "",
                                 timeout_seconds, true);
  if (result.status != 0) {
    error = "sbatch exited with status " + std::to_string(result.status);
    return std::nullopt;
  }
  std::optional<std::string> id = parse_job_id(result.output);
  if (!id) error = "sbatch printed no job id: " + std::string(first_line(result.output));
  return id;
}

}  // namespace mlenv::plan::slurm
