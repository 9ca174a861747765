#include "targets/common/env_layout.h"

#include <algorithm>

#include "compiler/base/sha256.h"

namespace mlenv::target {

const char* service_name(ir::Service service) {
  switch (service) {
    case ir::Service::vscode:
      return "vscode";
    case ir::Service::jupyter:
      return "jupyter";
    case ir::Service::tensorboard:
      return "tensorboard";
  }
  return "";
}

namespace {

// Every tool binds 127.0.0.1: only its proxy, in the same pod, can reach it (EXP-01).
ExposedService exposed(ir::Service service, const std::string& env) {
  ExposedService s;
  s.service = service;
  s.name = service_name(service);
  s.object_name = env + "-" + s.name;
  s.tls_secret = s.object_name + "-tls";
  switch (service) {
    case ir::Service::vscode:
      s.app_port = 8080;
      s.proxy_port = 4180;
      s.argv = {"code-server", "--bind-addr",         "127.0.0.1:8080", "--auth",
                "none",        "--disable-telemetry", "/workspace"};
      break;
    case ir::Service::jupyter:
      s.app_port = 8888;
      s.proxy_port = 4181;
      s.argv = {"jupyter", "lab", "--ip=127.0.0.1", "--port=8888", "--no-browser",
                "--ServerApp.root_dir=/workspace", "--IdentityProvider.token=",
                // oauth-proxy passes the Route's Host header (pass-host-header defaults to
                // true) and jupyter_server answers 403 to a non-local Host unless remote
                // access is allowed; it still listens on 127.0.0.1, behind the proxy.
                "--ServerApp.allow_remote_access=True"};
      break;
    case ir::Service::tensorboard:
      s.app_port = 6006;
      s.proxy_port = 4182;
      s.argv = {"tensorboard", "--logdir", "/workspace/runs", "--host", "127.0.0.1",
                "--port",      "6006"};
      break;
  }
  return s;
}

bool has(const std::vector<std::string>& v, std::string_view s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

// The image's tools, then those the env's services and debugger need, each once.
std::vector<std::string> tools_of(const ir::Env& env) {
  std::vector<std::string> tools = env.image.tools;
  for (ir::Service s : env.services) {
    const char* tool = s == ir::Service::vscode    ? "code-server"
                       : s == ir::Service::jupyter ? "jupyter"
                                                   : "tensorboard";
    if (!has(tools, tool)) tools.push_back(tool);
  }
  if (env.debug && !has(tools, "debugpy")) tools.push_back("debugpy");
  return tools;
}

}  // namespace

std::string image_object_name(const ir::Image& image, const std::vector<std::string>& tools) {
  // A cluster's build objects are named as DNS subdomains, and OpenShift's build pod
  // `<name>-<number>-build` must stay a 63-character DNS label; a registry's repository path
  // component is `[a-z0-9]+([._-][a-z0-9]+)*`: lower-case letters, digits and single dashes
  // serve all of them.
  std::string name;
  for (char c : image.name) {
    const char lower = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    const bool word = (lower >= 'a' && lower <= 'z') || (lower >= '0' && lower <= '9');
    if (word) {
      name += lower;
    } else if (!name.empty() && name.back() != '-') {
      name += '-';
    }
  }
  if (name.size() > 40) name.resize(40);
  while (!name.empty() && name.back() == '-') name.pop_back();
  if (name.empty()) name = "image";
  std::string added;
  for (const std::string& tool : tools) {
    if (!has(image.tools, tool)) added += tool + "\n";
  }
  return added.empty() ? name : name + "-" + sha256_hex(added).substr(0, 6);
}

EnvLayout make_layout(const ir::Env& env) {
  EnvLayout l;
  l.env = &env;
  l.cluster = env.cluster.name;
  l.dir = env.cluster.name + "/" + env.name;
  l.namespace_name = env.cluster.namespace_name;
  l.workload = env.name;
  l.is_job = env.kind != ir::EnvKind::dev;
  l.headless_service = env.name + "-headless";
  l.service_account = env.cluster.security.service_account.empty()
                          ? env.name + "-sa"
                          : env.cluster.security.service_account;
  l.boot_config_map = env.name + "-boot";
  l.job_token_secret = env.name + "-job-token";
  const bool rdma = env.transport == ir::Transport::rdma && env.cluster.network.rdma;
  // On Slurm the job has the host's own HCAs: nothing attaches them (no Multus status).
  l.rdma_attached = rdma && env.cluster.platform != ir::Platform::slurm &&
                    env.cluster.platform != ir::Platform::local;
  // Which admission lets such a container in is the target's (openshift::env_scc on
  // OpenShift), the namespace's Pod Security level on Kubernetes.
  l.root_with_ipc_lock = rdma && !env.cluster.security.unlimited_memlock;
  l.image_tools = tools_of(env);
  l.image_name = env.image.name.empty() ? env.name : image_object_name(env.image, l.image_tools);
  l.image_tag = l.image_name + ":" + env.image.tag;
  l.shared_service_account = !env.cluster.security.service_account.empty();
  for (ir::Service s : env.services) {
    l.services.push_back(exposed(s, env.name));
    // jupyter_server's ServerApp exits 1 as UID 0 ("Running as root is not recommended. Use
    // --allow-root to bypass.", jupyter_server/serverapp.py) unless allow_root is set. Pods
    // with RDMA run as root; Slurm jobs run as the submitting user.
    if (s == ir::Service::jupyter && l.root_with_ipc_lock &&
        env.cluster.platform != ir::Platform::slurm) {
      l.services.back().argv.push_back("--ServerApp.allow_root=True");
    }
  }
  l.labels = env.labels;
  l.labels["app.kubernetes.io/instance"] = env.name;
  l.labels["app.kubernetes.io/managed-by"] = "mlenvc";
  l.labels["app.kubernetes.io/part-of"] = env.cluster.name;
  l.selector["app.kubernetes.io/instance"] = env.name;
  l.shared_labels["app.kubernetes.io/managed-by"] = "mlenvc";
  return l;
}

}  // namespace mlenv::target
