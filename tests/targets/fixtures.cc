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
  c.api = "api." + c.name + ".nerc.mghpcc.org";
  c.namespace_name = std::move(ns);
  c.gpus.per_node = 4;
  c.gpus.product = "NVIDIA-H100-80GB-HBM3";
  return c;
}

// Four SR-IOV RoCE rails on the Barcelona ports (seeds/002), each with its own subnet.
ir::Rdma sriov_rails(const char* const (&devices)[4]) {
  const char* ports[] = {"eno5np0", "eno6np0", "eno7np0", "eno8np0"};
  ir::Rdma rdma;
  for (int i = 0; i < 4; ++i) {
    ir::Rail& rail = rdma.rails.emplace_back();
    rail.device = devices[i];
    rail.interface = "net" + std::to_string(i + 1);
    rail.network = std::string(ports[i]) + "-network";
    rail.resource = "openshift.io/" + std::string(ports[i]) + "rdma";
    rail.ipam = ir::Ipam{"whereabouts", "10.0." + std::to_string(103 + i) + ".0/24", {}};
  }
  rdma.gid_index = 3;
  rdma.gdr_level = "SYS";
  return rdma;
}

ir::Storage storage(ir::StorageMode mode, std::string class_name, std::string workspace,
                    std::string datasets) {
  ir::Storage s;
  s.mode = mode;
  s.class_name = std::move(class_name);
  s.workspace.text = std::move(workspace);
  s.datasets.text = std::move(datasets);
  return s;
}

}  // namespace

ir::Env barcelona_env() {
  ir::Env e;
  e.name = "ml-dev-env";
  e.cluster = h100_cluster("barcelona", "nccl-test");
  e.cluster.nodes = {"moc-r4pcc04u25-nairr", "moc-r4pcc04u23-nairr"};
  e.cluster.storage =
      storage(ir::StorageMode::per_pod, "ocs-external-storagecluster-ceph-rbd", "100Gi", "500Gi");
  e.cluster.network.rdma = sriov_rails({"mlx5_2", "mlx5_3", "mlx5_4", "mlx5_5"});
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
  e.cluster.network.rdma = sriov_rails({"mlx5_6", "mlx5_7", "mlx5_10", "mlx5_11"});
  e.cluster.security.service_account = "h-kim-sa";
  e.cluster.security.scc = "nccl-scc";
  e.cluster.storage = storage(ir::StorageMode::rwx, "nfs-csi", "100Gi", "500Gi");
  e.image = pytorch_image();
  e.image.name = "h-kim";
  e.nodes = 2;
  e.gpus = 4;
  e.nproc_per_node = 4;
  e.transport = ir::Transport::rdma;
  e.kind = ir::EnvKind::run;
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
  e.cluster.storage = storage(ir::StorageMode::rwx, "nfs-csi", "100Gi", "500Gi");
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
  e.kind = ir::EnvKind::run;
  e.command = {"deepspeed", "train_multi_node.py", "--deepspeed_config=ds_config.json"};
  e.launcher = "deepspeed";
  e.restarts = 1;
  e.ttl_seconds = 3600;
  e.resources = {{"16"}, {"128Gi"}, {"32Gi"}};
  e.storage = e.cluster.storage;
  return e;
}

std::vector<ir::Env> shared_storage_envs() {
  std::vector<ir::Env> envs;
  for (const char* name : {"train", "eval", "scratch"}) {
    ir::Env e = cairo_tcp_env();
    e.name = name;
    e.image.name = name;
    envs.push_back(std::move(e));
  }
  envs[2].storage.own = true;
  envs[2].storage.workspace.text = "2Ti";
  return envs;
}

ir::Env dev_env() {
  ir::Env e;
  e.name = "notebook";
  e.cluster = h100_cluster("cairo", "research");
  e.cluster.storage = storage(ir::StorageMode::rwx, "nfs-csi", "50Gi", "");
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

ir::Env infiniband_env() {
  ir::Env e;
  e.name = "ib-accept";
  e.cluster = h100_cluster("ib", "ib-lab");
  e.cluster.storage = storage(ir::StorageMode::per_pod, "ceph-rbd", "100Gi", "500Gi");
  ir::Rdma rdma;
  for (int i = 0; i < 2; ++i) {
    ir::Rail& rail = rdma.rails.emplace_back();
    rail.interface = "net" + std::to_string(i + 1);
    rail.link_layer = ir::LinkLayer::infiniband;
    rail.network = "ib" + std::to_string(i);
    rail.resource = "openshift.io/mlnx_ib" + std::to_string(i);
  }
  // The NVIDIA network operator's IPoIB network with its RDMA shared device plugin.
  ir::Rail& shared = rdma.rails.emplace_back();
  shared.interface = "ib-shared";
  shared.link_layer = ir::LinkLayer::infiniband;
  shared.network = "ipoib-net";
  shared.resource = "rdma/rdma_shared_device_a";
  shared.attachment = ir::Attachment::existing;
  e.cluster.network.rdma = rdma;
  e.image = pytorch_image();
  e.image.name = "ib-accept";
  e.nodes = 2;
  e.gpus = 4;
  e.nproc_per_node = 4;
  e.transport = ir::Transport::rdma;
  e.transport_auto = true;
  e.kind = ir::EnvKind::acceptance;
  e.acceptance = {40, std::int64_t{8} << 30, false};
  e.storage = e.cluster.storage;
  return e;
}

ir::Env memlock_env() {
  ir::Env e = barcelona_env();
  e.name = "memlock";
  e.image.name = "memlock";
  e.cluster.name = "memlock";
  e.cluster.namespace_name = "memlock";
  e.cluster.security.unlimited_memlock = true;
  e.services = {};
  e.debug = false;
  e.storage.workspace_claim = "team-workspace";
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
  out.emplace_back("infiniband", program_of({infiniband_env(), memlock_env()}, "ib.mlenv"));
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
    e.cluster.security = ir::Security{};
    e.services = {ir::Service::vscode, ir::Service::jupyter, ir::Service::tensorboard};
    all.push_back(std::move(e));
  }
  return program_of(std::move(all), "fleet.mlenv");
}

}  // namespace mlenv::testing
