// apply on platform local (local_drivers.h): the nodes of each env as sessions of this machine.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <set>
#include <sstream>
#include <string_view>
#include <thread>

#include <yaml-cpp/yaml.h>

#include "compiler/apply/records.h"
#include "compiler/apply/runner.h"
#include "targets/common/env_layout.h"
#include "targets/local/local_container.h"
#include "targets/local/local_drivers.h"
#include "targets/local/local_processes.h"
#include "targets/local/local_target.h"

namespace mlenv::plan {
namespace {

using target::local::node_state;

// How long mlenv-boot may take to stop its workers on SIGTERM before they are killed: its own
// grace (boot.json `timeouts.grace_s`) and a little for itself.
constexpr int kStopGraceSeconds = target::kStopGraceSeconds + 5;

// The mlenv-boot apply starts: the one MLENV_BOOT names, else the one on PATH (as a Slurm host
// env's script does). E0703 when there is none.
std::optional<std::string> find_boot(Diagnostics& diagnostics) {
  if (const char* named = std::getenv("MLENV_BOOT"); named && *named) return std::string(named);
  std::optional<std::string> found = find_on_path("mlenv-boot");
  if (!found) {
    diagnostics.report(Code::E0703, {}, "`mlenv-boot` is not on PATH and MLENV_BOOT is unset",
                       "build it from the plan's _runtime/ (cmake -S _runtime -B build && cmake "
                       "--build build --target mlenv-boot) and set MLENV_BOOT to it");
  }
  return found;
}

int node_count(const EnvPlan& env) {
  return std::max(env.manifest.nodes, 1);
}

// The session of each rank, from its pid file, whose processes still run.
std::vector<int> running_sessions(const std::string& dir, int nodes) {
  std::vector<int> sids;
  for (int rank = 0; rank < nodes; ++rank) {
    target::local::NodeState state = node_state(dir, rank);
    if (state.running) sids.push_back(state.pid);
  }
  return sids;
}

// The running sessions of the env's last apply: its pid files, and the record's trailer for
// an env whose directory left the work tree with them.
std::vector<int> recorded_sessions(const Repository& repo, const EnvPlan& env,
                                   const std::string& dir) {
  std::vector<int> sids = running_sessions(dir, node_count(env));
  if (!env.applied_commit) return sids;
  for (const std::string& record :
       recorded_session_records(repo.commit_message(*env.applied_commit))) {
    std::optional<int> sid = target::local::recorded_session(record);
    if (sid && std::find(sids.begin(), sids.end(), *sid) == sids.end()) sids.push_back(*sid);
  }
  return sids;
}

// Every file of the env but plan.json (whose input digests change with any edit of the
// source) is the one last applied: the running nodes still run this env.
bool run_files_unchanged(const EnvPlan& env) {
  if (!env.applied_commit) return false;
  const std::string plan_json = env.dir + "/plan.json";
  auto same = [&](const auto& a, const auto& b) {
    return a.first == b.first && (a.first == plan_json || a.second.id == b.second.id);
  };
  const auto& now = env.files.entries();
  const auto& then = env.applied_files.entries();
  return now.size() == then.size() && std::equal(now.begin(), now.end(), then.begin(), same);
}

// The containers of the env's nodes, where its last start ran them in containers: a container
// whose client was killed keeps running, so they are removed by name once the sessions end.
void remove_containers(const EnvPlan& env, const std::string& dir) {
  const std::string runtime = target::local::recorded_runtime(dir);
  if (runtime.empty()) return;
  std::vector<std::string> names;
  const int nodes = std::max(node_count(env), env.applied ? std::max(env.applied->nodes, 1) : 1);
  for (int rank = 0; rank < nodes; ++rank)
    names.push_back(target::local::container_name(env.unit, rank));
  run_command(target::local::remove_command(runtime, names), "", 60, true);
}

// Ends the env's running nodes; false with E0706 when a process outlived SIGKILL.
bool stop_env(const Repository& repo, const EnvPlan& env, const std::string& dir, bool dry_run,
              std::ostream& out, Diagnostics& diagnostics) {
  std::vector<int> sids = recorded_sessions(repo, env, dir);
  if (sids.empty()) return true;
  out << (dry_run ? "Would stop " : "Stopping ") << sids.size() << " running node"
      << (sids.size() == 1 ? "" : "s") << " of " << env.unit << '\n';
  if (dry_run) return true;
  const bool stopped = target::local::stop_sessions(sids, kStopGraceSeconds);
  remove_containers(env, dir);
  if (stopped) return true;
  diagnostics.report(Code::E0706, {}, env.unit + ": a process of its nodes did not end",
                     "see `mlenvc status " + env.unit + "`");
  return false;
}

// --wait: until every node has exited; kExitRunFailed unless each exited 0.
int wait_for_nodes(const ApplyRequest& request, const EnvPlan& env, const std::string& dir,
                   std::ostream& out, Diagnostics& diagnostics) {
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::seconds(*parse_duration(request.steps.timeout));
  while (!running_sessions(dir, node_count(env)).empty()) {
    if (std::chrono::steady_clock::now() >= deadline) {
      diagnostics.report(Code::E0713, {}, env.unit + ": did not finish within --timeout",
                         "see `mlenvc status " + env.unit + "`");
      return kExitRunFailed;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(std::min(request.poll_ms, 500)));
  }
  int status = 0;
  for (int rank = 0; rank < node_count(env); ++rank) {
    std::optional<int> code = node_state(dir, rank).exit_code;
    out << env.unit << ": rank " << rank << " exited "
        << (code ? std::to_string(*code) : "without a status") << '\n';
    if (code != 0) status = kExitRunFailed;
  }
  if (status != 0) {
    diagnostics.report(Code::E0713, {}, env.unit + ": a node failed",
                       "see `mlenvc logs " + env.unit + "`");
  }
  return status;
}

// Starts every node of `env` with a new job token and records the env applied: each
// `command(rank)`.
template <typename Command>
int start_env(const ApplyContext& context, const EnvPlan& env, const std::string& dir,
              const Command& command, std::ostream& out, Diagnostics& diagnostics) {
  std::string error;
  std::optional<std::string> token = target::local::write_token(dir, error);
  std::string sessions, records;
  for (int rank = 0; token && rank < node_count(env); ++rank) {
    std::optional<int> sid = target::local::start_node(dir, command(rank), rank, *token, error);
    if (!sid) break;
    sessions += (sessions.empty() ? "" : " ") + std::to_string(*sid);
    records += (records.empty() ? "" : " ") + target::local::session_record(*sid);
  }
  if (!error.empty()) {
    diagnostics.report(Code::E0706, {}, env.unit + ": cannot start its nodes: " + error);
    return 1;
  }
  out << "Started " << env.unit << ": " << node_count(env) << " node"
      << (node_count(env) == 1 ? "" : "s") << " (sessions " << sessions << "), logs in " << env.dir
      << "/run/\n";
  if (!record_applied(context.repo, env, false, *context.head.commit, *context.head_tree,
                      diagnostics, std::string(kLocalSessionsTrailer) + records + "\n"))
    return 1;
  return context.request.steps.wait ? wait_for_nodes(context.request, env, dir, out, diagnostics)
                                    : 0;
}

// The env's `start` action (PLAN_JSON.md), or null in a plan without one.
const PlanAction* start_action(const EnvPlan& env) {
  for (const PlanAction& action : env.manifest.actions) {
    if (action.action == "start") return &action;
  }
  return nullptr;
}

// What goes into the env's image changed since the last apply: its Dockerfile or the
// mlenv-boot sources in `_runtime/` (or there is no record), the rule of an OpenShift build.
bool image_inputs_changed(const EnvPlan& env, const PlanAction& start) {
  if (!env.applied || env.runtime_tree != env.applied_runtime_tree) return true;
  const std::string dockerfile = env.dir + "/Dockerfile";
  const PlanEntry* now = env.files.find(dockerfile);
  const PlanEntry* then = env.applied_files.find(dockerfile);
  return now == nullptr || then == nullptr || now->id != then->id ||
         env.applied_files.find(env.dir + "/plan.json") == nullptr || start.image.empty();
}

// The GPUs each node uses: boot.json's `gpus_per_node` (runtime/BOOT_CONFIG.md), 0 when the
// committed file cannot be read.
int gpus_per_node(const EnvPlan& env) {
  std::optional<std::string> text = env.files.read(env.dir + "/boot.json");
  try {
    return text ? YAML::Load(*text)["gpus_per_node"].as<int>(0) : 0;
  } catch (const YAML::Exception&) {
    return 0;
  }
}

// What one apply keeps across its envs: the mlenv-boot it found, the images it built.
struct ApplyRun {
  std::optional<std::string> boot;
  std::set<std::string> built;  ///< envs of one image share it: it is built once (issue 18)
};

// Builds the env's image when its inputs changed and no env before it in this apply built
// it, then starts one container per node.
int start_containers(const ApplyContext& context, const EnvPlan& env, const std::string& dir,
                     const PlanAction& start, const std::string& runtime, ApplyRun& run,
                     std::ostream& out, Diagnostics& diagnostics) {
  const ApplyRequest& request = context.request;
  const std::string plan_root =
      context.workdir + "/" + env.dir.substr(0, env.dir.size() - env.unit.size() - 1);
  if (run.built.count(start.image) != 0) {
    out << env.unit << ": its image " << start.image << " is built above\n";
  } else if (image_inputs_changed(env, start)) {
    run.built.insert(start.image);
    const std::vector<std::string> build =
        target::local::build_command(runtime, plan_root, start.dockerfile, start.image);
    out << (request.dry_run ? "Would build " : "Building ") << env.unit << "'s image: $ "
        << shell_words(build) << '\n';
    if (!request.dry_run) {
      const int status = run_command(build, "", *parse_duration(request.steps.timeout)).status;
      if (status != 0) {
        diagnostics.report(Code::E0706, {},
                           env.unit + ": `" + shell_words(build) + "` exited with status " +
                               std::to_string(status),
                           "its own message is above; no node was started");
        return 1;
      }
    }
  }
  out << (request.dry_run ? "Would start " : "Starting ") << env.unit << ": " << node_count(env)
      << " container" << (node_count(env) == 1 ? "" : "s") << " of " << start.image << " with "
      << runtime << '\n';
  if (request.dry_run) return 0;
  if (!target::local::record_runtime(dir, runtime)) {
    diagnostics.report(Code::E0706, {}, env.unit + ": cannot write " + dir + "/run/runtime");
    return 1;
  }
  const int gpus = gpus_per_node(env);
  return start_env(
      context, env, dir,
      [&](int rank) {
        return target::local::run_command(runtime, target::local::container_name(env.unit, rank),
                                          dir, start.image, target::local::node_gpus(rank, gpus));
      },
      out, diagnostics);
}

// Whether rank 0 of the env in `dir` was started (its pid file is there).
bool started(const std::string& dir) {
  return node_state(dir, 0).pid != 0;
}

// One env: kept while its files are those last applied, running or ended, as a run that did
// not change is not run again (a Job, a Slurm job); else stopped and started.
int apply_env(const ApplyContext& context, const EnvPlan& env, ApplyRun& run, std::ostream& out,
              Diagnostics& diagnostics) {
  const ApplyRequest& request = context.request;
  const std::string dir = context.workdir + "/" + env.dir;
  if (run_files_unchanged(env) && started(dir)) {
    const bool running = !running_sessions(dir, node_count(env)).empty();
    out << env.unit << ": unchanged, " << (running ? "running" : "ended") << '\n';
    return 0;
  }
  if (!stop_env(context.repo, env, dir, request.dry_run, out, diagnostics)) return 1;
  const PlanAction* start = start_action(env);
  std::optional<std::string> runtime;
  if (start && !start->image.empty()) {
    const std::string wanted = start->runtime.value_or("");  // "": the first one on PATH
    runtime = target::local::find_runtime(wanted);
    if (!runtime && wanted != "host")
      out << env.unit << ": "
          << (wanted.empty() ? "neither podman nor docker is" : wanted + " is not")
          << " on PATH: its nodes run on the host, not in its image\n";
  }
  if (runtime) return start_containers(context, env, dir, *start, *runtime, run, out, diagnostics);
  out << (request.dry_run ? "Would start " : "Starting ") << env.unit << ": " << node_count(env)
      << " mlenv-boot process" << (node_count(env) == 1 ? "" : "es") << " on this machine\n";
  if (request.dry_run) return 0;
  if (!run.boot) run.boot = find_boot(diagnostics);
  if (!run.boot) return 1;
  if (!target::local::record_runtime(dir, "")) return 1;
  const std::string path = *run.boot;
  const int gpus = gpus_per_node(env);
  return start_env(
      context, env, dir,
      [&](int rank) {
        // Each node its own GPUs (E0434 checked that they exist): CUDA numbers the visible
        // devices from 0, so each node's workers take LOCAL_RANK 0..g-1 of its own.
        std::vector<std::string> argv;
        if (gpus > 0) {
          argv = {"env", "CUDA_VISIBLE_DEVICES=" +
                             target::local::device_list(target::local::node_gpus(rank, gpus))};
        }
        argv.insert(argv.end(), {path, "--config", "boot.json"});
        return argv;
      },
      out, diagnostics);
}

// Stops an env's nodes and records it destroyed, `why` in the record; its logs stay.
bool destroy_env(Repository& repo, const EnvPlan& env, const std::string& dir, bool dry_run,
                 const std::string& why, std::ostream& out, Diagnostics& diagnostics) {
  out << (dry_run ? "Would destroy " : "Destroying ") << env.unit << '\n';
  if (!stop_env(repo, env, dir, dry_run, out, diagnostics)) return false;
  if (dry_run) return true;
  for (int rank = 0; rank < node_count(env); ++rank) {
    std::remove(target::local::rank_file(dir, rank, "pid").c_str());
    std::remove(target::local::rank_file(dir, rank, "start").c_str());
    std::remove(target::local::rank_file(dir, rank, "exit").c_str());
  }
  std::remove((dir + "/" + target::local::kRunDir + "/token").c_str());
  target::local::record_runtime(dir, "");
  return record_destroyed(repo, env, false, why, diagnostics);
}

}  // namespace

std::vector<std::string> recorded_session_records(const std::string& message) {
  std::vector<std::string> out;
  std::istringstream words(raw_trailer(message, kLocalSessionsTrailer));
  auto digits = [](std::string_view text, std::size_t most) {
    return !text.empty() && text.size() <= most &&
           std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  for (std::string word; words >> word;) {
    // `SID` or `SID:START` (the leader's start time, local_processes.h session_record).
    const std::size_t colon = word.find(':');
    const std::string_view sid = std::string_view(word).substr(0, colon);
    const bool start_ok =
        colon == std::string::npos || digits(std::string_view(word).substr(colon + 1), 20);
    if (!digits(sid, 9) || !start_ok || std::stoi(std::string(sid)) < 2) return {};
    out.push_back(word);
  }
  return out;
}

std::vector<int> recorded_session_ids(const std::string& message) {
  std::vector<int> out;
  for (const std::string& record : recorded_session_records(message))
    out.push_back(std::stoi(record.substr(0, record.find(':'))));
  return out;
}

int LocalApplyDriver::apply(const ApplyContext& context, const std::vector<EnvPlan>& envs,
                            const std::vector<EnvPlan>& removed, std::ostream& out,
                            Diagnostics& diagnostics) const {
  const ApplyRequest& request = context.request;
  if (request.steps.admin) return 0;  // a local env has nothing for the platform team
  for (const EnvPlan& env : removed) {
    if (!destroy_env(context.repo, env, context.workdir + "/" + env.dir, request.dry_run,
                     "The env left the plan at " + to_hex(*context.head.commit) + ".", out,
                     diagnostics))
      return 1;
  }
  ApplyRun run;
  int status = 0;
  for (const EnvPlan& env : envs) {
    int one = apply_env(context, env, run, out, diagnostics);
    if (one == 1) return 1;
    status = std::max(status, one);
  }
  return status;
}

int LocalApplyDriver::destroy(const DestroyRequest& request, Repository& repo, const EnvPlan& env,
                              std::ostream& out, Diagnostics& diagnostics) const {
  return destroy_env(repo, env, repo.workdir() + "/" + env.dir, request.dry_run,
                     "Destroyed on purpose.", out, diagnostics)
             ? 0
             : 1;
}

}  // namespace mlenv::plan
