#include "compiler/plan/differ.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <map>
#include <set>

#include "compiler/base/pattern.h"
#include "compiler/plan/content_diff.h"
#include "compiler/plan/pod_claims.h"
#include "compiler/plan/yaml_fields.h"
#include "targets/common/dockerfile.h"
#include "targets/common/plan_json.h"
#include "targets/provider.h"

namespace mlenv::plan {
namespace {

constexpr const char* kSensitive = "(sensitive)";

// Values that must not reach a summary or a commit message even if a target ever emitted one.
bool sensitive_field(std::string_view kind, const std::string& path) {
  if (kind == "Secret" && (path.starts_with("data") || path.starts_with("stringData"))) {
    return true;
  }
  static const Pattern kSecretEnv = Pattern::literal(
      R"(env\[name=[^\]]*(PASSWORD|PASSWD|SECRET|TOKEN|KEY|CREDENTIAL)[^\]]*\]\.value$)",
      /*ignore_case=*/true);
  return kSecretEnv.search(path);
}

std::map<std::string, YAML::Node> parse_objects(const std::optional<std::string>& text) {
  std::map<std::string, YAML::Node> out;
  if (!text) return out;
  try {
    for (const YAML::Node& doc : YAML::LoadAll(*text)) {
      std::string address = object_address(doc);
      if (!address.empty()) out[address] = doc;
    }
  } catch (const YAML::Exception&) {
    // An unparsable file is still reported, as a changed file, by the caller.
  }
  return out;
}

std::string kind_of(const std::string& address) {
  return address.substr(0, address.find('/'));
}

// An object created or deleted whole: `address` is `<unit>/<Kind>/<name>`.
Change whole_object(const std::string& address, Action action, const std::string& file) {
  Change change;
  change.address = address;
  change.kind = kind_of(address.substr(address.find('/', address.find('/') + 1) + 1));
  change.action = action;
  change.file = file;
  return change;
}

// `provider` says which changed fields force a replacement (its change semantics).
Change compare_object(const target::Provider& provider, const std::string& address,
                      const std::string& kind, const YAML::Node& before, const YAML::Node& after) {
  Change change;
  change.address = address;
  change.kind = kind;
  change.action = Action::Update;
  FieldMap old_fields = flatten(before);
  FieldMap new_fields = flatten(after);
  auto record = [&](const std::string& path, const std::string* was, const std::string* now) {
    // A JSON document in a field (boot.json in its ConfigMap) changes field by field.
    if (was != nullptr && now != nullptr && !sensitive_field(kind, path)) {
      if (auto inner = json_changes(path, *was, *now)) {
        for (FieldChange& field : *inner) change.fields.push_back(std::move(field));
        return;
      }
    }
    FieldChange field;
    field.path = path;
    bool hide = sensitive_field(kind, path);
    if (was != nullptr) field.before = hide ? kSensitive : *was;
    if (now != nullptr) field.after = hide ? kSensitive : *now;
    if (change.reason.empty()) change.reason = provider.replace_reason(kind, path, new_fields);
    change.fields.push_back(std::move(field));
  };
  auto a = old_fields.begin();
  auto b = new_fields.begin();
  while (a != old_fields.end() || b != new_fields.end()) {
    if (b == new_fields.end() || (a != old_fields.end() && a->first < b->first)) {
      record(a->first, &a->second, nullptr);
      ++a;
    } else if (a == old_fields.end() || b->first < a->first) {
      record(b->first, nullptr, &b->second);
      ++b;
    } else {
      if (a->second != b->second) record(a->first, &a->second, &b->second);
      ++a;
      ++b;
    }
  }
  if (!change.reason.empty()) change.action = Action::Replace;
  return change;
}

// A file that is not an object: created, deleted, or updated with what changed inside.
FileChange file_change(const std::string& path, const std::optional<std::string>& before,
                       const std::optional<std::string>& after) {
  FileChange file{path,
                  !before  ? Action::Create
                  : !after ? Action::Delete
                           : Action::Update,
                  {},
                  {}};
  if (file.action != Action::Update) return file;
  if (auto fields = json_changes("", *before, *after)) {
    file.fields = std::move(*fields);
  } else {
    file.lines = line_changes(*before, *after);
  }
  return file;
}

// Compares the objects of one file; `prefix` is the unit the addresses live in.
void diff_file(const target::Provider& provider, const std::string& prefix, const std::string& path,
               const std::optional<std::string>& before, const std::optional<std::string>& after,
               PlanDiff& diff) {
  std::map<std::string, YAML::Node> old_objects = parse_objects(before);
  std::map<std::string, YAML::Node> new_objects = parse_objects(after);
  if (old_objects.empty() && new_objects.empty()) {
    diff.files.push_back(file_change(path, before, after));
    return;
  }
  std::set<std::string> addresses;
  for (const auto& [address, node] : old_objects) addresses.insert(address);
  for (const auto& [address, node] : new_objects) addresses.insert(address);
  for (const std::string& address : addresses) {
    auto was = old_objects.find(address);
    auto now = new_objects.find(address);
    std::string full = prefix + "/" + address;
    if (was == old_objects.end()) {
      diff.changes.push_back(whole_object(full, Action::Create, path));
    } else if (now == new_objects.end()) {
      diff.changes.push_back(whole_object(full, Action::Delete, path));
    } else {
      Change change = compare_object(provider, full, kind_of(address), was->second, now->second);
      change.file = path;
      if (!change.fields.empty()) diff.changes.push_back(std::move(change));
    }
  }
}

// An object file of an env, as its plan.json lists it.
struct ObjectFile {
  std::string address;  ///< `Kind/name`
  bool shared = false;
};

// Object files of an env, relative to the env directory, from its plan.json.
std::map<std::string, ObjectFile> object_files(const PlanTree& tree, const std::string& unit) {
  std::map<std::string, ObjectFile> files;
  std::optional<std::string> text = tree.read(unit + "/plan.json");
  if (!text) return files;
  std::optional<std::vector<PlanObject>> objects = scan_plan_objects(*text);
  if (!objects) {
    std::string error;
    std::optional<PlanManifest> manifest = parse_plan_json(*text, error);
    if (!manifest) return files;
    objects = std::move(manifest->objects);
  }
  for (const PlanObject& object : *objects) {
    if (!object.admin) files[object.file] = {object.address, object.shared};
  }
  return files;
}

// A whole object file created or deleted: its address is known from plan.json, so a first plan
// of a fleet does not parse 10,000 objects only to name them.
void diff_whole_file(const std::string& unit, const std::string& path, const ObjectFile& object,
                     bool created, PlanDiff& diff) {
  diff.changes.push_back(
      whole_object(unit + "/" + object.address, created ? Action::Create : Action::Delete, path));
}

// The provider of `unit`'s platform, from its plan.json (new, else old). `<cluster>/_admin`
// has none: the first env of its cluster says.
const target::Provider& unit_provider(const PlanTree& before, const PlanTree& after,
                                      const std::string& unit) {
  std::string plan_json = unit + "/plan.json";
  if (is_admin_unit(unit)) {
    const std::string cluster = unit.substr(0, unit.find('/') + 1);
    for (const PlanTree* tree : {&after, &before}) {
      auto it = tree->entries().lower_bound(cluster);
      for (; it != tree->entries().end() && it->first.starts_with(cluster); ++it) {
        if (it->first.ends_with("/plan.json")) {
          plan_json = it->first;
          break;
        }
      }
    }
  }
  std::optional<std::string> text = after.read(plan_json);
  if (!text) text = before.read(plan_json);
  const std::string platform = text ? plan_json_string(*text, "platform") : "";
  return target::provider(ir::parse_platform(platform).value_or(ir::Platform::openshift));
}

void diff_unit(const PlanTree& before, const PlanTree& after, const std::string& unit,
               const std::vector<std::string>& paths, PlanDiff& diff) {
  const target::Provider& provider = unit_provider(before, after, unit);
  if (is_admin_unit(unit)) {
    for (const std::string& path : paths)
      diff_file(provider, unit, path, before.read(path), after.read(path), diff);
    return;
  }
  const std::string plan_json = unit + "/plan.json";
  if (paths.size() == 1 && paths[0] == plan_json && before.find(plan_json) != nullptr &&
      after.find(plan_json) != nullptr) {
    ++diff.inputs_changed;
    return;
  }
  std::map<std::string, ObjectFile> objects = object_files(before, unit);
  for (auto& [file, object] : object_files(after, unit)) {
    object.shared = object.shared || objects[file].shared;
    objects[file] = std::move(object);
  }
  for (const std::string& path : paths) {
    if (path == plan_json) continue;
    auto object = objects.find(path.substr(unit.size() + 1));
    if (object != objects.end()) {
      const std::size_t first = diff.changes.size();
      const bool had = before.find(path) != nullptr;
      if (had != (after.find(path) != nullptr)) {
        diff_whole_file(unit, path, object->second, !had, diff);
      } else {
        diff_file(provider, unit, path, before.read(path), after.read(path), diff);
      }
      for (std::size_t i = first; i < diff.changes.size(); ++i)
        diff.changes[i].shared = object->second.shared;
    } else {
      diff.files.push_back(file_change(path, before.read(path), after.read(path)));
    }
  }
  // What a change does on the platform beyond its fields (pods roll, a run is re-created, a
  // Slurm job), as the env's provider sees it.
  provider.diff_unit(before, after, unit, paths, diff);
}

// The claims of an env that left the plan stay with their data, and the cluster's shared
// objects stay for the cluster (kept_when_env_leaves), as apply keeps them: its workload and
// other objects go.
void keep_claims_of_removed_envs(const PlanTree& before, const PlanTree& after, PlanDiff& diff) {
  for (Change& change : diff.changes) {
    if (change.action != Action::Delete || !kept_when_env_leaves(change.kind, change.shared))
      continue;
    const std::string plan_json = std::string(unit_of(change.address)) + "/plan.json";
    if (after.find(plan_json) != nullptr || before.find(plan_json) == nullptr) continue;
    change.action = Action::Keep;
    change.notes.push_back(change.shared && change.kind != "PersistentVolumeClaim"
                               ? "the cluster's, shared by its envs: kept when an env leaves"
                               : "its env left the plan: its workload and other objects are "
                                 "deleted");
  }
}

}  // namespace

PlanDiff diff_plans(const PlanTree& before, const PlanTree& after) {
  PlanDiff diff;
  std::map<std::string, std::vector<std::string>> changed;  // by unit
  auto note = [&](const std::string& path) {
    std::string_view unit = unit_of(path);
    if (unit.empty()) {
      const bool had = before.find(path) != nullptr;
      const bool has = after.find(path) != nullptr;
      // Files beside the envs (`_runtime/` sources) are listed; the pull request shows them.
      Action action = !had ? Action::Create : !has ? Action::Delete : Action::Update;
      diff.files.push_back({path, action, {}, {}});
      diff.runtime_changed =
          diff.runtime_changed || path.starts_with(target::kRuntimeDir + std::string("/"));
    } else {
      changed[std::string(unit)].push_back(path);
    }
  };
  auto a = before.entries().begin();
  auto b = after.entries().begin();
  while (a != before.entries().end() || b != after.entries().end()) {
    if (b == after.entries().end() || (a != before.entries().end() && a->first < b->first)) {
      note(a->first);
      ++a;
    } else if (a == before.entries().end() || b->first < a->first) {
      note(b->first);
      ++b;
    } else {
      if (a->second.id != b->second.id) note(a->first);
      ++a;
      ++b;
    }
  }
  // New mlenv-boot sources reach every env's image: its provider says what that rebuilds.
  if (diff.runtime_changed) {
    for (const auto& [path, entry] : after.entries()) {
      std::string_view unit = unit_of(path);
      if (!unit.empty() && path == std::string(unit) + "/plan.json" &&
          !is_admin_unit(std::string(unit)))
        changed.try_emplace(std::string(unit));
    }
  }
  for (const auto& [unit, paths] : changed) diff_unit(before, after, unit, paths, diff);
  // A change that several envs list at one address (the image they share: unit_run.h) is
  // listed once, the first env's.
  std::set<std::string> addresses;
  std::erase_if(diff.changes, [&](const Change& c) {
    return c.address.find("/_shared/") != std::string::npos && !addresses.insert(c.address).second;
  });
  add_pod_claim_changes(before, after, diff);
  keep_claims_of_removed_envs(before, after, diff);
  for (Change& change : diff.changes) {
    change.destroys_data = (change.action == Action::Delete || change.action == Action::Replace) &&
                           holds_data(change.kind);
  }
  std::sort(diff.changes.begin(), diff.changes.end(),
            [](const Change& x, const Change& y) { return x.address < y.address; });
  std::sort(diff.files.begin(), diff.files.end(),
            [](const FileChange& x, const FileChange& y) { return x.path < y.path; });
  return diff;
}

}  // namespace mlenv::plan
