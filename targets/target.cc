#include "targets/target.h"

#include <map>
#include <optional>

#include "targets/common/output_order.h"
#include "targets/provider.h"

namespace mlenv::target {
namespace {

// The envs of a program split by their cluster's platform, each part a program of its own.
std::map<ir::Platform, ir::Program> by_platform(const ir::Program& program) {
  std::map<ir::Platform, ir::Program> parts;
  for (const ir::Env& env : program.envs) {
    auto [part, added] = parts.try_emplace(env.cluster.platform);
    if (added) {
      part->second.source = program.source;
      part->second.inputs = program.inputs;
    }
    part->second.envs.push_back(env);
  }
  return parts;
}

// The platform of every env, when they share one (the usual case: no copies are made).
std::optional<ir::Platform> single_platform(const ir::Program& program) {
  for (const ir::Env& env : program.envs) {
    if (env.cluster.platform != program.envs.front().cluster.platform) return std::nullopt;
  }
  if (program.envs.empty()) return target::providers().front()->platform();
  return program.envs.front().cluster.platform;
}

// Renders each env with the target of its cluster's platform and merges the outputs: clusters
// are directories of their own, so the parts meet only in `_runtime/`, which is the same.
class ProgramTarget : public Target {
 public:
  std::string_view name() const override { return "program"; }

  Output render(const ir::Program& program, Diagnostics& diagnostics, Scope scope) const override {
    if (std::optional<ir::Platform> one = single_platform(program)) {
      return make_target(*one).render(program, diagnostics, scope);
    }
    std::vector<Output> outputs;
    for (const auto& [platform, part] : by_platform(program)) {
      outputs.push_back(make_target(platform).render(part, diagnostics, scope));
    }
    return merge_outputs(std::move(outputs));
  }

  std::vector<std::string> check(const ir::Program& program,
                                 Diagnostics& diagnostics) const override {
    if (std::optional<ir::Platform> one = single_platform(program)) {
      return make_target(*one).check(program, diagnostics);
    }
    std::vector<std::string> notes;
    for (const auto& [platform, part] : by_platform(program)) {
      for (std::string& note : make_target(platform).check(part, diagnostics)) {
        notes.push_back(std::move(note));
      }
    }
    return notes;
  }

  // Each platform's part in the order of ir::Platform, as merge_outputs puts their streams.
  std::vector<std::string> stream(const ir::Program& program, Diagnostics& diagnostics,
                                  const ObjectSink& write) const override {
    if (std::optional<ir::Platform> one = single_platform(program)) {
      return make_target(*one).stream(program, diagnostics, write);
    }
    std::vector<std::string> notes;
    for (const auto& [platform, part] : by_platform(program)) {
      for (std::string& note : make_target(platform).stream(part, diagnostics, write)) {
        notes.push_back(std::move(note));
      }
    }
    return notes;
  }
};

}  // namespace

const Target& make_target(ir::Platform platform) {
  return target::provider(platform).target();
}

std::unique_ptr<Target> make_program_target() {
  return std::make_unique<ProgramTarget>();
}

}  // namespace mlenv::target
