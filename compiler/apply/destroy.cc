#include "compiler/apply/destroy.h"

#include <filesystem>

#include "compiler/apply/apply_driver.h"
#include "compiler/apply/records.h"
#include "compiler/apply/runner.h"
#include "compiler/base/file_system.h"
#include "targets/provider.h"

namespace mlenv::plan {
namespace {

bool under(const std::string& dir, const std::string& root) {
  return root.empty() || root == "." || dir == root || dir.starts_with(root + "/");
}

// The env of `ref` (`<root><cluster>/<env>`) with its record loaded; nullopt when the record
// holds no plan (destroyed already, or unreadable).
std::optional<EnvPlan> recorded_env(Repository& repo, const std::string& ref, bool admin) {
  EnvPlan env;
  env.unit = ref.substr(std::string(applied_refs(admin)).size());
  std::optional<ObjectId> commit = repo.ref_target(ref);
  if (!commit) return std::nullopt;
  env.dir = trailer(repo.commit_message(*commit), kPlanDirTrailer);
  if (env.dir.empty()) return std::nullopt;
  load_applied_record(repo, admin, env);
  if (!env.applied) return std::nullopt;
  env.manifest = *env.applied;
  env.files = PlanTree(env.applied_files.loader());
  return env;
}

// The records whose unit is `name` (`CLUSTER/ENV`) or ends with `/name` (`ENV`).
std::vector<std::string> records_named(Repository& repo, const std::string& name, bool admin) {
  const std::string root = applied_refs(admin);
  std::vector<std::string> out;
  for (const std::string& ref : repo.refs_matching(root + "*")) {
    std::string unit = ref.substr(root.size());
    if (unit == name || (name.find('/') == std::string::npos && unit.ends_with("/" + name)))
      out.push_back(ref);
  }
  return out;
}

// The env `request.env` names among the applied records; E0718 when none or several.
std::optional<EnvPlan> find_recorded(Repository& repo, const DestroyRequest& request,
                                     Diagnostics& diagnostics) {
  std::vector<std::string> refs = records_named(repo, request.env, request.steps.admin);
  std::optional<EnvPlan> env;
  if (refs.size() == 1) env = recorded_env(repo, refs[0], request.steps.admin);
  if (env) return env;
  Diagnostic& d = diagnostics.report(
      Code::E0718, {},
      refs.size() > 1
          ? "`" + request.env + "` names " + std::to_string(refs.size()) + " applied envs"
          : "`" + request.env + "` has no applied record to destroy",
      refs.size() > 1 ? "name it as CLUSTER/ENV" : "see `git for-each-ref refs/mlenv/applied`");
  for (const std::string& ref : refs) d.notes.push_back({"`" + ref + "`", {}});
  return std::nullopt;
}

}  // namespace

std::vector<EnvPlan> removed_envs(Repository& repo, const std::optional<ObjectId>& head_tree,
                                  const std::vector<std::string>& covered,
                                  const std::set<std::string>& applying, bool admin) {
  std::vector<EnvPlan> out;
  const std::string root = applied_refs(admin);
  for (const std::string& ref : repo.refs_matching(root + "*")) {
    if (applying.count(ref.substr(root.size())) != 0) continue;
    // Where the record was applied from decides first: an apply of one env directory reads no
    // other env's record.
    std::optional<ObjectId> commit = repo.ref_target(ref);
    const std::string dir = commit ? trailer(repo.commit_message(*commit), kPlanDirTrailer) : "";
    bool in_scope = false;
    for (const std::string& root_dir : covered) in_scope = in_scope || under(dir, root_dir);
    if (dir.empty() || !in_scope) continue;
    if (head_tree && repo.blob_at(*head_tree, dir + "/plan.json")) continue;
    if (std::optional<EnvPlan> env = recorded_env(repo, ref, admin)) out.push_back(std::move(*env));
  }
  return out;
}

std::set<std::string> shared_kept_at_head(Repository& repo,
                                          const std::optional<ObjectId>& head_tree,
                                          const EnvPlan& env) {
  std::set<std::string> kept;
  const std::string cluster_dir = parent_path(env.dir);
  std::optional<ObjectId> tree;
  if (head_tree) tree = repo.subtree(*head_tree, cluster_dir);
  PlanTree others = repo.plan_tree(tree, cluster_dir);
  for (const PlanObject& object : env.manifest.objects) {
    if (!object.shared) continue;
    for (const auto& [path, entry] : others.entries()) {
      const bool other_env = !path.starts_with(env.dir + "/") &&
                             !path.starts_with(cluster_dir + "/_admin/") &&
                             path.ends_with("/" + object.file);
      if (other_env) kept.insert(shared_key(object));
    }
  }
  return kept;
}

int destroy_env(const DestroyRequest& request, std::ostream& out, Diagnostics& diagnostics) {
  std::unique_ptr<Repository> repo = Repository::discover(std::filesystem::current_path().string());
  if (!repo || repo->workdir().empty()) {
    diagnostics.report(Code::E0601, {}, "no git work tree contains `.`",
                       "destroy runs in the checkout that holds the applied records");
    return 1;
  }
  if (!parse_duration(request.steps.timeout)) {
    diagnostics.report(Code::E0714, {}, "--timeout=" + request.steps.timeout + " is not a duration",
                       "write it as 90s, 30m, 2h or 1h30m: more than zero, at most 720h");
    return 1;
  }
  try {
    std::optional<EnvPlan> env = find_recorded(*repo, request, diagnostics);
    if (!env) return 1;
    const ApplyDriver& driver = target::provider(env->manifest.platform).apply();
    return driver.destroy(request, *repo, *env, out, diagnostics);
  } catch (const std::exception& error) {
    diagnostics.report(Code::E0604, {}, error.what());
    return 1;
  }
}

}  // namespace mlenv::plan
