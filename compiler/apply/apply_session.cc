#include "compiler/apply/apply_session.h"

#include <filesystem>
#include <map>

#include "compiler/apply/applyset.h"
#include "compiler/apply/destroy.h"
#include "compiler/apply/records.h"
#include "compiler/apply/runner.h"
#include "compiler/apply/step_runner.h"
#include "compiler/base/file_system.h"
#include "compiler/base/version.h"
#include "compiler/diag/render.h"
#include "compiler/plan/git_repo.h"
#include "compiler/plan/worktree.h"
#include "platforms/slurm/slurm_apply.h"

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
  // `oc start-build --from-dir` uploads the work tree: the mlenv-boot sources it builds from
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

// What one apply does: the envs it applies, then the envs it takes off the cluster because
// the plan no longer holds them; `steps` in that order.
struct ApplyWork {
  std::vector<EnvPlan> envs;
  std::vector<EnvPlan> removed;
  std::vector<EnvSteps> steps;
};

// Every env's steps, or false with E0704/E0705/E0607 reported. A removed env keeps the shared
// objects that an env being applied, or another env of its cluster at HEAD, still holds.
bool all_steps(Repository& repo, const std::optional<ObjectId>& head_tree,
               const StepOptions& requested, ApplyWork& work, Diagnostics& diagnostics) {
  StepOptions options = requested;
  for (const EnvPlan& env : work.envs) {
    for (const PlanObject& object : env.manifest.objects) {
      if (object.shared) options.shared_in_use.insert(shared_key(object));
    }
  }
  std::set<std::string> destroyed;
  for (const EnvPlan& env : work.envs) {
    if (std::optional<EnvSteps> steps = plan_steps(env, options, destroyed, diagnostics))
      work.steps.push_back(std::move(*steps));
  }
  for (const EnvPlan& env : work.removed) {
    StepOptions kept = options;
    kept.shared_in_use.merge(shared_kept_at_head(repo, head_tree, env));
    if (std::optional<EnvSteps> steps = destroy_steps(env, kept, destroyed, diagnostics))
      work.steps.push_back(std::move(*steps));
  }
  for (const std::string& address : requested.allow_destroy) {
    if (destroyed.count(address) == 0) {
      diagnostics.report(Code::E0705, {},
                         "--allow-destroy=" + address + " matches no object this apply deletes",
                         "addresses are spelled as in the plan: <cluster>/<env>/<Kind>/<name>");
    }
  }
  return !diagnostics.has_errors();
}

// The kubectl-compatible client and oc; E0703 when a needed one is missing.
// plan.json's `platform` picks the client: `oc` first for OpenShift plans, `kubectl` first
// when every plan is another platform's.
std::optional<std::pair<std::string, std::string>> find_clients(const ApplyRequest& request,
                                                                const std::vector<EnvPlan>& envs,
                                                                const std::vector<EnvSteps>& steps,
                                                                Diagnostics& diagnostics) {
  const bool openshift = std::any_of(envs.begin(), envs.end(), [](const EnvPlan& env) {
    return env.manifest.platform == "openshift";
  });
  std::string kubectl = request.client;
  if (kubectl.empty()) kubectl = platform_client(openshift ? "openshift" : "kubernetes");
  std::string oc = fs::path(kubectl).filename() == "oc" ? kubectl : find_on_path("oc").value_or("");
  bool needs_oc = false;
  for (const EnvSteps& env : steps) {
    for (const Step& step : env.steps) needs_oc = needs_oc || step.client == Client::Oc;
  }
  if (!request.dry_run && (kubectl.empty() || (needs_oc && oc.empty()))) {
    diagnostics.report(Code::E0703, {},
                       kubectl.empty() ? "neither `oc` nor `kubectl` is on PATH"
                                       : "a build must start, and `oc` is not on PATH",
                       "install the client, or pass --kubectl PATH");
    return std::nullopt;
  }
  if (kubectl.empty()) kubectl = "kubectl";
  if (oc.empty()) oc = "oc";
  return std::pair{kubectl, oc};
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

// Runs every env's preflight, then its steps, recording each env applied or destroyed; the
// exit status.
int run_work(Repository& repo, const ApplyRequest& request, const ApplyWork& work,
             StepRunner& runner, const Head& head, std::ostream& out, Diagnostics& diagnostics) {
  // Checks of every env first: a missing Namespace or grant stops apply before any change.
  bool ready = true;
  for (std::size_t i = 0; i < work.envs.size(); ++i) {
    for (const Step& step : work.steps[i].preflight)
      ready = runner.run(step, work.envs[i].unit) && ready;
  }
  if (!ready) return 1;
  const ObjectId head_tree = repo.commit_tree(*head.commit);
  for (std::size_t i = 0; i < work.steps.size(); ++i) {
    const bool removed = i >= work.envs.size();
    const EnvPlan& env = removed ? work.removed[i - work.envs.size()] : work.envs[i];
    const char* verb = removed ? (request.dry_run ? "Would destroy " : "Destroying ")
                               : (request.dry_run ? "Would apply " : "Applying ");
    out << verb << (request.steps.admin ? "the admin objects of " : "") << env.unit
        << (removed ? ", which left the plan in " : " from ") << env.dir << '\n';
    for (const Step& step : work.steps[i].steps) {
      if (!runner.run(step, env.unit)) return 1;
    }
    if (request.dry_run) continue;
    const bool recorded =
        removed
            ? record_destroyed(repo, env, request.steps.admin,
                               "The env left the plan at " + to_hex(*head.commit) + ".",
                               diagnostics)
            : record_applied(repo, env, request.steps.admin, *head.commit, head_tree, diagnostics);
    if (!recorded) return 1;
  }
  if (request.dry_run) out << "Dry run: nothing was run.\n";
  return runner.run_failed() ? kExitRunFailed : 0;
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
    ApplyWork work;
    work.envs = std::move(*envs);
    std::set<std::string> applying;
    for (const EnvPlan& env : work.envs) applying.insert(env.unit);
    work.removed = removed_envs(*repo, head_tree, covered_dirs(request, workdir), applying,
                                request.steps.admin);
    // Slurm envs are submitted with sbatch (and cancelled with scancel), not applied.
    std::vector<EnvPlan> slurm_envs = take_slurm_envs(work.envs);
    std::vector<EnvPlan> slurm_removed = take_slurm_envs(work.removed);
    int status = 0;
    if (!work.envs.empty() || !work.removed.empty()) {
      if (!all_steps(*repo, head_tree, request.steps, work, diagnostics)) return 1;
      auto clients = find_clients(request, work.envs, work.steps, diagnostics);
      if (!clients) return 1;
      StepRunner runner(request, clients->first, clients->second, out, diagnostics);
      status = run_work(*repo, request, work, runner, head, out, diagnostics);
      if (status == 1) return 1;
    }
    if (slurm_envs.empty() && slurm_removed.empty()) return status;
    if (!cancel_removed_slurm_envs(request, *repo, slurm_removed, *head.commit, out, diagnostics))
      return 1;
    int slurm_status = apply_slurm_envs(request, *repo, head, *head_tree, workdir.string(),
                                        slurm_envs, out, diagnostics);
    if (slurm_status == 1) return 1;
    if (request.dry_run && work.envs.empty() && work.removed.empty())
      out << "Dry run: nothing was run.\n";
    return std::max(status, slurm_status);
  } catch (const std::exception& error) {
    diagnostics.report(Code::E0604, {}, error.what());
    return 1;
  }
}

}  // namespace mlenv::plan
