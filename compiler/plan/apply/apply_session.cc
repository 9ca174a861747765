#include "compiler/plan/apply/apply_session.h"

#include <filesystem>
#include <map>

#include "compiler/base/file_system.h"
#include "compiler/base/version.h"
#include "compiler/plan/apply/runner.h"
#include "compiler/plan/git_repo.h"
#include "compiler/plan/worktree.h"

namespace mlenv::plan {
namespace fs = std::filesystem;
namespace {

constexpr const char* kAppliedRefs = "refs/mlenv/applied/";

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

// Names what differs between the committed inputs and a fresh render's.
std::vector<std::string> stale_reasons(const PlanManifest& committed, const PlanManifest& fresh) {
  std::vector<std::string> out;
  if (committed.compiler_version != fresh.compiler_version) {
    out.push_back("compiler version " + committed.compiler_version + " -> " +
                  fresh.compiler_version);
  }
  std::map<std::string, std::string> before;
  for (const PlanDigest& input : committed.inputs) before[input.path] = input.sha256;
  std::map<std::string, std::string> after;
  for (const PlanDigest& input : fresh.inputs) after[input.path] = input.sha256;
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
  return out;
}

// Loads one env's committed plan and its last applied record; reports E0701 or E0607.
std::optional<EnvPlan> load_env(Repository& repo, const std::optional<ObjectId>& head_tree,
                                const std::string& dir, Diagnostics& diagnostics) {
  EnvPlan env;
  env.dir = dir;
  std::string cluster_dir = parent_path(dir);
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
  std::vector<std::string> admin_paths;
  for (const PlanObject& object : env.manifest.objects) {
    if (object.admin) admin_paths.push_back(normalize_path(dir + "/" + object.file));
  }
  if (!admin_paths.empty() && head_tree) {
    std::optional<ObjectId> admin_tree = repo.subtree(*head_tree, cluster_dir + "/_admin");
    if (admin_tree) repo.list_tree(*admin_tree, cluster_dir + "/_admin", env.files);
  }
  std::vector<std::string> dirty = uncommitted_files(repo.workdir(), dir, admin_paths, env.files);
  if (!dirty.empty()) {
    Diagnostic& d =
        diagnostics.report(Code::E0701, {}, "the plan in `" + dir + "` is not committed",
                           "commit it with `mlenvc plan`, or `git restore` the files");
    for (const std::string& path : dirty)
      d.notes.push_back({"`" + path + "` differs from HEAD", {}});
    return std::nullopt;
  }
  env.applied_commit = repo.ref_target(kAppliedRefs + env.unit);
  if (const std::optional<ObjectId>& applied = env.applied_commit) {
    env.applied_files = repo.plan_tree(repo.commit_tree(*applied), dir);
    std::optional<std::string> applied_text = env.applied_files.read(dir + "/plan.json");
    if (applied_text) env.applied = parse_plan_json(*applied_text, error);
  } else {
    env.applied_files = PlanTree([&repo](const BlobId& id) { return repo.read_blob(id); });
  }
  return env;
}

// True where plan.json's `source` is a relative `.mlenv` path that stays inside the work tree,
// as `mlenvc plan` records it (PLAN_JSON.md).
bool source_in_work_tree(const std::string& source) {
  if (source.empty() || source.front() == '/' || !source.ends_with(".mlenv")) return false;
  std::string normal = normalize_path(source);
  return normal != ".." && !normal.starts_with("../");
}

// Refuses envs whose inputs no longer match a fresh render of their source (E0702).
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
    for (const target::File& file : it->second->files) {
      std::string error;
      if (file.path == env.unit + "/plan.json") now = parse_plan_json(file.content, error);
    }
    std::vector<std::string> reasons;
    if (!now) {
      reasons.push_back("`" + env.manifest.source + "` no longer declares env `" + env.unit + "`");
    } else {
      reasons = stale_reasons(env.manifest, *now);
    }
    if (reasons.empty()) continue;
    Diagnostic& d = diagnostics.report(Code::E0702, {}, "the plan in `" + env.dir + "` is stale",
                                       "run `mlenvc plan` and review the new plan");
    for (const std::string& reason : reasons) d.notes.push_back({reason, {}});
    fresh = false;
  }
  return fresh;
}

bool record_applied(Repository& repo, const EnvPlan& env, const ObjectId& head,
                    const ObjectId& head_tree, Diagnostics& diagnostics) {
  const std::string ref = kAppliedRefs + env.unit;
  // Compare-and-swap against the record this apply read before running anything.
  const std::optional<ObjectId>& previous = env.applied_commit;
  // The record's tree is the env directory itself, so `git diff <ref> HEAD:<dir>` compares it.
  ObjectId record_tree = *repo.subtree(head_tree, env.dir);
  std::vector<ObjectId> parents;
  if (previous) parents.push_back(*previous);
  ObjectId commit =
      repo.create_commit(record_tree, parents,
                         "mlenvc apply " + env.unit + "\n\nPlan-Commit: " + to_hex(head) +
                             "\nPlan-Directory: " + env.dir + "\n");
  if (!repo.update_ref(ref, commit, previous, "mlenvc apply")) {
    diagnostics.report(Code::E0708, {},
                       "`" + ref + "` moved during apply; the record was not written",
                       "run `mlenvc apply` again");
    return false;
  }
  return true;
}

}  // namespace

int apply_plans(const ApplyRequest& request, std::ostream& out, Diagnostics& diagnostics) {
  std::unique_ptr<Repository> repo = Repository::discover(fs::current_path().string());
  if (!repo || repo->workdir().empty()) {
    diagnostics.report(Code::E0601, {}, "no git work tree contains `.`",
                       "apply runs in the checkout that holds the plan");
    return 1;
  }
  const fs::path workdir = fs::weakly_canonical(repo->workdir());
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
    return 1;
  }
  try {
    Head head = repo->head();
    std::optional<ObjectId> head_tree;
    if (head.commit) head_tree = repo->commit_tree(*head.commit);
    std::vector<EnvPlan> envs;
    for (const std::string& dir : dirs) {
      if (std::optional<EnvPlan> env = load_env(*repo, head_tree, dir, diagnostics))
        envs.push_back(std::move(*env));
    }
    if (diagnostics.has_errors()) return 1;
    // Stale plans are refused before anything runs; the front end resolves paths from the
    // work tree root, where plan ran it.
    fs::path cwd = fs::current_path();
    fs::current_path(workdir);
    bool fresh = check_fresh(envs, request.render, diagnostics);
    fs::current_path(cwd);
    if (!fresh) return 1;

    StepOptions options = request.steps;
    for (const EnvPlan& env : envs) {
      for (const PlanObject& object : env.manifest.objects) {
        if (object.shared) options.shared_in_use.insert(shared_key(object));
      }
    }
    std::set<std::string> destroyed;
    std::vector<std::vector<Step>> all_steps;
    for (const EnvPlan& env : envs) {
      std::optional<std::vector<Step>> steps = plan_steps(env, options, destroyed, diagnostics);
      if (steps) all_steps.push_back(std::move(*steps));
    }
    for (const std::string& address : request.steps.allow_destroy) {
      if (destroyed.count(address) == 0) {
        diagnostics.report(Code::E0705, {},
                           "--allow-destroy=" + address + " matches no object this apply deletes",
                           "addresses are spelled as in the plan: <cluster>/<env>/<Kind>/<name>");
      }
    }
    if (diagnostics.has_errors()) return 1;

    std::string kubectl = request.client;
    if (kubectl.empty())
      kubectl = find_on_path("oc").value_or(find_on_path("kubectl").value_or(""));
    std::string oc =
        fs::path(kubectl).filename() == "oc" ? kubectl : find_on_path("oc").value_or("");
    bool needs_oc = false;
    for (const auto& steps : all_steps) {
      for (const Step& step : steps) needs_oc = needs_oc || step.client == Client::Oc;
    }
    if (!request.dry_run && (kubectl.empty() || (needs_oc && oc.empty()))) {
      diagnostics.report(Code::E0703, {},
                         kubectl.empty() ? "neither `oc` nor `kubectl` is on PATH"
                                         : "a build must start, and `oc` is not on PATH",
                         "install the client, or pass --kubectl PATH");
      return 1;
    }
    if (kubectl.empty()) kubectl = "kubectl";
    if (oc.empty()) oc = "oc";
    const int timeout = parse_duration(request.steps.timeout).value_or(1800);

    for (std::size_t i = 0; i < envs.size(); ++i) {
      out << (request.dry_run ? "Would apply " : "Applying ") << envs[i].unit << " from "
          << envs[i].dir << '\n';
      for (const Step& step : all_steps[i]) {
        std::vector<std::string> argv{step.client == Client::Oc ? oc : kubectl};
        argv.insert(argv.end(), step.args.begin(), step.args.end());
        out << "$ " << shell_words(argv);
        if (!step.input.empty())
          out << " < " << (step.input_from.empty() ? "(ApplySet parent)" : step.input_from);
        out << '\n';
        out.flush();
        if (request.dry_run) continue;
        RunResult result = run_command(argv, step.input, step.waits ? timeout : 0);
        if (result.timed_out || result.status != 0) {
          Diagnostic& d = diagnostics.report(
              result.timed_out ? Code::E0707 : Code::E0706, {},
              "`" + shell_words(step.args) + "` " +
                  (result.timed_out ? "did not finish within " + request.steps.timeout
                                    : "exited with status " + std::to_string(result.status)));
          d.notes.push_back({"nothing was pruned and `" + std::string(kAppliedRefs) + envs[i].unit +
                                 "` was not moved",
                             {}});
          return 1;
        }
      }
      if (!request.dry_run &&
          !record_applied(*repo, envs[i], *head.commit, *head_tree, diagnostics))
        return 1;
    }
    if (request.dry_run) out << "Dry run: nothing was run.\n";
    return 0;
  } catch (const std::exception& error) {
    diagnostics.report(Code::E0604, {}, error.what());
    return 1;
  }
}

}  // namespace mlenv::plan
