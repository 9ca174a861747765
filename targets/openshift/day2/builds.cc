#include "targets/openshift/day2/builds.h"

#include "compiler/diag/render.h"
#include "targets/kube/day2/cluster_json.h"

namespace mlenv::plan::day2 {

std::optional<BuildState> parse_latest_build(const std::string& json, std::string& error) {
  try {
    std::optional<BuildState> out;
    int latest = -1;
    for (const YAML::Node& build : cluster_json::items_of(json)) {
      int number = cluster_json::small_number(
          cluster_json::text_at(build, {"metadata", "annotations", "openshift.io/build.number"}));
      if (number <= latest) continue;
      latest = number;
      out = BuildState{cluster_json::text_at(build, {"metadata", "name"}),
                       cluster_json::text_at(build, {"status", "phase"})};
    }
    if (!out) error = "no build yet";
    return out;
  } catch (const std::exception& e) {
    error = e.what();
    return std::nullopt;
  }
}

void print_build(std::ostream& out, const Session& session) {
  std::string build_config;
  for (const PlanAction& action : session.env().plan.actions) {
    if (action.action == "build") build_config = action.build_config;
  }
  if (build_config.empty()) return;
  Diagnostics ignored;  // status shows what it can read
  std::optional<std::string> json =
      session.capture({"get", "builds", "-n", session.namespace_(), "-l",
                       "openshift.io/build-config.name=" + build_config, "-o", "json"},
                      ignored);
  std::string error = "unreadable";
  std::optional<BuildState> build = json ? parse_latest_build(*json, error) : std::nullopt;
  out << "  build: "
      << (build ? printable(build->name) + " " + printable(build->phase) : printable(error))
      << '\n';
}

}  // namespace mlenv::plan::day2
