#include "compiler/apply/apply_session.h"

#include <filesystem>
#include <map>

#include "compiler/apply/apply_driver.h"
#include "compiler/apply/applyset.h"
#include "compiler/apply/destroy.h"
#include "compiler/apply/records.h"
#include "compiler/apply/runner.h"
#include "compiler/base/file_system.h"
#include "compiler/base/version.h"
#include "compiler/diag/render.h"
#include "compiler/plan/git_repo.h"
#include "compiler/plan/worktree.h"
#include "targets/provider.h"

namespace mlenv::plan {
namespace fs = std::filesystem;
namespace {

// Env directories (holding plan.json) under `dir`, relative to the work tree, sorted.
std::vector<std::string> find_env_dirs(const fs::path& workdir, const fs::path& dir) {
  std::vector<std::string> out;
  std::error_code error;
  if (fs::is_regular_file(dir / "plan.json", error)) {
    out.push_back(fs::weakly_canonical(dir).lexically_relative(workdir).generic_string());
    return out;
  }
  for (auto it = fs::recursive_directory_iterator(dir, error);
       !error && it != fs::recursive_directory_iterator(); it.increment(error)) {
    if (it->is_regular_file() && it->path().filename() == "plan.json") {
      out.push_back(fs::weakly_canonical(it->path().parent_path())
                        .lexically_relative(workdir)
                        .generic_string());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Names the inputs that differ between two lists of digests.
void input_reasons(const std::vector<PlanDigest>& committed, const std::vector<PlanDigest>& fresh,
                   std::vector<std::string>& out) {
  std::map<std::string, std::string> before;
  for (const PlanDigest& input : committed) before[input.path] = input.sha256;
  std::map<std::string, std::string> after;
  for (const PlanDigest& input : fresh) after[input.path] = input.sha256;
  for (const auto& [path, sha] : after) {
    auto it = before.find(path);
    if (it == before.end()) {
      out.push_back("input `" + path + "` was added");
    } else if (it->second != sha) {
      out.push_back("input `" + path + "` changed");
    }
  }
  for (const auto& [path, sha] : before) {
    if (after.count(path) == 0) out.push_back("input `" + path + "` was removed");
  }
}

// Names what differs between the committed inputs of an env and a fresh render's: the compiler,
// the env's own digest (its declaration, cluster and image) and, to say which files changed,
// the program's inputs (`_inputs/`, or plan.json's own list in plans written before it).
std::vector<std::string> stale_reasons(const EnvPlan& env, const PlanManifest& fresh,
                                       const std::vector<PlanDigest>& fresh_inputs) {
  const PlanManifest& committed = env.manifest;
  std::vector<std::string> out;
  if (committed.compiler_version != fresh.compiler_version) {
    out.push_back("compiler version " + committed.compiler_version + " -> " +
                  fresh.compiler_version);
  }
  input_reasons(committed.inputs, fresh.inputs, out);
  if (committed.inputs_sha256 == fresh.inputs_sha256) return out;
  out.push_back("what env `" + env.unit + "` is rendered from changed (plan.json `inputs_sha256`)");
  input_reasons(env.program_inputs, fresh_inputs, out);
  return out;
}

// The program inputs file of `source` at HEAD (`<plan root>/_inputs/...`), empty when none.
std::vector<PlanDigest> committed_program_inputs(Repository& repo,
                                                 const std::optional<ObjectId>& head_tree,
                                                 const std::string& plan_root,
                                                 const std::string& source) {
  const std::string path = (plan_root.empty() ? "" : plan_root + "/") + program_inputs_path(source);
  if (!head_tree) return {};
  const std::string dir = parent_path(path);
  std::optional<std::string> text = repo.plan_tree(repo.subtree(*head_tree, dir), dir).read(path);
  if (!text) return {};
  std::string error;
  return parse_program_inputs(*text, error).value_or(std::vector<PlanDigest>{});
}

// Loads one env's committed plan and its last applied record; reports E0701 or E0607.
std::optional<EnvPlan> load_env(Repository& repo, const std::optional<ObjectId>& head_tree,
                                const std::string& dir, bool admin, Diagnostics& diagnostics) {
  EnvPlan env;
  env.dir = dir;
  std::string cluster_dir = parent_path(dir);
  const std::string plan_root = parent_path(cluster_dir);
  env.plan_root = fs::weakly_canonical(fs::path(repo.workdir()) / plan_root).string();
  const std::string runtime = plan_root.empty() ? "_runtime" : plan_root + "/_runtime";
  std::optional<ObjectId> runtime_tree;
  if (head_tree) runtime_tree = repo.subtree(*head_tree, runtime);
  if (runtime_tree) env.runtime_tree = to_hex(*runtime_tree);
  std::optional<ObjectId> env_tree;
  if (head_tree) env_tree = repo.subtree(*head_tree, dir);
  env.files = repo.plan_tree(env_tree, dir);
  std::optional<std::string> text = env.files.read(dir + "/plan.json");
  if (!text) {
    diagnostics.report(Code::E0701, {}, "`" + dir + "` is not committed at HEAD",
                       "commit the plan with `mlenvc plan`");
    return std::nullopt;
  }
  std::string error;
  std::optional<PlanManifest> manifest = parse_plan_json(*text, error);
  if (!manifest) {
    diagnostics.report(Code::E0607, {}, "`" + dir + "/plan.json`: " + error);
    return std::nullopt;
  }
  env.manifest = std::move(*manifest);
  env.unit = env.manifest.cluster + "/" + env.manifest.env;
  env.program_inputs = committed_program_inputs(repo, head_tree, plan_root, env.manifest.source);
  std::vector<std::string> admin_paths;
  for (const PlanObject& object : env.manifest.objects) {
    if (object.admin) admin_paths.push_back(normalize_path(dir + "/" + object.file));
  }
  if (!admin_paths.empty() && head_tree) {
    std::optional<ObjectId> admin_tree = repo.subtree(*head_tree, cluster_dir + "/_admin");
    if (admin_tree) repo.list_tree(*admin_tree, cluster_dir + "/_admin", env.files);
  }
  std::vector<std::string> dirty =
      uncommitted_files(repo.workdir(), dir, admin_paths, env.files,
                        [&repo](const std::string& path) { return repo.ignored(path); });
  // An image build uploads the work tree as its context: the mlenv-boot sources it builds from
  // must be the committed ones too.
  for (std::string& path :
       uncommitted_files(repo.workdir(), runtime, {}, repo.plan_tree(runtime_tree, runtime)))
    dirty.push_back(std::move(path));
  if (!dirty.empty()) {
    Diagnostic& d =
        diagnostics.report(Code::E0701, {}, "the plan in `" + dir + "` is not committed",
                           "commit it with `mlenvc plan`, or `git restore` the files");
    for (const std::string& path : dirty)
      d.notes.push_back({"`" + path + "` differs from HEAD", {}});
    return std::nullopt;
  }
  load_applied_record(repo, admin, env);
  return env;
}

// True where plan.json's `source` is a relative `.mlenv` path that stays inside the work tree,
// as `mlenvc plan` records it (PLAN_JSON.md).
bool source_in_work_tree(const std::string& source) {
  if (source.empty() || source.front() == '/' || !source.ends_with(".mlenv")) return false;
  std::string normal = normalize_path(source);
  return normal != ".." && !normal.starts_with("../");
}

// Files of the env (and the `_admin` files it uses) whose committed bytes differ from a fresh
// render of its source: hand edits, which the input digests cannot see. Paths as committed.
std::vector<std::string> hand_edits(const EnvPlan& env, const target::Output& fresh) {
  const std::string root = parent_path(parent_path(env.dir));
  const std::size_t strip = root.empty() ? 0 : root.size() + 1;
  const std::string cluster = env.unit.substr(0, env.unit.find('/'));
  std::map<std::string, BlobId> rendered;  // by path relative to the plan directory
  for (const target::File& file : fresh.files) {
    if (file.path.starts_with(env.unit + "/") || file.path.starts_with(cluster + "/_admin/"))
      rendered[file.path] = hash_blob(file.content);
  }
  std::vector<std::string> out;
  for (const auto& [path, entry] : env.files.entries()) {
    auto it = rendered.find(path.substr(strip));
    if (it == rendered.end()) {
      if (path.starts_with(env.dir + "/")) out.push_back(path);
      continue;
    }
    if (it->second != entry.id) out.push_back(path);
    rendered.erase(it);
  }
  for (const auto& [path, id] : rendered) {
    if (path.starts_with(env.unit + "/")) out.push_back((strip ? root + "/" : "") + path);
  }
  return out;
}

// Refuses envs whose inputs no longer match a fresh render of their source (E0702), and envs
// whose committed files differ from that render (E0717: edited by hand after plan).
bool check_fresh(const std::vector<EnvPlan>& envs, const Renderer& render,
                 Diagnostics& diagnostics) {
  std::map<std::string, std::optional<target::Output>> renders;
  bool fresh = true;
  for (const EnvPlan& env : envs) {
    if (!source_in_work_tree(env.manifest.source)) {
      // plan.json is reviewed text: a `source` of `/proc/self/environ` or `~/.aws/credentials`
      // would have the compiler read that file and print its lines in diagnostics.
      Diagnostic& d =
          diagnostics.report(Code::E0510, {},
                             "the plan in `" + env.dir + "` names `" + env.manifest.source +
                                 "` as its source, which is not a `.mlenv` file in this work tree");
      d.notes.push_back({"apply re-renders only sources inside the repository", {}});
      return false;
    }
    auto it = renders.find(env.manifest.source);
    if (it == renders.end())
      it = renders.emplace(env.manifest.source, render(env.manifest.source, diagnostics)).first;
    if (!it->second) return false;
    std::optional<PlanManifest> now;
    std::vector<PlanDigest> inputs;
    const std::string inputs_path = program_inputs_path(env.manifest.source);
    for (const target::File& file : it->second->files) {
      std::string error;
      if (file.path == env.unit + "/plan.json") now = parse_plan_json(file.content, error);
      if (file.path == inputs_path)
        inputs = parse_program_inputs(file.content, error).value_or(std::vector<PlanDigest>{});
    }
    std::vector<std::string> reasons;
    if (!now) {
      reasons.push_back("`" + env.manifest.source + "` no longer declares env `" + env.unit + "`");
    } else {
      reasons = stale_reasons(env, *now, inputs);
    }
    if (reasons.empty()) {
      std::vector<std::string> edited = hand_edits(env, *it->second);
      if (edited.empty()) continue;
      Diagnostic& d = diagnostics.report(
          Code::E0717, {}, "the plan in `" + env.dir + "` was edited after `mlenvc plan`",
          "plan files are generated: change the program and run `mlenvc plan`");
      for (const std::string& path : edited)
        d.notes.push_back(
            {"`" + path + "` differs from a fresh render of `" + env.manifest.source + "`", {}});
      fresh = false;
      continue;
    }
    Diagnostic& d = diagnostics.report(Code::E0702, {}, "the plan in `" + env.dir + "` is stale",
                                       "run `mlenvc plan` and review the new plan");
    for (const std::string& reason : reasons) d.notes.push_back({reason, {}});
    fresh = false;
  }
  return fresh;
}

// The env directories named by the request, relative to the work tree; E0709 when none.
std::vector<std::string> requested_dirs(const ApplyRequest& request, const fs::path& workdir,
                                        Diagnostics& diagnostics) {
  std::vector<std::string> dirs;
  std::vector<std::string> given = request.plan_dirs;
  if (given.empty()) given.push_back((workdir / "plans").string());
  for (const std::string& dir : given) {
    for (std::string& env : find_env_dirs(workdir, fs::absolute(dir)))
      dirs.push_back(std::move(env));
  }
  if (dirs.empty()) {
    diagnostics.report(Code::E0709, {},
                       "no plan.json under `" +
                           (request.plan_dirs.empty() ? std::string("plans") : given[0]) + "`",
                       "run `mlenvc plan` first");
  }
  return dirs;
}

// Loads every env and refuses uncommitted or stale ones; nullopt with diagnostics reported.
std::optional<std::vector<EnvPlan>> load_envs(Repository& repo, const fs::path& workdir,
                                              const std::optional<ObjectId>& head_tree,
                                              const std::vector<std::string>& dirs,
                                              const ApplyRequest& request,
                                              Diagnostics& diagnostics) {
  std::vector<EnvPlan> envs;
  for (const std::string& dir : dirs) {
    if (std::optional<EnvPlan> env =
            load_env(repo, head_tree, dir, request.steps.admin, diagnostics))
      envs.push_back(std::move(*env));
  }
  if (diagnostics.has_errors()) return std::nullopt;
  // Stale plans are refused before anything runs; the front end resolves paths from the work
  // tree root, where plan ran it.
  fs::path cwd = fs::current_path();
  fs::current_path(workdir);
  bool fresh = check_fresh(envs, request.render, diagnostics);
  fs::current_path(cwd);
  if (!fresh) return std::nullopt;
  return envs;
}

// The plan directories the request covers, relative to the work tree: an env applied from one
// of them that HEAD no longer holds was removed from the plan.
std::vector<std::string> covered_dirs(const ApplyRequest& request, const fs::path& workdir) {
  std::vector<std::string> out;
  std::vector<std::string> given = request.plan_dirs;
  if (given.empty()) given.push_back((workdir / "plans").string());
  for (const std::string& dir : given)
    out.push_back(
        fs::weakly_canonical(fs::absolute(dir)).lexically_relative(workdir).generic_string());
  return out;
}

// The envs and removed envs of one apply driver.
struct DriverWork {
  const ApplyDriver* driver = nullptr;
  std::vector<EnvPlan> envs;
  std::vector<EnvPlan> removed;
};

// `envs` and `removed` split by the apply driver of their platform, in the registry's order;
// drivers with nothing to do are left out.
std::vector<DriverWork> by_driver(std::vector<EnvPlan> envs, std::vector<EnvPlan> removed) {
  std::vector<DriverWork> parts;
  auto part_of = [&](const EnvPlan& env) -> DriverWork& {
    const ApplyDriver* driver = &target::provider(env.manifest.platform).apply();
    for (DriverWork& part : parts) {
      if (part.driver == driver) return part;
    }
    return parts.emplace_back(DriverWork{driver, {}, {}});
  };
  for (EnvPlan& env : envs) part_of(env).envs.push_back(std::move(env));
  for (EnvPlan& env : removed) part_of(env).removed.push_back(std::move(env));
  std::vector<DriverWork> ordered;
  for (const target::Provider* provider : target::providers()) {
    for (DriverWork& part : parts) {
      if (part.driver == &provider->apply() && part.driver != nullptr) {
        ordered.push_back(std::move(part));
        part.driver = nullptr;
      }
    }
  }
  return ordered;
}

}  // namespace

int apply_plans(const ApplyRequest& request, std::ostream& out, Diagnostics& diagnostics) {
  std::unique_ptr<Repository> repo = Repository::discover(fs::current_path().string());
  if (!repo || repo->workdir().empty()) {
    diagnostics.report(Code::E0601, {}, "no git work tree contains `.`",
                       "apply runs in the checkout that holds the plan");
    return 1;
  }
  if (!parse_duration(request.steps.timeout)) {
    diagnostics.report(Code::E0714, {}, "--timeout=" + request.steps.timeout + " is not a duration",
                       "write it as 90s, 30m, 2h or 1h30m: more than zero, at most 720h");
    return 1;
  }
  const fs::path workdir = fs::weakly_canonical(repo->workdir());
  std::vector<std::string> dirs = requested_dirs(request, workdir, diagnostics);
  if (dirs.empty()) return 1;
  try {
    Head head = repo->head();
    std::optional<ObjectId> head_tree;
    if (head.commit) head_tree = repo->commit_tree(*head.commit);
    std::optional<std::vector<EnvPlan>> envs =
        load_envs(*repo, workdir, head_tree, dirs, request, diagnostics);
    if (!envs) return 1;
    std::set<std::string> applying;
    for (const EnvPlan& env : *envs) applying.insert(env.unit);
    std::vector<EnvPlan> removed = removed_envs(*repo, head_tree, covered_dirs(request, workdir),
                                                applying, request.steps.admin);
    // Each driver applies the envs of its platforms, in the registry's order.
    const std::string root = workdir.string();
    const ApplyContext context{request, *repo, head, head_tree, root};
    int status = 0;
    bool ran = false;
    for (const DriverWork& part : by_driver(std::move(*envs), std::move(removed))) {
      const int one = part.driver->apply(context, part.envs, part.removed, out, diagnostics);
      if (one == 1) return 1;
      status = std::max(status, one);
      ran = true;
    }
    if (request.dry_run && ran) out << "Dry run: nothing was run.\n";
    return status;
  } catch (const std::exception& error) {
    diagnostics.report(Code::E0604, {}, error.what());
    return 1;
  }
}

}  // namespace mlenv::plan
