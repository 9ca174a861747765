// What the platform does with the emitted objects, modelled from its documentation and source,
// and checked on every IR fixture and on every example's golden tree. Schema validity says an
// object is accepted; these say that the pod then works: RDMA reaches the fabric, runs finish,
// services answer, and only the right people get in.

#include <yaml-cpp/yaml.h>
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "tests/targets/fixtures.h"
#include "tests/targets/test_util.h"

using namespace mlenv;
using namespace mlenv::testing;

namespace {

// An output tree: path -> bytes, from a render or from a golden directory on disk.
using Tree = std::map<std::string, std::string>;

Tree tree_of(const target::Output& out) {
  Tree t;
  for (const target::File& f : out.files) t[f.path] = f.content;
  return t;
}

Tree tree_on_disk(const std::filesystem::path& root) {
  Tree t;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
    if (!entry.is_regular_file()) continue;
    std::ifstream in(entry.path(), std::ios::binary);
    std::stringstream bytes;
    bytes << in.rdbuf();
    t[std::filesystem::relative(entry.path(), root).string()] = bytes.str();
  }
  return t;
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Whether every plan.json of the tree is OpenShift's: this file models OpenShift's admission
// (SCCs, Routes, BuildConfigs); kubernetes_test.cc tests the Kubernetes target.
bool on_openshift(const Tree& tree) {
  for (const auto& [path, bytes] : tree) {
    if (ends_with(path, "/plan.json") &&
        bytes.find("\"platform\": \"openshift\"") == std::string::npos) {
      return false;
    }
  }
  return true;
}

// Every fixture program rendered, and every OpenShift example as its golden tree (which the
// golden tests hold equal to what mlenvc emits).
std::vector<std::pair<std::string, Tree>> all_trees() {
  std::vector<std::pair<std::string, Tree>> out;
  for (auto& [name, program] : all_fixtures()) {
    Diagnostics d;
    out.emplace_back("fixture " + name, tree_of(render(program, d)));
  }
  std::filesystem::path examples = std::filesystem::path(MLENV_GOLDEN_DIR) / "examples";
  for (const auto& entry : std::filesystem::directory_iterator(examples)) {
    Tree tree = tree_on_disk(entry.path());
    if (on_openshift(tree)) {
      out.emplace_back("example " + entry.path().filename().string(), std::move(tree));
    }
  }
  return out;
}

std::string dir_of(const std::string& path) {
  return path.substr(0, path.rfind('/'));
}

// One env's workload as the platform sees it.
struct Workload {
  std::string path;
  YAML::Node object;
  YAML::Node pod;  ///< spec.template.spec
  YAML::Node annotations;
  YAML::Node boot;  ///< boot.json beside it
  std::string dockerfile;
  YAML::Node plan;  ///< plan.json beside it
};

std::vector<Workload> workloads(const Tree& tree) {
  std::vector<Workload> out;
  for (const auto& [path, bytes] : tree) {
    std::string file = path.substr(path.rfind('/') + 1);
    if (!ends_with(file, ".yaml") ||
        (file.rfind("statefulset-", 0) != 0 && file.rfind("job-", 0) != 0)) {
      continue;
    }
    Workload w;
    w.path = path;
    w.object = YAML::Load(bytes);
    w.pod = w.object["spec"]["template"]["spec"];
    w.annotations = w.object["spec"]["template"]["metadata"]["annotations"];
    w.boot = YAML::Load(tree.at(dir_of(path) + "/boot.json"));
    w.dockerfile = tree.at(dir_of(path) + "/Dockerfile");
    w.plan = YAML::Load(tree.at(dir_of(path) + "/plan.json"));
    out.push_back(std::move(w));
  }
  return out;
}

YAML::Node find_named(const YAML::Node& list, const std::string& name) {
  for (const YAML::Node& item : list) {
    if (item["name"].as<std::string>() == name) return item;
  }
  return YAML::Node();
}

// ---- The container's process, as SCC admission, the kubelet and the kernel make it ----------

// How an SCC picks and checks UIDs and capabilities (openshift/api security/v1
// SecurityContextConstraints; apiserver-library-go pkg/securitycontextconstraints).
struct Scc {
  std::string run_as_user;  ///< MustRunAsRange | RunAsAny | MustRunAsNonRoot
  std::set<std::string> allowed_capabilities;
};

// restricted-v2 as OpenShift ships it: UIDs from the namespace's range, drop ALL, and at most
// NET_BIND_SERVICE added back.
const Scc kRestrictedV2{"MustRunAsRange", {"NET_BIND_SERVICE"}};
// Every namespace's UID range starts far above 0 (openshift.io/sa.scc.uid-range, e.g.
// 1000680000/10000): 0 and 65534 are always outside it.
constexpr long kRangeStart = 1000680000;

Scc scc_named(const std::string& name, const Tree& tree) {
  if (name == "restricted-v2") return kRestrictedV2;
  for (const auto& [path, bytes] : tree) {
    if (path.find("/_admin/securitycontextconstraints-" + name + ".yaml") == std::string::npos) {
      continue;
    }
    YAML::Node scc = YAML::Load(bytes);
    Scc out{scc["runAsUser"]["type"].as<std::string>(), {}};
    for (const YAML::Node& c : scc["allowedCapabilities"])
      out.allowed_capabilities.insert(c.as<std::string>());
    return out;
  }
  // A cluster's own SCC (seeds/002's nccl-scc): the language reference requires RunAsAny and
  // IPC_LOCK of it.
  return {"RunAsAny", {"IPC_LOCK"}};
}

// The default capabilities CRI-O gives a container (crio.conf default_capabilities).
const std::set<std::string> kRuntimeDefaults = {"CHOWN",   "DAC_OVERRIDE",     "FSETID",
                                                "FOWNER",  "SETGID",           "SETUID",
                                                "SETPCAP", "NET_BIND_SERVICE", "KILL"};

struct Process {
  long uid = -1;
  std::set<std::string> effective;
  std::string refused;  ///< why admission or the kubelet refuses the container, "" if it runs
};

// The image's user: the last USER of the Dockerfile's final stage.
long image_user(const std::string& dockerfile) {
  long user = 0;
  std::istringstream lines(dockerfile);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("USER ", 0) == 0) user = std::stol(line.substr(5));
  }
  return user;
}

Process run_container(const YAML::Node& pod, const YAML::Node& container, const Scc& scc,
                      long image_uid) {
  Process p;
  const YAML::Node none = YAML::Load("{}");
  YAML::Node sc = container["securityContext"] ? container["securityContext"] : none;
  YAML::Node pod_sc = pod["securityContext"] ? pod["securityContext"] : none;
  std::optional<long> uid;
  if (sc["runAsUser"])
    uid = sc["runAsUser"].as<long>();
  else if (pod_sc["runAsUser"])
    uid = pod_sc["runAsUser"].as<long>();
  if (scc.run_as_user == "MustRunAsRange") {
    if (uid && *uid < kRangeStart) p.refused = "runAsUser outside the namespace's UID range";
    if (!uid) uid = kRangeStart;  // the SCC assigns the range's first UID
  } else if (scc.run_as_user == "MustRunAsNonRoot" && uid && *uid == 0) {
    p.refused = "MustRunAsNonRoot refuses UID 0";
  }
  p.uid = uid ? *uid : image_uid;
  bool non_root = sc["runAsNonRoot"] ? sc["runAsNonRoot"].as<bool>()
                                     : pod_sc["runAsNonRoot"] && pod_sc["runAsNonRoot"].as<bool>();
  // kubelet: "container has runAsNonRoot and image will run as root".
  if (non_root && p.uid == 0) p.refused = "runAsNonRoot with UID 0";

  std::set<std::string> bounding = kRuntimeDefaults;
  for (const YAML::Node& c : sc["capabilities"]["drop"]) {
    if (c.as<std::string>() == "ALL") bounding.clear();
    bounding.erase(c.as<std::string>());
  }
  for (const YAML::Node& c : sc["capabilities"]["add"]) {
    if (!scc.allowed_capabilities.count(c.as<std::string>())) {
      p.refused = "capability may not be added: " + c.as<std::string>();
    }
    bounding.insert(c.as<std::string>());
  }
  // The runtime sets no ambient capabilities, so after execve a non-root process has empty
  // permitted and effective sets whatever was added (capabilities(7) "Transformation of
  // capabilities during execve()"; kubernetes/kubernetes#56374). UID 0 gets the bounding set.
  if (p.uid == 0) p.effective = bounding;
  return p;
}

}  // namespace

TEST_CASE(
    "the process model reproduces kubernetes#56374: IPC_LOCK added to a non-root UID is "
    "not effective",
    "[platform][security]") {
  // The pod the previous mlenvc emitted: restricted-style non-root, IPC_LOCK added, under an
  // SCC that assigns UIDs from the namespace's range. Its probe saw CapEff 0 and chose TCP.
  YAML::Node pod = YAML::Load("securityContext: {runAsNonRoot: true}");
  YAML::Node container = YAML::Load(
      "securityContext: {runAsNonRoot: true, capabilities: {drop: [ALL], add: [IPC_LOCK]}}");
  Process old = run_container(pod, container, {"MustRunAsRange", {"IPC_LOCK"}}, 1001);
  CHECK(old.refused.empty());
  CHECK(old.uid >= kRangeStart);
  CHECK(old.effective.empty());
  // seeds/001's working pods ran as root: CapPrm 0x45fb holds bit 14 (CAP_IPC_LOCK).
  YAML::Node root =
      YAML::Load("securityContext: {runAsUser: 0, capabilities: {drop: [ALL], add: [IPC_LOCK]}}");
  CHECK(run_container(YAML::Node(), root, {"RunAsAny", {"IPC_LOCK"}}, 1001).effective ==
        std::set<std::string>{"IPC_LOCK"});
  CHECK((0x45fb >> 14 & 1) == 1);
}

TEST_CASE("IPC_LOCK is effective in every RDMA container, and nothing else is",
          "[platform][security]") {
  std::size_t rdma_pods = 0;
  for (const auto& [name, tree] : all_trees()) {
    for (const Workload& w : workloads(tree)) {
      INFO(name << " " << w.path);
      std::string scc_name = w.annotations["openshift.io/required-scc"].as<std::string>();
      Scc scc = scc_named(scc_name, tree);
      long image_uid = image_user(w.dockerfile);
      CHECK(image_uid != 0);
      const bool rdma = w.boot["transport"].as<std::string>() != "tcp";
      const bool memlock_granted = scc_name == "restricted-v2";
      for (const YAML::Node& c : w.pod["containers"]) {
        std::string container = c["name"].as<std::string>();
        INFO(container);
        Process p = run_container(w.pod, c, scc, image_uid);
        CHECK(p.refused == "");
        CHECK(c["securityContext"]["allowPrivilegeEscalation"].as<bool>() == false);
        CHECK(c["securityContext"]["privileged"].as<bool>() == false);
        if (container == "mlenv" && rdma && !memlock_granted) {
          ++rdma_pods;
          CHECK(p.effective == std::set<std::string>{"IPC_LOCK"});
        } else {
          // TCP pods, pods on a runtime that grants unlimited memlock, and every sidecar run
          // without root and without any capability.
          CHECK(p.uid != 0);
          CHECK(p.effective.empty());
          CHECK_FALSE(c["securityContext"]["capabilities"]["add"]);
        }
      }
      CHECK_FALSE(w.pod["hostNetwork"]);
      CHECK_FALSE(w.pod["hostPID"]);
      CHECK_FALSE(w.pod["hostIPC"]);
      for (const YAML::Node& v : w.pod["volumes"]) CHECK_FALSE(v["hostPath"]);
    }
  }
  CHECK(rdma_pods >= 4);
}

TEST_CASE("every RDMA pod is attached to each rail and requests its device", "[platform][rdma]") {
  // An unprivileged pod gets /dev/infiniband/uverbs* only from a device plugin (the SR-IOV
  // network device plugin or the RDMA shared device plugin allocate the char devices), and
  // net1..N only from Multus (`k8s.v1.cni.cncf.io/networks`, multi-net-spec).
  std::size_t checked = 0;
  for (const auto& [name, tree] : all_trees()) {
    for (const Workload& w : workloads(tree)) {
      INFO(name << " " << w.path);
      if (w.boot["transport"].as<std::string>() == "tcp") {
        CHECK_FALSE(w.annotations["k8s.v1.cni.cncf.io/networks"]);
        continue;
      }
      ++checked;
      YAML::Node rails = w.boot["rdma"]["rails"];
      REQUIRE(rails.size() > 0);
      YAML::Node networks =
          YAML::Load(w.annotations["k8s.v1.cni.cncf.io/networks"].as<std::string>());
      YAML::Node limits = w.pod["containers"][0]["resources"]["limits"];
      std::map<std::string, int> wanted;
      for (const YAML::Node& rail : rails) {
        ++wanted[rail["resource"].as<std::string>()];
        bool attached = false;
        for (const YAML::Node& n : networks) {
          attached |= n["name"].as<std::string>() == rail["network"].as<std::string>() &&
                      n["interface"].as<std::string>() == rail["interface"].as<std::string>();
        }
        CHECK(attached);
      }
      CHECK(networks.size() == rails.size());
      for (const auto& [resource, count] : wanted) CHECK(limits[resource].as<int>() == count);
      // mlenv-boot maps each rail to the HCA this pod really got from Multus' network-status.
      YAML::Node podinfo = find_named(w.pod["volumes"], "podinfo");
      REQUIRE(podinfo);
      CHECK(podinfo["downwardAPI"]["items"][0]["fieldRef"]["fieldPath"].as<std::string>() ==
            "metadata.annotations['k8s.v1.cni.cncf.io/network-status']");
      CHECK(w.boot["network_status"].as<std::string>() == "/etc/podinfo/network-status");
    }
  }
  CHECK(checked >= 4);
}

TEST_CASE("RoCE attachments carry IPAM, InfiniBand ones use the ib-sriov CNI", "[platform][rdma]") {
  // A RoCE v2 GID exists only for an IP address of the VF's netdev (the kernel's roce_gid_mgmt
  // fills the GID table from netdev addresses), and the SR-IOV CNI configures an IB VF only as
  // `ib-sriov` (k8snetworkplumbingwg/ib-sriov-cni).
  std::size_t roce = 0, ib = 0;
  for (const auto& [name, tree] : all_trees()) {
    for (const auto& [path, bytes] : tree) {
      if (path.find("/networkattachmentdefinition-") == std::string::npos) continue;
      INFO(name << " " << path);
      YAML::Node nad = YAML::Load(bytes);
      YAML::Node config = YAML::Load(nad["spec"]["config"].as<std::string>());
      std::string type = config["type"].as<std::string>();
      CHECK((type == "sriov" || type == "ib-sriov"));
      CHECK(nad["metadata"]["annotations"]["k8s.v1.cni.cncf.io/resourceName"]);
      if (type == "sriov") {
        ++roce;
        CHECK(config["ipam"]["type"]);
        if (config["ipam"]["type"].as<std::string>() == "whereabouts")
          CHECK(config["ipam"]["range"]);
      } else {
        ++ib;
      }
    }
  }
  CHECK(roce >= 8);
  CHECK(ib >= 2);
}

TEST_CASE("a run is an Indexed Job that finishes and restarts only as a gang", "[platform][run]") {
  std::size_t runs = 0, devs = 0;
  for (const auto& [name, tree] : all_trees()) {
    for (const Workload& w : workloads(tree)) {
      INFO(name << " " << w.path);
      std::string kind = w.object["kind"].as<std::string>();
      std::string env_kind = w.plan["env_kind"].as<std::string>();
      int nodes = w.boot["nnodes"].as<int>();
      const std::string name = w.object["metadata"]["name"].as<std::string>();
      const std::string ns = w.object["metadata"]["namespace"].as<std::string>();
      if (env_kind == "dev") {
        ++devs;
        CHECK(kind == "StatefulSet");
        CHECK(w.boot["command"].size() == 0);
        // A StatefulSet pod is `<name>-<ordinal>`, resolvable through the governing Service
        // (https://kubernetes.io/docs/concepts/workloads/controllers/statefulset/#stable-network-id).
        CHECK(w.boot["rank"]["hostname_ordinal"].as<bool>());
        CHECK(w.boot["rendezvous"]["host"].as<std::string>() ==
              name + "-0." + w.object["spec"]["serviceName"].as<std::string>() + "." + ns + ".svc");
        continue;
      }
      ++runs;
      REQUIRE(kind == "Job");
      YAML::Node spec = w.object["spec"];
      // batch/v1 Job: Indexed pods get JOB_COMPLETION_INDEX (the runtime's node rank) and the
      // hostname `<job>-<index>`, resolvable through the headless Service named as subdomain.
      CHECK(spec["completionMode"].as<std::string>() == "Indexed");
      CHECK(spec["completions"].as<int>() == nodes);
      CHECK(spec["parallelism"].as<int>() == nodes);
      CHECK(w.pod["restartPolicy"].as<std::string>() == "Never");
      CHECK(w.boot["rank"]["env"].as<std::string>() == "JOB_COMPLETION_INDEX");
      CHECK(w.boot["rendezvous"]["host"].as<std::string>() ==
            name + "-0." + w.pod["subdomain"].as<std::string>() + "." + ns + ".svc");
      CHECK(w.boot["rendezvous"]["port"].as<int>() != w.boot["master_port"].as<int>());
      // backoffLimit counts failed pods; a gang failure counts one (the test below).
      CHECK(spec["backoffLimit"].as<int>() >= 0);
      CHECK(spec["podReplacementPolicy"].as<std::string>() == "Failed");
      YAML::Node fatal = spec["podFailurePolicy"]["rules"][0];
      CHECK(fatal["action"].as<std::string>() == "FailJob");
      // mlenv-boot's transport and config errors (runtime/exit_code.h) fail the run at once.
      CHECK(fatal["onExitCodes"]["values"].as<std::vector<int>>() == std::vector<int>{73, 78});
      // A run never mounts per-pod claims: a Job has no volumeClaimTemplates.
      CHECK_FALSE(spec["volumeClaimTemplates"]);
      if (env_kind == "acceptance") {
        CHECK(w.boot["command"].size() == 0);
        std::vector<std::string> argv =
            w.pod["containers"][0]["command"].as<std::vector<std::string>>();
        CHECK(std::find(argv.begin(), argv.end(), "--nccl-check") != argv.end());
        CHECK(w.boot["nccl_check"]["min_busbw_gbps"]);
      } else {
        CHECK(w.boot["command"].size() > 0);
      }
    }
  }
  CHECK(runs >= 3);
  CHECK(devs >= 3);
}

TEST_CASE("services run on rank 0 and answer through a reencrypt Route to an HTTPS proxy",
          "[platform][services]") {
  for (const auto& [name, tree] : all_trees()) {
    for (const Workload& w : workloads(tree)) {
      const std::string dir = dir_of(w.path);
      for (const YAML::Node& service : w.boot["services"]) {
        std::string tool = service["name"].as<std::string>();
        INFO(name << " " << w.path << " " << tool);
        std::string object = w.object["metadata"]["name"].as<std::string>() + "-" + tool;
        YAML::Node svc = YAML::Load(tree.at(dir + "/service-" + object + ".yaml"));
        YAML::Node route = YAML::Load(tree.at(dir + "/route-" + object + ".yaml"));
        // Only pod 0 runs the tools (mlenv-boot starts services on node rank 0).
        YAML::Node selector = svc["spec"]["selector"];
        CHECK((selector["statefulset.kubernetes.io/pod-name"] ||
               selector["batch.kubernetes.io/job-completion-index"]));
        if (selector["batch.kubernetes.io/job-completion-index"]) {
          CHECK(selector["batch.kubernetes.io/job-completion-index"].as<std::string>() == "0");
        }
        // The service CA writes a serving certificate for the Service; the proxy serves it and
        // the router re-encrypts to it, trusting the service CA without a destination CA.
        std::string secret =
            svc["metadata"]["annotations"]["service.beta.openshift.io/serving-cert-secret-name"]
                .as<std::string>();
        CHECK(route["spec"]["tls"]["termination"].as<std::string>() == "reencrypt");
        CHECK(route["spec"]["tls"]["insecureEdgeTerminationPolicy"].as<std::string>() ==
              "Redirect");
        YAML::Node proxy = find_named(w.pod["containers"], "oauth-proxy-" + tool);
        REQUIRE(proxy);
        std::vector<std::string> args = proxy["args"].as<std::vector<std::string>>();
        auto has = [&](const std::string& prefix) {
          return std::any_of(args.begin(), args.end(),
                             [&](const std::string& a) { return a.rfind(prefix, 0) == 0; });
        };
        CHECK(has("--https-address=:"));
        CHECK(has("--tls-cert=/etc/tls/" + tool + "/"));
        YAML::Node cert = find_named(w.pod["volumes"], tool + "-tls");
        REQUIRE(cert);
        CHECK(cert["secret"]["secretName"].as<std::string>() == secret);
        CHECK(proxy["readinessProbe"]["httpGet"]["scheme"].as<std::string>() == "HTTPS");
        // A viewer must not get a shell: the `view` role may get, list and watch services, so
        // the proxy's SubjectAccessReview asks for `update` on this Service (edit and admin).
        for (const std::string& a : args) {
          if (a.rfind("--openshift-sar=", 0) != 0) continue;
          YAML::Node sar = YAML::Load(a.substr(16));
          CHECK(sar["verb"].as<std::string>() == "update");
          CHECK(sar["resourceName"].as<std::string>() == object);
        }
        // jupyter_server refuses a non-local Host header (the Route's, which oauth-proxy
        // passes on: pass-host-header defaults to true) unless remote access is allowed; it
        // still listens on 127.0.0.1 only.
        std::vector<std::string> argv = service["argv"].as<std::vector<std::string>>();
        if (tool == "jupyter") {
          CHECK(std::count(argv.begin(), argv.end(), "--ServerApp.allow_remote_access=True") == 1);
          CHECK(std::count(argv.begin(), argv.end(), "--ip=127.0.0.1") == 1);
        }
      }
    }
  }
}

TEST_CASE("the kubelet's SIGKILL comes after mlenv-boot's worst-case stop", "[platform][run]") {
  for (const auto& [name, tree] : all_trees()) {
    for (const Workload& w : workloads(tree)) {
      INFO(name << " " << w.path);
      // SIGTERM to the children, SIGKILL after grace_s; a stop under way when the kubelet's
      // SIGTERM arrives starts a second grace period (runtime/supervisor.cc).
      double grace = w.boot["timeouts"]["grace_s"].as<double>();
      CHECK(w.pod["terminationGracePeriodSeconds"].as<double>() > 2 * grace + 10);
    }
  }
}

TEST_CASE("oc exec shells see mlenv-boot's NCCL and rank variables", "[platform][shell]") {
  for (const auto& [name, tree] : all_trees()) {
    for (const Workload& w : workloads(tree)) {
      INFO(name << " " << w.path);
      // mlenv-boot writes the file into a volume that every exec'd shell of the container sees,
      // and the image sources it for login shells, interactive bash and an interactive sh.
      std::string file = w.boot["shell_env"].as<std::string>();
      CHECK(file.rfind("/run/mlenv/", 0) == 0);
      bool mounted = false;
      for (const YAML::Node& m : w.pod["containers"][0]["volumeMounts"]) {
        mounted |= m["mountPath"].as<std::string>() == "/run/mlenv" && !m["readOnly"];
      }
      CHECK(mounted);
      CHECK(w.dockerfile.find("> /etc/profile.d/mlenv.sh") != std::string::npos);
      CHECK(w.dockerfile.find("/etc/bash.bashrc") != std::string::npos);
      CHECK(w.dockerfile.find("\nENV ENV=/etc/profile.d/mlenv.sh\n") != std::string::npos);
    }
  }
}

// Issue 31 item 1: DeepSpeed's runner reads the hostfile seconds after each node writes it,
// truncates it to --num_nodes and asserts the node rank fits (deepspeedai/DeepSpeed
// deepspeed/launcher/runner.py, main): on a claim that the cluster's envs share, another env's
// start rewrites it under this one. Every file mlenv-boot writes for a launcher lies in a volume
// of the pod's own, never on a claim.
TEST_CASE("launcher files lie in the pod's own volume, never on a shared claim",
          "[platform][storage]") {
  for (const auto& [name, tree] : all_trees()) {
    for (const Workload& w : workloads(tree)) {
      INFO(name << " " << w.path);
      std::map<std::string, std::string> volume_of_mount;
      for (const YAML::Node& m : w.pod["containers"][0]["volumeMounts"]) {
        volume_of_mount[m["mountPath"].as<std::string>()] = m["name"].as<std::string>();
      }
      for (const char* key : {"hostfile", "deepspeed_env"}) {
        const std::string file = w.boot[key].as<std::string>();
        INFO(key << " = " << file);
        // The longest mount that holds the file is its volume.
        std::string mount;
        for (const auto& [path, volume] : volume_of_mount) {
          if (file.rfind(path + "/", 0) == 0 && path.size() > mount.size()) mount = path;
        }
        REQUIRE_FALSE(mount.empty());
        YAML::Node volume = find_named(w.pod["volumes"], volume_of_mount[mount]);
        CHECK(volume["emptyDir"]);
        CHECK_FALSE(volume["persistentVolumeClaim"]);
      }
    }
  }
}

TEST_CASE("new builds reach the pods: apply resolves the built digest into the workload",
          "[platform][build]") {
  for (const auto& [name, tree] : all_trees()) {
    for (const Workload& w : workloads(tree)) {
      INFO(name << " " << w.path);
      // A mutable tag with IfNotPresent on nodes that cached it never rolls; apply replaces
      // the build action's `image` in the workload by the ImageStreamTag's digest reference.
      YAML::Node build;
      for (const YAML::Node& a : w.plan["actions"]) {
        if (a["action"].as<std::string>() == "build") build = a;
      }
      REQUIRE(build);
      CHECK(w.pod["containers"][0]["image"].as<std::string>() == build["image"].as<std::string>());
      std::string bc =
          dir_of(w.path) + "/buildconfig-" + build["build_config"].as<std::string>() + ".yaml";
      YAML::Node config = YAML::Load(tree.at(bc));
      // oc start-build of a Binary source needs --from-dir (apply passes the plan root).
      CHECK(config["spec"]["source"]["type"].as<std::string>() == "Binary");
      CHECK(config["spec"]["output"]["to"]["name"].as<std::string>() ==
            build["image_stream_tag"].as<std::string>());
    }
  }
}

TEST_CASE("researchers apply without cluster-admin: SCC grants are the platform team's",
          "[platform][security]") {
  for (const auto& [name, tree] : all_trees()) {
    for (const Workload& w : workloads(tree)) {
      INFO(name << " " << w.path);
      std::string scc = w.annotations["openshift.io/required-scc"].as<std::string>();
      YAML::Node grants = w.plan["grants"];
      for (const YAML::Node& o : w.plan["objects"]) {
        std::string kind = o["kind"].as<std::string>();
        // Granting `use` of an SCC needs that permission already (RBAC escalation check):
        // Roles naming an SCC and cluster-scoped objects are applied by `apply --admin` only.
        if (kind == "Role" || kind == "RoleBinding" || kind == "SecurityContextConstraints") {
          CHECK(o["admin"].as<bool>());
          CHECK(o["file"].as<std::string>().rfind("../_admin/", 0) == 0);
        }
      }
      if (scc == "restricted-v2") {
        CHECK(grants.size() == 0);  // every authenticated user may use restricted-v2
      } else {
        REQUIRE(grants.size() == 1);
        CHECK(grants[0]["scc"].as<std::string>() == scc);
        CHECK(grants[0]["service_account"].as<std::string>() ==
              w.pod["serviceAccountName"].as<std::string>());
      }
      // The run's job token and the oauth-proxy cookie Secret are apply's to create, never a
      // file of the plan. The token is hex, as an environment variable holds it, and is the
      // Secret the pod reads MLENV_JOB_TOKEN from.
      const bool services = w.boot["services"].size() > 0;
      REQUIRE(w.plan["secrets"].size() == (services ? 2u : 1u));
      const YAML::Node token = w.plan["secrets"][0];
      CHECK(token["key"].as<std::string>() == "token");
      CHECK(token["random_bytes"].as<int>() == 32);
      CHECK(token["encoding"].as<std::string>() == "hex");
      bool read = false;
      for (const YAML::Node& container : w.pod["containers"]) {
        for (const YAML::Node& var : container["env"]) {
          if (var["name"].as<std::string>() != "MLENV_JOB_TOKEN") continue;
          read = var["valueFrom"]["secretKeyRef"]["name"].as<std::string>() ==
                     token["name"].as<std::string>() &&
                 var["valueFrom"]["secretKeyRef"]["key"].as<std::string>() == "token";
        }
      }
      CHECK(read);
      if (services) CHECK(w.plan["secrets"][1]["random_bytes"].as<int>() == 32);
    }
  }
}

TEST_CASE("existing claims are mounted, never created", "[platform][storage]") {
  Diagnostics d;
  Tree tree = tree_of(render(program_of({memlock_env()}), d));
  CHECK(d.all().empty());
  std::vector<Workload> all = workloads(tree);
  REQUIRE(all.size() == 1);
  YAML::Node workspace = find_named(all[0].pod["volumes"], "workspace");
  REQUIRE(workspace);
  CHECK(workspace["persistentVolumeClaim"]["claimName"].as<std::string>() == "team-workspace");
  // datasets keeps its per-pod claim template; workspace has none.
  YAML::Node templates = all[0].object["spec"]["volumeClaimTemplates"];
  REQUIRE(templates.size() == 1);
  CHECK(templates[0]["metadata"]["name"].as<std::string>() == "datasets");
}

TEST_CASE("a run's failure on every node at once uses one restart, an eviction none",
          "[platform][run]") {
  // batch/v1 Job (kubernetes pkg/apis/batch/types.go, PodFailurePolicy and its rules; the
  // controller's pkg/controller/job/pod_failure_policy.go matchPodFailurePolicy): the rules match
  // in order and the first decides; Ignore "indicates that the counter towards the .backoffLimit
  // is not incremented and a replacement pod is created"; a failed pod no rule matches counts,
  // and the Job fails once more pods failed than backoffLimit. mlenv-boot exits 76 on every
  // node stopped by another node (runtime/supervisor.cc, tests/runtime/rendezvous_test.cc), so
  // a failure of one node counts its pod only; but one fault can fail every node's own command
  // in the same second (an NCCL watchdog timeout), each pod counting (issue 31 item 5): the
  // limit is `restarts` × nodes, so that such a failure uses one restart, not the run. An
  // evicted pod carries DisruptionTarget.
  ir::Env run = hkim_env();
  run.nodes = 4;
  run.restarts = 2;
  Diagnostics d;
  Tree tree = tree_of(render(program_of({run}), d));
  REQUIRE_FALSE(d.has_errors());
  std::vector<Workload> all = workloads(tree);
  REQUIRE(all.size() == 1);
  REQUIRE(all[0].object["kind"].as<std::string>() == "Job");
  YAML::Node spec = all[0].object["spec"];
  CHECK(spec["backoffLimit"].as<int>() == 2 * 4);
  YAML::Node rules = spec["podFailurePolicy"]["rules"];
  REQUIRE(rules.size() == 3);
  CHECK(rules[0]["action"].as<std::string>() == "FailJob");
  CHECK(rules[1]["action"].as<std::string>() == "Ignore");
  CHECK(rules[1]["onExitCodes"]["containerName"].as<std::string>() == "mlenv");
  CHECK(rules[1]["onExitCodes"]["operator"].as<std::string>() == "In");
  CHECK(rules[1]["onExitCodes"]["values"].as<std::vector<int>>() == std::vector<int>{76});
  CHECK(rules[2]["action"].as<std::string>() == "Ignore");
  CHECK(rules[2]["onPodConditions"][0]["type"].as<std::string>() == "DisruptionTarget");
  // The container the codes are read from is mlenv-boot's.
  CHECK(all[0].pod["containers"][0]["name"].as<std::string>() == "mlenv");
}
