// The differ and summary on synthetic plans: actions, field paths, replacements, redaction.

#include <catch2/catch.hpp>

#include <sstream>

#include "compiler/diag/render.h"
#include "compiler/plan/content_diff.h"
#include "compiler/plan/differ.h"
#include "compiler/plan/summary.h"
#include "compiler/plan/yaml_fields.h"
#include "targets/common/plan_json.h"
#include "targets/kube/replace_rules.h"
#include "targets/provider.h"
#include "tests/plan/support.h"

namespace mlenv::plan {
namespace {

using testing::FakeEnv;
using testing::object;
using testing::render;
using testing::typical_env;

std::string text(const PlanDiff& diff) {
  std::ostringstream out;
  render_summary_text(out, diff);
  return out.str();
}

TEST_CASE("a first plan creates every object", "[plan]") {
  PlanDiff diff = diff_plans(PlanTree(), tree_from_output(render({typical_env()})));
  // Eight objects and the image apply builds, a line of its own.
  CHECK(diff.count(Action::Create) == 10);
  CHECK(diff.changes.front().address == "barcelona/_admin/SecurityContextConstraints/mlenvc-rdma");
  CHECK(text(diff).find("  + barcelona/ml-dev-env/StatefulSet/ml-dev-env\n") != std::string::npos);
  CHECK(text(diff).find("  + barcelona/_shared/Image/ml-dev-env\n      # build image " +
                        std::string(testing::kTypicalImage) + "\n") != std::string::npos);
  CHECK(text(diff).find("Files:\n  + barcelona/ml-dev-env/Dockerfile\n") != std::string::npos);
  CHECK(summary_line(diff) == "Plan: 10 to create, 0 to update, 0 to replace, 0 to delete.");
}

TEST_CASE("an edit shows exactly the changed fields", "[plan]") {
  FakeEnv env = typical_env();
  PlanTree before = tree_from_output(render({env}));
  object(env, "StatefulSet", "ml-dev-env")
      .body.replace(object(env, "StatefulSet", "ml-dev-env").body.find("replicas: 2"), 11,
                    "replicas: 4");
  PlanDiff diff = diff_plans(before, tree_from_output(render({env})));
  REQUIRE(diff.changes.size() == 1);
  CHECK(diff.changes[0].action == Action::Update);
  CHECK(text(diff) ==
        "  ~ barcelona/ml-dev-env/StatefulSet/ml-dev-env\n"
        "      ~ spec.replicas: 2 -> 4\n"
        "\n"
        "Plan: 0 to create, 1 to update, 0 to replace, 0 to delete.\n");
}

TEST_CASE("a JSON document in an object changes field by field", "[plan][content]") {
  // boot.json in its ConfigMap: `nnodes 2 -> 1`, not "(1881 bytes of text) -> (1881 ...)".
  FakeEnv env = typical_env();
  std::string& body = object(env, "ConfigMap", "ml-dev-env-boot").body;
  body = "data:\n  boot.json: |\n    {\"nnodes\": 2, \"rdma\": {\"gid_index\": 3}}\n";
  PlanTree before = tree_from_output(render({env}));
  body = "data:\n  boot.json: |\n    {\"nnodes\": 1, \"rdma\": {}, \"launcher\": \"\"}\n";
  PlanDiff diff = diff_plans(before, tree_from_output(render({env})));
  REQUIRE(diff.changes.size() == 1);
  CHECK(text(diff) ==
        "  ~ barcelona/ml-dev-env/ConfigMap/ml-dev-env-boot\n"
        "      + data[\"boot.json\"].launcher: \"\"\n"
        "      ~ data[\"boot.json\"].nnodes: 2 -> 1\n"
        "      + data[\"boot.json\"].rdma: {}\n"
        "      - data[\"boot.json\"].rdma.gid_index: 3\n"
        "\n"
        "Plan: 0 to create, 1 to update, 0 to replace, 0 to delete.\n");
}

TEST_CASE("a changed file shows its changed fields or lines", "[plan][content]") {
  FakeEnv env = typical_env();
  env.files["boot.json"] = "{\n  \"nnodes\": 2,\n  \"transport\": \"rdma\"\n}\n";
  PlanTree before = tree_from_output(render({env}));
  env.files["boot.json"] = "{\n  \"nnodes\": 1,\n  \"transport\": \"rdma\"\n}\n";
  env.files["Dockerfile"] = "FROM base\nRUN pip install torch\nRUN pip install peft\n";
  PlanDiff diff = diff_plans(before, tree_from_output(render({env})));
  std::string out = text(diff);
  CHECK(out.find("  ~ barcelona/ml-dev-env/Dockerfile\n"
                 "      @@ line 3\n"
                 "      + RUN pip install peft\n") != std::string::npos);
  CHECK(out.find("  ~ barcelona/ml-dev-env/boot.json\n"
                 "      ~ nnodes: 2 -> 1\n") != std::string::npos);
  std::ostringstream json;
  render_summary_json(json, diff, "");
  CHECK(json.str().find("\"lines\":[\"@@ line 3\",\"+ RUN pip install peft\"]") !=
        std::string::npos);
}

TEST_CASE("line changes are the shortest edit, bounded in size", "[plan][content]") {
  CHECK(line_changes("a\nb\nc\n", "a\nx\nc\n") ==
        std::vector<std::string>{"@@ line 2", "- b", "+ x"});
  CHECK(line_changes("a\nb\n", "a\nb\n").empty());
  std::string many;
  for (int i = 0; i < 100; ++i) many += "line " + std::to_string(i) + "\n";
  std::vector<std::string> lines = line_changes("", many, 10);
  REQUIRE(lines.size() == 11);
  CHECK(lines.back() == "... 91 more changed lines");
  std::string huge(6000, '\n');
  CHECK(line_changes(huge, "x\n").size() == 1);
  CHECK_FALSE(json_changes("", "[1, 2]", "{}"));
}

TEST_CASE("a changed run is a replace: a Job's pod template is immutable", "[plan]") {
  // Kubernetes rejects updates of a Job's spec.template ("field is immutable"): a run whose
  // spec changes is a new run, deleted and created again by apply.
  FakeEnv env = typical_env();
  env.objects.push_back({"batch/v1", "Job", "trainer",
                         "spec:\n  completions: 2\n  template:\n    spec:\n      containers:\n"
                         "      - name: main\n        command: [python, train.py]\n",
                         10, false});
  PlanTree before = tree_from_output(render({env}));
  std::string& body = object(env, "Job", "trainer").body;
  body.replace(body.find("train.py"), 8, "train2.py");
  PlanDiff diff = diff_plans(before, tree_from_output(render({env})));
  REQUIRE(diff.changes.size() == 1);
  CHECK(diff.changes[0].action == Action::Replace);
  CHECK(diff.changes[0].reason == "run spec changed");
  CHECK(text(diff).find("-/+ barcelona/ml-dev-env/Job/trainer\n") != std::string::npos);
  CHECK(text(diff).find("# forces replacement: run spec changed") != std::string::npos);
  // Labels change in place; every spec field is the run's.
  CHECK(replace_reason("Job", "metadata.labels.team", true).empty());
  CHECK(replace_reason("Job", "spec.parallelism", true) == "run spec changed");
  // Each platform says what its runs are: an Indexed Job on both, a JobSet on Kubernetes only.
  const target::Provider& openshift = target::provider(ir::Platform::openshift);
  const target::Provider& kubernetes = target::provider(ir::Platform::kubernetes);
  CHECK(openshift.replace_reason("Job", "spec.parallelism", {}) == "run spec changed");
  CHECK(kubernetes.replace_reason("Job", "spec.parallelism", {}) == "run spec changed");
  CHECK(kubernetes.replace_reason("JobSet", "spec.replicatedJobs", {}) == "run spec changed");
  CHECK(kubernetes.replace_reason("JobSet", "metadata.labels.team", {}).empty());
  // A run's ttl is mutable on Job and JobSet (issue 30.6): an update in place.
  CHECK(openshift.replace_reason("Job", "spec.ttlSecondsAfterFinished", {}).empty());
  CHECK(kubernetes.replace_reason("JobSet", "spec.ttlSecondsAfterFinished", {}).empty());
  // Kueue's webhook refuses a changed queue of a job that is not suspended, and the priority
  // was the admitted Workload's (issue 30.5): a run's new queue or priority is a new run.
  CHECK(kubernetes.replace_reason("JobSet", R"(metadata.labels["kueue.x-k8s.io/queue-name"])", {})
            .starts_with("Kueue's webhook refuses a changed queue"));
  CHECK(
      kubernetes.replace_reason("JobSet", R"(metadata.labels["kueue.x-k8s.io/priority-class"])", {})
          .starts_with("Kueue admitted the run at its old priority"));
  CHECK(!openshift.is_run_kind("JobSet"));
  CHECK(!openshift.is_run_kind("StatefulSet"));
}

// The pod template carries boot.json's digest (targets/kube/builders.h kBootConfigAnnotation):
// the kubelet restarts no pod for a changed ConfigMap, so the template must change.
std::string boot_digest(const std::string& digest) {
  return "  template:\n    metadata:\n      annotations:\n        mlenv.dev/boot-config-sha256: " +
         digest + "\n";
}

TEST_CASE("a changed boot.json rolls a dev env's pods and is a new run", "[plan]") {
  FakeEnv env = typical_env();
  std::string& sts = object(env, "StatefulSet", "ml-dev-env").body;
  sts.replace(sts.find("  template:\n"), 12, boot_digest("aaa"));
  env.objects.push_back({"batch/v1", "Job", "trainer",
                         "spec:\n  completions: 2\n" + boot_digest("aaa") +
                             "    spec:\n      containers:\n      - name: main\n",
                         10, false});
  PlanTree before = tree_from_output(render({env}));
  for (const char* kind : {"StatefulSet", "Job"}) {
    std::string& body =
        object(env, kind, kind == std::string("Job") ? "trainer" : "ml-dev-env").body;
    body.replace(body.find("sha256: aaa"), 11, "sha256: bbb");
  }
  PlanDiff diff = diff_plans(before, tree_from_output(render({env})));
  REQUIRE(diff.changes.size() == 2);
  // A StatefulSet's template changes in place, and its pods roll.
  CHECK(diff.changes[1].address == "barcelona/ml-dev-env/StatefulSet/ml-dev-env");
  CHECK(diff.changes[1].action == Action::Update);
  CHECK(text(diff).find("  ~ barcelona/ml-dev-env/StatefulSet/ml-dev-env\n"
                        "      # rolls the pods: boot.json changed (mlenv-boot reads it once)\n") !=
        std::string::npos);
  // A Job's template is immutable: a new run, and the plan says why.
  CHECK(diff.changes[0].address == "barcelona/ml-dev-env/Job/trainer");
  CHECK(diff.changes[0].action == Action::Replace);
  CHECK(text(diff).find("-/+ barcelona/ml-dev-env/Job/trainer\n"
                        "      # forces replacement: run spec changed\n"
                        "      # a new run: boot.json changed (mlenv-boot reads it once)\n") !=
        std::string::npos);
  CHECK(summary_line(diff) == "Plan: 0 to create, 1 to update, 1 to replace, 0 to delete.");
}

TEST_CASE("envs that run one image list its build once, and a new one builds nothing", "[plan]") {
  // Two envs of one image: their Dockerfiles are the same bytes and they share its
  // ImageStream and BuildConfig (targets/openshift/build.cc), which apply builds once.
  auto of_image = [](const std::string& name) {
    FakeEnv env = typical_env();
    env.env = name;
    for (testing::FakeObject& o : env.objects)
      o.shared = o.kind == "ImageStream" || o.kind == "BuildConfig";
    return env;
  };
  const FakeEnv first = of_image("ml-dev-env");
  const FakeEnv second = of_image("second");
  auto image_lines = [](const PlanDiff& diff) {
    std::vector<std::string> out;
    for (const Change& c : diff.changes) {
      if (c.kind == "Image")
        out.push_back((c.action == Action::Create   ? "+"
                       : c.action == Action::Update ? "~"
                                                    : "?") +
                      c.address);
    }
    return out;
  };
  PlanDiff created = diff_plans(PlanTree(), tree_from_output(render({first, second})));
  CHECK(image_lines(created) == std::vector<std::string>{"+barcelona/_shared/Image/ml-dev-env"});
  // An env that joins an image an env of its cluster ran before: nothing to build.
  PlanDiff joined =
      diff_plans(tree_from_output(render({first})), tree_from_output(render({first, second})));
  CHECK(image_lines(joined).empty());
  // A changed Dockerfile of both: one rebuild.
  FakeEnv changed_first = first;
  FakeEnv changed_second = second;
  changed_first.files["Dockerfile"] += "RUN pip install deepspeed\n";
  changed_second.files["Dockerfile"] += "RUN pip install deepspeed\n";
  PlanDiff rebuilt = diff_plans(tree_from_output(render({first, second})),
                                tree_from_output(render({changed_first, changed_second})));
  CHECK(image_lines(rebuilt) == std::vector<std::string>{"~barcelona/_shared/Image/ml-dev-env"});
}

TEST_CASE("a rebuilt image replaces the env's runs, never silently", "[plan]") {
  // apply builds the image again and runs it by its new digest (compiler/apply/steps.cc): it
  // deletes and re-creates a run and rolls a dev env's pods, though their own bytes are the
  // same. The plan lists the rebuild and both.
  FakeEnv env = typical_env();
  env.objects.push_back({"batch/v1", "Job", "trainer",
                         "spec:\n  template:\n    spec:\n      containers:\n      - name: main\n",
                         10, false});
  PlanTree before = tree_from_output(render({env}));
  env.files["Dockerfile"] += "RUN pip install deepspeed\n";
  PlanDiff diff = diff_plans(before, tree_from_output(render({env})));
  REQUIRE(diff.changes.size() == 3);
  CHECK(diff.changes[0].address == "barcelona/_shared/Image/ml-dev-env");
  CHECK(diff.changes[0].action == Action::Update);
  CHECK(diff.changes[1].address == "barcelona/ml-dev-env/Job/trainer");
  CHECK(diff.changes[1].action == Action::Replace);
  CHECK(diff.changes[1].reason == "its image is rebuilt: the Dockerfile changed");
  CHECK(diff.changes[1].file == "barcelona/ml-dev-env/job-trainer.yaml");
  CHECK(diff.changes[2].address == "barcelona/ml-dev-env/StatefulSet/ml-dev-env");
  CHECK(diff.changes[2].action == Action::Update);
  CHECK(text(diff).find("  ~ barcelona/_shared/Image/ml-dev-env\n"
                        "      # rebuild image " +
                        std::string(testing::kTypicalImage) + ": the Dockerfile changed\n") !=
        std::string::npos);
  CHECK(text(diff).find("  ~ barcelona/ml-dev-env/StatefulSet/ml-dev-env\n"
                        "      # rolls the pods: its image is rebuilt\n") != std::string::npos);
  CHECK(summary_line(diff) == "Plan: 0 to create, 2 to update, 1 to replace, 0 to delete.");
  // mlenv-boot's sources are in every image: a change of `_runtime/` alone rebuilds it too.
  target::Output output = render({env});
  before = tree_from_output(output);
  output.files.push_back({"_runtime/boot.cc", "int main() {}\n"});
  diff = diff_plans(before, tree_from_output(output));
  REQUIRE(diff.changes.size() == 3);
  CHECK(diff.changes[0].notes ==
        std::vector<std::string>{"rebuild image " + std::string(testing::kTypicalImage) +
                                 ": mlenv-boot's sources (`_runtime/`) changed"});
  CHECK(diff.changes[1].reason ==
        "its image is rebuilt: mlenv-boot's sources (`_runtime/`) changed");
  // An env whose image apply does not build keeps its runs.
  FakeEnv prebuilt = env;
  prebuilt.actions.clear();
  prebuilt.objects.erase(
      std::remove_if(prebuilt.objects.begin(), prebuilt.objects.end(),
                     [](const testing::FakeObject& o) { return o.kind == "BuildConfig"; }),
      prebuilt.objects.end());
  before = tree_from_output(render({prebuilt}));
  prebuilt.files["Dockerfile"] += "RUN pip install apex\n";
  CHECK(diff_plans(before, tree_from_output(render({prebuilt}))).changes.empty());
}

TEST_CASE("a queued StatefulSet re-creates on changes Kueue's webhook refuses", "[plan]") {
  // kubernetes-sigs/kueue pkg/controller/jobs/statefulset/statefulset_webhook.go ValidateUpdate:
  // the queue label and spec.replicas (between non-zero counts) are immutable on a StatefulSet
  // Kueue manages; the pod group's requests were admitted with it.
  FakeEnv env = typical_env();
  env.platform = "kubernetes";
  std::string& sts = object(env, "StatefulSet", "ml-dev-env").body;
  sts = "  labels:\n    kueue.x-k8s.io/queue-name: team-a\n" + sts;  // under metadata
  PlanTree before = tree_from_output(render({env}));
  sts.replace(sts.find("replicas: 2"), 11, "replicas: 3");
  sts.replace(sts.find("nvidia.com/gpu: 4"), 17, "nvidia.com/gpu: 8");
  PlanDiff diff = diff_plans(before, tree_from_output(render({env})));
  REQUIRE(diff.changes.size() == 1);
  CHECK(diff.changes[0].action == Action::Replace);
  CHECK(diff.changes[0].reason ==
        "Kueue's webhook refuses it on a queued StatefulSet: re-created and admitted again");
  // Without a queue the API server scales it in place; on OpenShift there is no Kueue.
  for (const char* platform : {"kubernetes", "openshift"}) {
    FakeEnv plain = typical_env();
    plain.platform = platform;
    PlanTree was = tree_from_output(render({plain}));
    std::string& body = object(plain, "StatefulSet", "ml-dev-env").body;
    body.replace(body.find("replicas: 2"), 11, "replicas: 3");
    PlanDiff scaled = diff_plans(was, tree_from_output(render({plain})));
    REQUIRE(scaled.changes.size() == 1);
    CHECK(scaled.changes[0].action == Action::Update);
  }
}

TEST_CASE("list items with names are addressed by name, odd keys are bracketed", "[plan]") {
  FakeEnv env = typical_env();
  PlanTree before = tree_from_output(render({env}));
  std::string& body = object(env, "StatefulSet", "ml-dev-env").body;
  body.replace(body.find("nvidia.com/gpu: 4"), 17, "nvidia.com/gpu: 8");
  body.replace(body.find("value: \"8080\""), 13, "value: 8080");
  PlanDiff diff = diff_plans(before, tree_from_output(render({env})));
  REQUIRE(diff.changes.size() == 1);
  const auto& fields = diff.changes[0].fields;
  REQUIRE(fields.size() == 2);
  CHECK(fields[0].path == "spec.template.spec.containers[name=main].env[name=PORT].value");
  CHECK(*fields[0].before == "\"8080\"");
  CHECK(*fields[0].after == "8080");
  CHECK(fields[1].path ==
        "spec.template.spec.containers[name=main].resources.limits[\"nvidia.com/gpu\"]");
}

TEST_CASE("immutable fields force replacement with a reason", "[plan]") {
  FakeEnv env = typical_env();
  PlanTree before = tree_from_output(render({env}));
  std::string& sts = object(env, "StatefulSet", "ml-dev-env").body;
  sts.replace(sts.find("podManagementPolicy: Parallel"), 29, "podManagementPolicy: OrderedReady");
  std::string& pvc = object(env, "PersistentVolumeClaim", "workspace").body;
  pvc.replace(pvc.find("storageClassName: nfs"), 21, "storageClassName: ceph");
  PlanDiff diff = diff_plans(before, tree_from_output(render({env})));
  CHECK(diff.count(Action::Replace) == 2);
  std::string out = text(diff);
  CHECK(out.find("-/+ barcelona/ml-dev-env/StatefulSet/ml-dev-env\n"
                 "      # forces replacement: spec.podManagementPolicy cannot change in place on a "
                 "StatefulSet\n") != std::string::npos);
  CHECK(out.find("# forces replacement: spec.storageClassName cannot change in place on a "
                 "PersistentVolumeClaim") != std::string::npos);
}

TEST_CASE("removed objects are deletions, input-only changes are counted apart", "[plan]") {
  FakeEnv env = typical_env();
  PlanTree before = tree_from_output(render({env}));
  env.objects.pop_back();  // the Route
  env.inputs["cluster.mlenv"] = "v2";
  PlanDiff diff = diff_plans(before, tree_from_output(render({env})));
  REQUIRE(diff.changes.size() == 1);
  CHECK(diff.changes[0].action == Action::Delete);
  CHECK(diff.changes[0].address == "barcelona/ml-dev-env/Route/ml-dev-env-jupyter");

  FakeEnv inputs_only = typical_env();
  inputs_only.inputs["cluster.mlenv"] = "v3";
  PlanDiff only = diff_plans(before, tree_from_output(render({inputs_only})));
  CHECK(only.changes.empty());
  CHECK(only.inputs_changed == 1);
  CHECK(!only.empty());
}

TEST_CASE("a plan that would destroy a claim's data says so, with the apply flag",
          "[plan][data-loss]") {
  FakeEnv env = typical_env();
  PlanTree before = tree_from_output(render({env}));
  std::string& pvc = object(env, "PersistentVolumeClaim", "workspace").body;
  pvc.replace(pvc.find("storageClassName: nfs"), 21, "storageClassName: ceph");
  env.objects.pop_back();  // the Route: a delete that loses nothing
  PlanDiff diff = diff_plans(before, tree_from_output(render({env})));
  std::string out = text(diff);
  CHECK(out.find("-/+ barcelona/ml-dev-env/PersistentVolumeClaim/workspace\n"
                 "      # forces replacement: spec.storageClassName cannot change in place on a "
                 "PersistentVolumeClaim\n"
                 "      ! destroys its data: apply needs "
                 "--allow-destroy=barcelona/ml-dev-env/PersistentVolumeClaim/workspace\n") !=
        std::string::npos);
  CHECK(out.find("1 object holds data that this plan would destroy (marked !).") !=
        std::string::npos);
  CHECK(out.find("Route/ml-dev-env-jupyter\n      !") == std::string::npos);
  std::ostringstream json;
  render_summary_json(json, diff);
  CHECK(json.str().find("\"address\":\"barcelona/ml-dev-env/PersistentVolumeClaim/workspace\","
                        "\"action\":\"replace\"") != std::string::npos);
  CHECK(json.str().find("\"destroys_data\":true") != std::string::npos);

  // Each data-loss change carries the exact flag apply will require.
  CHECK(json.str().find(
            "{\"address\":\"barcelona/ml-dev-env/PersistentVolumeClaim/workspace\","
            "\"action\":\"replace\",\"reason\":\"spec.storageClassName cannot change in place on a "
            "PersistentVolumeClaim\",\"file\":\"barcelona/ml-dev-env/"
            "persistentvolumeclaim-workspace.yaml\",\"destroys_data\":true,\"allow_destroy\":\""
            "--allow-destroy=barcelona/ml-dev-env/PersistentVolumeClaim/workspace\","
            "\"shared\":false,\"notes\":[],\"fields\":[") != std::string::npos);
  CHECK(json.str().find("\"address\":\"barcelona/ml-dev-env/Route/ml-dev-env-jupyter\","
                        "\"action\":\"delete\",\"reason\":\"\",\"file\":\"barcelona/ml-dev-env/"
                        "route-ml-dev-env-jupyter.yaml\",\"destroys_data\":false,"
                        "\"allow_destroy\":\"\"") != std::string::npos);

  // Removing the env deletes its claim: flagged too.
  FakeEnv gone = typical_env();
  gone.objects.erase(gone.objects.begin() + 2);
  PlanDiff removed = diff_plans(before, tree_from_output(render({gone})));
  REQUIRE(removed.changes.size() == 1);
  CHECK(removed.changes[0].destroys_data);
}

TEST_CASE("secret-looking values never reach the summary", "[plan]") {
  FakeEnv env = typical_env();
  PlanTree before = tree_from_output(render({env}));
  std::string& body = object(env, "StatefulSet", "ml-dev-env").body;
  body.replace(body.find("        - name: PORT"), 0,
               "        - name: API_TOKEN\n          value: canary-5f3a9\n");
  PlanDiff diff = diff_plans(before, tree_from_output(render({env})));
  std::ostringstream json;
  render_summary_json(json, diff);
  CHECK(text(diff).find("canary-5f3a9") == std::string::npos);
  CHECK(json.str().find("canary-5f3a9") == std::string::npos);
  CHECK(text(diff).find("(sensitive)") != std::string::npos);
}

TEST_CASE("json summary", "[plan]") {
  FakeEnv env = typical_env();
  PlanTree before = tree_from_output(render({env}));
  env.objects.pop_back();
  std::ostringstream json;
  render_summary_json(json, diff_plans(before, tree_from_output(render({env}))));
  CHECK(json.str() ==
        "{\"format_version\":1,\"changes\":[{\"address\":\"barcelona/ml-dev-env/Route/"
        "ml-dev-env-jupyter\","
        "\"action\":\"delete\",\"reason\":\"\",\"file\":\"barcelona/ml-dev-env/"
        "route-ml-dev-env-jupyter.yaml\","
        "\"destroys_data\":false,\"allow_destroy\":\"\",\"shared\":false,\"notes\":[],\"fields\":[]"
        "}],"
        "\"files\":[],\"inputs_changed\":0,"
        "\"shared_copies\":0,\"create\":0,"
        "\"update\":0,\"replace\":0,"
        "\"delete\":1,\"keep\":0}\n");
}

// std::regex recursed once per character here: a label of 60,000 digits and a letter crashed
// `apply --dry-run`. The linear matcher types scalars of any length.
TEST_CASE("plain scalars of any length are typed without recursion", "[differ]") {
  const std::string digits(200000, '7');
  CHECK_FALSE(plain_scalar_is_string(digits));
  CHECK(plain_scalar_is_string(digits + "x"));
  CHECK_FALSE(plain_scalar_is_string("-" + digits + ".5e3"));
  CHECK(plain_scalar_is_string("0x" + digits + "g"));
  CHECK_FALSE(plain_scalar_is_string("true"));
  CHECK(plain_scalar_is_string("yes"));  // YAML 1.2 core: a string
}

TEST_CASE("control characters from values are escaped in the summary and diagnostics", "[plan]") {
  // ESC and CR let a value rewrite the terminal: "\e[2K\r" erases the line and prints anew.
  FakeEnv env = typical_env();
  PlanTree before = tree_from_output(render({env}));
  std::string& body = object(env, "StatefulSet", "ml-dev-env").body;
  body.replace(body.find("value: \"8080\""), 13, "value: \"8080\\e[2K\\rNo changes.\\u009b\"");
  PlanDiff diff = diff_plans(before, tree_from_output(render({env})));
  std::string summary = text(diff);
  CHECK(summary.find('\x1b') == std::string::npos);
  CHECK(summary.find('\r') == std::string::npos);
  CHECK(summary.find("\xc2\x9b") == std::string::npos);
  CHECK(summary.find("8080\\u001b[2K\\u000dNo changes.\\u009b") != std::string::npos);
  Diagnostic d;
  d.code = Code::E0607;
  d.message = "bad \x1b]0;title\x07 value";
  d.label = "line\rover";
  d.notes.push_back({"del\x7f", {}});
  std::ostringstream out;
  SourceManager none;
  render_text(out, none, d);
  CHECK(out.str() ==
        "mlenvc: error[E0607]: bad \\u001b]0;title\\u0007 value\n"
        "   = line\\u000dover\n"
        "   = note: del\\u007f\n");
  CHECK(printable("caf\xc3\xa9 \xe2\x82\xac\ttab") == "caf\xc3\xa9 \xe2\x82\xac\\u0009tab");
  CHECK(printable("a\nb", true) == "a\nb");
}

}  // namespace
}  // namespace mlenv::plan

namespace mlenv::plan {
namespace {

using namespace testing;

TEST_CASE("plan.json's objects read by the flat scan equal the full parse", "[plan]") {
  FakeEnv env = typical_env();
  FakeObject nad{"k8s.cni.cncf.io/v1", "NetworkAttachmentDefinition", "rail1", "", 2};
  nad.shared = true;
  env.objects.push_back(nad);
  std::string text;
  for (const target::File& file : testing::render({env}).files)
    if (file.path.ends_with("/plan.json")) text = file.content;
  std::string error;
  std::optional<PlanManifest> parsed = parse_plan_json(text, error);
  std::optional<std::vector<PlanObject>> scanned = scan_plan_objects(text);
  REQUIRE(parsed);
  REQUIRE(scanned);
  REQUIRE(scanned->size() == parsed->objects.size());
  for (const PlanObject& object : parsed->objects) {
    auto same = [&](const PlanObject& o) {
      return o.address == object.address && o.file == object.file && o.admin == object.admin &&
             o.shared == object.shared && o.kind == object.kind;
    };
    CHECK(std::count_if(scanned->begin(), scanned->end(), same) == 1);
  }
  // Anything but flat objects is left to the full parser.
  CHECK(!scan_plan_objects(R"({"objects": [{"address": {"nested": 1}}]})"));
  CHECK(!scan_plan_objects(R"({"objects": [{"address": "a\u0041"}]})"));
  CHECK(!scan_plan_objects(R"({"objects": [{"address": "unterminated)"));
  CHECK(!scan_plan_objects("{}"));
}

}  // namespace
}  // namespace mlenv::plan

namespace mlenv::plan {
namespace {

// A Slurm env as the Slurm target renders it: no objects, a batch script and boot.json.
testing::FakeEnv slurm_env(const std::string& script) {
  testing::FakeEnv env;
  env.cluster = "lab";
  env.env = "ranks";
  env.platform = "slurm";
  env.files = {{"ranks.sbatch", script}, {"boot.json", "{\"nnodes\": 2}"}};
  return env;
}

TEST_CASE("a Slurm env's job is created, replaced when its script changes, and deleted", "[plan]") {
  PlanDiff created = diff_plans(PlanTree(), tree_from_output(render({slurm_env("#!/bin/bash\n")})));
  REQUIRE(created.changes.size() == 1);
  CHECK(created.changes[0].address == "lab/ranks/SlurmJob/ranks");
  CHECK(created.changes[0].action == Action::Create);

  PlanTree before = tree_from_output(render({slurm_env("#!/bin/bash\n")}));
  PlanDiff changed =
      diff_plans(before, tree_from_output(render({slurm_env("#!/bin/bash\n# new\n")})));
  REQUIRE(changed.changes.size() == 1);
  CHECK(changed.changes[0].action == Action::Replace);
  CHECK(text(changed).find("-/+ lab/ranks/SlurmJob/ranks\n"
                           "      # forces replacement: run spec changed\n") != std::string::npos);
  CHECK(summary_line(changed) == "Plan: 0 to create, 0 to update, 1 to replace, 0 to delete.");

  // Only the input digests of plan.json: the job stays.
  testing::FakeEnv digests = slurm_env("#!/bin/bash\n");
  digests.inputs = {{"cluster.mlenv", "v2"}};
  PlanDiff inputs = diff_plans(before, tree_from_output(render({digests})));
  CHECK_FALSE(inputs.empty());
  CHECK(inputs.changes.empty());

  PlanDiff deleted = diff_plans(before, PlanTree());
  REQUIRE(deleted.changes.size() == 1);
  CHECK(deleted.changes[0].action == Action::Delete);
}

}  // namespace
}  // namespace mlenv::plan
