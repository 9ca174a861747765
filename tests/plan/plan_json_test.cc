// plan.json's one model (targets/common/plan_json.h): every platform's plan reads back to
// the bytes it was written as, and plans of older formats still read.

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "targets/common/plan_json.h"
#include "targets/provider.h"

namespace mlenv::plan {
namespace {

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

PlanManifest parsed(std::string_view text) {
  std::string error;
  std::optional<PlanManifest> plan = parse_plan_json(text, error);
  INFO(error);
  REQUIRE(plan);
  return *plan;
}

TEST_CASE("every platform's plan.json reads back to the bytes it was written as", "[plan_json]") {
  // The golden trees are what the renderers write (tests/targets: targets.golden.*).
  std::set<ir::Platform> seen;
  int plans = 0;
  for (const auto& entry :
       std::filesystem::recursive_directory_iterator(MLENV_TARGETS_GOLDEN_DIR)) {
    if (entry.path().filename() != "plan.json") continue;
    INFO(entry.path().string());
    const std::string text = read_file(entry.path());
    const PlanManifest plan = parsed(text);
    CHECK(write_plan_json(plan) == text);
    CHECK(parsed(write_plan_json(plan)) == plan);
    seen.insert(plan.platform);
    ++plans;
  }
  CHECK(plans >= 10);
  for (const target::Provider* provider : target::providers())
    CHECK(seen.count(provider->platform()) == 1);
}

TEST_CASE("the model keeps what only some plans write: order of ports, an empty runtime",
          "[plan_json]") {
  PlanManifest plan;
  plan.compiler_version = "0.1.0";
  plan.platform = ir::Platform::local;
  plan.source = "a.mlenv";
  plan.cluster = "laptop";
  plan.env = "try";
  plan.env_kind = "run";
  plan.ports = {{"vscode", 8080}, {"debugpy", 5678}};  // written order, not sorted
  PlanAction& start = plan.actions.emplace_back();
  start.action = "start";
  start.image = "try:1";
  start.dockerfile = "laptop/try/Dockerfile";
  start.runtime = "";  // the first container runtime on PATH: written, unlike an absent one
  const std::string text = write_plan_json(plan);
  CHECK(text.find("\"vscode\": 8080,\n    \"debugpy\": 5678") != std::string::npos);
  CHECK(text.find("\"runtime\": \"\"") != std::string::npos);
  const PlanManifest back = parsed(text);
  CHECK(back == plan);
  REQUIRE(back.actions.size() == 1);
  CHECK(back.actions[0].runtime == std::optional<std::string>(""));
  plan.actions[0].runtime.reset();
  CHECK(write_plan_json(plan).find("runtime") == std::string::npos);
}

// A plan as mlenvc wrote it before `platform` (it said `target`), `actions`, `api`, the day-2
// keys and `shared`, with every input in `inputs`.
constexpr const char* kOldPlan = R"({
  "format_version": 1,
  "compiler_version": "0.1.0",
  "target": "openshift",
  "source": "cluster.mlenv",
  "cluster": "barcelona",
  "env": "ml-dev-env",
  "namespace": "nccl-test",
  "transport": "rdma",
  "transport_note": "",
  "inputs": [{"path": "cluster.mlenv", "sha256": "aa"}],
  "objects": [
    {"address": "StatefulSet/ml-dev-env", "api_version": "apps/v1", "kind": "StatefulSet",
     "namespace": "nccl-test", "name": "ml-dev-env", "file": "statefulset-ml-dev-env.yaml",
     "sha256": "cc", "order": 8, "admin": false},
    {"address": "BuildConfig/ml-dev-env", "api_version": "build.openshift.io/v1",
     "kind": "BuildConfig", "namespace": "nccl-test", "name": "ml-dev-env",
     "file": "buildconfig-ml-dev-env.yaml", "sha256": "bb", "order": 6, "admin": false}
  ],
  "files": [{"path": "Dockerfile", "sha256": "dd"}]
}
)";

TEST_CASE("a plan written before `actions` still reads, with what apply did then", "[plan_json]") {
  const PlanManifest plan = parsed(kOldPlan);
  CHECK(plan.platform == ir::Platform::openshift);
  CHECK(plan.api.empty());
  CHECK(plan.nodes == 0);
  CHECK(!plan.shared_workspace);
  CHECK(plan.env_kind == "dev");
  CHECK(plan.inputs == std::vector<PlanDigest>{{"cluster.mlenv", "aa"}});
  // Objects in apply order, then OpenShift's implied actions in that order: the build after
  // the BuildConfig (named by it), the rollout wait after the StatefulSet.
  REQUIRE(plan.objects.size() == 2);
  CHECK(plan.objects[0].kind == "BuildConfig");
  CHECK(!plan.objects[1].shared);
  REQUIRE(plan.actions.size() == 2);
  CHECK(plan.actions[0].action == "build");
  CHECK(plan.actions[0].after == "BuildConfig/ml-dev-env");
  CHECK(plan.actions[0].build_config == "ml-dev-env");
  CHECK(plan.actions[1].action == "rollout");
  CHECK(plan.actions[1].after == "StatefulSet/ml-dev-env");
  // Written again it is a plan of today's format, which reads back the same (but `inputs`,
  // which `_inputs/` holds now).
  PlanManifest again = parsed(write_plan_json(plan));
  CHECK(again.inputs.empty());
  again.inputs = plan.inputs;
  CHECK(again == plan);

  // Another platform's provider implies its own: Kubernetes builds nothing, waits the same.
  std::string kubernetes = kOldPlan;
  kubernetes.replace(kubernetes.find("\"target\": \"openshift\""), 21,
                     "\"platform\": \"kubernetes\"");
  const PlanManifest kube = parsed(kubernetes);
  CHECK(kube.platform == ir::Platform::kubernetes);
  REQUIRE(kube.actions.size() == 1);
  CHECK(kube.actions[0].action == "rollout");

  // An `actions` key, even empty, is what the plan says: nothing is implied.
  std::string listed = kOldPlan;
  listed.replace(listed.rfind("\n}"), 2, ",\n  \"actions\": []\n}");
  CHECK(parsed(listed).actions.empty());
}

TEST_CASE("a plan.json that is not one is refused with the reason", "[plan_json]") {
  std::string error;
  CHECK(!parse_plan_json("[]", error));
  CHECK(error == "not a JSON object");
  std::string unknown = kOldPlan;
  unknown.replace(unknown.find("openshift\""), 9, "mainframe");
  CHECK(!parse_plan_json(unknown, error));
  CHECK(error == "unknown platform `mainframe`");
  std::string dangling = kOldPlan;
  dangling.replace(dangling.rfind("\n}"), 2,
                   ",\n  \"actions\": [{\"action\": \"rollout\", \"after\": \"Job/x\"}]\n}");
  CHECK(!parse_plan_json(dangling, error));
  CHECK(error == "action `rollout` after `Job/x`, which is not an object of the env");
}

}  // namespace
}  // namespace mlenv::plan
