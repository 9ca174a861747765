// The Kubernetes target (`platform = kubernetes`): JobSets, Kueue, no OpenShift objects, and
// strict validation against the upstream schemas and the JobSet and Kueue CRDs.

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>

#include "targets/common/env_layout.h"
#include "tests/targets/fixtures.h"
#include "tests/targets/schemas.h"
#include "tests/targets/test_util.h"

using namespace mlenv;
using namespace mlenv::testing;

namespace {

// `env` moved to a Kubernetes cluster: the fields only OpenShift has are dropped, a registry
// added, as a program would change them.
ir::Env on_kubernetes(ir::Env env) {
  env.cluster.platform = ir::Platform::kubernetes;
  env.cluster.security.scc.clear();
  env.image.registry = "registry.example.com/ml";
  return env;
}

ir::Program kubernetes_program(std::vector<ir::Env> envs) {
  for (ir::Env& env : envs) env = on_kubernetes(std::move(env));
  return program_of(std::move(envs));
}

// Every fixture on Kubernetes, one program each.
std::vector<std::pair<std::string, ir::Program>> kubernetes_fixtures() {
  std::vector<std::pair<std::string, ir::Program>> out;
  for (auto& [name, program] : all_fixtures()) {
    out.emplace_back(name, kubernetes_program(program.envs));
  }
  return out;
}

std::vector<YAML::Node> stream_objects(const target::Output& out) {
  std::vector<YAML::Node> objects;
  for (std::size_t i : out.stream) objects.push_back(YAML::Load(out.files[i].content));
  return objects;
}

YAML::Node boot_of(const target::Output& out, const std::string& dir) {
  const target::File* boot = find_file(out, dir + "/boot.json");
  REQUIRE(boot);
  return YAML::Load(boot->content);
}

}  // namespace

TEST_CASE("kubernetes: every object validates strictly against the schemas and CRDs",
          "[kubernetes][openapi]") {
  std::string why;
  const openapi::Validator* v = crd_validator(why);
  if (!v) FAIL(why);
  std::size_t validated = 0, jobsets = 0;
  for (auto& [name, program] : kubernetes_fixtures()) {
    Diagnostics d;
    target::Output out = render(program, d);
    INFO(name);
    CHECK_FALSE(d.has_errors());
    for (std::size_t i : out.stream) {
      const target::File& f = out.files[i];
      INFO(f.path);
      YAML::Node object = YAML::Load(f.content);
      std::string kind = object["kind"].as<std::string>();
      // Nothing OpenShift-only.
      for (const char* openshift : {"Route", "BuildConfig", "ImageStream",
                                    "SecurityContextConstraints", "Role", "RoleBinding"}) {
        CHECK(kind != openshift);
      }
      CHECK(f.content.find("openshift.io/required-scc") == std::string::npos);
      jobsets += kind == "JobSet";
      for (const openapi::Issue& issue : v->validate_text(f.content)) {
        FAIL_CHECK(issue.path + ": " + issue.message);
      }
      ++validated;
    }
  }
  CHECK(jobsets >= 3);  // cairo, h-kim and the InfiniBand acceptance run
  CHECK(validated > 30);
}

TEST_CASE("kubernetes: the examples' golden objects validate strictly too",
          "[kubernetes][openapi]") {
  std::string why;
  const openapi::Validator* v = crd_validator(why);
  if (!v) FAIL(why);
  std::size_t validated = 0;
  const std::filesystem::path examples = std::filesystem::path(MLENV_GOLDEN_DIR) / "examples";
  for (const auto& entry : std::filesystem::recursive_directory_iterator(examples)) {
    const std::string path = entry.path().string();
    if (!entry.is_regular_file() || entry.path().extension() != ".yaml" ||
        path.find("-kubernetes/") == std::string::npos ||
        entry.path().filename() == "kustomization.yaml") {
      continue;
    }
    INFO(path);
    std::ifstream in(entry.path());
    std::stringstream text;
    text << in.rdbuf();
    for (const openapi::Issue& issue : v->validate_text(text.str())) {
      FAIL_CHECK(issue.path + ": " + issue.message);
    }
    ++validated;
  }
  CHECK(validated >= 15);  // acceptance-kubernetes and research-kubernetes
}

TEST_CASE("kubernetes: the CRD validator is generic and strict", "[kubernetes][openapi]") {
  std::string why;
  const openapi::Validator* v = crd_validator(why);
  if (!v) FAIL(why);
  auto issues = [&](const std::string& yaml) { return v->validate_text(yaml); };
  const std::string jobset =
      "apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\nmetadata:\n  name: a\nspec:\n"
      "  replicatedJobs:\n  - name: node\n    template:\n      spec:\n        template:\n"
      "          spec:\n            containers:\n            - name: c\n              image: x\n";
  CHECK(issues(jobset).empty());
  // An unknown field deep in the embedded pod template, a wrong type, a value off the enum.
  CHECK(issues(jobset + "              imagePullPolcy: Always\n").size() == 1);
  CHECK(issues(jobset + "  failurePolicy:\n    maxRestarts: \"3\"\n").size() == 1);
  CHECK(issues(jobset + "  successPolicy:\n    operator: Most\n").size() == 1);
  // A version the CRD does not serve is unknown.
  CHECK_FALSE(v->knows("jobset.x-k8s.io/v1alpha1", "JobSet"));
  CHECK(v->knows("kueue.x-k8s.io/v1beta1", "LocalQueue"));
  CHECK(issues("apiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\nmetadata:\n  name: q\n"
               "  namespace: ml\nspec:\n  clusterQueue: research\n")
            .empty());
  CHECK(issues("apiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\nmetadata:\n  name: q\n"
               "spec:\n  clusterQueu: research\n")
            .size() == 1);
}

TEST_CASE("kubernetes: the validation step refuses what JobSet's and Kueue's webhooks refuse",
          "[kubernetes][openapi][admission]") {
  std::string why;
  const openapi::Validator* v = crd_validator(why);
  if (!v) FAIL(why);
  auto issues = [&](const std::string& yaml) { return v->validate_text(yaml); };
  auto jobset = [](const std::string& name, int completions, const std::string& rest) {
    return "apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\nmetadata:\n  name: " + name +
           "\nspec:\n  replicatedJobs:\n  - name: node\n    replicas: 1\n    template:\n"
           "      spec:\n        completionMode: Indexed\n        completions: " +
           std::to_string(completions) +
           "\n        template:\n          metadata:\n            annotations:\n"
           "              kueue.x-k8s.io/podset-required-topology: kubernetes.io/hostname\n"
           "          spec:\n            containers:\n            - name: c\n"
           "              image: x\n" +
           rest;
  };
  const std::string rule =
      "  failurePolicy:\n    rules:\n    - name: RULE\n      action: FailJobSet\n";
  auto with_rule = [&](const std::string& name) {
    std::string r = rule;
    r.replace(r.find("RULE"), 4, name);
    return jobset("a", 2, r);
  };
  CHECK(issues(jobset("a", 2, "")).empty());
  // jobset pkg/webhooks/jobset_webhook.go: ruleNameFmt ^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$,
  // which the CRD does not carry: the name mlenvc used to emit passed the CRD.
  CHECK(issues(with_rule("mlenv_boot_fatal")).empty());
  CHECK(issues(with_rule("mlenv-boot-fatal")).size() == 1);
  CHECK(issues(with_rule("1st")).size() == 1);
  CHECK(issues(with_rule("ends_with:")).size() == 1);
  CHECK(issues(with_rule(std::string(129, 'a'))).size() == 1);
  // ValidateCreate: the longest pod name, `<jobset>-node-0-<completions - 1>` plus `-abcde`,
  // must be a DNS-1035 label: 51 characters and 12 pods give 67.
  CHECK(issues(jobset(std::string(51, 'a'), 12, "")).size() == 1);
  CHECK(issues(jobset(std::string(47, 'a'), 12, "")).empty());
  CHECK(issues(jobset(std::string(48, 'a'), 12, "")).size() == 1);
  CHECK(issues(jobset(std::string(48, 'a'), 10, "")).empty());
  // Kueue jobframework.ValidateQueueName: a DNS subdomain; ValidateTASPodSetRequest: the
  // topology level a label key, and one topology annotation at most.
  std::string queue = jobset("a", 2, "");
  queue.replace(queue.find("  name: a\n"), 10,
                "  name: a\n  labels:\n    kueue.x-k8s.io/queue-name: Team_A\n");
  CHECK(issues(queue).size() == 1);
  std::string level = jobset("a", 2, "");
  level.replace(level.find("kubernetes.io/hostname"), 22, "rack level");
  CHECK(issues(level).size() == 1);
  std::string two = jobset("a", 2, "");
  two.replace(two.find("          spec:\n            containers"), 0,
              "              kueue.x-k8s.io/podset-preferred-topology: rack\n");
  CHECK(issues(two).size() == 1);
}

TEST_CASE("kubernetes: check refuses a run whose JobSet pod names cannot fit (E0411)",
          "[kubernetes][admission]") {
  std::string why;
  const openapi::Validator* v = crd_validator(why);
  if (!v) FAIL(why);
  // 47 characters and 12 nodes: `<env>-node-0-11-abcde` is 63, which the webhook accepts.
  for (std::size_t length : {47, 48}) {
    ir::Env run = cairo_tcp_env();
    run.name = std::string(length - 2, 'r') + "-x";
    run.nodes = 12;
    Diagnostics d;
    target::Output out = render(kubernetes_program({run}), d);
    INFO(length);
    CHECK(has_code(d, Code::E0411) == (length == 48));
    if (length == 48) continue;
    const target::File* file =
        find_file(out, run.cluster.name + "/" + run.name + "/jobset-" + run.name + ".yaml");
    REQUIRE(file);
    CHECK(v->validate_text(file->content).empty());
  }
}

TEST_CASE("kubernetes: a run is a JobSet of one Indexed Job, restarted as a gang",
          "[kubernetes][run]") {
  ir::Env run = hkim_env();
  run.restarts = 3;
  run.ttl_seconds = 600;
  Diagnostics d;
  target::Output out = render(kubernetes_program({run}), d);
  REQUIRE_FALSE(d.has_errors());
  const std::string dir = run.cluster.name + "/" + run.name;
  const target::File* file = find_file(out, dir + "/jobset-" + run.name + ".yaml");
  REQUIRE(file);
  YAML::Node jobset = YAML::Load(file->content);
  YAML::Node spec = jobset["spec"];
  // jobset.x-k8s.io/v1alpha2: pods are `<jobset>-<replicated job>-<job index>-<pod index>`
  // resolvable under `network.subdomain` (kubernetes-sigs/jobset,
  // site/static/examples/simple/jobset-with-network.yaml).
  CHECK(spec["network"]["enableDNSHostnames"].as<bool>());
  const std::string subdomain = spec["network"]["subdomain"].as<std::string>();
  CHECK(find_file(out, dir + "/service-" + subdomain + ".yaml"));
  REQUIRE(spec["replicatedJobs"].size() == 1);
  YAML::Node replicated = spec["replicatedJobs"][0];
  CHECK(replicated["replicas"].as<int>() == 1);
  YAML::Node job = replicated["template"]["spec"];
  CHECK(job["completionMode"].as<std::string>() == "Indexed");
  CHECK(job["completions"].as<int>() == run.nodes);
  CHECK(job["parallelism"].as<int>() == run.nodes);
  // One failed pod fails the Job, and the JobSet restarts every Job together: the gang.
  CHECK(job["backoffLimit"].as<int>() == 0);
  CHECK(spec["failurePolicy"]["maxRestarts"].as<int>() == 3);
  // mlenv-boot's config and transport exits fail the Job by its PodFailurePolicy: no restart.
  CHECK(spec["failurePolicy"]["rules"][0]["action"].as<std::string>() == "FailJobSet");
  CHECK(spec["failurePolicy"]["rules"][0]["onJobFailureReasons"][0].as<std::string>() ==
        "PodFailurePolicy");
  CHECK(job["podFailurePolicy"]["rules"][0]["onExitCodes"]["values"].as<std::vector<int>>() ==
        std::vector<int>{73, 78});
  // An eviction uses up no restart: the evicted pod carries DisruptionTarget, and the nodes it
  // leaves exit 76 (runtime/exit_code.h kExitPeerLost, sent by the evicted mlenv-boot on
  // SIGTERM); both are Ignore, which batch/v1 counts neither towards backoffLimit nor as the
  // Job's failure (pkg/controller/job/pod_failure_policy.go: the first matching rule applies).
  YAML::Node rules = job["podFailurePolicy"]["rules"];
  REQUIRE(rules.size() == 3);
  CHECK(rules[1]["action"].as<std::string>() == "Ignore");
  CHECK(rules[1]["onExitCodes"]["values"].as<std::vector<int>>() == std::vector<int>{76});
  CHECK(rules[2]["action"].as<std::string>() == "Ignore");
  CHECK(rules[2]["onPodConditions"][0]["type"].as<std::string>() == "DisruptionTarget");
  CHECK(spec["successPolicy"]["operator"].as<std::string>() == "All");
  CHECK(spec["ttlSecondsAfterFinished"].as<int>() == 600);
  YAML::Node boot = boot_of(out, dir);
  // An Indexed Job's pods get JOB_COMPLETION_INDEX: with one replicated job it is the rank.
  CHECK(boot["rank"]["env"].as<std::string>() == "JOB_COMPLETION_INDEX");
  CHECK(boot["rendezvous"]["host"].as<std::string>() ==
        run.name + "-node-0-0." + subdomain + "." + run.cluster.namespace_name + ".svc");
  CHECK(boot["rendezvous"]["host_env"].as<std::string>().empty());
  // The same SR-IOV attachments as on OpenShift: one networks entry per rail.
  YAML::Node pod = job["template"];
  CHECK(pod["metadata"]["annotations"]["k8s.v1.cni.cncf.io/networks"]);
  CHECK(pod["spec"]["containers"][0]["image"].as<std::string>() ==
        "registry.example.com/ml/" + run.name + ":" + run.image.tag);
}

TEST_CASE("kubernetes: Kueue's queue, priority and topology", "[kubernetes][kueue]") {
  ir::Env run = cairo_tcp_env();
  run.queue = "team-a";
  run.priority = "research-batch";
  run.cluster.topology = "topology.kubernetes.io/rack";
  run.gpus = run.nproc_per_node = run.cluster.gpus.per_node;  // whole nodes (E0540)
  ir::Env dev = dev_env();
  dev.queue = "team-b";
  Diagnostics d;
  target::Output out = render(kubernetes_program({run, dev}), d);
  REQUIRE_FALSE(d.has_errors());
  for (const YAML::Node& object : stream_objects(out)) {
    std::string kind = object["kind"].as<std::string>();
    if (kind != "JobSet" && kind != "StatefulSet") {
      CHECK_FALSE(object["metadata"]["labels"]["kueue.x-k8s.io/queue-name"]);
      continue;
    }
    // Kueue admits a JobSet or a StatefulSet labelled with its LocalQueue as one workload
    // (https://kueue.sigs.k8s.io/docs/reference/labels-and-annotations/).
    YAML::Node labels = object["metadata"]["labels"];
    if (kind == "JobSet") {
      CHECK(labels["kueue.x-k8s.io/queue-name"].as<std::string>() == "team-a");
      CHECK(labels["kueue.x-k8s.io/priority-class"].as<std::string>() == "research-batch");
      YAML::Node pod = object["spec"]["replicatedJobs"][0]["template"]["spec"]["template"];
      CHECK(pod["metadata"]["annotations"]["kueue.x-k8s.io/podset-required-topology"]
                .as<std::string>() == "topology.kubernetes.io/rack");
    } else {
      CHECK(labels["kueue.x-k8s.io/queue-name"].as<std::string>() == "team-b");
      CHECK_FALSE(labels["kueue.x-k8s.io/priority-class"]);
    }
  }
  bool jobset_note = false, kueue_note = false;
  for (const std::string& note : out.notes) {
    jobset_note = jobset_note || note.find("JobSet controller") != std::string::npos;
    kueue_note = kueue_note || note.find("Kueue must be installed") != std::string::npos;
  }
  CHECK(jobset_note);
  CHECK(kueue_note);
}

TEST_CASE("kubernetes: a topology with pods smaller than a node is E0540", "[kubernetes][kueue]") {
  // Kueue's topology-aware scheduling assigns pods to nodes by free resources only
  // (kueue pkg/cache/scheduler/tas_flavor_snapshot.go: node selectors, affinity to nodes,
  // taints, resources; no pod anti-affinity): two 4-GPU pods may get one 8-GPU node, and the
  // pods' required anti-affinity (one per node) then leaves the second unschedulable.
  ir::Env run = cairo_tcp_env();
  run.cluster.gpus.per_node = 8;  // 2 nodes of 4 GPUs out of 8
  run.cluster.topology = "topology.kubernetes.io/rack";
  Diagnostics d;
  render(kubernetes_program({run}), d);
  CHECK(has_code(d, Code::E0540));
  Diagnostics checked;
  target::make_program_target()->check(kubernetes_program({run}), checked);
  CHECK(has_code(checked, Code::E0540));
  // Whole nodes, or one node, or no topology: nothing to refuse.
  for (auto change : std::vector<std::function<void(ir::Env&)>>{
           [](ir::Env& e) { e.gpus = e.nproc_per_node = e.cluster.gpus.per_node; },
           [](ir::Env& e) { e.nodes = 1; }, [](ir::Env& e) { e.cluster.topology.clear(); }}) {
    ir::Env ok = run;
    change(ok);
    Diagnostics fine;
    render(kubernetes_program({ok}), fine);
    CHECK_FALSE(has_code(fine, Code::E0540));
  }
}

TEST_CASE("kubernetes: a topology of one node per domain holds no env of two nodes",
          "[kubernetes][kueue]") {
  // Issue 30.5: `kubernetes.io/hostname` asks Kueue for every pod of the run on one node, and
  // the pods' anti-affinity allows one per node: Kueue never admits it, even of whole nodes.
  ir::Env run = cairo_tcp_env();
  run.gpus = run.nproc_per_node = run.cluster.gpus.per_node;
  run.cluster.topology = "kubernetes.io/hostname";
  Diagnostics checked;
  target::make_program_target()->check(kubernetes_program({run}), checked);
  CHECK(has_code(checked, Code::E0540));
  run.nodes = 1;
  Diagnostics one;
  target::make_program_target()->check(kubernetes_program({run}), one);
  CHECK_FALSE(has_code(one, Code::E0540));
}

TEST_CASE("kubernetes: non-root pods get an fsGroup, so they can write their claims",
          "[kubernetes][security]") {
  // A block volume's root is root-owned 0755; the kubelet chowns it to the pod's fsGroup with
  // g+rwx and setgid (kubernetes pkg/volume/volume_linux.go, SetVolumeOwnership). TCP pods run
  // as the image's user (1001); root RDMA pods need none; OpenShift's SCCs assign fsGroup
  // from the namespace's range and refuse another, so it is never emitted there.
  auto pod_security = [](const target::Output& out) {
    for (const YAML::Node& object : stream_objects(out)) {
      const std::string kind = object["kind"].as<std::string>();
      if (kind == "JobSet") {
        return object["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
                     ["securityContext"];
      }
      if (kind == "StatefulSet" || kind == "Job") {
        return object["spec"]["template"]["spec"]["securityContext"];
      }
    }
    FAIL("no workload");
    return YAML::Node();
  };
  Diagnostics d;
  YAML::Node tcp = pod_security(render(kubernetes_program({cairo_tcp_env()}), d));
  CHECK(tcp["fsGroup"].as<int>() == 1001);
  CHECK(tcp["fsGroupChangePolicy"].as<std::string>() == "OnRootMismatch");
  const target::File* dockerfile = nullptr;
  target::Output out = render(kubernetes_program({cairo_tcp_env()}), d);
  dockerfile = find_file(out, "cairo/cairo-train/Dockerfile");
  REQUIRE(dockerfile);
  CHECK(dockerfile->content.find("\nUSER 1001\n") != std::string::npos);
  CHECK_FALSE(pod_security(render(kubernetes_program({barcelona_env()}), d))["fsGroup"]);
  CHECK_FALSE(pod_security(render(program_of({cairo_tcp_env()}), d))["fsGroup"]);
  CHECK_FALSE(d.has_errors());
}

TEST_CASE("kubernetes: image.pull_secret is the pods' imagePullSecrets, and the notes say so",
          "[kubernetes][registry]") {
  // The kubelet pulls a pod's images with the pod's imagePullSecrets (and its service
  // account's); without one, only credentials on the node itself
  // (https://kubernetes.io/docs/concepts/containers/images/#specifying-imagepullsecrets-on-a-pod).
  ir::Env run = cairo_tcp_env();
  run.image.pull_secret = "team-registry";
  Diagnostics d;
  target::Output out = render(kubernetes_program({run}), d);
  REQUIRE_FALSE(d.has_errors());
  const target::File* file =
      find_file(out, run.cluster.name + "/" + run.name + "/jobset-" + run.name + ".yaml");
  REQUIRE(file);
  YAML::Node pod =
      YAML::Load(file->content)["spec"]["replicatedJobs"][0]["template"]["spec"]["template"];
  REQUIRE(pod["spec"]["imagePullSecrets"].size() == 1);
  CHECK(pod["spec"]["imagePullSecrets"][0]["name"].as<std::string>() == "team-registry");
  auto noted = [](const target::Output& o, const std::string& part) {
    for (const std::string& note : o.notes) {
      if (note.find(part) != std::string::npos) return true;
    }
    return false;
  };
  CHECK(noted(out, "kubectl create secret docker-registry team-registry -n nccl-test"));
  target::Output plain = render(kubernetes_program({cairo_tcp_env()}), d);
  CHECK(noted(plain, "a private registry needs `image.pull_secret`"));
  const std::string plain_jobset =
      find_file(plain, "cairo/cairo-train/jobset-cairo-train.yaml")->content;
  CHECK(plain_jobset.find("imagePullSecrets") == std::string::npos);
}

TEST_CASE("kubernetes: RDMA pods need the privileged Pod Security level, and say so",
          "[kubernetes][security]") {
  Diagnostics d;
  target::Output out = render(kubernetes_program({barcelona_env()}), d);
  REQUIRE_FALSE(d.has_errors());
  // Baseline allows adding only its default capabilities, and IPC_LOCK is not one
  // (https://kubernetes.io/docs/concepts/security/pod-security-standards/#baseline).
  bool said = false;
  for (const std::string& note : out.notes) {
    said = said || note.find("pod-security.kubernetes.io/enforce=privileged") != std::string::npos;
  }
  CHECK(said);
  for (const YAML::Node& object : stream_objects(out)) {
    if (object["kind"].as<std::string>() != "StatefulSet") continue;
    YAML::Node security = object["spec"]["template"]["spec"]["containers"][0]["securityContext"];
    CHECK(security["capabilities"]["add"][0].as<std::string>() == "IPC_LOCK");
    CHECK_FALSE(security["privileged"].as<bool>());
  }
}

TEST_CASE("kubernetes: the same env retargets by its cluster's platform alone",
          "[kubernetes][retarget]") {
  for (auto& [name, program] : all_fixtures()) {
    INFO(name);
    ir::Program moved = program;
    for (ir::Env& env : moved.envs) {
      env.cluster.platform = ir::Platform::kubernetes;
      env.image.registry = "registry.example.com/ml";
      env.cluster.security.scc.clear();
    }
    Diagnostics a, b;
    target::Output openshift = render(program, a);
    target::Output kubernetes = render(moved, b);
    CHECK_FALSE(a.has_errors());
    CHECK_FALSE(b.has_errors());
    for (const ir::Env& env : program.envs) {
      const std::string dir = env.cluster.name + "/" + env.name;
      YAML::Node before = boot_of(openshift, dir);
      YAML::Node after = boot_of(kubernetes, dir);
      // Everything the runtime does is the same; only where the rank and rank 0 are differs.
      for (const char* key : {"job", "nnodes", "nproc_per_node", "transport", "command", "launcher",
                              "services", "master_port"}) {
        CHECK(YAML::Dump(before[key]) == YAML::Dump(after[key]));
      }
      CHECK(before["rendezvous"]["port"].as<int>() == after["rendezvous"]["port"].as<int>());
      const target::File* dockerfile = find_file(kubernetes, dir + "/Dockerfile");
      REQUIRE(dockerfile);
      CHECK(dockerfile->content.find("FROM " + env.image.from) != std::string::npos);
    }
  }
}

TEST_CASE("kubernetes: a program mixing platforms renders each cluster with its target",
          "[kubernetes][registry]") {
  ir::Env openshift = cairo_tcp_env();
  ir::Env kubernetes = on_kubernetes(dev_env());
  kubernetes.cluster.name = "k8s-lab";
  Diagnostics d;
  target::Output out = render(program_of({openshift, kubernetes}), d);
  REQUIRE_FALSE(d.has_errors());
  const std::string os = openshift.cluster.name + "/" + openshift.name;
  const std::string k8s = kubernetes.cluster.name + "/" + kubernetes.name;
  CHECK(find_file(out, os + "/buildconfig-" + target::make_layout(openshift).image_name + ".yaml"));
  CHECK(find_file(out, k8s + "/statefulset-" + kubernetes.name + ".yaml"));
  CHECK_FALSE(find_file(out, k8s + "/buildconfig-" + kubernetes.name + ".yaml"));
  CHECK(find_file(out, os + "/plan.json")->content.find("\"platform\": \"openshift\"") !=
        std::string::npos);
  CHECK(find_file(out, k8s + "/plan.json")->content.find("\"platform\": \"kubernetes\"") !=
        std::string::npos);
  // Files sorted by path, `_runtime/` once, and the stream naming every object once.
  CHECK(std::is_sorted(out.files.begin(), out.files.end(),
                       [](const auto& a, const auto& b) { return a.path < b.path; }));
  std::size_t runtime_cmake = 0;
  for (const target::File& f : out.files) runtime_cmake += f.path == "_runtime/CMakeLists.txt";
  CHECK(runtime_cmake == 1);
  std::set<std::size_t> streamed(out.stream.begin(), out.stream.end());
  CHECK(streamed.size() == out.stream.size());
  for (std::size_t i : out.stream) CHECK(out.files[i].path.ends_with(".yaml"));
  // The objects scope streams the same objects.
  Diagnostics objects_only;
  target::Output objects =
      render(program_of({openshift, kubernetes}), objects_only, target::Scope::Objects);
  CHECK(objects.stream.size() == out.stream.size());
}

TEST_CASE("a slurm cluster is rendered by the Slurm target: a batch script, no objects",
          "[registry]") {
  ir::Env env = cairo_tcp_env();
  env.cluster.platform = ir::Platform::slurm;
  env.cluster.slurm.partition = "cpu";
  Diagnostics d;
  target::Output out = render(program_of({env}), d);
  REQUIRE_FALSE(d.has_errors());
  const std::string dir = env.cluster.name + "/" + env.name;
  CHECK(find_file(out, dir + "/" + env.name + ".sbatch"));
  CHECK(find_file(out, dir + "/plan.json")->content.find("\"platform\": \"slurm\"") !=
        std::string::npos);
  CHECK(out.stream.empty());
}

// mlenv-boot reads `nccl_check.diagnose` (runtime/config.cc; runtime/BOOT_CONFIG.md): the
// localisation after a passing sweep. Written only when set, so every other boot.json stays
// byte for byte what it was.
TEST_CASE("kubernetes: acceptance { diagnose } reaches boot.json only when set",
          "[kubernetes][run]") {
  for (bool diagnose : {false, true}) {
    ir::Env run = infiniband_env();
    run.acceptance.diagnose = diagnose;
    Diagnostics d;
    target::Output out = render(kubernetes_program({run}), d);
    REQUIRE_FALSE(d.has_errors());
    YAML::Node check = boot_of(out, run.cluster.name + "/" + run.name)["nccl_check"];
    CHECK(check["max_bytes"].as<std::int64_t>() == std::int64_t{8} << 30);
    CHECK(static_cast<bool>(check["diagnose"]) == diagnose);
    if (diagnose) CHECK(check["diagnose"].as<bool>());
  }
}

// Issue 31 item 1: the DeepSpeed hostfile and `.deepspeed_env` are each pod's own (its
// /run/mlenv emptyDir, as on OpenShift: platform_test.cc), never the workspace claim that the
// cluster's envs share, where one env's start rewrote what another's runner was reading.
TEST_CASE("kubernetes: launcher files lie in each pod's /run/mlenv", "[kubernetes][storage]") {
  for (auto& [name, program] : kubernetes_fixtures()) {
    Diagnostics d;
    target::Output out = render(program, d);
    INFO(name);
    for (const target::File& f : out.files) {
      if (!f.path.ends_with("/boot.json")) continue;
      INFO(f.path);
      YAML::Node boot = YAML::Load(f.content);
      CHECK(boot["hostfile"].as<std::string>() == "/run/mlenv/hostfile");
      CHECK(boot["deepspeed_env"].as<std::string>() == "/run/mlenv/.deepspeed_env");
    }
  }
}
