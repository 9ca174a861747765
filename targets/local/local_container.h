#pragma once
// An env with an image on platform local runs each node in a container of that image, with
// podman or docker (they take the same arguments): the host's network (rank 0 listens on
// 127.0.0.1, as on the host), its IPC namespace (NCCL's shared memory between the nodes' own
// containers), and the env directory mounted at its own path, so boot.json, run/ and the logs
// are where they are on the host. The runtime apply used is kept in `run/runtime`, so status,
// shell, a restart and destroy reach the same containers.

#include <optional>
#include <string>
#include <vector>

namespace mlenv::target::local {

/// The path of the container runtime that runs an env's nodes: the one the cluster names
/// (`podman`, `docker`) when it is on PATH, for "" the first of podman and docker on PATH;
/// nullopt for `host` or when none is found (the nodes then run on the host).
std::optional<std::string> find_runtime(const std::string& named);

/// The container of rank `rank` of the env `unit` (`<cluster>/<env>`):
/// `mlenv-<cluster>-<env>-<rank>`.
std::string container_name(const std::string& unit, int rank);

/// `<runtime> build -f <plan root>/<dockerfile> -t <image> <plan root>`: the image from the
/// env's Dockerfile with the plan directory (its `_runtime/`) as context, as a push builds it.
std::vector<std::string> build_command(const std::string& runtime, const std::string& plan_root,
                                       const std::string& dockerfile, const std::string& image);

/// The machine's GPUs of rank `rank` when each node takes `gpus`: [rank·gpus, (rank+1)·gpus),
/// so that no two nodes of one machine share a device (NCCL refuses two ranks on one GPU).
std::vector<int> node_gpus(int rank, int gpus);

/// `devices` as a device list: "0,1" (CUDA_VISIBLE_DEVICES, docker's `device=`).
std::string device_list(const std::vector<int>& devices);

/// The command of one node: `<runtime> run --rm --name <name>` on the host network and IPC,
/// the env directory mounted and the working directory, the rank and job token passed by name
/// from the environment (never in an argument), the node's GPUs `devices` (podman: the NVIDIA
/// Container Toolkit's CDI names `nvidia.com/gpu=<i>`; docker: `--gpus "device=<i>,..."`),
/// and the image's mlenv-boot with boot.json.
std::vector<std::string> run_command(const std::string& runtime, const std::string& name,
                                     const std::string& env_dir, const std::string& image,
                                     const std::vector<int>& devices);

/// `<runtime> rm -f <names>...`: the containers of a stopped env, where one outlived its client.
std::vector<std::string> remove_command(const std::string& runtime,
                                        const std::vector<std::string>& names);

/// `<runtime> exec -i [-t] -w <env dir> <name> /bin/sh`: a shell in rank's container.
std::vector<std::string> exec_command(const std::string& runtime, const std::string& name,
                                      const std::string& env_dir, bool tty);

/// The runtime recorded in `<env_dir>/run/runtime` by the last start when it is the podman or
/// docker on PATH, as apply finds it; else "" (on the host, or a record apply did not write).
std::string recorded_runtime(const std::string& env_dir);

/// Records `runtime` in `<env_dir>/run/runtime`; "" removes the record. False on failure.
bool record_runtime(const std::string& env_dir, const std::string& runtime);

}  // namespace mlenv::target::local
