#include "compiler/apply/records.h"

#include <algorithm>

#include "compiler/apply/applyset.h"
#include "compiler/apply/record_values.h"

namespace mlenv::plan {
namespace {

constexpr const char* kAppliedRefs = "refs/mlenv/applied/";
// --admin records what the platform team applied apart, so neither apply's prune sees the
// other's objects as its own.
constexpr const char* kAdminAppliedRefs = "refs/mlenv/applied-admin/";

}  // namespace

const char* applied_refs(bool admin) {
  return admin ? kAdminAppliedRefs : kAppliedRefs;
}

std::string raw_trailer(const std::string& message, std::string_view key) {
  std::size_t at = 0;
  while (at < message.size()) {
    std::size_t end = std::min(message.find('\n', at), message.size());
    std::string_view line(message.data() + at, end - at);
    if (line.starts_with(key)) return std::string(line.substr(key.size()));
    at = end + 1;
  }
  return {};
}

// A trailer (`Runtime-Tree: `) of an applied record whose value is one mlenvc writes
// (record_values.h); "" when there is none or it is anything else.
std::string trailer(const std::string& message, std::string_view key) {
  std::string value = raw_trailer(message, key);
  return valid_trailer_value(key, value) ? value : std::string();
}

void load_applied_record(Repository& repo, bool admin, EnvPlan& env) {
  env.applied_commit = repo.ref_target(applied_refs(admin) + env.unit);
  const std::optional<ObjectId>& applied = env.applied_commit;
  if (!applied) {
    env.applied_files = PlanTree([&repo](const BlobId& id) { return repo.read_blob(id); });
    return;
  }
  const std::string message = repo.commit_message(*applied);
  env.record_message = message;
  env.applied_runtime_tree = trailer(message, kRuntimeTrailer);
  env.applied_parent = trailer(message, kParentTrailer);
  env.applied_image = trailer(message, kImageTrailer);
  // Records written before parents named the program name none: their objects carry the id of
  // `applyset-<env>`.
  if (env.applied_parent.empty()) env.applied_parent = "applyset-" + env.manifest.env;
  env.applied_files = repo.plan_tree(repo.commit_tree(*applied), env.dir);
  std::string error;
  std::optional<std::string> text = env.applied_files.read(env.dir + "/plan.json");
  if (text) env.applied = parse_plan_json(*text, error);
}

bool record_applied(Repository& repo, const EnvPlan& env, bool admin, const ObjectId& head,
                    const ObjectId& head_tree, Diagnostics& diagnostics,
                    const std::string& trailers) {
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

bool record_destroyed(Repository& repo, const EnvPlan& env, bool admin, const std::string& why,
                      Diagnostics& diagnostics) {
  const std::string ref = applied_refs(admin) + env.unit;
  std::vector<ObjectId> parents;
  if (env.applied_commit) parents.push_back(*env.applied_commit);
  const std::string message = "mlenvc destroy " + env.unit + "\n\n" + why + "\n\n" +
                              std::string(kPlanDirTrailer) + env.dir + "\n";
  ObjectId commit = repo.create_commit(repo.update_tree(std::nullopt, {}), parents, message);
  if (!repo.update_ref(ref, commit, env.applied_commit, "mlenvc destroy")) {
    diagnostics.report(Code::E0708, {},
                       "`" + ref + "` moved during apply; the record was not written",
                       "run the command again");
    return false;
  }
  return true;
}

}  // namespace mlenv::plan
