#include "tests/targets/fixtures.h"

namespace mlenv::testing {
namespace {

ir::Image pytorch_image() {
  ir::Image image;
  image.name = "ml-dev-env";
  image.from = "nvcr.io/nvidia/pytorch:25.09-py3";
  image.tag = "pytorch-2.9-numpy2";
  image.apt = {"git", "vim", "rdma-core", "ffmpeg"};
  image.pip = {"transformers", "deepspeed", "llamafactory", "numpy>=2"};
  image.tools = {"code-server", "jupyter", "debugpy"};
  image.env = {{"PYTHONUNBUFFERED", "1"}, {"HF_HOME", "/workspace/.cache/huggingface"}};
  return image;
}

ir::Cluster h100_cluster(std::string name, std::string ns) {
  ir::Cluster c;
  c.name = std::move(name);
  c.api = c.name + ".nerc.mghpcc.org";
  c.namespace_name = std::move(ns);
  c.gpus.per_node = 4;
  c.gpus.product = "NVIDIA-H100-80GB-HBM3";
  return c;
}

}  // namespace

ir::Env barcelona_env() {
  ir::Env e;
  e.name = "ml-dev-env";
  e.cluster = h100_cluster("barcelona", "nccl-test");
  e.cluster.nodes = {"moc-r4pcc04u25-nairr", "moc-r4pcc04u23-nairr"};
  e.cluster.storage = {ir::StorageMode::per_pod, "ocs-external-storagecluster-ceph-rbd",
                       {"100Gi"}, {"500Gi"}};
  ir::Rdma rdma;
  for (int i = 2; i <= 5; ++i) {
    rdma.rails.push_back({"mlx5_" + std::to_string(i), "net" + std::to_string(i - 1), "", "", {}});
  }
  rdma.gid_index = 3;
  rdma.gdr_level = "SYS";
  e.cluster.network.rdma = rdma;
  e.image = pytorch_image();
  e.nodes = 2;
  e.gpus = 4;
  e.nproc_per_node = 4;
  e.transport = ir::Transport::rdma;
  e.services = {ir::Service::vscode, ir::Service::jupyter, ir::Service::tensorboard};
  e.debug = true;
  e.resources = {{"32"}, {"256Gi"}, {"64Gi"}};
  e.storage = e.cluster.storage;
  return e;
}

ir::Env hkim_env() {
  ir::Env e;
  e.name = "h-kim";
  e.cluster = h100_cluster("barcelona", "h-kim");
  const char* ports[] = {"eno5np0", "eno6np0", "eno7np0", "eno8np0"};
  const char* devices[] = {"mlx5_6", "mlx5_7", "mlx5_10", "mlx5_11"};
  ir::Rdma rdma;
  for (int i = 0; i < 4; ++i) {
    rdma.rails.push_back({devices[i], "net" + std::to_string(i + 1),
                          std::string(ports[i]) + "-network",
                          "openshift.io/" + std::string(ports[i]) + "rdma", {}});
  }
  rdma.gid_index = 3;
  rdma.gdr_level = "SYS";
  e.cluster.network.rdma = rdma;
  e.cluster.security = {"h-kim-sa", "nccl-scc"};
  e.cluster.storage = {ir::StorageMode::rwx, "nfs-csi", {"100Gi"}, {"500Gi"}};
  e.image = pytorch_image();
  e.image.name = "h-kim";
  e.nodes = 2;
  e.gpus = 4;
  e.nproc_per_node = 4;
  e.transport = ir::Transport::rdma;
  e.command = {"python", "/workspace/train.py", "--deepspeed"};
  e.resources = {{"48"}, {"512Gi"}, {"128Gi"}};
  e.storage = e.cluster.storage;
  e.labels = {{"team", "h-kim"}};
  return e;
}

ir::Env cairo_tcp_env() {
  ir::Env e;
  e.name = "cairo-train";
  e.cluster = h100_cluster("cairo", "nccl-test");
  e.cluster.nodes = {"moc-r4pcc02u15", "moc-r4pcc02u16"};
  e.cluster.storage = {ir::StorageMode::rwx, "nfs-csi", {"100Gi"}, {"500Gi"}};
  e.cluster.classes = {{"nfs-csi", ir::StorageAccess::rwx},
                       {"ocs-external-storagecluster-ceph-rbd", ir::StorageAccess::rwo}};
  e.cluster.network.tcp_interfaces = {"eth0"};
  e.image = pytorch_image();
  e.nodes = 2;
  e.gpus = 4;
  e.nproc_per_node = 4;
  e.transport = ir::Transport::tcp;
  e.transport_note = "network = auto: cluster `cairo` has no RDMA rails, using TCP";
  e.services = {ir::Service::tensorboard};
  e.command = {"deepspeed", "train_multi_node.py", "--deepspeed_config=ds_config.json"};
  e.resources = {{"16"}, {"128Gi"}, {"32Gi"}};
  e.storage = e.cluster.storage;
  return e;
}

ir::Env dev_env() {
  ir::Env e;
  e.name = "notebook";
  e.cluster = h100_cluster("cairo", "research");
  e.cluster.storage = {ir::StorageMode::rwx, "nfs-csi", {"50Gi"}, {}};
  e.image = pytorch_image();
  e.image.name = "notebook";
  e.image.tag = "2026.02";
  e.nodes = 1;
  e.gpus = 1;
  e.nproc_per_node = 1;
  e.services = {ir::Service::vscode, ir::Service::jupyter};
  e.resources = {{"8"}, {"64Gi"}, {"8Gi"}};
  e.storage = e.cluster.storage;
  return e;
}

ir::Program program_of(std::vector<ir::Env> envs, std::string source) {
  ir::Program p;
  p.source = source;
  p.envs = std::move(envs);
  p.inputs.push_back({source, "// the program's source text\n"});
  p.inputs.push_back({"std/profiles/h100.mlenv", "cluster node4 { }\n"});
  return p;
}

std::vector<std::pair<std::string, ir::Program>> all_fixtures() {
  std::vector<std::pair<std::string, ir::Program>> out;
  out.emplace_back("barcelona", program_of({barcelona_env()}, "examples/barcelona.mlenv"));
  out.emplace_back("h-kim", program_of({hkim_env()}, "examples/h-kim.mlenv"));
  out.emplace_back("cairo", program_of({cairo_tcp_env(), dev_env()}, "examples/cairo.mlenv"));
  return out;
}

ir::Program fleet(int envs, int clusters) {
  std::vector<ir::Env> all;
  all.reserve(static_cast<std::size_t>(envs));
  for (int i = 0; i < envs; ++i) {
    ir::Env e = hkim_env();
    e.name = "env-" + std::to_string(i);
    e.image.name = e.name;
    e.cluster.name = "cluster-" + std::to_string(i % clusters);
    e.cluster.security = {};
    e.services = {ir::Service::vscode, ir::Service::jupyter, ir::Service::tensorboard};
    all.push_back(std::move(e));
  }
  return program_of(std::move(all), "fleet.mlenv");
}

}  // namespace mlenv::testing
