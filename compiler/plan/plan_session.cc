#include "compiler/plan/plan_session.h"

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "compiler/plan/differ.h"
#include "compiler/plan/shared_changes.h"
#include "compiler/plan/worktree.h"
#include "targets/common/plan_json.h"

namespace mlenv::plan {
namespace fs = std::filesystem;
namespace {

std::string cluster_of(std::string_view unit) {
  return std::string(unit.substr(0, unit.find('/')));
}

void report_git(Diagnostics& diagnostics, const std::exception& error) {
  diagnostics.report(Code::E0604, {}, error.what());
}

// A directory plan may write into: missing, empty, or holding a plan (an env directory
// `<cluster>/<env>/plan.json` on disk or committed). Plan owns what it writes there and
// deletes what it no longer renders, so it never takes over a directory of the user's.
bool plan_directory(const fs::path& dir, const PlanTree& committed) {
  std::error_code error;
  if (!fs::exists(dir, error) || fs::is_empty(dir, error)) return true;
  for (const auto& [path, entry] : committed.entries()) {
    if (path.ends_with("/plan.json")) return true;
  }
  for (const fs::directory_entry& cluster : fs::directory_iterator(dir, error)) {
    for (const fs::directory_entry& env : fs::directory_iterator(cluster.path(), error)) {
      if (fs::is_regular_file(env.path() / "plan.json", error)) return true;
    }
  }
  return false;
}

// Env name and namespace of a plan.json (its top-level keys, written before `objects`).
std::pair<std::string, std::string> env_identity(const std::string& text) {
  return {plan_json_string(text, "env"), plan_json_string(text, "namespace")};
}

// Two programs that plan the same env name into one namespace (or the same `<cluster>/<env>`)
// would apply the same StatefulSet, claims and Routes with the same field manager, each
// silently overwriting the other: E0609 for every rendered env another source already plans.
bool refuse_collisions(const PlanTree& fresh, const PlanTree& committed, const std::string& source,
                       const std::string& prefix, Diagnostics& diagnostics) {
  std::map<std::pair<std::string, std::string>, std::string> others;  // identity -> unit
  for (const std::string& unit : units_of(committed)) {
    if (is_admin_unit(unit)) continue;
    // A plan.json rendered as committed is read from memory, not inflated from git again.
    const PlanEntry* was = committed.find(unit + "/plan.json");
    const PlanEntry* now = fresh.find(unit + "/plan.json");
    const bool same = was != nullptr && now != nullptr && was->id == now->id;
    std::optional<std::string> text = (same ? fresh : committed).read(unit + "/plan.json");
    if (text && plan_json_source(*text) != source) others[env_identity(*text)] = unit;
  }
  bool clear = true;
  for (const std::string& unit : units_of(fresh)) {
    std::optional<std::string> mine = fresh.read(unit + "/plan.json");
    if (is_admin_unit(unit) || !mine) continue;
    auto identity = env_identity(*mine);
    auto it = others.find(identity);
    std::string theirs_unit = it != others.end() ? it->second : std::string();
    for (const auto& [other_identity, other_unit] : others) {
      if (other_unit == unit) theirs_unit = unit;
    }
    if (theirs_unit.empty()) continue;
    std::string theirs = plan_json_source(*committed.read(theirs_unit + "/plan.json"));
    Diagnostic& d = diagnostics.report(Code::E0609, {},
                                       "env `" + unit + "` (namespace `" + identity.second +
                                           "`) collides with `" + theirs_unit + "`, planned by `" +
                                           theirs + "`",
                                       "rename the env, or plan it into another namespace");
    d.notes.push_back({"if `" + theirs + "` was renamed to `" + source +
                           "`, remove its plan first: `git rm -r " + prefix + "/" + theirs_unit +
                           "`",
                       {}});
    d.notes.push_back({"two programs would overwrite each other's objects on the cluster", {}});
    clear = false;
  }
  return clear;
}

}  // namespace

void report_stale_check(const std::string& prefix, const std::string& source,
                        Diagnostics& diagnostics) {
  diagnostics.report(
      Code::E0606, {},
      "the plan committed in `" + prefix + "` differs from a fresh render of `" + source + "`",
      "run `mlenvc plan " + source + "` and commit the result");
}

std::unique_ptr<PlanSession> PlanSession::open(const std::string& out_dir,
                                               Diagnostics& diagnostics) {
  std::unique_ptr<PlanSession> session(new PlanSession());
  fs::path start = out_dir.empty() ? fs::current_path() : fs::absolute(out_dir);
  std::string why;
  session->repo_ = Repository::discover(start.string(), &why);
  if (!why.empty()) {
    diagnostics.report(Code::E0601, {},
                       "the git repository holding `" +
                           (out_dir.empty() ? std::string(".") : out_dir) +
                           "` cannot be opened: " + why,
                       "mlenvc reads repositories libgit2 supports (SHA-1 object names)");
    return nullptr;
  }
  if (!session->repo_ || session->repo_->workdir().empty()) {
    diagnostics.report(
        Code::E0601, {},
        "no git work tree contains `" + (out_dir.empty() ? std::string(".") : out_dir) + "`",
        "run `git init` first, or point --out into a checkout");
    return nullptr;
  }
  fs::path workdir = fs::weakly_canonical(session->repo_->workdir());
  // The default plan directory is resolved like --out: a `plans` link to a directory outside
  // the work tree is refused below (E0605), never written through.
  fs::path plan_dir = fs::weakly_canonical(out_dir.empty() ? workdir / "plans" : start);
  fs::path relative = plan_dir.lexically_relative(workdir);
  std::string prefix = relative.generic_string();
  if (relative.empty() || prefix == "." || prefix.starts_with("..") || prefix == ".git" ||
      prefix.starts_with(".git/")) {
    diagnostics.report(Code::E0605, {},
                       "the plan directory `" + (out_dir.empty() ? "plans" : out_dir) +
                           "` is not inside the work tree" +
                           (out_dir.empty() ? " (it is a link to " + plan_dir.string() + ")" : ""),
                       "the plan is committed, so it must live in the repository");
    return nullptr;
  }
  while (!prefix.empty() && prefix.back() == '/') prefix.pop_back();
  session->prefix_ = prefix;
  try {
    session->head_ = session->repo_->head();
    if (session->head_.commit)
      session->head_tree_ = session->repo_->commit_tree(*session->head_.commit);
    std::optional<ObjectId> plan_tree;
    if (session->head_tree_) plan_tree = session->repo_->subtree(*session->head_tree_, prefix);
    session->committed_ = session->repo_->plan_tree(plan_tree);
  } catch (const GitError& error) {
    report_git(diagnostics, error);
    return nullptr;
  }
  if (!out_dir.empty() && !plan_directory(plan_dir, session->committed_)) {
    diagnostics.report(Code::E0608, {},
                       "`" + out_dir + "` is a directory of other files, not a plan directory",
                       "name a new or empty directory, or one that holds a plan");
    return nullptr;
  }
  return session;
}

std::optional<PlanDiff> PlanSession::diff(PlanTree fresh, const std::string& source,
                                          Diagnostics& diagnostics) {
  fresh_ = std::move(fresh);
  try {
    std::vector<std::string> fresh_units = units_of(fresh_);
    std::set<std::string> rendered(fresh_units.begin(), fresh_units.end());
    std::set<std::string> owned = rendered;  // units this render decides
    std::set<std::string> foreign_clusters;  // clusters with envs of other sources
    std::set<std::string> admin_units;
    for (const std::string& unit : units_of(committed_)) {
      if (is_admin_unit(unit)) {
        admin_units.insert(unit);
        continue;
      }
      if (rendered.count(unit) != 0) continue;
      std::optional<std::string> text = committed_.read(unit + "/plan.json");
      if (text && plan_json_source(*text) == source) {
        owned.insert(unit);
      } else {
        foreign_clusters.insert(cluster_of(unit));
      }
    }
    if (!refuse_collisions(fresh_, committed_, source, prefix_, diagnostics)) return std::nullopt;
    // A cluster's `_admin` files are shared by its envs: this render removes stale ones only
    // when no env of another source remains in that cluster.
    for (const std::string& unit : admin_units) {
      if (foreign_clusters.count(cluster_of(unit)) == 0) {
        bool ours = rendered.count(unit) != 0;
        for (const std::string& other : owned) ours = ours || cluster_of(other) == cluster_of(unit);
        if (ours) owned.insert(unit);
      }
    }
    // Files outside any unit (`_runtime/`) are the compiler's: a render that writes a top-level
    // directory replaces it whole, so a file a newer compiler no longer writes is removed;
    // top-level paths it does not write are left alone. In `_inputs/` each program owns only
    // its own file.
    auto top_of = [](const std::string& path) { return path.substr(0, path.find('/')); };
    std::set<std::string> rendered_tops;
    for (const auto& [path, entry] : fresh_.entries()) {
      if (unit_of(path).empty() && top_of(path) != "_inputs") rendered_tops.insert(top_of(path));
    }
    const std::string inputs_file = program_inputs_path(source);
    PlanTree before(committed_.loader());
    PlanTree others(committed_.loader());  // env units of other programs, which stay
    for (const auto& [path, entry] : committed_.entries()) {
      std::string unit(unit_of(path));
      if (!unit.empty() && owned.count(unit) == 0 && !is_admin_unit(unit))
        others.add_id(path, entry.id);
      bool partial_admin =
          is_admin_unit(unit) && owned.count(unit) == 0 && rendered.count(unit) != 0;
      bool shared = unit.empty() && (rendered_tops.count(top_of(path)) != 0 || path == inputs_file);
      if (owned.count(unit) != 0 || shared || (partial_admin && fresh_.find(path) != nullptr)) {
        before.add_id(path, entry.id);
      }
    }
    updates_.clear();
    for (const auto& [path, entry] : fresh_.entries()) {
      const PlanEntry* old = before.find(path);
      if (old == nullptr || old->id != entry.id) updates_.push_back({path, entry.id});
    }
    for (const auto& [path, entry] : before.entries()) {
      if (fresh_.find(path) == nullptr) updates_.push_back({path, std::nullopt});
    }
    PlanDiff diff = diff_plans(before, fresh_);
    collapse_shared(before, fresh_, others, diff);
    return diff;
  } catch (const std::exception& error) {
    report_git(diagnostics, error);
    return std::nullopt;
  }
}

namespace {

// The first thing on the way to `path` (absolute) that would stop writing it: a component over
// NAME_MAX, or something other than a folder (or a link, which write_plan_files replaces) where
// a folder must be. "" when there is none.
std::string obstacle_on_the_way(const std::string& root, const std::string& relative) {
  std::size_t start = 0;
  while (start < relative.size()) {
    std::size_t end = std::min(relative.find('/', start), relative.size());
    // The reason first: a message is cut at 300 bytes, and such a path is long.
    if (end - start > 255) return "a file name over 255 bytes: `" + relative + "`";
    if (end == relative.size()) break;
    struct stat st {};
    const std::string dir = root + relative.substr(0, end);
    if (::lstat(dir.c_str(), &st) == 0 && !S_ISDIR(st.st_mode) && !S_ISLNK(st.st_mode))
      return "`" + dir + "` is not a folder";
    start = end + 1;
  }
  return "";
}

}  // namespace

bool PlanSession::ready_to_write(Diagnostics& diagnostics) const {
  std::string obstacle;
  struct stat st {};
  if (::lstat((repo_->git_dir() + "index.lock").c_str(), &st) == 0) {
    obstacle = "`" + repo_->git_dir() + "index.lock` is held by another git process";
  } else {
    try {
      repo_->index_entries(prefix_);
    } catch (const std::exception& error) {
      obstacle =
          std::string("the index cannot be read (a split or sparse index?): ") + error.what();
    }
  }
  for (std::size_t i = 0; i < updates_.size() && obstacle.empty(); ++i)
    obstacle = obstacle_on_the_way(workdir(), prefix_ + "/" + updates_[i].path);
  if (obstacle.empty()) return true;
  diagnostics.report(Code::E0604, {}, obstacle + "; nothing was committed",
                     "plan again once it is out of the way: a plan that committed and then failed "
                     "to write the work tree or the index would leave them behind the branch");
  return false;
}

std::optional<ObjectId> PlanSession::commit(const std::string& message, Diagnostics& diagnostics) {
  if (head_.branch.empty()) {
    diagnostics.report(Code::E0602, {},
                       "HEAD is detached: there is no branch to commit the plan on",
                       "check out a branch, or plan with --no-commit");
    return std::nullopt;
  }
  if (!ready_to_write(diagnostics)) return std::nullopt;
  try {
    // Blobs and trees are written in memory and reach the repository as one pack: a loose file
    // per blob made the first plan of a fleet cost more than twice `git add && git commit` of
    // the same tree. The commit is written after the pack, outside it: git_mempack_dump packs
    // a commit with its whole tree, which would copy every file of the plan into each pack.
    std::unique_ptr<Repository> batch = repo_->in_memory();
    std::vector<TreeUpdate> updates;
    updates.reserve(updates_.size());
    for (const TreeUpdate& update : updates_) {
      TreeUpdate full{prefix_ + "/" + update.path, std::nullopt};
      if (update.blob) full.blob = batch->write_blob(*fresh_.read(update.path));
      updates.push_back(std::move(full));
    }
    ObjectId tree = batch->update_tree(head_tree_, std::move(updates));
    batch->write_pack();
    repo_->refresh_objects();
    std::vector<ObjectId> parents;
    if (head_.commit) parents.push_back(*head_.commit);
    ObjectId commit = repo_->create_commit(tree, parents, message);
    std::string subject = message.substr(0, message.find('\n'));
    if (!repo_->update_ref(head_.branch, commit, head_.commit, "mlenvc plan: " + subject)) {
      Diagnostic& d = diagnostics.report(
          Code::E0603, {}, "`" + head_.branch + "` moved while planning; nothing was committed",
          "run `mlenvc plan` again to plan against the new HEAD");
      d.notes.push_back({"another commit reached the branch after this plan read HEAD", {}});
      return std::nullopt;
    }
    return commit;
  } catch (const std::exception& error) {
    report_git(diagnostics, error);
    return std::nullopt;
  }
}

bool PlanSession::write_worktree(bool update_index, Diagnostics& diagnostics) {
  std::vector<std::string> removed;
  for (const TreeUpdate& update : updates_) {
    if (!update.blob) removed.push_back(update.path);
  }
  try {
    // Files whose index entry and stat data say they hold the rendered blob are not read again.
    std::map<std::string, ObjectId> fresh_ids;
    for (const auto& [path, entry] : fresh_.entries())
      fresh_ids.emplace(prefix_ + "/" + path, entry.id);
    const std::set<std::string> unchanged = repo_->unchanged_files(prefix_, fresh_ids);
    auto known = [&](const std::string& path) {
      return unchanged.count(prefix_ + "/" + path) != 0;
    };
    std::vector<std::string> touched =
        write_plan_files(workdir() + prefix_, fresh_, removed, known);
    std::vector<std::string> paths;
    std::vector<std::optional<ObjectId>> ids;
    if (update_index) {
      for (const TreeUpdate& update : updates_) {
        paths.push_back(prefix_ + "/" + update.path);
        ids.push_back(update.blob);
      }
    }
    stale_index_entries(paths, ids);
    if (!paths.empty()) repo_->update_index(paths, ids);
    return true;
  } catch (const std::exception& error) {
    Diagnostic& d = diagnostics.report(Code::E0604, {}, error.what());
    if (update_index) {
      d.notes.push_back(
          {"if the plan was committed, `git reset -q -- " + prefix_ + "` makes the index match it",
           {}});
    }
    return false;
  }
}

// A plan that committed and then could not update the index (a held index.lock, a full disk, a
// read-only directory) left the index holding the previous plan: `git status` shows the plan
// reverted, and the user's next `git commit` would revert it silently. Every rendered file that
// HEAD holds as rendered gets HEAD's blob back in the index (the work tree was just written).
void PlanSession::stale_index_entries(std::vector<std::string>& paths,
                                      std::vector<std::optional<ObjectId>>& ids) const {
  std::map<std::string, ObjectId> index = repo_->index_entries(prefix_);
  for (const auto& [path, entry] : fresh_.entries()) {
    const PlanEntry* head = committed_.find(path);
    if (head == nullptr || head->id != entry.id) continue;  // not committed as rendered
    auto it = index.find(prefix_ + "/" + path);
    if (it != index.end() && it->second == entry.id) continue;
    paths.push_back(prefix_ + "/" + path);
    ids.push_back(entry.id);
  }
}

std::vector<std::string> PlanSession::warn_uncommitted(
    const std::vector<std::pair<std::string, std::string>>& sources,
    Diagnostics& diagnostics) const {
  std::vector<std::string> out;
  for (const auto& [path, bytes] : sources) {
    std::optional<ObjectId> committed;
    if (head_tree_) committed = repo_->blob_at(*head_tree_, path);
    if (committed && *committed == hash_blob(bytes)) continue;
    std::string message = "`" + path + "` " +
                          (committed ? "differs from HEAD" : "is not committed") +
                          ": this plan was rendered from a source the commit does not hold";
    diagnostics.report(Code::W0601, {}, message,
                       "commit the source with the plan, so that the pull request's plan "
                       "matches its source");
    out.push_back(std::move(message));
  }
  return out;
}

std::vector<SinceApplied> PlanSession::since_applied() {
  std::vector<SinceApplied> out;
  const std::string root = "refs/mlenv/applied/";
  for (const std::string& ref : repo_->refs_matching(root + "*")) {
    std::string unit = ref.substr(root.size());
    auto begin = fresh_.entries().lower_bound(unit + "/");
    if (begin == fresh_.entries().end() || !begin->first.starts_with(unit + "/")) continue;
    std::optional<ObjectId> applied = repo_->ref_target(ref);
    if (!applied) continue;
    PlanTree before = repo_->plan_tree(repo_->commit_tree(*applied), unit);
    PlanTree after(fresh_.loader());
    for (auto it = begin; it != fresh_.entries().end() && it->first.starts_with(unit + "/"); ++it) {
      after.add(it->first, *fresh_.read(it->first));
    }
    PlanDiff diff = diff_plans(before, after);
    if (!diff.changes.empty() || !diff.files.empty()) out.push_back({unit, std::move(diff)});
  }
  return out;
}

}  // namespace mlenv::plan
