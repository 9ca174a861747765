#include "targets/local/local_container.h"

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "compiler/apply/runner.h"
#include "targets/local/local_target.h"

namespace mlenv::target::local {
namespace {

std::string runtime_file(const std::string& env_dir) {
  return env_dir + "/" + target::local::kRunDir + "/runtime";
}

}  // namespace

std::optional<std::string> find_runtime(const std::string& named) {
  if (named == "host") return std::nullopt;
  if (!named.empty()) return plan::find_on_path(named);
  for (const char* name : {"podman", "docker"}) {
    if (std::optional<std::string> found = plan::find_on_path(name)) return found;
  }
  return std::nullopt;
}

std::string container_name(const std::string& unit, int rank) {
  std::string name = "mlenv-" + unit + "-" + std::to_string(rank);
  for (char& c : name) {
    if (c == '/') c = '-';
  }
  return name;
}

std::vector<std::string> build_command(const std::string& runtime, const std::string& plan_root,
                                       const std::string& dockerfile, const std::string& image) {
  return {runtime, "build", "-f", plan_root + "/" + dockerfile, "-t", image, plan_root};
}

std::vector<int> node_gpus(int rank, int gpus) {
  std::vector<int> devices;
  for (int i = 0; i < gpus; ++i) devices.push_back(rank * gpus + i);
  return devices;
}

std::string device_list(const std::vector<int>& devices) {
  std::string list;
  for (int device : devices) list += (list.empty() ? "" : ",") + std::to_string(device);
  return list;
}

std::vector<std::string> run_command(const std::string& runtime, const std::string& name,
                                     const std::string& env_dir, const std::string& image,
                                     const std::vector<int>& devices) {
  // `-e NAME` without a value passes the variable from the client's environment (podman-run(1),
  // docker run --env): the token stays out of every argument list. The client forwards
  // SIGTERM to the container (--sig-proxy, on by default), so stopping the node's session
  // stops mlenv-boot, which stops its workers.
  std::vector<std::string> argv = {runtime,
                                   "run",
                                   "--rm",
                                   "--name",
                                   name,
                                   "--network",
                                   "host",
                                   "--ipc",
                                   "host",
                                   "-v",
                                   env_dir + ":" + env_dir,
                                   "-w",
                                   env_dir,
                                   "-e",
                                   target::local::kRankVariable,
                                   "-e",
                                   "MLENV_JOB_TOKEN"};
  if (!devices.empty()) {
    // podman: the CDI names `nvidia-ctk cdi generate` gives each GPU, by index; docker: its
    // --gpus flag, whose value is read as CSV, so a list of devices is quoted
    // (docs.docker.com/engine/containers/resource_constraints/#gpu: --gpus '"device=1,2"').
    if (runtime.ends_with("docker")) {
      argv.insert(argv.end(), {"--gpus", "\"device=" + device_list(devices) + "\""});
    } else {
      for (int device : devices) {
        argv.insert(argv.end(), {"--device", "nvidia.com/gpu=" + std::to_string(device)});
      }
    }
  }
  argv.insert(argv.end(),
              {"--entrypoint", "/usr/local/bin/mlenv-boot", image, "--config", "boot.json"});
  return argv;
}

std::vector<std::string> remove_command(const std::string& runtime,
                                        const std::vector<std::string>& names) {
  std::vector<std::string> argv = {runtime, "rm", "-f"};
  argv.insert(argv.end(), names.begin(), names.end());
  return argv;
}

std::vector<std::string> exec_command(const std::string& runtime, const std::string& name,
                                      const std::string& env_dir, bool tty) {
  std::vector<std::string> argv = {runtime, "exec", "-i"};
  if (tty) argv.push_back("-t");
  argv.insert(argv.end(), {"-w", env_dir, name, "/bin/sh"});
  return argv;
}

std::string recorded_runtime(const std::string& env_dir) {
  std::ifstream in(runtime_file(env_dir));
  std::string runtime;
  std::getline(in, runtime);
  // run/ is git-ignored, yet a pulled commit can add a file there: shell and destroy ran any
  // program `run/runtime` named (issue 32). Only what apply itself would run is taken: the
  // podman or docker found on PATH.
  std::string name = std::filesystem::path(runtime).filename().string();
  if (name != "podman" && name != "docker") return "";
  std::optional<std::string> found = find_runtime(name);
  return found && *found == runtime ? runtime : "";
}

bool record_runtime(const std::string& env_dir, const std::string& runtime) {
  const std::string path = runtime_file(env_dir);
  if (runtime.empty()) return std::remove(path.c_str()) == 0 || !std::ifstream(path);
  std::ofstream out(path, std::ios::trunc);
  out << runtime << '\n';
  return static_cast<bool>(out);
}

}  // namespace mlenv::target::local
