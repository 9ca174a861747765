#include "compiler/day2/applied_env.h"

#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <set>

#include "compiler/apply/records.h"
#include "compiler/diag/render.h"
#include "compiler/plan/git_repo.h"

namespace mlenv::plan::day2 {
namespace {

constexpr std::string_view kAppliedRefs = "refs/mlenv/applied/";

// The env part of a unit (`barcelona/ml-dev-env` → `ml-dev-env`).
std::string env_of(const std::string& unit) {
  return unit.substr(unit.rfind('/') + 1);
}

// Units of the plans committed at HEAD (every `plan.json` of its tree) and of the records.
std::set<std::string> known_units(const Repository& repo) {
  std::set<std::string> units;
  if (std::optional<ObjectId> head = repo.head().commit) {
    PlanTree tree = repo.plan_tree(repo.commit_tree(*head));
    for (const auto& [path, entry] : tree.entries()) {
      if (path != "plan.json" && !path.ends_with("/plan.json")) continue;
      std::string text = *tree.read(path);
      std::string cluster = plan_json_string(text, "cluster");
      std::string env = plan_json_string(text, "env");
      if (!cluster.empty() && !env.empty()) units.insert(cluster + "/" + env);
    }
  }
  for (const std::string& ref : repo.refs_matching(std::string(kAppliedRefs) + "*"))
    units.insert(ref.substr(kAppliedRefs.size()));
  return units;
}

// The record of `unit`, or nullopt when there is none (or it holds no plan: a destroyed env).
// With `destroyed_too`, a destroy's record (no plan) stands for its parent, the apply record
// it followed (compiler/apply/records.cc record_destroyed).
std::optional<AppliedEnv> load_record(const Repository& repo, const std::string& unit,
                                      Diagnostics& diagnostics, bool destroyed_too = false) {
  std::optional<ObjectId> record = repo.ref_target(std::string(kAppliedRefs) + unit);
  if (!record) return std::nullopt;
  PlanTree files = repo.plan_tree(repo.commit_tree(*record));
  std::optional<std::string> text = files.read("plan.json");
  bool destroyed = false;
  if (!text && destroyed_too) {
    record = repo.first_parent(*record);
    if (!record) return std::nullopt;
    files = repo.plan_tree(repo.commit_tree(*record));
    text = files.read("plan.json");
    destroyed = true;
  }
  if (!text) return std::nullopt;
  AppliedEnv env;
  env.unit = unit;
  env.destroyed = destroyed;
  std::string error;
  std::optional<PlanManifest> plan = parse_plan_json(*text, error);
  if (!plan) {
    diagnostics.report(Code::E0607, {},
                       "`" + std::string(kAppliedRefs) + unit + ":plan.json`: " + error);
    return std::nullopt;
  }
  env.nodes = plan->nodes;
  env.shared_workspace = plan->shared_workspace;
  env.ports = {plan->ports.begin(), plan->ports.end()};
  env.plan = std::move(*plan);
  const std::string message = repo.commit_message(*record);
  env.dir = (std::filesystem::path(repo.workdir()) / trailer(message, kPlanDirTrailer)).string();
  env.record_message = message;
  return env;
}

std::unique_ptr<Repository> open_repository(Diagnostics& diagnostics) {
  std::unique_ptr<Repository> repo = Repository::discover(std::filesystem::current_path().string());
  if (!repo) {
    diagnostics.report(Code::E0601, {}, "no git repository contains `.`",
                       "run the command in the checkout that holds the plans");
  }
  return repo;
}

}  // namespace

std::optional<AppliedEnv> resolve_env(const std::string& name, Diagnostics& diagnostics,
                                      bool destroyed_too) {
  std::unique_ptr<Repository> repo = open_repository(diagnostics);
  if (!repo) return std::nullopt;
  std::vector<std::string> matches;
  for (const std::string& unit : known_units(*repo)) {
    if (unit == name || env_of(unit) == name) matches.push_back(unit);
  }
  if (matches.size() != 1) {
    Diagnostic& d = diagnostics.report(
        Code::E0715, {},
        matches.empty() ? "no committed plan has env `" + printable(name) + "`"
                        : "env `" + printable(name) + "` is planned on more than one cluster",
        matches.empty() ? "name it as in `plans/<cluster>/<env>`" : "name it as CLUSTER/ENV");
    for (const std::string& unit : matches) d.notes.push_back({"`" + unit + "`", {}});
    return std::nullopt;
  }
  std::optional<AppliedEnv> env = load_record(*repo, matches[0], diagnostics, destroyed_too);
  if (!env && !diagnostics.has_errors()) {
    diagnostics.report(Code::E0750, {}, "`" + matches[0] + "` is not applied",
                       "apply it first: `mlenvc apply`");
  }
  return env;
}

std::optional<std::vector<AppliedEnv>> applied_envs(Diagnostics& diagnostics) {
  std::unique_ptr<Repository> repo = open_repository(diagnostics);
  if (!repo) return std::nullopt;
  std::vector<AppliedEnv> out;
  for (const std::string& ref : repo->refs_matching(std::string(kAppliedRefs) + "*")) {
    if (auto env = load_record(*repo, ref.substr(kAppliedRefs.size()), diagnostics))
      out.push_back(std::move(*env));
  }
  if (diagnostics.has_errors()) return std::nullopt;
  return out;
}

}  // namespace mlenv::plan::day2
