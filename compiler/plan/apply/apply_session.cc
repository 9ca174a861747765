#include "compiler/plan/apply/apply_session.h"

#include <sys/random.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <map>
#include <sstream>
#include <thread>

#include "compiler/base/file_system.h"
#include "compiler/base/version.h"
#include "compiler/diag/render.h"
#include "compiler/plan/apply/applyset.h"
#include "compiler/plan/apply/runner.h"
#include "compiler/plan/apply/slurm_jobs.h"
#include "compiler/plan/git_repo.h"
#include "compiler/plan/worktree.h"

namespace mlenv::plan {
namespace fs = std::filesystem;
namespace {

constexpr const char* kAppliedRefs = "refs/mlenv/applied/";
// --admin records what the platform team applied apart, so neither apply's prune sees the
// other's objects as its own.
constexpr const char* kAdminAppliedRefs = "refs/mlenv/applied-admin/";
constexpr std::string_view kRuntimeTrailer = "Runtime-Tree: ";
constexpr std::string_view kParentTrailer = "ApplySet-Parent: ";

const char* applied_refs(bool admin) {
  return admin ? kAdminAppliedRefs : kAppliedRefs;
}

// A trailer (`Runtime-Tree: `) of an applied record, "" when none.
std::string trailer(const std::string& message, std::string_view key) {
  std::size_t at = message.find(key);
  if (at == std::string::npos) return {};
  at += key.size();
  return message.substr(at, message.find('\n', at) - at);
}

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

// Reads what `refs/mlenv/applied[-admin]/<unit>` recorded of `env`: its files, plan.json and
// trailers.
void load_applied_record(Repository& repo, bool admin, EnvPlan& env) {
  env.applied_commit = repo.ref_target(applied_refs(admin) + env.unit);
  const std::optional<ObjectId>& applied = env.applied_commit;
  if (!applied) {
    env.applied_files = PlanTree([&repo](const BlobId& id) { return repo.read_blob(id); });
    return;
  }
  const std::string message = repo.commit_message(*applied);
  env.applied_runtime_tree = trailer(message, kRuntimeTrailer);
  env.applied_parent = trailer(message, kParentTrailer);
  // Records written before parents named the program name none: their objects carry the id of
  // `applyset-<env>`.
  if (env.applied_parent.empty()) env.applied_parent = "applyset-" + env.manifest.env;
  env.applied_files = repo.plan_tree(repo.commit_tree(*applied), env.dir);
  std::string error;
  std::optional<std::string> text = env.applied_files.read(env.dir + "/plan.json");
  if (text) env.applied = parse_plan_json(*text, error);
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

bool record_applied(Repository& repo, const EnvPlan& env, bool admin, const ObjectId& head,
                    const ObjectId& head_tree, Diagnostics& diagnostics,
                    const std::string& trailers = "") {
  const std::string ref = applied_refs(admin) + env.unit;
  // Compare-and-swap against the record this apply read before running anything.
  const std::optional<ObjectId>& previous = env.applied_commit;
  // The record's tree is the env directory itself, so `git diff <ref> HEAD:<dir>` compares it.
  ObjectId record_tree = *repo.subtree(head_tree, env.dir);
  std::vector<ObjectId> parents;
  if (previous) parents.push_back(*previous);
  const PlanManifest& plan = env.manifest;
  std::string message = "mlenvc apply " + env.unit + "\n\nPlan-Commit: " + to_hex(head) +
                        "\nPlan-Directory: " + env.dir + "\n" + std::string(kParentTrailer) +
                        applyset_parent(plan.env, plan.namespace_, plan.source).name + "\n";
  if (!env.runtime_tree.empty()) message += std::string(kRuntimeTrailer) + env.runtime_tree + "\n";
  message += trailers;
  ObjectId commit = repo.create_commit(record_tree, parents, message);
  if (!repo.update_ref(ref, commit, previous, "mlenvc apply")) {
    diagnostics.report(Code::E0708, {},
                       "`" + ref + "` moved during apply; the record was not written",
                       "run `mlenvc apply` again");
    return false;
  }
  return true;
}

// `n` bytes from the kernel's random source (getrandom(2), which blocks only until the pool is
// initialised at boot); throws when it cannot provide them.
std::string random_bytes(int n) {
  std::string out(static_cast<std::size_t>(n), '\0');
  std::size_t filled = 0;
  while (filled < out.size()) {
    ssize_t got = getrandom(out.data() + filled, out.size() - filled, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) throw std::runtime_error("no random bytes from the kernel");
    filled += static_cast<std::size_t>(got);
  }
  return out;
}

// The whitespace-separated words of `text`.
std::set<std::string> words(const std::string& text) {
  std::set<std::string> out;
  std::istringstream in(text);
  for (std::string word; in >> word;) out.insert(word);
  return out;
}

// Runs (or, dry, prints) the steps of every env: each kind of step as StepKind describes it.
class StepRunner {
 public:
  StepRunner(const ApplyRequest& request, std::string kubectl, std::string oc, std::ostream& out,
             Diagnostics& diagnostics)
      : request_(request),
        kubectl_(std::move(kubectl)),
        oc_(std::move(oc)),
        image_builder_(find_image_builder()),
        out_(out),
        diagnostics_(diagnostics),
        timeout_(parse_duration(request.steps.timeout).value_or(1800)) {}

  /// Runs one step; false when apply must stop (diagnostics reported).
  bool run(const Step& step, const std::string& unit) {
    unit_ = unit;
    switch (step.kind) {
      case StepKind::Run:
        return run_plain(step);
      case StepKind::RequireNamespace:
        return require_namespace(step);
      case StepKind::EnsureSecret:
        return ensure_secret(step);
      case StepKind::CheckGrant:
        return check_grant(step);
      case StepKind::Build:
        return build(step);
      case StepKind::WaitJob:
        return wait_job(step);
    }
    return false;
  }

  /// A run waited for ended Failed.
  bool run_failed() const { return run_failed_; }

 private:
  // The first of podman, buildah and docker on PATH, or "" when none is.
  static std::string find_image_builder() {
    for (const char* name : {"podman", "buildah", "docker"}) {
      if (std::optional<std::string> path = find_on_path(name)) return *path;
    }
    return "";
  }

  std::vector<std::string> argv(Client client, const std::vector<std::string>& args) const {
    std::vector<std::string> out{client == Client::Oc             ? oc_
                                 : client == Client::ImageBuilder ? image_builder_
                                                                  : kubectl_};
    if (out[0].empty()) out[0] = "podman";  // no image builder: the command to run by hand
    out.insert(out.end(), args.begin(), args.end());
    return out;
  }

  void show(const std::vector<std::string>& command, const std::string& suffix = {}) {
    out_ << "$ " << printable(shell_words(command)) << printable(suffix) << '\n';
    out_.flush();
  }

  // Runs a command under --timeout; reports E0706/E0707 and returns nullopt when it fails.
  std::optional<RunResult> call(const Step& step, const std::vector<std::string>& args,
                                const std::string& input, bool capture, bool quiet_failure = false,
                                int timeout = 0) {
    RunResult result =
        run_command(argv(step.client, args), input, timeout > 0 ? timeout : timeout_, capture);
    if (!result.timed_out && (result.status == 0 || quiet_failure)) return result;
    Diagnostic& d = diagnostics_.report(
        result.timed_out ? Code::E0707 : Code::E0706, {},
        "`" + shell_words(args) + "` " +
            (result.timed_out ? "did not finish within " + request_.steps.timeout
                              : "exited with status " + std::to_string(result.status)));
    d.notes.push_back({"nothing was pruned and `" +
                           std::string(applied_refs(request_.steps.admin)) + unit_ +
                           "` was not moved",
                       {}});
    return std::nullopt;
  }

  bool run_plain(const Step& step) {
    std::string input = step.input;
    std::string suffix;
    if (!step.input.empty())
      suffix = " < " + (step.input_from.empty() ? "(ApplySet parent)" : step.input_from);
    if (!step.image.empty()) {
      auto digest = digests_.find(step.image);
      if (digest != digests_.end()) {
        for (std::size_t at; (at = input.find(image_field(step.image))) != std::string::npos;)
          input.replace(at, image_field(step.image).size(), image_field(digest->second));
        suffix += " (image " + digest->second + ")";
      } else if (request_.dry_run) {
        suffix += " (image " + step.image + " by its built digest)";
      }
    }
    if (step.client == Client::ImageBuilder && image_builder_.empty()) {
      // Nothing here can build images: the exact command, for someone who can.
      show(argv(step.client, step.args),
           " (no podman, buildah or docker on PATH: run it where one is)");
      return true;
    }
    show(argv(step.client, step.args), suffix);
    return request_.dry_run || call(step, step.args, input, false).has_value();
  }

  bool require_namespace(const Step& step) {
    show(argv(step.client, step.args));
    if (request_.dry_run) return true;
    std::optional<RunResult> result = call(step, step.args, "", true);
    if (!result) return false;
    if (!result->output.empty()) return true;
    diagnostics_.report(Code::E0710, {}, "namespace `" + step.subject + "` does not exist",
                        "ask the platform team to create it; apply never creates a Namespace");
    return false;
  }

  bool ensure_secret(const Step& step) {
    show(argv(step.client, step.args));
    const std::string create_suffix = " < <random " + std::to_string(step.random_bytes) + " bytes>";
    if (request_.dry_run) {
      show(argv(step.client, step.then), create_suffix + " (when missing)");
      return true;
    }
    std::optional<RunResult> found = call(step, step.args, "", true);
    if (!found) return false;
    if (!found->output.empty()) return true;
    show(argv(step.client, step.then), create_suffix);
    return call(step, step.then, random_bytes(step.random_bytes), false).has_value();
  }

  bool check_grant(const Step& step) {
    show(argv(step.client, step.args));
    if (request_.dry_run) return true;
    std::optional<RunResult> result = call(step, step.args, "", true, true);
    if (!result) return false;
    std::set<std::string> answer = words(result->output);
    if (result->status == 0 && answer.count("yes") != 0) return true;
    if (answer.count("no") == 0) {
      call(step, step.args, "", true);  // not an answer: report the failure as any other
      return false;
    }
    const std::string as = step.args[4].substr(5);
    Diagnostic& d = diagnostics_.report(
        Code::E0711, {},
        "`" + as + "` may not use SecurityContextConstraints `" + step.subject + "`",
        "the platform team grants it once with `mlenvc apply --admin`");
    d.notes.push_back({"the env's pods would be refused by SCC admission", {}});
    return false;
  }

  bool build(const Step& step) {
    if (request_.dry_run) {
      if (step.rebuild) show(argv(step.client, step.then));
      if (!step.args.empty())
        show(argv(step.client, step.args), step.rebuild ? "" : " (start-build first when missing)");
      return true;
    }
    if (!step.rebuild && !step.args.empty()) {
      show(argv(step.client, step.args));
      std::optional<RunResult> current = call(step, step.args, "", true, true);
      if (!current) return false;
      if (current->status == 0 && !current->output.empty()) {
        digests_[step.image] = current->output;
        return true;
      }
    }
    if (!step.then.empty()) {
      show(argv(step.client, step.then));
      if (!call(step, step.then, "", false)) {
        show(argv(step.client, step.on_failure));
        RunResult log = run_command(argv(step.client, step.on_failure), "", timeout_, true);
        std::string tail = printable(log.output, true);
        out_ << tail << (tail.ends_with('\n') || tail.empty() ? "" : "\n");
        return false;
      }
    }
    if (step.args.empty()) return true;
    show(argv(step.client, step.args));
    std::optional<RunResult> built = call(step, step.args, "", true);
    if (!built) return false;
    if (built->output.empty() || built->output.find('@') == std::string::npos) {
      diagnostics_.report(Code::E0712, {},
                          "`" + shell_words(step.args) + "` printed no image digest",
                          "the build of `" + step.subject + "` pushed no image");
      return false;
    }
    digests_[step.image] = built->output;
    return true;
  }

  bool wait_job(const Step& step) {
    show(argv(step.client, step.args), " (until Complete or Failed)");
    if (request_.dry_run) return true;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_);
    for (;;) {
      auto left = std::chrono::duration_cast<std::chrono::seconds>(deadline -
                                                                   std::chrono::steady_clock::now())
                      .count();
      std::optional<RunResult> result =
          call(step, step.args, "", true, false, static_cast<int>(std::max<long long>(left, 1)));
      if (!result) return false;
      std::set<std::string> conditions = words(result->output);
      if (conditions.count("Complete") != 0 || conditions.count("Completed") != 0) {
        out_ << step.subject << ": Complete\n";
        return true;
      }
      if (conditions.count("Failed") != 0) {
        out_ << step.subject << ": Failed\n";
        diagnostics_.report(Code::E0713, {}, "run `" + unit_ + "/" + step.subject + "` failed",
                            "read its logs: `kubectl logs -n " + step.args[4] +
                                " -l job-name=" + step.args[2] + " --prefix`");
        run_failed_ = true;
        return true;
      }
      if (std::chrono::steady_clock::now() + std::chrono::milliseconds(request_.poll_ms) >=
          deadline) {
        diagnostics_.report(
            Code::E0707, {},
            "`" + step.subject + "` did not finish within " + request_.steps.timeout);
        return false;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(request_.poll_ms));
    }
  }

  const ApplyRequest& request_;
  const std::string kubectl_;
  const std::string oc_;
  const std::string image_builder_;
  std::ostream& out_;
  Diagnostics& diagnostics_;
  const int timeout_;
  std::string unit_;
  std::map<std::string, std::string> digests_;  // image -> digest reference
  bool run_failed_ = false;
};

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

// Every env's steps, or nullopt with E0704/E0705/E0607 reported.
std::optional<std::vector<EnvSteps>> all_steps(const std::vector<EnvPlan>& envs,
                                               const StepOptions& requested,
                                               Diagnostics& diagnostics) {
  StepOptions options = requested;
  for (const EnvPlan& env : envs) {
    for (const PlanObject& object : env.manifest.objects) {
      if (object.shared) options.shared_in_use.insert(shared_key(object));
    }
  }
  std::set<std::string> destroyed;
  std::vector<EnvSteps> out;
  for (const EnvPlan& env : envs) {
    if (std::optional<EnvSteps> steps = plan_steps(env, options, destroyed, diagnostics))
      out.push_back(std::move(*steps));
  }
  for (const std::string& address : requested.allow_destroy) {
    if (destroyed.count(address) == 0) {
      diagnostics.report(Code::E0705, {},
                         "--allow-destroy=" + address + " matches no object this apply deletes",
                         "addresses are spelled as in the plan: <cluster>/<env>/<Kind>/<name>");
    }
  }
  if (diagnostics.has_errors()) return std::nullopt;
  return out;
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
  const char* first = openshift ? "oc" : "kubectl";
  const char* second = openshift ? "kubectl" : "oc";
  if (kubectl.empty()) kubectl = find_on_path(first).value_or(find_on_path(second).value_or(""));
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

// Applies the OpenShift and Kubernetes envs with oc/kubectl: checks of every env first, then
// each env's steps and its record. Returns apply's exit status.
int apply_kube_envs(const ApplyRequest& request, Repository& repo, const Head& head,
                    const std::optional<ObjectId>& head_tree, const std::vector<EnvPlan>& envs,
                    std::ostream& out, Diagnostics& diagnostics) {
  std::optional<std::vector<EnvSteps>> steps = all_steps(envs, request.steps, diagnostics);
  if (!steps) return 1;
  auto clients = find_clients(request, envs, *steps, diagnostics);
  if (!clients) return 1;
  StepRunner runner(request, clients->first, clients->second, out, diagnostics);
  // Checks of every env first: a missing Namespace or grant stops apply before any change.
  bool ready = true;
  for (std::size_t i = 0; i < envs.size(); ++i) {
    for (const Step& step : (*steps)[i].preflight) ready = runner.run(step, envs[i].unit) && ready;
  }
  if (!ready) return 1;
  for (std::size_t i = 0; i < envs.size(); ++i) {
    const EnvPlan& env = envs[i];
    out << (request.dry_run ? "Would apply " : "Applying ")
        << (request.steps.admin ? "the admin objects of " : "") << env.unit << " from " << env.dir
        << '\n';
    for (const Step& step : (*steps)[i].steps) {
      if (!runner.run(step, env.unit)) return 1;
    }
    if (!request.dry_run &&
        !record_applied(repo, env, request.steps.admin, *head.commit, *head_tree, diagnostics))
      return 1;
  }
  return runner.run_failed() ? kExitRunFailed : 0;
}

// The Slurm envs of `envs`, moved out: they are submitted with sbatch, not applied.
std::vector<EnvPlan> take_slurm_envs(std::vector<EnvPlan>& envs) {
  std::vector<EnvPlan> slurm;
  std::vector<EnvPlan> rest;
  for (EnvPlan& env : envs)
    (env.manifest.platform == "slurm" ? slurm : rest).push_back(std::move(env));
  envs = std::move(rest);
  return slurm;
}

// --wait on Slurm: the job's state until it finishes; kExitRunFailed unless it completed.
int wait_for_job(const ApplyRequest& request, const std::string& unit, const std::string& id,
                 std::ostream& out, Diagnostics& diagnostics) {
  const int timeout = *parse_duration(request.steps.timeout);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout);
  while (std::chrono::steady_clock::now() < deadline) {
    std::optional<slurm::JobState> state = slurm::job_state(id, 30);
    if (state && state->finished) {
      out << unit << ": job " << id << " " << state->state
          << (state->reason.empty() ? "" : " (" + state->reason + ")") << '\n';
      if (state->succeeded) return 0;
      diagnostics.report(Code::E0713, {}, unit + ": Slurm job " + id + " ended " + state->state,
                         "its output: " + slurm::log_files(unit.substr(unit.find('/') + 1), id)[0]);
      return kExitRunFailed;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(request.poll_ms));
  }
  diagnostics.report(Code::E0713, {},
                     unit + ": Slurm job " + id + " did not finish within --timeout",
                     "see it with squeue -j " + id);
  return kExitRunFailed;
}

// Submits each Slurm env's batch script from its directory (plan.json action `submit`) and
// records the job id with the applied plan (trailer `Slurm-Job:`). Returns apply's exit status.
int apply_slurm_envs(const ApplyRequest& request, Repository& repo, const Head& head,
                     const std::optional<ObjectId>& head_tree, const fs::path& workdir,
                     const std::vector<EnvPlan>& envs, std::ostream& out,
                     Diagnostics& diagnostics) {
  if (request.steps.admin) return 0;  // a Slurm env has nothing for the platform team
  int status = 0;
  for (const EnvPlan& env : envs) {
    for (const PlanAction& action : env.manifest.actions) {
      if (action.action != "submit") continue;
      const std::string dir = (workdir / env.dir).string();
      out << (request.dry_run ? "Would submit " : "Submitting ") << env.unit << ": "
          << shell_words(slurm::submit_command("sbatch", dir, action.script)) << '\n';
      if (request.dry_run) continue;
      std::string error;
      std::optional<std::string> id =
          slurm::submit(dir, action.script, *parse_duration(request.steps.timeout), error);
      if (!id) {
        diagnostics.report(Code::E0730, {}, env.unit + ": " + error,
                           "sbatch's message above says why; nothing was recorded");
        return 1;
      }
      out << "Submitted " << env.unit << " as Slurm job " << *id << '\n';
      if (!record_applied(repo, env, false, *head.commit, *head_tree, diagnostics,
                          "Slurm-Job: " + *id + "\n"))
        return 1;
      if (request.steps.wait)
        status = std::max(status, wait_for_job(request, env.unit, *id, out, diagnostics));
    }
  }
  return status;
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
    std::vector<EnvPlan> slurm_envs = take_slurm_envs(*envs);
    int status = 0;
    if (!envs->empty()) {
      status = apply_kube_envs(request, *repo, head, head_tree, *envs, out, diagnostics);
      if (status == 1) return 1;
    }
    if (!slurm_envs.empty()) {
      int slurm_status =
          apply_slurm_envs(request, *repo, head, head_tree, workdir, slurm_envs, out, diagnostics);
      if (slurm_status == 1) return 1;
      status = std::max(status, slurm_status);
    }
    if (request.dry_run) out << "Dry run: nothing was run.\n";
    return status;
  } catch (const std::exception& error) {
    diagnostics.report(Code::E0604, {}, error.what());
    return 1;
  }
}

}  // namespace mlenv::plan
