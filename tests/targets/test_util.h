#pragma once
// Helpers shared by the target tests: rendering a fixture and finding files of the output.

#include <yaml-cpp/yaml.h>

#include <map>
#include <string>

#include "compiler/diag/diagnostic.h"
#include "targets/target.h"

namespace mlenv::testing {

/// Renders `program` with the OpenShift target into `diagnostics`.
inline target::Output render(const ir::Program& program, Diagnostics& diagnostics,
                             target::Scope scope = target::Scope::Tree) {
  return target::make_program_target()->render(program, diagnostics, scope);
}

/// The file at `path`, or nullptr.
inline const target::File* find_file(const target::Output& out, const std::string& path) {
  for (const target::File& f : out.files) {
    if (f.path == path) return &f;
  }
  return nullptr;
}

/// The claims the pods of `workload` (a StatefulSet, Job or JobSet, at any depth) mount: volume
/// name -> claimName.
inline std::map<std::string, std::string> mounted_claims(const YAML::Node& workload) {
  std::map<std::string, std::string> out;
  if (workload.IsMap()) {
    for (const auto& entry : workload) {
      if (entry.first.as<std::string>() != "volumes" || !entry.second.IsSequence()) {
        for (const auto& [name, claim] : mounted_claims(entry.second)) out[name] = claim;
        continue;
      }
      for (const YAML::Node& volume : entry.second) {
        if (volume["persistentVolumeClaim"])
          out[volume["name"].as<std::string>()] =
              volume["persistentVolumeClaim"]["claimName"].as<std::string>();
      }
    }
  } else if (workload.IsSequence()) {
    for (const YAML::Node& item : workload)
      for (const auto& [name, claim] : mounted_claims(item)) out[name] = claim;
  }
  return out;
}

/// Whether `diagnostics` holds `code`.
inline bool has_code(const Diagnostics& diagnostics, Code code) {
  for (const Diagnostic& d : diagnostics.all()) {
    if (d.code == code) return true;
  }
  return false;
}

}  // namespace mlenv::testing
